// Command clawhost-clock-hook is the smallest before_agent_start hook: it
// prepends the current date and time to every agent turn, in the configured
// time zone.
package main

import (
	"context"
	"fmt"
	"time"

	"github.com/clawhost/clawhost/sdk"
	"github.com/clawhost/clawhost/sdk/hook"
	"github.com/clawhost/clawhost/sdk/schema"
)

type clock struct {
	loc *time.Location
	now func() time.Time
}

func (c *clock) BeforeAgentStart(ctx context.Context, req hook.Request) (hook.Response, error) {
	t := c.now().In(c.loc)
	return hook.Response{PrependContext: "Current date and time: " + t.Format("Monday 2006-01-02 15:04:05 MST")}, nil
}

// location decodes the block and loads its time zone: the one check of
// this plugin, shared by validate and configure.
func location(cfg schema.Config) (*time.Location, error) {
	var v struct {
		Timezone string `json:"timezone"`
	}
	if err := cfg.Decode(&v); err != nil {
		return nil, err
	}
	loc, err := time.LoadLocation(v.Timezone)
	if err != nil {
		return nil, schema.Diagnostics{{Attribute: "timezone", Summary: "Unknown time zone",
			Detail: fmt.Sprintf("%q is not an IANA time zone name; use one such as \"Europe/Berlin\", or \"Local\" or \"UTC\"", v.Timezone)}}
	}
	return loc, nil
}

// validate checks the block without applying it (clawhost validate, and a
// start or reload before the plugin is configured).
func validate(_ context.Context, cfg schema.Config) error {
	_, err := location(cfg)
	return err
}

func (c *clock) configure(_ context.Context, cfg schema.Config) error {
	loc, err := location(cfg)
	if err != nil {
		return err
	}
	c.loc = loc
	return nil
}

func plugin(now func() time.Time) sdk.Plugin {
	c := &clock{loc: time.Local, now: now}
	return sdk.Plugin{
		Name:      "clock-hook",
		Version:   "0.1.0",
		Schema:    schema.Schema{{Name: "timezone", Type: "string", Default: "Local", Description: "IANA time zone name, or Local or UTC"}},
		Validate:  validate,
		Configure: c.configure,
		Hook:      c,
	}
}

func main() { sdk.Serve(plugin(time.Now)) }
