// Package rules holds redline doctor's rules, one per file. Each file
// registers its rule with doctor.Register from init; import this package
// (blank) wherever doctor.Run is called.
//
// Source keys in each rule (RS, K-ip, W ...) are those of the check
// catalogue (docs/doctor.md lists them).
package rules
