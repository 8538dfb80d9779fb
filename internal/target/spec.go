// Package target is the engine-level target of redline autotune: the
// session's redis-server (managed, in a network namespace, attached, on a
// server host over ssh, a Redis Cluster) over the one server-host API
// (serverhost.Host), and how one configuration of the knob catalog
// reaches it (one method per knobs.Method, methods.go). internal/cli
// parses the flags into Options, calls Autotune once and prints what it
// says and returns (run.go). The policies a target decides (the address
// a server binds to, where a password may go, the production-host guard,
// maxclients) are in policy.go, shared with the lab.
package target

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"redline/internal/autotune"
	"redline/internal/knobs"
	"redline/internal/redisparam"
	"redline/internal/textsafe"
)

// Spec is what a session measures: journaled with the session (its JSON
// is the journal's target), so --resume measures the same.
type Spec struct {
	ServerConfig []string `json:"server_config,omitempty"`
	Workload     string   `json:"workload"`
	Objective    string   `json:"objective"`
	// P99Max bounds the p99 of a throughput objective (--p99-max).
	P99Max time.Duration `json:"p99_max,omitempty"`
	Knobs  []string      `json:"knobs,omitempty"`
	Allow  []string      `json:"allow,omitempty"`
	// AllowHostWide overrides the production-host guard: host-wide
	// knobs are tried beside other redis-servers too.
	AllowHostWide bool `json:"allow_host_wide,omitempty"`
	// Doctor says which knobs the doctor's findings put first (journaled:
	// a resumed session says it too).
	Doctor []string `json:"doctor,omitempty"`
	// The server host: this machine, or a session over ssh (its
	// options, never a password); its journal directory there.
	SSH       string        `json:"ssh,omitempty"`
	SSHConfig string        `json:"ssh_config,omitempty"`
	SSHSudo   bool          `json:"ssh_sudo,omitempty"`
	NoPush    bool          `json:"no_push,omitempty"`
	Heartbeat time.Duration `json:"ssh_heartbeat,omitempty"`
	StateDir  string        `json:"state_dir,omitempty"`
	// An attached server (someone's: never restarted, flushed or
	// stopped), by address or socket; its password comes from the
	// command line each time (PassFile, never journaled, or
	// $REDISCLI_AUTH), on --resume only for an address confirmed there
	// (cli/autotune_resume.go).
	Addr     string `json:"addr,omitempty"`
	Socket   string `json:"socket,omitempty"`
	User     string `json:"user,omitempty"`
	PassFile string `json:"-"`
	// NetNS starts the managed server in a network namespace of its own,
	// the load coming from another (the lab's target kind netns).
	NetNS bool `json:"netns,omitempty"`
	// Builds are server.build's values (--build NAME=SPEC) and, once
	// built, their provenance: --resume builds the same (build.go).
	Builds []Build `json:"builds,omitempty"`
	// Cluster is a Redis Cluster (cluster.go): with Addr an existing one,
	// else one started here of Primaries primaries with Replicas replicas
	// each.
	Cluster   bool `json:"cluster,omitempty"`
	Primaries int  `json:"primaries,omitempty"`
	Replicas  int  `json:"replicas,omitempty"`
}

// Attached says whether the target is an existing server.
func (t Spec) Attached() bool { return t.Addr != "" || t.Socket != "" }

// BuildNames are the values of server.build in this session.
func (t Spec) BuildNames() []string {
	var names []string
	for _, b := range t.Builds {
		names = append(names, b.Name)
	}
	return names
}

// Candidates splits the catalog into the candidates this spec can try
// and the knobs it leaves untested, with why.
func Candidates(t Spec) (cands []autotune.Candidate, untested []string) {
	for _, k := range knobs.Catalog() {
		if len(t.Knobs) > 0 && !slices.Contains(t.Knobs, k.Name) {
			continue
		}
		var why string
		switch {
		case !k.Allowed(t.Allow) && k.Safety == knobs.Never:
			why = "never tried: " + k.Why
		case !k.Allowed(t.Allow):
			why = "review class (durability, memory, security or host-wide): --allow " + k.Name
		case k.SessionValues() && len(t.Builds) == 0:
			why = "no --build NAME=SPEC given"
		}
		if why != "" {
			untested = append(untested, k.Name+": "+why)
			continue
		}
		values := k.Values
		if k.SessionValues() {
			values = t.BuildNames()
		}
		cands = append(cands, autotune.Candidate{Knob: k.Name, Values: values, Numeric: k.Numeric})
	}
	return cands, untested
}

// CheckJournal holds the journal's candidates to the catalog:
// known knobs the target allows, the catalog's values (server.build's:
// the journal's own build names).
func CheckJournal(cands []autotune.Candidate, t Spec) error {
	for _, c := range cands {
		k, ok := knobs.Lookup(c.Knob)
		if !ok || !k.Allowed(t.Allow) {
			return fmt.Errorf("the journal's knob %q: not in the catalog, or not allowed (--allow)", textsafe.Printable(c.Knob))
		}
		for _, v := range c.Values {
			if !journalValueOK(k, v, t) {
				return fmt.Errorf("the journal's knob %s: value %q is neither one the catalog tries nor a valid change", k.Name, textsafe.Printable(v))
			}
		}
	}
	return nil
}

// journalValueOK: one of the catalog's values, a build the journal names
// (server.build), or a value the doctor put first that passes the
// change's own allow-list or a scenario's config-line rule.
func journalValueOK(k knobs.Knob, v string, t Spec) bool {
	switch {
	case k.SessionValues():
		return slices.ContainsFunc(t.Builds, func(b Build) bool { return b.Name == v })
	case slices.Contains(k.Values, v):
		return true
	case k.Numeric:
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return false
		}
	}
	if ch, ok := k.Change(v); ok {
		return ch.Validate() == nil
	}
	if st, ok := k.Start(v); ok && st.ConfigLine != "" {
		return redisparam.CheckLine(st.ConfigLine) == nil
	}
	return false
}
