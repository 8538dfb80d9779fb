package kernel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// /sys/kernel/btf/vmlinux is the running kernel's type information, raw
// BTF (include/uapi/linux/btf.h): a header, then a section of type
// records numbered from 1 in the order they appear, then a section of
// NUL-terminated names. A record is 12 bytes (name offset; info: vlen in
// bits 0-15, kind in 24-28, kind_flag in 31; size or type) followed by
// data whose length depends on the kind, e.g. a STRUCT's members, 12
// bytes each (name offset, type id, offset in bits):
//
//	9f eb 01 00 18 00 00 00  00 00 00 00 ...   magic 0xeb9f, version 1, header length 24
//
// The fd iterator needs of it the id of the function it attaches to and
// where, in this build of the kernel, a few struct members sit: the
// offsets change with the kernel's version and configuration.

// fdIterBTF is what the task_file program is built from.
type fdIterBTF struct {
	attachID    uint32 // the FUNC bpf_iter_task_file
	fileInode   int16  // byte offsets: struct file.f_inode,
	inodeMode   int16  // struct inode.i_mode (2 bytes),
	inodeIno    int16  // struct inode.i_ino,
	inoSize     uint32 // whose size is 4 or 8 bytes,
	inodeSB     int16  // struct inode.i_sb,
	sbMagic     int16  // struct super_block.s_magic (8 bytes),
	groupLeader int16  // struct task_struct.group_leader
}

const (
	btfKindInt      = 1
	btfKindPtr      = 2
	btfKindStruct   = 4
	btfKindUnion    = 5
	btfKindEnum     = 6
	btfKindTypedef  = 8
	btfKindVolatile = 9
	btfKindConst    = 10
	btfKindRestrict = 11
	btfKindFunc     = 12
	btfKindTypeTag  = 18
	btfKindEnum64   = 19
)

// btfExtra is the length of the data after a record of each kind, as
// (fixed, per vlen item); kinds 1 to 19.
var btfExtra = [...][2]int{
	1: {4, 0}, 2: {0, 0}, 3: {12, 0}, 4: {0, 12}, 5: {0, 12}, 6: {0, 8}, 7: {0, 0},
	8: {0, 0}, 9: {0, 0}, 10: {0, 0}, 11: {0, 0}, 12: {0, 0}, 13: {0, 8}, 14: {4, 0},
	15: {0, 12}, 16: {0, 0}, 17: {4, 0}, 18: {0, 0}, 19: {0, 12},
}

// btfTypes is a parsed type section: where each type's record starts.
type btfTypes struct {
	types []byte
	strs  []byte
	at    []uint32          // at[id-1] is the offset of type id's record
	named map[string]uint32 // the first FUNC or STRUCT (with members) of each name asked for
}

var errBTFShort = errors.New("btf: truncated")

// parseBTF checks the header and numbers the type records, noting the
// ids of the functions and structs named; it never reads past the data
// it is given.
func parseBTF(data []byte, names ...string) (*btfTypes, error) {
	le := binary.LittleEndian
	if len(data) < 24 || le.Uint16(data) != 0xeb9f {
		return nil, errors.New("btf: no little-endian BTF header")
	}
	hdr := uint64(le.Uint32(data[4:]))
	typeOff, typeLen := uint64(le.Uint32(data[8:])), uint64(le.Uint32(data[12:]))
	strOff, strLen := uint64(le.Uint32(data[16:])), uint64(le.Uint32(data[20:]))
	size := uint64(len(data))
	if hdr < 24 || hdr+typeOff+typeLen > size || hdr+strOff+strLen > size {
		return nil, errBTFShort
	}
	b := &btfTypes{types: data[hdr+typeOff : hdr+typeOff+typeLen], strs: data[hdr+strOff : hdr+strOff+strLen],
		at: make([]uint32, 0, typeLen/24), named: map[string]uint32{}}
	for off := 0; off < len(b.types); {
		if off+12 > len(b.types) {
			return nil, errBTFShort
		}
		info := le.Uint32(b.types[off+4:])
		kind, vlen := int(info>>24&0x1f), int(info&0xffff)
		if kind == 0 || kind >= len(btfExtra) {
			return nil, fmt.Errorf("btf: type %d has unknown kind %d", len(b.at)+1, kind)
		}
		b.at = append(b.at, uint32(off))
		if kind == btfKindFunc || (kind == btfKindStruct || kind == btfKindUnion) && vlen > 0 {
			b.note(le.Uint32(b.types[off:]), names)
		}
		off += 12 + btfExtra[kind][0] + vlen*btfExtra[kind][1]
		if off > len(b.types) {
			return nil, errBTFShort
		}
	}
	return b, nil
}

// record returns type id's kind, vlen, kind_flag, size-or-type and data.
func (b *btfTypes) record(id uint32) (kind, vlen int, kflag bool, sizeType uint32, rest []byte, ok bool) {
	if id == 0 || int(id) > len(b.at) {
		return 0, 0, false, 0, nil, false
	}
	off := int(b.at[id-1])
	info := binary.LittleEndian.Uint32(b.types[off+4:])
	kind, vlen = int(info>>24&0x1f), int(info&0xffff)
	end := off + 12 + btfExtra[kind][0] + vlen*btfExtra[kind][1] // within types: parseBTF checked
	return kind, vlen, info>>31 == 1, binary.LittleEndian.Uint32(b.types[off+8:]), b.types[off+12 : end], true
}

// nameIs says whether the string at off is name.
func (b *btfTypes) nameIs(off uint32, name string) bool {
	end := uint64(off) + uint64(len(name))
	return end < uint64(len(b.strs)) && string(b.strs[off:end]) == name && b.strs[end] == 0
}

// note keeps the id of the type just numbered if its name is one of
// names and the first of that name.
func (b *btfTypes) note(nameOff uint32, names []string) {
	for _, name := range names {
		if b.nameIs(nameOff, name) {
			if _, seen := b.named[name]; !seen {
				b.named[name] = uint32(len(b.at))
			}
		}
	}
}

// find returns the id of the type of kind named name (a STRUCT or
// UNION with members: not a declaration), one parseBTF was asked to
// note.
func (b *btfTypes) find(kind int, name string) (uint32, error) {
	id, ok := b.named[name]
	if k, _, _, _, _, _ := b.record(id); !ok || k != kind {
		return 0, fmt.Errorf("btf: no %s (kind %d)", name, kind)
	}
	return id, nil
}

// member returns the byte offset and the size of struct's direct member
// name (not one inside an anonymous union); the size is that of the type
// the member resolves to through typedefs and qualifiers.
func (b *btfTypes) member(structName, name string) (int16, uint32, error) {
	m, kflag, err := b.memberRecord(btfKindStruct, structName, name)
	if err != nil {
		return 0, 0, err
	}
	bits := binary.LittleEndian.Uint32(m[8:])
	if kflag {
		bits &= 0xffffff // the high 8 bits are a bitfield's size
	}
	if bits%8 != 0 || bits/8 > 0x7fff {
		return 0, 0, fmt.Errorf("btf: %s.%s at bit %d", structName, name, bits)
	}
	size, err := b.size(binary.LittleEndian.Uint32(m[4:]))
	return int16(bits / 8), size, err
}

// memberRecord returns the 12-byte member record of name in the struct
// or union (kind) typeName, and the type's kind_flag.
func (b *btfTypes) memberRecord(kind int, typeName, name string) ([]byte, bool, error) {
	id, err := b.find(kind, typeName)
	if err != nil {
		return nil, false, err
	}
	_, vlen, kflag, _, rest, _ := b.record(id)
	for i := 0; i < vlen && 12*i+12 <= len(rest); i++ {
		if m := rest[12*i:]; b.nameIs(binary.LittleEndian.Uint32(m), name) {
			return m, kflag, nil
		}
	}
	return nil, false, fmt.Errorf("btf: %s has no member %s", typeName, name)
}

// size resolves id through typedefs and qualifiers to an integer, enum
// or pointer and returns its size in bytes.
func (b *btfTypes) size(id uint32) (uint32, error) {
	for range 32 { // a chain of modifiers; a loop in hostile data ends here
		kind, _, _, sizeType, _, ok := b.record(id)
		switch {
		case !ok:
			return 0, fmt.Errorf("btf: no type %d", id)
		case kind == btfKindPtr:
			return 8, nil
		case kind == btfKindInt || kind == btfKindEnum || kind == btfKindEnum64:
			return sizeType, nil
		case kind == btfKindTypedef || kind == btfKindVolatile || kind == btfKindConst ||
			kind == btfKindRestrict || kind == btfKindTypeTag:
			id = sizeType
		default:
			return 0, fmt.Errorf("btf: type %d is of kind %d, not a scalar", id, kind)
		}
	}
	return 0, fmt.Errorf("btf: type %d: too many modifiers", id)
}

// readFDIterBTF parses the running kernel's BTF. It maps the file where
// the kernel allows it (6.16 and later, read-only and private only):
// read(2) of sysfs copies it a page a call, 1,350 calls for 5.5 MB,
// and io.ReadAll zeroes each buffer it grows to: most of the one-off
// cost.
func readFDIterBTF() (fdIterBTF, error) {
	const path = "/sys/kernel/btf/vmlinux"
	f, err := os.Open(path)
	if err != nil {
		return fdIterBTF{}, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > 0 && st.Size() < 1<<30 {
		if data, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_PRIVATE); err == nil {
			defer unix.Munmap(data)
			return parseFDIterBTF(data)
		}
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return fdIterBTF{}, fmt.Errorf("%s: %w", path, err)
	}
	return parseFDIterBTF(data)
}

// parseFDIterBTF finds in raw vmlinux BTF what the task_file program
// needs; it errs on anything missing or of an unexpected size.
func parseFDIterBTF(data []byte) (fdIterBTF, error) {
	var out fdIterBTF
	b, err := parseBTF(data, "bpf_iter_task_file", "bpf_iter_link_info", "file", "inode", "super_block", "task_struct")
	if err != nil {
		return out, err
	}
	if out.attachID, err = b.find(btfKindFunc, "bpf_iter_task_file"); err != nil {
		return out, err
	}
	// The pid filter came in 6.1 with the union's task member. Before,
	// the union was 4 bytes and the link is refused (E2BIG: the pid sits
	// in its non-zero tail); checked here so as not to load a program
	// for nothing, and to say why.
	if _, _, err := b.memberRecord(btfKindUnion, "bpf_iter_link_info", "task"); err != nil {
		return out, fmt.Errorf("%w: no pid filter for task iterators (Linux 6.1)", err)
	}
	var sizes [6]uint32
	for i, m := range []struct {
		s, m string
		off  *int16
	}{
		{"file", "f_inode", &out.fileInode},
		{"inode", "i_mode", &out.inodeMode},
		{"inode", "i_ino", &out.inodeIno},
		{"inode", "i_sb", &out.inodeSB},
		{"super_block", "s_magic", &out.sbMagic},
		{"task_struct", "group_leader", &out.groupLeader},
	} {
		if *m.off, sizes[i], err = b.member(m.s, m.m); err != nil {
			return out, err
		}
	}
	out.inoSize = sizes[2]
	if sizes != [6]uint32{8, 2, out.inoSize, 8, 8, 8} || (out.inoSize != 4 && out.inoSize != 8) {
		return out, fmt.Errorf("btf: unexpected sizes %v of f_inode, i_mode, i_ino, i_sb, s_magic, group_leader", sizes)
	}
	return out, nil
}
