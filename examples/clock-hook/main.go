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
	"os"
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

// settings is the decoded config block.
type settings struct {
	Timezone string `json:"timezone"`
	Details  bool   `json:"turn_details"`
}

// location decodes the block and loads its time zone: the one check of
// this plugin, shared by validate and configure.
func location(cfg schema.Config) (*time.Location, settings, error) {
	var v settings
	if err := cfg.Decode(&v); err != nil {
		return nil, v, err
	}
	loc, err := time.LoadLocation(v.Timezone)
	if err != nil {
		return nil, v, schema.Diagnostics{{Attribute: "timezone", Summary: "Unknown time zone",
			Detail: fmt.Sprintf("%q is not an IANA time zone name; use one such as \"Europe/Berlin\", or \"Local\" or \"UTC\"", v.Timezone)}}
	}
	return loc, v, nil
}

// validate checks the block without applying it (clawhost validate, and a
// start or reload before the plugin is configured).
func validate(_ context.Context, cfg schema.Config) error {
	_, _, err := location(cfg)
	return err
}

func (c *clock) configure(_ context.Context, cfg schema.Config) error {
	loc, v, err := location(cfg)
	if err != nil {
		return err
	}
	c.loc, c.details = loc, v.Details
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
		Validate:  validate,
		Configure: c.configure,
		Hook:      c,
	}
}

func main() { os.Exit(sdk.Serve(plugin(time.Now))) }
