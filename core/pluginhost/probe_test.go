package pluginhost

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc"

	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
	pb "github.com/clawhost/clawhost/proto/gen/clawhost/v1"
	"github.com/clawhost/clawhost/sdk/pluginclient"
	"github.com/clawhost/clawhost/sdk/probe"
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
			asked = len(s) > 0 && s[0].Name == "timezone"
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
// restarts and without the pid of the process that checked it; Changed says which specs Apply would start afresh.
func TestRejectedBlockSettlesAtStart(t *testing.T) {
	t.Parallel()
	h := newHost(t, newRecorder())
	spec := clockSpec(t, "Mars/Base")
	if !h.Changed("clock", spec.Fingerprint) {
		t.Error("an instance not running is not changed")
	}
	h.Apply([]Spec{spec})
	st := waitState(t, h.Instance("clock"), StateMisconfigured)
	if !strings.Contains(st.LastError, "config.hcl:9:16: timezone: Unknown time zone") || st.Restarts != 0 {
		t.Errorf("status %+v", st)
	}
	// The process that validated is gone: the status names no pid.
	waitStatus(t, h.Instance("clock"), "no pid once the process is gone", func(s Status) bool { return s.PID == 0 })
	if h.Changed("clock", spec.Fingerprint) || !h.Changed("clock", "UTC") {
		t.Error("Changed: same fingerprint must be unchanged, another changed")
	}
	h.Apply([]Spec{clockSpec(t, "UTC")})
	waitState(t, h.Instance("clock"), StateReady)
}

// olderPlugin is the PluginService of a plugin built before Validate
// existed, written against the proto: Validate answers Unimplemented (the
// embedded default).
type olderPlugin struct {
	pb.UnimplementedPluginServiceServer
}

// rejectingPlugin's Validate rejects one attribute.
type rejectingPlugin struct {
	pb.UnimplementedPluginServiceServer
}

func (rejectingPlugin) Validate(context.Context, *pb.ValidateRequest) (*pb.ValidateResponse, error) {
	return &pb.ValidateResponse{Diagnostics: []*pb.Diagnostic{{Attribute: "token", Summary: "Malformed bot token"}}}, nil
}

// TestCheckBeforeConfigureOlderPlugin: a plugin that predates Validate is
// not refused (nothing to say), one whose Validate rejects the block
// settles as misconfigured with the Explain text.
func TestCheckBeforeConfigureOlderPlugin(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		srv     pb.PluginServiceServer
		refused bool
	}{{"older", olderPlugin{}, false}, {"rejecting", rejectingPlugin{}, true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			conn := serveLoopback(t, func(gs *grpc.Server) { pb.RegisterPluginServiceServer(gs, tc.srv) })
			h := New(Options{})
			inst := newInstance(h, Spec{Instance: "tg", Explain: func(_ schema.Schema, d schema.Diagnostics) string { return "c.hcl:5:19: " + d.Error() }})
			err := inst.checkBeforeConfigure(context.Background(), pluginclient.Wrap(conn), nil, []byte(`{"token":"x"}`))
			var settled *runError
			switch {
			case !tc.refused && err != nil:
				t.Errorf("an older plugin is refused: %v", err)
			case tc.refused && (!errors.As(err, &settled) || settled.state != StateMisconfigured || !strings.Contains(err.Error(), "c.hcl:5:19: token: Malformed bot token")):
				t.Errorf("rejected block: %v, want misconfigured with the explained diagnostic", err)
			}
		})
	}
}

// TestCheckSaysWhyAPluginDidNotStart: a probe of a plugin that exits
// before the handshake carries the plugin's own reason from its stderr, as
// a failed start does, so `clawhost validate` shows it.
func TestCheckSaysWhyAPluginDidNotStart(t *testing.T) {
	t.Parallel()
	h := newHost(t, newRecorder())
	_, err := h.Check(context.Background(), faultSpec("nokind", "nokind"), func(schema.Schema) []byte { return nil })
	if err == nil || !strings.Contains(err.Error(), "plugin offers no kind: set Channel, Command, Hook, MessageReceived, MessageSending, AgentEnd or Tool") {
		t.Fatalf("check error %v, want the plugin's stderr reason", err)
	}
}

// TestProbeRunsLiveChecks: Probe runs the plugin's live checks in a probe
// process after its own checks accept the block — the telegram plugin asks
// the fake Bot API who the token's bot is, with spec.DataDir — and not on
// a block the plugin rejects; a plugin without live checks (clock-hook)
// leaves the report nil. No instance is registered.
func TestProbeRunsLiveChecks(t *testing.T) {
	t.Parallel()
	h := newHost(t, newRecorder())
	srv := telegramtest.NewServer("123456:TEST-token")
	t.Cleanup(srv.Close)
	tg := Spec{Instance: "tg", Source: "telegram", Path: filepath.Join(binDir(t), "clawhost-telegram"), DataDir: t.TempDir()}
	block := func(token string) func(schema.Schema) []byte {
		return func(schema.Schema) []byte {
			return []byte(fmt.Sprintf(`{"token":%q,"api_endpoint":%q,"poll_timeout":30}`, token, srv.APIEndpoint()))
		}
	}
	ctx := context.Background()
	res, err := h.Probe(ctx, tg, block("123456:TEST-token"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Report == nil || res.Report.Worst() != probe.OK || res.Report.Identity.Handle != "@clawbot" {
		t.Fatalf("report %+v", res.Report)
	}
	if len(res.Description.Capabilities.IDForms) == 0 || !res.Description.Capabilities.DirectToSender {
		t.Errorf("described before configure without its id forms: %+v", res.Description.Capabilities)
	}
	res, err = h.Probe(ctx, tg, block("123456:WRONG-token"))
	if err != nil || res.Report == nil || res.Report.Worst() != probe.Fail {
		t.Errorf("a refused token: %+v, %v", res.Report, err)
	}
	calls := len(srv.Requests("getMe"))
	res, err = h.Probe(ctx, tg, block("not a token"))
	if err != nil || res.Report != nil || len(res.Verdict) == 0 || len(srv.Requests("getMe")) != calls {
		t.Errorf("a block the plugin rejects was probed: %+v, %v", res, err)
	}
	res, err = h.Probe(ctx, clockSpec(t, "UTC"), func(schema.Schema) []byte { return []byte(`{"timezone":"UTC"}`) })
	if err != nil || res.Report != nil {
		t.Errorf("a plugin without live checks: %+v, %v", res.Report, err)
	}
	if h.Instance("tg") != nil || h.Instance("clock") != nil {
		t.Error("Probe registered an instance")
	}
}
