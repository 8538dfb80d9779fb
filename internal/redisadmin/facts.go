package redisadmin

import (
	"context"
	"fmt"
	"time"
)

// Facts is everything doctor reads from one server in one pass. Probes
// after INFO are independent: a failing one (CONFIG renamed away, LATENCY
// disabled by ACL, a log file that cannot be read) leaves its field empty
// and its error in Errors, and the rest still count.
type Facts struct {
	Addr    string         `json:"addr"`
	Version string         `json:"version"`
	Info    *Info          `json:"-"`
	Config  Config         `json:"config,omitempty"`
	Latency []LatencyEvent `json:"latency,omitempty"`
	Process Process        `json:"process"`
	// ConfFile is the redis.conf the server started from, when the server
	// is local and has one; LogWarnings the warnings its current run logged.
	ConfFile    *ConfFile `json:"conf_file,omitempty"`
	LogWarnings []string  `json:"log_warnings,omitempty"`
	// Errors maps a probe ("config", "latency", "conf-file", "log") to why
	// it returned nothing.
	Errors      map[string]string `json:"errors,omitempty"`
	CollectedAt time.Time         `json:"collected_at"`
	Elapsed     time.Duration     `json:"elapsed"`
	RoundTrips  int               `json:"round_trips"`
}

// CollectOptions tunes Collect.
type CollectOptions struct {
	ProcRoot string // default "/proc"
	// Pid overrides INFO's process_id when locating the server.
	Pid int
	// Now is the reference time for the start-time comparison; default time.Now.
	Now func() time.Time
	// Info is an INFO the caller has just read on this connection (Conn.Info
	// with no section): Collect uses it instead of asking again. RoundTrips
	// then leaves it out.
	Info *Info
}

// Collect reads INFO, CONFIG GET *, LATENCY LATEST and, for a server on
// this host, its redis.conf and its start-up warnings. Only a failed INFO
// is an error: without it nothing about the server is known.
func Collect(ctx context.Context, c *Conn, o CollectOptions) (*Facts, error) {
	if o.ProcRoot == "" {
		o.ProcRoot = "/proc"
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	start := time.Now()
	f := &Facts{Addr: c.Addr(), Errors: map[string]string{}}
	rt0 := c.RoundTrips
	info, err := o.Info, error(nil)
	if info == nil {
		info, err = ReadInfo(ctx, c)
	}
	if err != nil {
		return nil, err
	}
	f.Info, f.Version = info, info.Version()
	f.CollectedAt = o.Now()
	if f.Config, err = c.ConfigGet(ctx, "*"); err != nil {
		f.Errors["config"] = err.Error()
	}
	if f.Latency, err = c.LatencyLatest(ctx); err != nil {
		f.Errors["latency"] = err.Error()
	}
	f.Process = Locate(info, o.ProcRoot, o.Pid, f.CollectedAt)
	if f.Process.Local {
		f.readFiles(o.ProcRoot)
	}
	f.Elapsed, f.RoundTrips = time.Since(start), c.RoundTrips-rt0
	return f, nil
}

// ReadInfo reads everything INFO gives, as Collect does, with the error
// Collect returns; a caller that needs the INFO before Collect (whether
// the server is a cluster node) reads it so and passes it in
// CollectOptions.Info.
func ReadInfo(ctx context.Context, c *Conn) (*Info, error) {
	info, err := c.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("read INFO from %s: %w", c.Addr(), err)
	}
	return info, nil
}

func (f *Facts) readFiles(procRoot string) {
	pid := f.Process.Pid
	if path, _ := f.Info.Get("config_file"); path != "" {
		cf, err := readConfFile(procRoot, pid, path)
		if err != nil {
			f.Errors["conf-file"] = err.Error()
		}
		f.ConfFile = cf
	}
	path, _ := f.Config.Get("logfile")
	if path != "" {
		w, err := readLogWarnings(procRoot, pid, path)
		if err != nil {
			f.Errors["log"] = err.Error()
		}
		f.LogWarnings = w
	} else if out, ok := openServerStdout(procRoot, pid); ok {
		// logfile "": the server logs to its standard output, a file
		// when redline started it (redisserver's log), else a pipe or the
		// journal, which are not read.
		f.LogWarnings = logWarningsFrom(out, pid)
	}
}
