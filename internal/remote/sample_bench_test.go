package remote_test

import (
	"context"
	"io/fs"
	"testing"
	"time"

	"redline/internal/profile"
	"redline/internal/remote"
	"redline/internal/serverhost"
	"redline/internal/testutil"
)

// BenchmarkSampleOverSSH is what one side of a run breakdown of the server
// host costs over ssh: a sample of its /proc (with a started server's
// threads) through the session, read into a breakdown snapshot. Compare
// with BenchmarkSampleLocal (docs/benchmarks.md).
func BenchmarkSampleOverSSH(b *testing.B) {
	testutil.Need(b, "redis-server")
	h := newTwoHosts(b)
	a, _ := binaries(b)
	c := dial(b, h.dialOptions(b, a))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var srv remote.RedisServer
	if err := c.Call(ctx, serverhost.OpRedisStart, serverhost.RedisStartArgs{Bind: h.Pair.ServerIP, Config: []string{"io-threads 4"}, Password: "pw"}, &srv); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		fsys, err := serverhost.NewRemote(c, "srv").Sample(ctx)
		if err != nil {
			b.Fatal(err)
		}
		snapshot(b, fsys, srv.Pid)
	}
}

// BenchmarkSampleLocal is the same snapshot read from this host's /proc
// (of this test process's threads).
func BenchmarkSampleLocal(b *testing.B) {
	for b.Loop() {
		snapshot(b, nil, 1)
	}
}

func snapshot(b *testing.B, fsys fs.FS, pid int) {
	if _, err := profile.ReadSnapshot(profile.BreakdownOptions{FS: fsys, PID: pid}); err != nil {
		b.Fatal(err)
	}
}
