// Package tune applies and restores host and Redis changes. Every write is
// journaled (old value, fsync) before it happens, read back after it, and
// can be undone after a crash from the journal on disk. It is the only
// package that writes under /proc or /sys. What a change.Change means is
// package change's; what it does to the machine is here, one kindOps per
// change.Kind.
package tune
