package labdata

import "redline/internal/steerspec"

// A steer variant's words live in internal/steerspec (a leaf the engines
// import); these names keep the saved schema's readers as they were.
type (
	SteerSpec    = steerspec.Spec
	SteerSession = steerspec.Session
	SteerMove    = steerspec.Move
	SteerQueue   = steerspec.Queue
)
