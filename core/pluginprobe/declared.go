package pluginprobe

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/pluginhost"
	"github.com/clawhost/clawhost/core/settings"
	"github.com/clawhost/clawhost/sdk/schema"
)

// Declared is what an enabled plugin says of itself that its config block
// does not: whether it is a channel (people's messages come through it),
// and the address it serves people on, as its schema marks it
// (schema.Attribute.Listen).
type Declared struct {
	// Channel: the plugin is a channel (pluginclient.Description.Channel).
	Channel bool
	// Listen is the attribute of its config block that holds the address
	// it serves people on, "" none; ListenDefault is that attribute's
	// default (the address when the block does not set it); ListenToken
	// whether who opens the address is asked for a token.
	Listen        string
	ListenDefault string
	ListenToken   bool
}

// Declarations asks each of plugins (blocks of cfg) what it declares, each in
// a probe process of ph (nil: a supervisor of its own) started before it
// is configured, concurrently, each bounded by its start timeout. A plugin
// that cannot be asked (its binary is missing, it does not start) is not
// in the map: the callers take the cautious view of it (a channel
// reachable from anywhere), and its start says why.
func Declarations(cfg *config.Config, plugins []*config.Plugin, ph *pluginhost.Supervisor) map[string]Declared {
	out := map[string]Declared{}
	for name, res := range describeEach(cfg, plugins, ph) {
		out[name] = declared(res.Description.Channel, res.Schema)
	}
	return out
}

// describeEach describes each of plugins (blocks of cfg) in a probe
// process of ph (nil: a supervisor of its own) started before it is
// configured, concurrently, each bounded by its start timeout. A plugin
// that cannot be described (its binary is missing, it does not start) is
// not in the map.
func describeEach(cfg *config.Config, plugins []*config.Plugin, ph *pluginhost.Supervisor) map[string]pluginhost.CheckResult {
	if ph == nil {
		ph = pluginhost.New(pluginhost.Options{Logger: hclog.NewNullLogger()})
		defer ph.Stop()
	}
	var (
		mu  sync.Mutex
		out = map[string]pluginhost.CheckResult{}
	)
	Each(plugins, func(ctx context.Context, p *config.Plugin) {
		res, err := ph.Check(ctx, settings.Plugin(cfg, p), func(schema.Schema) []byte { return nil })
		if err != nil {
			return
		}
		mu.Lock()
		out[p.Name] = res
		mu.Unlock()
	})
	return out
}

// declared is what a plugin's description and schema s declare.
func declared(channel bool, s schema.Schema) Declared {
	d := Declared{Channel: channel}
	for _, a := range s {
		if a.Listen {
			d.Listen, d.ListenToken = a.Name, a.ListenToken
			d.ListenDefault = defaultString(a.Default)
			break
		}
	}
	return d
}

// defaultString is an attribute's default as a string: a plugin's schema
// reaches the host with its defaults as JSON (json.RawMessage), a schema
// made in this process with Go values; "" for none.
func defaultString(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case json.RawMessage:
		var s string
		if json.Unmarshal(v, &s) == nil {
			return s
		}
		return string(v)
	}
	return fmt.Sprint(v)
}

// ListenOf is the address plugin p of cfg serves people on, as d declares
// it: the marked attribute as the file writes it, else its default; ""
// when d declares none. at is the attribute's file:line:col ("" when the
// block does not write it).
func (d Declared) ListenOf(cfg *config.Config, p *config.Plugin) (addr, at string) {
	if d.Listen == "" {
		return "", ""
	}
	if a := cfg.Attribute("plugin", p.Name, "config", d.Listen); a != nil {
		if v, ok := cfg.StringValue(a); ok {
			at = config.Position(a.Expr.Range())
			if v != "" {
				return v, at
			}
		}
	}
	return d.ListenDefault, at
}
