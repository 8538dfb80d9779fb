package doctor

import (
	"context"
	"strings"
	"testing"
	"time"

	"redline/internal/redisadmin"
)

// TestDiagnoseFallback: a server nobody named (HostOnlyFallback) that
// cannot be reached leaves the host checked alone, saying why; a cluster
// asked for (--cluster, here or through a session) never falls back to
// the host alone.
func TestDiagnoseFallback(t *testing.T) {
	ctx := context.Background()
	down := &redisadmin.Options{Addr: "127.0.0.1:1", Timeout: time.Second}
	rep, err := Diagnose(ctx, DiagnoseOptions{Gather: GatherOptions{Root: "/", Redis: down}, HostOnlyFallback: true, Rules: Options{Only: []string{"overcommit-memory"}}})
	if err != nil || rep.Target.RedisError == "" || !strings.Contains(rep.Target.RedisNote, "no server at the default address 127.0.0.1:1") {
		t.Fatalf("fallback: %v, target %+v", err, rep.Target)
	}
	yes := true
	if _, err := Diagnose(ctx, DiagnoseOptions{Gather: GatherOptions{Root: "/", Redis: down, Cluster: &yes}, HostOnlyFallback: true}); err == nil {
		t.Fatal("a cluster asked for fell back to the host alone")
	}
	if _, err := Diagnose(ctx, DiagnoseOptions{Gather: GatherOptions{Root: "/", Redis: down}}); err == nil {
		t.Fatal("a server asked for fell back to the host alone")
	}
}
