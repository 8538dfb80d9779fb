package doctor

import (
	"fmt"
	"net"
	"redline/internal/textsafe"
	"sort"
	"strings"
)

// ServerSeen is a redis-server the host snapshot found: where it listens,
// and whether the Redis rules (INFO, CONFIG) judged it. Process rules judge
// every one; the Redis rules only the server doctor connected to.
type ServerSeen struct {
	Pid        int      `json:"pid"`
	Listen     []string `json:"listen,omitempty"` // "127.0.0.1:6379"
	RedisRules bool     `json:"redis_rules"`
	// NetNS is how to reach a server in another network namespace than
	// doctor's (--netns NETNS): dialling its address from here reaches
	// another server, or none. Empty for one in doctor's namespace.
	NetNS string `json:"netns,omitempty"`
}

// serversSeen lists the snapshot's redis-servers, by pid.
func serversSeen(f *Facts) []ServerSeen {
	if f.Host == nil {
		return nil
	}
	var out []ServerSeen
	for _, p := range f.Host.Processes {
		s := ServerSeen{Pid: p.PID, RedisRules: f.HasRedis() && f.Redis.Process.Local && f.Redis.Process.Pid == p.PID, Listen: p.ListenAddrs()}
		if p.OtherNetNS() {
			s.NetNS = p.NetNSFlag()
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Pid < out[j].Pid })
	return out
}

// writeServers lists the servers found, when there are several, with what
// was judged for each: the process rules judged every one, the Redis rules
// only the server doctor connected to. Servers of which nothing fired share
// one wrapped list of addresses; the others have a line each. Without
// verbose, the quiet servers of other network namespaces beyond
// quietOthers are counted, not listed (a shared host or a test machine has
// dozens: the list would bury the findings).
func writeServers(tw *textsafe.Writer, r *Report, verbose bool) {
	if len(r.Servers) < 2 {
		return
	}
	judged := "none (pick a server with -p PORT)"
	if r.Target.Redis != "" {
		judged = r.Target.Redis
	}
	elsewhere := ""
	tw.Printf("\nRedis servers found (%d): the process rules judged each, the Redis rules %s\n", len(r.Servers), judged)
	var quiet, quietElsewhere []string
	for _, s := range r.Servers {
		listen := strings.Join(s.Listen, " ")
		if listen == "" {
			listen = fmt.Sprintf("pid %d (no listener read)", s.Pid)
		}
		if s.NetNS != "" {
			listen += " in netns " + s.NetNS
			if elsewhere == "" && len(s.Listen) > 0 {
				elsewhere = s.NetNS + " -p " + portOf(s.Listen[0])
			}
		}
		fired := firedFor(r, s.Pid)
		if fired == 0 && !s.RedisRules {
			if s.NetNS != "" {
				quietElsewhere = append(quietElsewhere, listen)
			} else {
				quiet = append(quiet, listen)
			}
			continue
		}
		what := fmt.Sprintf("%d process finding(s)", fired)
		if s.RedisRules {
			what += ", Redis rules judged"
		}
		tw.Printf("  pid %d %s: %s\n", s.Pid, listen, what)
	}
	if n := len(quietElsewhere); n > quietOthers && !verbose {
		quiet = append(quiet, quietElsewhere[:quietOthers]...)
		quiet = append(quiet, fmt.Sprintf("and %d more in other network namespaces (--verbose lists each)", n-quietOthers))
	} else {
		quiet = append(quiet, quietElsewhere...)
	}
	if len(quiet) > 0 {
		writeWrapped(tw, "  nothing fired: ", quiet, 100)
	}
	if elsewhere != "" {
		tw.Printf("  a server in another network namespace is reached from there: --netns NETNS -p PORT (e.g. --netns %s)\n", elsewhere)
	}
}

// quietOthers is how many quiet servers of other network namespaces the
// brief report lists by address.
const quietOthers = 4

// portOf is the port of "0.0.0.0:6379".
func portOf(addr string) string {
	_, port, _ := net.SplitHostPort(addr)
	return port
}

func firedFor(r *Report, pid int) int {
	n := 0
	for _, f := range r.Findings {
		if f.Status == Fired && f.Pid == pid {
			n++
		}
	}
	return n
}

// writeWrapped writes words after lead, comma-separated, in lines of at
// most width columns (a longer word gets a line of its own).
func writeWrapped(tw *textsafe.Writer, lead string, words []string, width int) {
	line := lead
	for i, w := range words {
		if i < len(words)-1 {
			w += ","
		}
		if len(line)+len(w) >= width && line != lead && strings.TrimSpace(line) != "" {
			tw.Printf("%s\n", strings.TrimRight(line, " "))
			line = strings.Repeat(" ", len(lead))
		}
		line += w + " "
	}
	tw.Printf("%s\n", strings.TrimRight(line, " "))
}
