package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/core/doctor"
)

// TestDoctorJSONOnABrokenFile: `clawhost doctor -json` on a file that does
// not load exits 1 and prints JSON on stdout — the checks, one failing
// "configuration" check naming the file's line and what is wrong — and
// the diagnostics for people on stderr.
func TestDoctorJSONOnABrokenFile(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, text, found string
	}{
		{"syntax error", "plugin \"tg\" {\n  source = \"telegram\"\n", "config.hcl:1:13: Unclosed configuration block"},
		{"unknown block", "plugin \"tg\" { source = \"telegram\" }\nnonsense {}\n", "config.hcl:2:1: Unsupported block type"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "config.hcl")
			if err := os.WriteFile(path, []byte(c.text), 0o600); err != nil {
				t.Fatal(err)
			}
			var out, errb bytes.Buffer
			if code := run([]string{"doctor", "-json", "-config", path}, &out, &errb); code != 1 {
				t.Errorf("exit %d, want 1", code)
			}
			var checks []doctor.Check
			if err := json.Unmarshal(out.Bytes(), &checks); err != nil {
				t.Fatalf("stdout is not JSON (%v): %q", err, out.String())
			}
			if len(checks) != 1 || checks[0].Name != "configuration" || checks[0].Verdict != doctor.VerdictFail ||
				!strings.Contains(checks[0].Found, c.found) || !strings.Contains(checks[0].Do, "clawhost validate") {
				t.Errorf("checks %+v, want one failing configuration check with %q", checks, c.found)
			}
			if !strings.Contains(errb.String(), "does not load") {
				t.Errorf("stderr %q", errb.String())
			}
		})
	}
}
