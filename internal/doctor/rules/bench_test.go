package rules

import (
	"context"
	"io"
	"testing"

	"redline/internal/doctor"
	"redline/internal/redisadmin"
	"redline/internal/redistest"
)

// BenchmarkDoctorLive is a whole live run: host.Read of this machine, the
// server's INFO, CONFIG GET *, LATENCY LATEST, redis.conf and log, every
// rule, and the text report.
func BenchmarkDoctorLive(b *testing.B) {
	s := redistest.Start(b)
	ctx := context.Background()
	opts := doctor.GatherOptions{Root: "/", Redis: &redisadmin.Options{Addr: s.Addr()}}
	b.ResetTimer()
	for b.Loop() {
		f, err := doctor.Gather(ctx, opts)
		if err != nil {
			b.Fatal(err)
		}
		rep, err := doctor.Run(ctx, f, doctor.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := doctor.WriteText(io.Discard, rep, doctor.RenderOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRules is the rules alone over prepared facts.
func BenchmarkRules(b *testing.B) {
	f := writeupFacts()
	ctx := context.Background()
	for b.Loop() {
		if _, err := doctor.Run(ctx, f, doctor.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
