package cli

import (
	"bytes"
	"flag"
	"strings"
	"testing"
)

// TestInitHelpListsEveryFlag: `clawhost init -h` and `clawhost help init`
// list every flag init parses, with its usage line — the ones this round
// added (-anthropic-key, -claude-token, -set, -whatsapp-personal,
// -whatsapp-link, -link-timeout) among them.
func TestInitHelpListsEveryFlag(t *testing.T) {
	t.Parallel()
	fs, _ := initFlagSet()
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	for _, n := range []string{"anthropic-key", "claude-token", "set", "whatsapp-personal", "whatsapp-link", "link-timeout", "non-interactive"} {
		if fs.Lookup(n) == nil {
			t.Errorf("init has no -%s", n)
		}
	}
	for _, args := range [][]string{{"init", "-h"}, {"help", "init"}} {
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != 0 || errb.Len() != 0 {
			t.Errorf("%q: exit %d, stderr %q", args, code, errb.String())
		}
		for _, n := range names {
			if !strings.Contains(out.String(), "\n  -"+n+" ") && !strings.Contains(out.String(), "\n  -"+n+"\n") {
				t.Errorf("%q does not list -%s:\n%s", args, n, out.String())
			}
		}
	}
}
