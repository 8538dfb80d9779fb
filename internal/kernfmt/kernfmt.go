// Package kernfmt parses and formats the value forms of kernel files that
// are not CPU sets (those are host.CPUSet): bracketed choices
// ("always [madvise] never") and whitespace-separated multi-value sysctls
// ("32768\t60999"). tune compares what it wrote with what it reads back in
// these normal forms, and the kernel simulator (simfs) formats what it
// stores with them.
package kernfmt

import "strings"

// Choices parses a bracketed choice file such as
// "always [madvise] never" into its options and the selected one.
// ok is false when no option is bracketed.
func Choices(s string) (options []string, selected string, ok bool) {
	for _, f := range strings.Fields(s) {
		if len(f) > 2 && f[0] == '[' && f[len(f)-1] == ']' {
			f = f[1 : len(f)-1]
			selected, ok = f, true
		}
		options = append(options, f)
	}
	return options, selected, ok
}

// FormatChoices prints options with selected in brackets, as the kernel
// does.
func FormatChoices(options []string, selected string) string {
	out := make([]string, len(options))
	for i, o := range options {
		if o == selected {
			o = "[" + o + "]"
		}
		out[i] = o
	}
	return strings.Join(out, " ")
}

// Fields normalises a multi-value sysctl: "1024\t65535\n" and "1024 65535"
// both become "1024 65535".
func Fields(s string) string { return strings.Join(strings.Fields(s), " ") }
