// Command clawhost-clock-hook is the smallest before_agent_start hook: it
// prepends the current date and time to every agent turn, in the configured
// time zone.
package main

import (
	"context"
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

func (c *clock) configure(ctx context.Context, cfg schema.Config) error {
	var v struct {
		Timezone string `json:"timezone"`
	}
	if err := cfg.Decode(&v); err != nil {
		return err
	}
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
		Name:      "clock-hook",
		Version:   "0.1.0",
		Schema:    schema.Schema{{Name: "timezone", Type: "string", Default: "Local", Description: "IANA time zone name, or Local or UTC"}},
		Configure: c.configure,
		Hook:      c,
	}
}

func main() { sdk.Serve(plugin(time.Now)) }
