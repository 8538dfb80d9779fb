package cli

import "redline/internal/target"

// autotuneApplyRefusal says why --apply cannot be honoured on this
// target before anything is measured ("" when it can): a managed server
// (one the session starts, here or over --ssh) stops when the session
// ends, and its CONFIG SET values with it, while a host knob of the same
// plan would stay: half a plan applied to nothing. --apply needs a server
// that outlives the session; for a managed one the answer is plan.yaml.
func autotuneApplyRefusal(t target.Spec) string {
	if t.Attached() {
		return ""
	}
	return "--apply needs a server that outlives the session (an existing one: --addr or --socket); the managed server stops when the session ends: apply DIR/plan.yaml to yours with redline tune apply"
}
