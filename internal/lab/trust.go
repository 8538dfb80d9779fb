package lab

import (
	"errors"
	"fmt"

	"redline/internal/labdata"
	"redline/internal/redisbuild"
	"redline/internal/redisparam"
	"redline/internal/redisserver"
)

// A scenario is a file someone wrote, and the lab may run as root: its
// servers' settings are held to the rules the session holds a client to
// (docs/remote.md), unless the user trusts the scenario (Options.
// TrustScenario, `redline lab --trust-scenario`, which prints what will
// run first). config lines: redisparam.CheckLine (performance settings;
// no include, loadmodule, dir, requirepass: the target's password is set
// by the lab); binary: redisserver.CheckBinary (as root, only what root
// owns from / down); env: none (LD_PRELOAD runs code in the server; the
// allocator: field preloads a known library); build: only the
// distribution's source package with a compiler found on PATH (a source
// tree's or tarball's Makefile, or a compiler named by path, runs as
// root). The load's client.env is refused as the server's env is: it
// runs code in the load tool, as root.

// ServerSpecs lists the server settings a scenario runs: its own and
// every variant's (merged over it), labelled by where they come from.
func ServerSpecs(s labdata.Scenario) (labels []string, specs []labdata.ServerSpec) {
	labels, specs = []string{"server"}, []labdata.ServerSpec{s.Server}
	for i, v := range s.Variants {
		if v.Server != nil {
			labels = append(labels, fmt.Sprintf("variants.%d.server", i))
			specs = append(specs, mergeServer(s.Server, v.Server))
		}
	}
	return labels, specs
}

// checkUntrusted applies the rules above to every server of s.
func checkUntrusted(s labdata.Scenario) error {
	labels, specs := ServerSpecs(s)
	for i, spec := range specs {
		if err := checkServerSpec(spec, s.Target.Kind == labdata.KindSSH); err != nil {
			return untrusted(labels[i], err)
		}
	}
	clients := []*labdata.ClientSpec{&s.Client}
	for _, v := range s.Variants {
		clients = append(clients, v.Client)
	}
	for i, c := range clients {
		if c != nil && len(c.Env) > 0 {
			label := "client"
			if i > 0 {
				label = fmt.Sprintf("variants.%d.client", i-1)
			}
			return untrusted(label, errors.New("env: an environment runs code in the load tool (LD_PRELOAD)"))
		}
	}
	return nil
}

func untrusted(label string, err error) error {
	return fmt.Errorf("%s: %w (a scenario is held to the session's rules; if you wrote it, run with --trust-scenario)", label, err)
}

func checkServerSpec(spec labdata.ServerSpec, remote bool) error {
	for _, line := range spec.Config {
		if err := redisparam.CheckLine(line); err != nil {
			return err
		}
	}
	if len(spec.Env) > 0 {
		return fmt.Errorf("env: an environment runs code in the server (LD_PRELOAD); use allocator: to preload a known allocator")
	}
	if b := spec.Build; b != nil {
		if err := redisbuild.CheckUntrusted(*b); err != nil {
			return err
		}
	}
	if spec.Binary != "" && !remote { // the server host checks its own
		return redisserver.CheckBinary(spec.Binary, false)
	}
	return nil
}
