package atomicfile

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// ReadRegular reads the file at path, which must be a regular file of at
// most limit bytes, as a state file redline wrote itself is read back: the
// last component is not followed when it is a link, and a FIFO or a device
// put in its place is refused without blocking on its open.
func ReadRegular(path string, limit int64) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (%v)", path, st.Mode().Type())
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d this file can hold", path, st.Size(), limit)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: more than the %d bytes this file can hold", path, limit)
	}
	return b, nil
}
