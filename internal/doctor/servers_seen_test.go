package doctor

import (
	"fmt"
	"redline/internal/textsafe"
	"strings"
	"testing"
)

// A shared host (or a test machine) has dozens of quiet servers in other
// network namespaces: the brief list names a few and counts the rest, its
// own namespace's servers all listed; --verbose names every one.
func TestServersSeenCountsOtherNamespacesBeyondAFew(t *testing.T) {
	r := &Report{}
	for i := 0; i < 3; i++ {
		r.Servers = append(r.Servers, ServerSeen{Pid: 100 + i, Listen: []string{fmt.Sprintf("127.0.0.1:%d", 7000+i)}})
	}
	for i := 0; i < 20; i++ {
		r.Servers = append(r.Servers, ServerSeen{Pid: 200 + i, Listen: []string{fmt.Sprintf("127.0.0.1:%d", 8000+i)}, NetNS: fmt.Sprintf("/proc/%d/ns/net", 200+i)})
	}
	var brief, verbose strings.Builder
	writeServers(textsafe.NewWriter(&brief), r, false)
	writeServers(textsafe.NewWriter(&verbose), r, true)
	for i := 0; i < 3; i++ {
		if !strings.Contains(brief.String(), fmt.Sprintf(":%d", 7000+i)) {
			t.Errorf("this namespace's server :%d not listed:\n%s", 7000+i, brief.String())
		}
	}
	if !strings.Contains(brief.String(), "and 16 more in other network namespaces (--verbose lists each)") || strings.Contains(brief.String(), ":8019") {
		t.Errorf("brief: want 4 other namespaces' servers and a count:\n%s", brief.String())
	}
	if n := strings.Count(brief.String(), "\n"); n > 9 {
		t.Errorf("brief: %d lines:\n%s", n, brief.String())
	}
	for i := 0; i < 20; i++ {
		if !strings.Contains(verbose.String(), fmt.Sprintf(":%d", 8000+i)) {
			t.Errorf("verbose: :%d not listed:\n%s", 8000+i, verbose.String())
		}
	}
}
