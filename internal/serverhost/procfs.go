package serverhost

import (
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
	"time"
)

// ProcFS serves the sample's files as an fs.FS rooted at /proc
// ("stat", "softirqs", "PID/task/TID/schedstat" ...), so the readers of a
// local /proc (profile's breakdown) read a remote host's the same way.
// Directories are those the files imply; every file is read-only and
// stamped with the sample's time.
func (smp *Sample) ProcFS() fs.FS {
	m := mapFS{files: map[string]string{}, dirs: map[string][]string{}, at: smp.Time}
	for name, data := range smp.Files {
		rel, ok := strings.CutPrefix(name, "/proc/")
		if !ok || !fs.ValidPath(rel) {
			continue
		}
		m.files[rel] = data
		for child, dir := rel, path.Dir(rel); ; child, dir = dir, path.Dir(dir) {
			if _, seen := m.dirs[dir]; seen {
				m.dirs[dir] = appendNew(m.dirs[dir], path.Base(child))
				break
			}
			m.dirs[dir] = []string{path.Base(child)}
			if dir == "." {
				break
			}
		}
	}
	for _, names := range m.dirs {
		sort.Strings(names)
	}
	return m
}

func appendNew(names []string, n string) []string {
	for _, x := range names {
		if x == n {
			return names
		}
	}
	return append(names, n)
}

// mapFS is a read-only tree of files held in memory.
type mapFS struct {
	files map[string]string
	dirs  map[string][]string // directory -> its entries' names
	at    time.Time
}

func (m mapFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	if data, ok := m.files[name]; ok {
		return &memFile{info: m.info(name, false, len(data)), r: strings.NewReader(data)}, nil
	}
	if names, ok := m.dirs[name]; ok {
		d := &memDir{info: m.info(name, true, 0)}
		for _, n := range names {
			_, isDir := m.dirs[path.Join(name, n)]
			d.entries = append(d.entries, fs.FileInfoToDirEntry(m.info(path.Join(name, n), isDir, len(m.files[path.Join(name, n)]))))
		}
		return d, nil
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

func (m mapFS) info(name string, dir bool, size int) memInfo {
	return memInfo{name: path.Base(name), dir: dir, size: int64(size), at: m.at}
}

type memInfo struct {
	name string
	dir  bool
	size int64
	at   time.Time
}

func (i memInfo) Name() string       { return i.name }
func (i memInfo) Size() int64        { return i.size }
func (i memInfo) ModTime() time.Time { return i.at }
func (i memInfo) IsDir() bool        { return i.dir }
func (i memInfo) Sys() any           { return nil }
func (i memInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o555
	}
	return 0o444
}

type memFile struct {
	info memInfo
	r    *strings.Reader
}

func (f *memFile) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *memFile) Read(b []byte) (int, error) { return f.r.Read(b) }
func (f *memFile) Close() error               { return nil }

type memDir struct {
	info    memInfo
	entries []fs.DirEntry
	off     int
}

func (d *memDir) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *memDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.info.name, Err: fs.ErrInvalid}
}
func (d *memDir) Close() error { return nil }

// ReadDir follows fs.ReadDirFile: n <= 0 returns the rest at once.
func (d *memDir) ReadDir(n int) ([]fs.DirEntry, error) {
	rest := d.entries[d.off:]
	if n <= 0 {
		d.off = len(d.entries)
		return rest, nil
	}
	if len(rest) == 0 {
		return nil, io.EOF
	}
	n = min(n, len(rest))
	d.off += n
	return rest[:n], nil
}
