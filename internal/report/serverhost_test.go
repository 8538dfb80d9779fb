package report

import (
	"bytes"
	"strings"
	"testing"

	"redline/internal/change"
	"redline/internal/labdata"
)

// TestServerHostSections: a lab of kind ssh shows both hosts, the server
// host's facts answer the host.* fields, and what the server host
// restored by itself after a lost link is in both the Markdown and the
// HTML report.
func TestServerHostSections(t *testing.T) {
	res := mustLoad(t, "lab.json").Result
	res.ServerHost = &labdata.HostFacts{Hostname: "redis-a", Kernel: "6.1.0-28-amd64", CPUs: 64,
		IRQMap: []string{"eth0 combined-0: irq 35 -> CPUs 0 (node 0)"}}
	res.Target.SSH, res.Target.ServerHostname = "admin@redis-a", "redis-a"
	res.RemoteCleanup = &labdata.RemoteCleanup{Reason: "no heartbeat for 30s", Stopped: []string{"redis-server pid 4242 port 40123"},
		Restored: []labdata.PlanStep{{Change: change.Change{Kind: change.KindSysctl, Target: "net.core.somaxconn", Value: "65535"}, Old: "4096", Status: "restored"}}}
	r := FromResult(res, "lab.json")
	var md, html bytes.Buffer
	if err := WriteMarkdown(&md, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(&html, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Client host (the lab's)", "Server host", "6.1.0-28-amd64", "irq 35 -> CPUs 0 (node 0)",
		"admin@redis-a", "restored by itself", "no heartbeat for 30s", "net.core.somaxconn: restored to", "redis-server pid 4242 port 40123"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("Markdown lacks %q", want)
		}
		if !strings.Contains(html.String(), strings.ReplaceAll(strings.ReplaceAll(want, "'", "&#39;"), ">", "&gt;")) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	if in := r.Inputs[0]; in.Hostname != "redis-a" || in.Kernel != "6.1.0-28-amd64" || in.CPUs != 64 {
		t.Errorf("input's host is the client's: %+v", in)
	}
}
