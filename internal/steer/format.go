package steer

// A tracepoint's format file, /sys/kernel/tracing/events/net/napi_gro_receive_entry/format:
//
//	name: napi_gro_receive_entry
//	ID: 2300
//	format:
//		field:unsigned short common_type;	offset:0;	size:2;	signed:0;
//		...
//		field:__data_loc char[] name;	offset:8;	size:4;	signed:0;
//		field:u16 queue_mapping;	offset:16;	size:2;	signed:0;
//		field:const void * skbaddr;	offset:24;	size:8;	signed:0;
//
// Offsets differ between kernels, so the decoder reads them from here.

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Format is one tracepoint's record layout.
type Format struct {
	Name   string
	ID     uint64
	Fields map[string]Field
}

// Field is one field of a tracepoint record.
type Field struct {
	Name    string
	Type    string // "u16", "const void *", "__data_loc char[]"
	Offset  int
	Size    int
	Signed  bool
	DataLoc bool // a __data_loc field: a u32 of (length<<16 | offset)
}

// ReadFormat reads events/GROUP/NAME/format under the tracefs mount dir.
func ReadFormat(tracefs, group, name string) (Format, error) {
	p := filepath.Join(tracefs, "events", group, name, "format")
	b, err := os.ReadFile(p)
	if err != nil {
		return Format{}, fmt.Errorf("tracepoint %s:%s: %w", group, name, err)
	}
	f, err := parseFormat(string(b))
	if err != nil {
		return Format{}, fmt.Errorf("%s: %w", p, err)
	}
	return f, nil
}

// parseFormat parses a tracepoint format file.
func parseFormat(s string) (Format, error) {
	f := Format{Fields: map[string]Field{}}
	sc := bufio.NewScanner(strings.NewReader(s))
	haveID := false
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "name:"):
			f.Name = strings.TrimSpace(strings.TrimPrefix(line, "name:"))
		case strings.HasPrefix(line, "ID:"):
			id, err := strconv.ParseUint(strings.TrimSpace(strings.TrimPrefix(line, "ID:")), 10, 64)
			if err != nil {
				return Format{}, fmt.Errorf("bad ID line %q", line)
			}
			f.ID, haveID = id, true
		case strings.HasPrefix(line, "field:"):
			fd, err := parseField(line)
			if err != nil {
				return Format{}, err
			}
			f.Fields[fd.Name] = fd
		}
	}
	if !haveID {
		return Format{}, fmt.Errorf("no ID line")
	}
	return f, nil
}

// parseField parses "field:u16 queue_mapping;	offset:16;	size:2;	signed:0;".
func parseField(line string) (Field, error) {
	var fd Field
	parts := strings.Split(line, ";")
	if len(parts) < 3 {
		return fd, fmt.Errorf("bad field line %q", line)
	}
	decl := strings.TrimSpace(strings.TrimPrefix(parts[0], "field:"))
	i := strings.LastIndexAny(decl, " *")
	if i < 0 {
		return fd, fmt.Errorf("bad field declaration %q", decl)
	}
	fd.Name, fd.Type = decl[i+1:], strings.TrimSpace(decl[:i+1])
	if j := strings.IndexByte(fd.Name, '['); j >= 0 { // "char comm[16]"
		fd.Type += fd.Name[j:]
		fd.Name = fd.Name[:j]
	}
	fd.DataLoc = strings.HasPrefix(fd.Type, "__data_loc")
	for _, kv := range parts[1:] {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), ":")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return fd, fmt.Errorf("bad %s in %q", k, line)
		}
		switch k {
		case "offset":
			fd.Offset = n
		case "size":
			fd.Size = n
		case "signed":
			fd.Signed = n != 0
		}
	}
	if fd.Name == "" || fd.Size <= 0 || fd.Offset < 0 {
		return fd, fmt.Errorf("bad field line %q", line)
	}
	return fd, nil
}

// need returns the named field, checking it is an unsigned integer of one
// of the given sizes (or a __data_loc when sizes is nil).
func (f Format) need(name string, sizes ...int) (Field, error) {
	fd, ok := f.Fields[name]
	if !ok {
		return fd, fmt.Errorf("tracepoint %s has no field %q (kernel too old or too new?)", f.Name, name)
	}
	if sizes == nil {
		if !fd.DataLoc || fd.Size != 4 {
			return fd, fmt.Errorf("tracepoint %s field %s: want a __data_loc string, have %q", f.Name, name, fd.Type)
		}
		return fd, nil
	}
	for _, s := range sizes {
		if fd.Size == s {
			return fd, nil
		}
	}
	return fd, fmt.Errorf("tracepoint %s field %s: unexpected size %d", f.Name, name, fd.Size)
}
