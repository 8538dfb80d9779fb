package labhost

import (
	"strings"
	"testing"

	"redline/internal/doctor"
)

// TestLabEvidenceEmptyValue: the lab report printed an empty
// ip_local_reserved_ports as "` /proc/sys/net/ipv4/ip_local_reserved_ports =  `"
// (issue 41); the lab records evidence as doctor prints it: `= ""`.
func TestLabEvidenceEmptyValue(t *testing.T) {
	f := findingOf(doctor.Finding{ID: "reserved-ports", Evidence: []doctor.Evidence{
		{Source: "/proc/sys/net/ipv4/ip_local_reserved_ports", Value: ""},
		{Source: "CONFIG GET maxmemory", Value: "0", Note: "no limit"}}}, "127.0.0.1:6379")
	if len(f.Evidence) != 2 || f.Evidence[0] != `/proc/sys/net/ipv4/ip_local_reserved_ports = ""` || !strings.HasPrefix(f.Evidence[1], "CONFIG GET maxmemory = 0") {
		t.Errorf("evidence %q", f.Evidence)
	}
}
