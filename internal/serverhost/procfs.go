package serverhost

import (
	"io/fs"
	"strings"
	"testing/fstest"
)

// ProcFS serves the sample's files as an fs.FS rooted at /proc
// ("stat", "softirqs", "PID/task/TID/schedstat" ...), so the readers of a
// local /proc (profile's breakdown) read a remote host's the same way.
// Directories are those the files imply (fstest.MapFS makes them); every
// file is read-only and stamped with the sample's time.
func (smp *Sample) ProcFS() fs.FS {
	m := fstest.MapFS{}
	for name, data := range smp.Files {
		rel, ok := strings.CutPrefix(name, "/proc/")
		if !ok || !fs.ValidPath(rel) {
			continue
		}
		m[rel] = &fstest.MapFile{Data: []byte(data), Mode: 0o444, ModTime: smp.Time}
	}
	return m
}
