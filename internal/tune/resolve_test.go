package tune

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"redline/internal/change"
)

// Issue 10 item 5: one invalid change refuses the whole plan before any
// write: a magic link to the whole filesystem, /proc/sysrq-trigger, or a
// value with a newline (item 6), placed after valid changes.
func TestInvalidChangeRefusesWholePlan(t *testing.T) {
	bad := []change.Change{
		{Kind: change.KindFile, Target: "/proc/self/root/tmp/redline-victim", Value: "1"},
		{Kind: change.KindFile, Target: "/proc/1/root/tmp/redline-victim", Value: "1"},
		{Kind: change.KindFile, Target: "/proc/sysrq-trigger", Value: "b"},
		{Kind: change.KindSysctl, Target: "net.ipv4.tcp_max_syn_backlog", Value: "1024\n2048"},
		{Kind: change.KindFile, Target: "/sys/kernel/mm/transparent_hugepage/defrag", Value: "never\nalways"},
	}
	for _, c := range bad {
		s, root, orig := rehearsal(t)
		p := &Plan{Version: PlanVersion, Changes: []change.Change{
			{Kind: change.KindSysctl, Target: "net.core.somaxconn", Value: "1024"},
			c,
		}}
		if _, err := Apply(bg, s, p, ApplyOptions{StateDir: t.TempDir()}); err == nil {
			t.Errorf("%q: apply succeeded", c)
		}
		if n := simOf(s).Writes(); n != 0 {
			t.Errorf("%q: %d writes before the plan was refused", c, n)
		}
		requireSame(t, orig, snapshot(t, root), c.String())
	}
}

// Issue 10 item 5: a target is resolved on the machine without following
// links out of /proc or /sys; a tree whose IRQ directory links elsewhere
// is refused for the whole plan, before any write, and the file the link
// points to is untouched.
func TestTargetLinkingOutOfTreeRefused(t *testing.T) {
	s, root, _ := rehearsal(t)
	outside := t.TempDir()
	victim := filepath.Join(outside, "smp_affinity_list")
	os.WriteFile(victim, []byte("0-7\n"), 0o644)
	irq := filepath.Join(root, "proc/irq/26")
	if err := os.RemoveAll(irq); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, irq); err != nil {
		t.Fatal(err)
	}
	p := &Plan{Version: PlanVersion, Changes: []change.Change{
		{Kind: change.KindSysctl, Target: "net.core.somaxconn", Value: "1024"},
		{Kind: change.KindFile, Target: "/proc/irq/26/smp_affinity_list", Value: "3"},
	}}
	if _, err := Preview(bg, s, p); err == nil || !strings.Contains(err.Error(), "outside") {
		t.Errorf("preview: %v, want an error about resolving outside the tree", err)
	}
	if _, err := Apply(bg, s, p, ApplyOptions{StateDir: t.TempDir()}); err == nil {
		t.Error("apply through a link out of the tree succeeded")
	}
	if n := simOf(s).Writes(); n != 0 {
		t.Errorf("%d writes before the plan was refused", n)
	}
	if got := readRel(t, root, "proc/sys/net/core/somaxconn"); got != "4096" {
		t.Errorf("somaxconn %s: an earlier change was written", got)
	}
	if b, _ := os.ReadFile(victim); string(b) != "0-7\n" {
		t.Errorf("the file outside the tree now holds %q", b)
	}
}
