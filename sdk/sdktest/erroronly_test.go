package sdktest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/sdk"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/conformance"
	"github.com/clawhost/clawhost/sdk/hook"
	"github.com/clawhost/clawhost/sdk/tool"
)

// failing answers every call of every kind with an error (a tool, with
// toolError, with a tool error instead: an answer the model reads).
type failing struct{ toolError bool }

var errDown = channel.Errorf(channel.CodeUnavailable, "the backend is down")

func (failing) BeforeAgentStart(context.Context, hook.Request) (hook.Response, error) {
	return hook.Response{}, errDown
}
func (failing) MessageReceived(context.Context, hook.ReceivedRequest) (hook.ReceivedResponse, error) {
	return hook.ReceivedResponse{}, errDown
}
func (failing) MessageSending(context.Context, hook.SendingRequest) (hook.SendingResponse, error) {
	return hook.SendingResponse{}, errDown
}
func (failing) AgentEnd(context.Context, hook.End) error { return errDown }
func (failing) Tools(context.Context) ([]tool.Spec, error) {
	return []tool.Spec{{Name: "a", Description: "a", InputSchema: json.RawMessage(`{"type":"object"}`)},
		{Name: "b", Description: "b", InputSchema: json.RawMessage(`{"type":"object"}`)}}, nil
}
func (f failing) Call(context.Context, tool.CallRequest) (tool.Result, error) {
	if f.toolError {
		return tool.Result{Text: "the backend is down", IsError: true}, nil
	}
	return tool.Result{}, errDown
}

// TestErrorOnlyFails: a hook of each kind that answers the conformance
// call with an error, and a tool plugin whose every tool returns an error,
// fail their checks, saying so; tools answering with tool errors (which
// the model reads) pass.
func TestErrorOnlyFails(t *testing.T) {
	t.Parallel()
	f := failing{}
	cases := []struct {
		name   string
		plugin sdk.Plugin
		checks []conformance.Check
	}{
		{"before_agent_start", sdk.Plugin{Name: "f", Hook: f}, conformance.HookChecks()},
		{"message_received", sdk.Plugin{Name: "f", MessageReceived: f}, conformance.ReceivedChecks()},
		{"message_sending", sdk.Plugin{Name: "f", MessageSending: f}, conformance.SendingChecks()},
		{"agent_end", sdk.Plugin{Name: "f", AgentEnd: f}, conformance.EndChecks()},
		{"tool error returned", sdk.Plugin{Name: "f", Tool: f}, conformance.ToolChecks()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			target := inProcess(t, ConformanceConfig{New: func(*testing.T) sdk.Plugin { return c.plugin }, Config: []byte(`{}`)})
			var errs []string
			for _, ch := range c.checks {
				if _, err := ch.Run(context.Background(), target); err != nil && !errors.Is(err, conformance.ErrSkipped) {
					errs = append(errs, err.Error())
				}
			}
			if all := strings.Join(errs, "\n"); !strings.Contains(all, "only errors") {
				t.Errorf("checks passed a plugin answering only errors (errors: %q)", errs)
			}
		})
	}
	t.Run("tool errors are answers", func(t *testing.T) {
		t.Parallel()
		target := inProcess(t, ConformanceConfig{New: func(*testing.T) sdk.Plugin { return sdk.Plugin{Name: "f", Tool: failing{toolError: true}} }, Config: []byte(`{}`)})
		for _, ch := range conformance.ToolChecks() {
			if _, err := ch.Run(context.Background(), target); err != nil {
				t.Errorf("%s: %v", ch.Name, err)
			}
		}
	})
}
