package textsafe

import "testing"

func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"a\tb\nc":              "a\tb\nc",
		"\x1b[31mX\x1b[0m\r":   `\x1b[31mX\x1b[0m\r`,
		"ok \u202etxt.exe":     `ok \u202etxt.exe`,
		"bad \xff utf8":        `bad \xff utf8`,
		"10.0.0.1:7001 (über)": "10.0.0.1:7001 (über)",
	} {
		if got := Printable(in); got != want {
			t.Errorf("Printable(%q) = %q, want %q", in, got, want)
		}
	}
}
