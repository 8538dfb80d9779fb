package bench

import "sync"

// Redis Cluster maps a key to one of 16384 slots: CRC16 (XMODEM: poly
// 0x1021, init 0) of the key, or of its hash tag (the bytes between the
// first '{' and the next '}' when that is not empty), modulo 16384.
// Source: the cluster specification, "Keys distribution model".

// ClusterSlots is the number of hash slots in a Redis Cluster.
const ClusterSlots = 16384

var crc16Table = func() (t [256]uint16) {
	for i := range t {
		c := uint16(i) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x1021
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()

func crc16(b []byte) uint16 {
	var c uint16
	for _, x := range b {
		c = c<<8 ^ crc16Table[byte(c>>8)^x]
	}
	return c
}

// HashSlot returns the cluster slot of key, honouring hash tags.
func HashSlot(key []byte) uint16 {
	for i, x := range key {
		if x != '{' {
			continue
		}
		for j := i + 1; j < len(key); j++ {
			if key[j] == '}' {
				if j > i+1 {
					key = key[i+1 : j]
				}
				return crc16(key) & (ClusterSlots - 1)
			}
		}
		break
	}
	return crc16(key) & (ClusterSlots - 1)
}

// respArg returns argument i of one RESP-encoded command (an array of
// bulk strings, as the generator writes it), or nil when it has fewer.
func respArg(req []byte, i int) []byte {
	pos, n, ok := respLen(req, 0, '*')
	if !ok || i >= n {
		return nil
	}
	for a := 0; ; a++ {
		var l int
		if pos, l, ok = respLen(req, pos, '$'); !ok || pos+l > len(req) {
			return nil
		}
		if a == i {
			return req[pos : pos+l]
		}
		pos += l + 2
	}
}

// respLen reads a "<kind><digits>\r\n" header at pos and returns where its
// payload starts and the number.
func respLen(b []byte, pos int, kind byte) (int, int, bool) {
	if pos >= len(b) || b[pos] != kind {
		return 0, 0, false
	}
	n := 0
	for pos++; pos < len(b) && b[pos] != '\r'; pos++ {
		if b[pos] < '0' || b[pos] > '9' {
			return 0, 0, false
		}
		n = n*10 + int(b[pos]-'0')
	}
	return pos + 2, n, pos+1 < len(b)
}

// slotTagWidth is the width of a SlotTag's replacement: "{" + 4 + "}".
const slotTagWidth = 6

var slotTags = sync.OnceValue(func() *[ClusterSlots][slotTagWidth]byte {
	// The first 4-character alphanumeric string (in counting order) whose
	// CRC16 lands in each slot; about 200,000 strings cover all 16384.
	const alphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	var t [ClusterSlots][slotTagWidth]byte
	left := ClusterSlots
	for i := 0; left > 0; i++ {
		var s [4]byte
		for j, n := 3, i; j >= 0; j-- {
			s[j] = alphabet[n%len(alphabet)]
			n /= len(alphabet)
		}
		slot := crc16(s[:]) & (ClusterSlots - 1)
		if t[slot][0] == 0 {
			t[slot] = [slotTagWidth]byte{'{', s[0], s[1], s[2], s[3], '}'}
			left--
		}
	}
	return &t
})

// slotTag returns a hash tag whose keys hash to slot.
func slotTag(slot uint16) [slotTagWidth]byte { return slotTags()[slot] }
