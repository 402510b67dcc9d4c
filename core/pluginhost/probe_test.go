package pluginhost

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/sdk/schema"
)

// clockSpec runs the clock-hook example, whose Validate rejects an unknown
// time zone.
func clockSpec(t *testing.T, zone string) Spec {
	return Spec{
		Instance: "clock", Source: "clock-hook", Path: filepath.Join(binDir(t), "clawhost-clock-hook"),
		DataDir: filepath.Join(t.TempDir(), "data"), Fingerprint: zone,
		Decode: func(schema.Schema) ([]byte, error) { return []byte(fmt.Sprintf(`{"timezone":%q}`, zone)), nil },
		Explain: func(s schema.Schema, d schema.Diagnostics) string {
			return fmt.Sprintf("config.hcl:9:16: %s (%d attributes)", d.Error(), len(s))
		},
	}
}

// TestCheckAsksValidate: Check reads the schema and asks the plugin's own
// checks about the decoded block in a probe process; no JSON, no question.
func TestCheckAsksValidate(t *testing.T) {
	t.Parallel()
	h := newHost(t, newRecorder())
	for _, tc := range []struct {
		zone  string
		skip  bool // decode gives no JSON
		wantN int
	}{{"Mars/Base", false, 1}, {"UTC", false, 0}, {"Mars/Base", true, 0}} {
		asked := false
		res, err := h.Check(context.Background(), clockSpec(t, tc.zone), func(s schema.Schema) []byte {
			asked = len(s) == 1 && s[0].Name == "timezone"
			if tc.skip {
				return nil
			}
			return []byte(fmt.Sprintf(`{"timezone":%q}`, tc.zone))
		})
		if err != nil || !asked || !res.Description.Hook {
			t.Fatalf("%s: %+v %v (schema seen %v)", tc.zone, res, err, asked)
		}
		if len(res.Verdict) != tc.wantN || (tc.wantN == 1 && res.Verdict[0].Attribute != "timezone") {
			t.Errorf("%s (skip %v): verdict %v, want %d on timezone", tc.zone, tc.skip, res.Verdict, tc.wantN)
		}
	}
	if h.Instance("clock") != nil {
		t.Error("Check registered an instance")
	}
}

// TestRejectedBlockSettlesAtStart: a block the plugin's Validate rejects
// settles the instance as misconfigured with Spec.Explain's text, without
// restarts; Changed says which specs Apply would start afresh.
func TestRejectedBlockSettlesAtStart(t *testing.T) {
	t.Parallel()
	h := newHost(t, newRecorder())
	spec := clockSpec(t, "Mars/Base")
	if !h.Changed("clock", spec.Fingerprint) {
		t.Error("an instance not running is not changed")
	}
	h.Apply([]Spec{spec})
	st := waitState(t, h.Instance("clock"), StateMisconfigured, 10*time.Second)
	if !strings.Contains(st.LastError, "config.hcl:9:16: timezone: Unknown time zone") || st.Restarts != 0 {
		t.Errorf("status %+v", st)
	}
	if h.Changed("clock", spec.Fingerprint) || !h.Changed("clock", "UTC") {
		t.Error("Changed: same fingerprint must be unchanged, another changed")
	}
	h.Apply([]Spec{clockSpec(t, "UTC")})
	waitState(t, h.Instance("clock"), StateReady, 10*time.Second)
}
