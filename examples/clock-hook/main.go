// Command clawhost-clock-hook is the smallest before_agent_start hook: it
// prepends the current date and time to every agent turn, in the configured
// time zone.
//
// With turn_details = true it also lists what the host tells a hook about
// the turn — the session id, the agent's workspace and the saved
// attachments — which shows an author what a hook receives (and lets the
// host's tests check that it arrives).
package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/clawhost/clawhost/sdk"
	"github.com/clawhost/clawhost/sdk/hook"
	"github.com/clawhost/clawhost/sdk/schema"
)

type clock struct {
	loc     *time.Location
	now     func() time.Time
	details bool
}

func (c *clock) BeforeAgentStart(ctx context.Context, req hook.Request) (hook.Response, error) {
	t := c.now().In(c.loc)
	out := "Current date and time: " + t.Format("Monday 2006-01-02 15:04:05 MST")
	if c.details {
		out += "\n" + details(req)
	}
	return hook.Response{PrependContext: out}, nil
}

// details describes the turn as the host sent it.
func details(req hook.Request) string {
	var b strings.Builder
	state := "continued"
	if req.NewSession {
		state = "new"
	}
	fmt.Fprintf(&b, "Session: %s (%s)\nWorkspace: %s\nAttachments: %d", req.SessionID, state, req.Workspace, len(req.Attachments))
	for _, a := range req.Attachments {
		fmt.Fprintf(&b, "\n- %s %s (%s, %q, %d bytes)", a.Kind, a.Path, a.MIME, a.Filename, a.Size)
	}
	return b.String()
}

func (c *clock) configure(ctx context.Context, cfg schema.Config) error {
	var v struct {
		Timezone string `json:"timezone"`
		Details  bool   `json:"turn_details"`
	}
	if err := cfg.Decode(&v); err != nil {
		return err
	}
	c.details = v.Details
	loc, err := time.LoadLocation(v.Timezone)
	if err != nil {
		return schema.Diagnostics{{Attribute: "timezone", Summary: "unknown time zone", Detail: err.Error()}}
	}
	c.loc = loc
	return nil
}

func plugin(now func() time.Time) sdk.Plugin {
	c := &clock{loc: time.Local, now: now}
	return sdk.Plugin{
		Name:    "clock-hook",
		Version: "0.1.0",
		Schema: schema.Schema{
			{Name: "timezone", Type: "string", Default: "Local", Description: "IANA time zone name, or Local or UTC"},
			{Name: "turn_details", Type: "bool", Default: false, Description: "also list the session id, workspace and attachments the host sent"},
		},
		Configure: c.configure,
		Hook:      c,
	}
}

func main() { sdk.Serve(plugin(time.Now)) }
