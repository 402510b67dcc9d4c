package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// TestFlagErrors: the commands that parse with parseFlags refuse a bad
// flag and an argument they do not take with exit 2 and say what is wrong
// (the usage, the argument), before they read a configuration; -h is the
// command's help, exit 0.
func TestFlagErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"doctor", "extra"}, 2, `clawhost doctor: unexpected argument "extra"` + "\n" + doctorUsage},
		{[]string{"doctor", "-bogus"}, 2, "flag provided but not defined: -bogus\n" + doctorUsage},
		{[]string{"init", "extra"}, 2, `clawhost init: unexpected argument "extra"` + "\n" + initUsage},
		{[]string{"security", "audit", "extra"}, 2, `clawhost security audit: unexpected argument "extra"` + "\nusage: clawhost security audit"},
		{[]string{"security", "audit", "-bogus"}, 2, "flag provided but not defined: -bogus\nusage: clawhost security audit"},
		{[]string{"plugin", "new", "-bogus"}, 2, "flag provided but not defined: -bogus"},
		{[]string{"plugin", "package", "-bogus"}, 2, "flag provided but not defined: -bogus"},
		{[]string{"doctor", "-h"}, 0, ""},
		{[]string{"plugin", "package", "-h"}, 0, ""},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Parallel()
			var out, errb bytes.Buffer
			if code := run(append(tc.args, "-config", filepath.Join(t.TempDir(), "none.hcl")), &out, &errb); code != tc.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tc.code, errb.String())
			}
			if !strings.Contains(errb.String(), tc.want) {
				t.Errorf("stderr %q, want %q", errb.String(), tc.want)
			}
			if tc.code == 0 && !strings.Contains(out.String(), "clawhost "+tc.args[0]) {
				t.Errorf("-h printed no help for the command: %q", out.String())
			}
		})
	}
}
