// Package guard watches a Redis server around a change and says whether
// the change hurt it: a baseline window of the server's health before the
// change, then the same signals after it, compared with stated rules
// (rules.go). The signals are a light open-loop probe of the server
// (PING at a fixed rate through internal/bench's open loop, each request
// timed from its intended send time) and INFO's counters read once a
// tick: commandstats (server-side time per call), errorstats, rejected
// connections, evictions, memory (used and RSS against maxmemory and the
// host's) and the server's CPU time; latencystats is kept as evidence
// where the server has it.
//
// The guard does not write anything itself: the caller applies the change
// and gives Run a Rollback that undoes it through the tune journal (the
// same call `redline tune rollback --session` makes). What a watching
// guard is doing is journaled in its state directory (state.go), so a
// guard killed mid-window is found by the next one, which watches on or
// rolls back, and says so.
package guard
