// Command genhosts writes the modelled fixture trees of testdata/hosts from
// the machine descriptions in internal/testutil/hostgen, and the trees built
// from public captures (hostgen.Captures). Run it from the repository root:
//
//	go run ./tools/genhosts            # rewrite every modelled tree
//	go run ./tools/genhosts NAME...    # only these
//
// Each tree keeps its hand-written SOURCE file. internal/host's tests fail
// when a committed tree no longer matches its model.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"redline/internal/testutil/hostgen"
)

func main() {
	names := os.Args[1:]
	if len(names) == 0 {
		for n := range hostgen.Models {
			names = append(names, n)
		}
		for n := range hostgen.Captures {
			names = append(names, n)
		}
		sort.Strings(names)
	}
	base := filepath.Join("testdata", "hosts")
	for _, name := range names {
		tree, ok := build(name)
		if !ok {
			fmt.Fprintf(os.Stderr, "genhosts: no model or capture %q\n", name)
			os.Exit(2)
		}
		dir := filepath.Join(base, name)
		for _, sub := range []string{"proc", "sys", "etc", "ethtool", "netns", "netaddr"} {
			if err := os.RemoveAll(filepath.Join(dir, sub)); err != nil {
				fmt.Fprintln(os.Stderr, "genhosts:", err)
				os.Exit(1)
			}
		}
		if err := tree.WriteTo(dir); err != nil {
			fmt.Fprintln(os.Stderr, "genhosts:", err)
			os.Exit(1)
		}
		fmt.Printf("%s: %d files, %d links\n", dir, len(tree.Files), len(tree.Links))
	}
}

// build returns the tree of a modelled machine or of a capture.
func build(name string) (*hostgen.Tree, bool) {
	if m, ok := hostgen.Models[name]; ok {
		return m().Build(), true
	}
	if c, ok := hostgen.Captures[name]; ok {
		return c().Build(), true
	}
	return nil, false
}
