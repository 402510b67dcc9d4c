package sdktest

import (
	"context"
	"errors"
	"testing"

	"github.com/clawhost/clawhost/sdk"
	"github.com/clawhost/clawhost/sdk/command"
	"github.com/clawhost/clawhost/sdk/schema"
)

// noCommands is the least plugin kind: a command plugin with no commands.
type noCommands struct{}

func (noCommands) Commands() []command.Spec { return nil }
func (noCommands) Execute(context.Context, command.Request) (command.Response, error) {
	return command.Response{}, nil
}

// TestHarnessConfigure: a config the plugin takes passes and reaches it;
// a diagnostic (an error or only a warning) or a failing Configure fails
// the test.
func TestHarnessConfigure(t *testing.T) {
	for _, tc := range []struct {
		name     string
		answer   error
		wantFail bool
	}{
		{"accepted", nil, false},
		{"diagnostic", schema.Diagnostics{{Attribute: "token", Summary: "missing"}}, true},
		{"warning", schema.Diagnostics{{Attribute: "mode", Summary: "deprecated", Warning: true}}, true},
		{"error", errors.New("no disk"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got schema.Config
			p := sdk.Plugin{Name: "cfg", Version: "0.0.1", Command: noCommands{},
				Configure: func(_ context.Context, cfg schema.Config) error { got = cfg; return tc.answer }}
			h := Start(t, p)
			r := &fatalRecorder{TB: t}
			func() {
				defer func() { _ = recover() }()
				if h.Configure(r, schema.Config{Instance: "x", JSON: []byte(`{"a":1}`)}) != h {
					t.Error("Configure did not return its harness")
				}
			}()
			if r.failed != tc.wantFail {
				t.Errorf("failed = %v, want %v", r.failed, tc.wantFail)
			}
			if got.Instance != "x" || string(got.JSON) != `{"a":1}` {
				t.Errorf("the plugin got %+v", got)
			}
		})
	}
}
