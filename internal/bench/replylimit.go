package bench

import "fmt"

// maxReply is the most one reply may take on the load path: o.MaxReply
// when set, else what the workload can produce with slack. The suite's
// largest reply is LRANGE_600's 600 values of the largest size; a server
// anyone can run (a scenario's, a shared host's loopback port) could
// otherwise announce "$4294967295" and stream until the bench is killed.
func (o *Options) maxReply() int {
	if o.MaxReply > 0 {
		return o.MaxReply
	}
	return 1<<20 + 1024*(o.Sizes.Largest()+32)
}

// partialReply checks the reply being read from target: partial bytes
// of it received, need the total Scan knows it needs (a bulk's announced
// length, 0 when unknown). One beyond maxReply ends the run at once,
// before it is buffered, naming the server.
func (r *runner) partialReply(target string, partial, need int) error {
	limit := r.o.maxReply()
	switch {
	case need > limit:
		return fmt.Errorf("Error: %s announced a reply of %d bytes, more than this workload's replies can be (%d bytes): the server is not answering these commands as Redis does (raise --max-reply if its replies are that large)", target, need, limit)
	case partial > limit:
		return fmt.Errorf("Error: %s sent more than %d bytes of one reply, more than this workload's replies can be: the server is not answering these commands as Redis does (raise --max-reply if its replies are that large)", target, limit)
	}
	return nil
}
