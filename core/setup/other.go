package setup

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/clawhost/clawhost/sdk/probe"
	"github.com/clawhost/clawhost/sdk/schema"
)

// OtherChannel is a channel init sets up from its plugin's own schema: a
// channel plugin in the plugin directory other than the channels init
// knows by name (Slack's, a third party's). Init knows nothing of its
// platform: it asks the block's required and sensitive attributes, has the
// plugin's probe check them, and writes the block with the sensitive
// values in the env file.
type OtherChannel struct {
	// Source is the plugin source, also the instance name init writes.
	Source string
	// Values are the attributes init asked for, by name.
	Values map[string]string
	// Secret names the attributes written to the env file (sensitive in
	// the schema); the config names them with env().
	Secret map[string]bool
}

// Catalog lists the channel plugins of pluginDir with their config
// schemas and setup texts, by source, read from the plugins without
// configuring them (the cli launches each clawhost-<source> through the one
// launcher): every plugin that describes itself as a channel, the ones
// init knows by name included (it offers those with its own questions).
type Catalog func(ctx context.Context, pluginDir string) (map[string]CatalogEntry, error)

// CatalogEntry is what init knows of a channel plugin it does not know by
// name: its config schema, and what a person needs before filling it in
// (sdk.Plugin.Setup: how to create the bot or app), shown first.
type CatalogEntry struct {
	Schema schema.Schema
	Setup  string
}

// EnvName is the env file's variable of a plugin's sensitive attribute:
// SLACK_BOT_TOKEN for source slack, attribute bot_token.
func EnvName(source, attr string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			return r
		}
		return '_'
	}, source+"_"+attr)
}

// others reads the catalog: init's own channels it lists go to s.own, in
// init's order; the others are returned sorted, their schemas kept in
// s.schemas. Without a catalog, or when it fails, s.own is every channel
// init knows and there are no others.
func (s *session) others(ctx context.Context, p Plan) []string {
	s.own = channelNames
	if s.o.Catalog == nil {
		return nil
	}
	cat, err := s.o.Catalog(ctx, p.PluginDir)
	if err != nil {
		s.say("(The channel plugins in %s could not be listed: %v.)\n", p.PluginDir, err)
		return nil
	}
	s.own = slices.DeleteFunc(slices.Clone(channelNames), func(c string) bool { _, ok := cat[c]; return !ok })
	s.schemas, s.setups = map[string]schema.Schema{}, map[string]string{}
	for src, e := range cat {
		if !slices.Contains(channelNames, src) && src != "" {
			s.schemas[src], s.setups[src] = e.Schema, e.Setup
		}
	}
	return slices.Sorted(maps.Keys(s.schemas))
}

// other asks the settings of the channel plugin source until its probe
// finds nothing that fails: each required or sensitive attribute of its
// config block (a required one until it is given), then the plugin's live
// checks, shown check by check.
func (s *session) other(ctx context.Context, p Plan, source string) (OtherChannel, error) {
	sch := s.schemas[source]
	if setup := strings.TrimSpace(s.setups[source]); setup != "" {
		s.say("\n%s\n", setup)
	}
	s.say("\n%s: the settings of its config block.\n", source)
	for {
		oc := OtherChannel{Source: source, Values: map[string]string{}, Secret: map[string]bool{}}
		for _, a := range sch {
			if v, ok := p.Presets[source][a.Name]; ok {
				oc.Values[a.Name], oc.Secret[a.Name] = v, a.Sensitive
				continue
			}
			if !a.Required && !a.Sensitive {
				continue
			}
			prompt := a.Name
			if d := firstSentence(a.Description); d != "" {
				prompt += " (" + d + ")"
			}
			if !a.Required {
				prompt += ", empty to leave out"
			}
			for {
				var v string
				var err error
				if a.Sensitive {
					v, err = s.secret(prompt)
				} else {
					v, err = s.ask(prompt, defaultText(a.Default))
				}
				if err != nil {
					return oc, err
				}
				if v != "" || !a.Required {
					if v != "" {
						oc.Values[a.Name], oc.Secret[a.Name] = v, a.Sensitive
					}
					break
				}
				s.say("%s is required.\n", a.Name)
			}
		}
		if s.checkOther(ctx, p, oc) {
			return oc, nil
		}
		s.say("Enter the settings of %s again.\n", source)
	}
}

// checkOther runs the probe of oc's plugin and shows its report; false
// when a check failed. Without a Prober, or a plugin without live checks,
// the settings are taken as given.
func (s *session) checkOther(ctx context.Context, p Plan, oc OtherChannel) bool {
	if s.o.Probe == nil {
		return true
	}
	block := map[string]any{}
	for k, v := range oc.Values {
		block[k] = v
	}
	rep, err := s.o.Probe(ctx, p.PluginDir, oc.Source, block)
	if err != nil {
		s.say("✗ %s: %v\n", oc.Source, err)
		return false
	}
	if who := cmpOr(rep.Identity.Handle, rep.Identity.Name); who != "" {
		s.say("✓ %s: the bot %s (id %s).\n", oc.Source, who, rep.Identity.ID)
	}
	for _, c := range rep.Checks {
		switch c.Verdict {
		case probe.OK:
			s.say("✓ %s: %s.\n", c.Name, strings.TrimSuffix(c.Found, "."))
		case probe.Warn:
			s.say("! %s: %s.\n  %s.\n", c.Name, strings.TrimSuffix(c.Found, "."), strings.TrimSuffix(c.Do, "."))
		default:
			s.say("✗ %s: %s.\n  %s.\n", c.Name, strings.TrimSuffix(c.Found, "."), strings.TrimSuffix(c.Do, "."))
		}
	}
	if rep.Identity.Link != "" {
		s.say("  To reach or add the bot: %s\n", rep.Identity.Link)
	}
	return rep.Worst() != probe.Fail
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// firstSentence is a description's text up to its first ";" or ". ",
// short enough for a prompt.
func firstSentence(d string) string {
	if i := strings.IndexAny(d, ";("); i > 0 {
		d = d[:i]
	}
	if i := strings.Index(d, ". "); i > 0 {
		d = d[:i]
	}
	return strings.TrimSpace(d)
}

// defaultText is a schema default as a prompt's default ("" for none).
func defaultText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

// ParsePreset reads init's -set source.attribute=value into presets.
func ParsePreset(presets map[string]map[string]string, s string) error {
	key, value, ok := strings.Cut(s, "=")
	source, attr, ok2 := strings.Cut(key, ".")
	if !ok || !ok2 || source == "" || attr == "" {
		return fmt.Errorf("%q is not source.attribute=value", s)
	}
	if presets[source] == nil {
		presets[source] = map[string]string{}
	}
	presets[source][attr] = value
	return nil
}

// renderOthers writes the blocks of the other channels and their secrets.
func renderOthers(b, e *strings.Builder, others []OtherChannel) {
	for _, oc := range others {
		fmt.Fprintf(b, "\nplugin %s {\n  source = %s\n  config {\n", strconv.Quote(oc.Source), strconv.Quote(oc.Source))
		for _, k := range slices.Sorted(maps.Keys(oc.Values)) {
			if oc.Secret[k] {
				name := EnvName(oc.Source, k)
				fmt.Fprintf(b, "    %s = env(%s)\n", k, strconv.Quote(name))
				fmt.Fprintf(e, "%s=%s\n", name, strconv.Quote(oc.Values[k]))
				continue
			}
			fmt.Fprintf(b, "    %s = %s\n", k, strconv.Quote(oc.Values[k]))
		}
		b.WriteString("  }\n}\n")
	}
}
