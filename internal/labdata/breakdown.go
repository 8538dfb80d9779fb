package labdata

import "redline/internal/profiledata"

// The server-side samples' saved forms live in internal/profiledata (a
// leaf); these names keep the saved schema's readers as they were.
type (
	Breakdown       = profiledata.Breakdown
	CPUShare        = profiledata.CPUShare
	Softnet         = profiledata.Softnet
	NodeShare       = profiledata.NodeShare
	ServerBreakdown = profiledata.ServerBreakdown
	ThreadShare     = profiledata.ThreadShare
	ThreadCounters  = profiledata.ThreadCounters
	Function        = profiledata.Function
	TopTable        = profiledata.TopTable
	Move            = profiledata.Move
	RunProfile      = profiledata.RunProfile
	Sampling        = profiledata.Sampling
	Preemptions     = profiledata.Preemptions
	Preemptor       = profiledata.Preemptor
)
