package testutil

import (
	"fmt"
	"os"
	"strings"
)

// ProcessAlive reports whether pid runs (a zombie counts as gone).
func ProcessAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(rest, "Z")
}
