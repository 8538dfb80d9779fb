package redisserver

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// debianServer is where Debian's redis-tools package puts the server
// binary: redis-server is a link to it made by the redis-server package,
// which also starts a Redis on 6379 as a service. Redis picks its mode from
// argv[0], so redline runs it through a link named redis-server.
const debianServer = "redis-check-rdb"

// lookServer resolves the server binary: name on PATH, or without a name
// redis-server, else redis-tools' redis-check-rdb.
func lookServer(name string) (string, error) {
	if name == "" {
		if p, err := exec.LookPath("redis-server"); err == nil {
			return p, nil
		}
		if p, err := exec.LookPath(debianServer); err == nil {
			return p, nil
		}
		name = "redis-server"
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("redis-server binary %q not found (install it: apt-get install --no-install-recommends redis-tools, or pass the path): %w", name, err)
	}
	return p, nil
}

// runnable returns what to exec for bin: bin itself, or for redis-tools'
// binary a link to it named redis-server in dir, so that the server runs as
// a server and its process is named redis-server.
func runnable(bin, dir string) (string, error) {
	if filepath.Base(bin) != debianServer {
		return bin, nil
	}
	link := filepath.Join(dir, "redis-server")
	if err := os.Symlink(bin, link); err != nil {
		if t, rerr := os.Readlink(link); rerr != nil || t != bin || !errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("link %s as redis-server: %w", bin, err)
		}
	}
	return link, nil
}
