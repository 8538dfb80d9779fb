package bench

// Payload produces redis-benchmark's value bytes: a linear congruential
// sequence starting at 1234, each byte '0'+((state>>16)&63), so "-d 3"
// gives "VXK" and "-d 10" gives "VXKeHogKgJ". Like redis-benchmark, the
// sequence continues from one suite pass to the next under -l.
type Payload struct{ state uint32 }

// NewPayload returns a Payload at redis-benchmark's starting state.
func NewPayload() *Payload { return &Payload{state: 1234} }

// Next returns the next n payload bytes.
func (p *Payload) Next(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		p.state = p.state*1103515245 + 12345
		b[i] = '0' + byte((p.state>>16)&63)
	}
	return b
}
