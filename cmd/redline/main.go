// Command redline measures a Redis server, diagnoses its host, tunes it
// reversibly and proves with repeated measurements whether the tuning helped.
package main

import (
	"os"

	"redline/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:]))
}
