package resp

import "strconv"

// AppendCommand appends args encoded as a RESP array of bulk strings.
func AppendCommand(dst []byte, args ...string) []byte {
	dst = AppendArrayHeader(dst, len(args))
	for _, a := range args {
		dst = AppendBulkString(dst, a)
	}
	return dst
}

// AppendArrayHeader appends "*n\r\n".
func AppendArrayHeader(dst []byte, n int) []byte {
	dst = append(dst, '*')
	dst = strconv.AppendInt(dst, int64(n), 10)
	return append(dst, '\r', '\n')
}

// AppendBulkHeader appends "$n\r\n".
func AppendBulkHeader(dst []byte, n int) []byte {
	dst = append(dst, '$')
	dst = strconv.AppendInt(dst, int64(n), 10)
	return append(dst, '\r', '\n')
}

// AppendBulkString appends s as a bulk string.
func AppendBulkString(dst []byte, s string) []byte {
	dst = AppendBulkHeader(dst, len(s))
	dst = append(dst, s...)
	return append(dst, '\r', '\n')
}
