package settings

import (
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/clawhost/clawhost/core/config"
)

// What a reload applies (docs/operations.md, "Reloads and signals"). Everything applies
// from the next message or turn — access, sessions, queue, messages, budgets, audit,
// schedules, the heartbeat, plugins (restarted when their block changed) and the agents'
// turn settings (model, fallback_model, models, permission modes, allowed and disallowed
// tools, system prompts, args, env, timeout, max_turns, approvals), in warm claude processes
// too (runner.Update) — except what restartOnly names: where claude works and what its
// sandbox and login are, how many processes run, the storage, the admin endpoint, data_dir,
// plugin_dir and the log settings.

// restartOnly reports whether the setting at path (as Changes names it) waits for
// a restart of clawhost.
func restartOnly(path string) bool {
	top, rest, _ := strings.Cut(path, ".")
	switch top {
	case "data_dir", "plugin_dir", "log_level", "log_format", "storage", "admin":
		return true
	}
	if top != "agent" && !strings.HasPrefix(top, `agent "`) {
		return false
	}
	switch rest {
	case "command", "workspace", "settings", "sandbox", "run_as", "mcp_config", "add_dirs",
		"max_warm", "warm_memory", "max_concurrent", "one_shot", "worktrees", "env.CLAUDE_CONFIG_DIR":
		return true
	}
	return false
}

// Changes names every setting that differs between old and next — `agent.model`,
// `agent "ops".system_prompt`, `access.owners`, `plugin "tg"`, `schedule "daily"` — and,
// of those, the ones that wait for a restart (restartOnly).
func Changes(old, next *config.Config) (changed, restart []string) {
	var d differ
	d.value("", reflect.ValueOf(old).Elem(), reflect.ValueOf(next).Elem())
	d.agents(old, next)
	d.plugins(old, next)
	for _, p := range d.out {
		if restartOnly(p) {
			restart = append(restart, p)
		}
	}
	return d.out, restart
}

// differ collects the paths of the settings that differ.
type differ struct{ out []string }

func (d *differ) add(path string) {
	if !slices.Contains(d.out, path) {
		d.out = append(d.out, path)
	}
}

// value compares a and b, of one type, at path: a struct field by field under its HCL
// names, a slice of labelled blocks block by block, anything else as a whole.
func (d *differ) value(path string, a, b reflect.Value) {
	if a.Kind() == reflect.Pointer {
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				d.add(path)
			}
			return
		}
		a, b = a.Elem(), b.Elem()
	}
	switch {
	case a.Kind() == reflect.Struct && hasHCLFields(a.Type()):
		for i := range a.NumField() {
			f := a.Type().Field(i)
			name, kind, ok := hclTag(f)
			if !ok || kind == "label" || kind == "def_range" || kind == "remain" {
				continue
			}
			if path == "" && (name == "agent" || name == "plugin") {
				continue // agents and plugins: see agents and plugins
			}
			d.value(join(path, name), a.Field(i), b.Field(i))
		}
	case a.Kind() == reflect.Slice && blockSlice(a.Type()):
		d.blocks(path, a, b)
	case a.Kind() == reflect.Map && a.Type().Key().Kind() == reflect.String:
		for _, k := range mapKeys(a, b) {
			x, y := a.MapIndex(k), b.MapIndex(k)
			if !x.IsValid() || !y.IsValid() || !reflect.DeepEqual(x.Interface(), y.Interface()) {
				d.add(path + "." + k.String())
			}
		}
	default:
		if !reflect.DeepEqual(a.Interface(), b.Interface()) {
			d.add(path)
		}
	}
}

// blocks compares two lists of blocks: by label when the block has one (`schedule "x"`),
// else as a whole.
func (d *differ) blocks(path string, a, b reflect.Value) {
	label := func(v reflect.Value) string {
		e := v
		if e.Kind() == reflect.Pointer {
			e = e.Elem()
		}
		for i := range e.NumField() {
			if _, kind, ok := hclTag(e.Type().Field(i)); ok && kind == "label" {
				return e.Field(i).String()
			}
		}
		return ""
	}
	if a.Len() > 0 && label(a.Index(0)) == "" || b.Len() > 0 && label(b.Index(0)) == "" {
		if !reflect.DeepEqual(a.Interface(), b.Interface()) {
			d.add(path)
		}
		return
	}
	find := func(s reflect.Value, l string) reflect.Value {
		for i := range s.Len() {
			if label(s.Index(i)) == l {
				return s.Index(i)
			}
		}
		return reflect.Value{}
	}
	var labels []string
	for _, s := range []reflect.Value{a, b} {
		for i := range s.Len() {
			if l := label(s.Index(i)); !slices.Contains(labels, l) {
				labels = append(labels, l)
			}
		}
	}
	for _, l := range labels {
		x, y := find(a, l), find(b, l)
		at := path + " " + strconv.Quote(l)
		if !x.IsValid() || !y.IsValid() {
			d.add(at)
			continue
		}
		before := len(d.out)
		d.value(at, x, y)
		if len(d.out) > before {
			// One line per block: `schedule "daily"`, not each of its attributes.
			d.out = append(d.out[:before], at)
		}
	}
}

// agents compares the default agent block and the named ones by id.
func (d *differ) agents(old, next *config.Config) {
	d.value("agent", reflect.ValueOf(old.Agent), reflect.ValueOf(next.Agent))
	for _, n := range next.Agents {
		at := "agent " + strconv.Quote(n.ID)
		if o := namedAgent(old, n.ID); o == nil {
			d.add(at)
		} else {
			d.value(at, reflect.ValueOf(o), reflect.ValueOf(n))
		}
	}
	for _, o := range old.Agents {
		if namedAgent(next, o.ID) == nil {
			d.add("agent " + strconv.Quote(o.ID))
		}
	}
}

// plugins compares the plugin blocks by instance: one whose block changed at all (its
// Fingerprint, what decides a restart of the plugin) is named once.
func (d *differ) plugins(old, next *config.Config) {
	for _, n := range next.Plugins {
		o := old.Plugin(n.Name)
		if o == nil || o.Fingerprint() != n.Fingerprint() || o.Enabled != n.Enabled {
			d.add("plugin " + strconv.Quote(n.Name))
		}
	}
	for _, o := range old.Plugins {
		if next.Plugin(o.Name) == nil {
			d.add("plugin " + strconv.Quote(o.Name))
		}
	}
}

// namedAgent is cfg's agent "<id>" block, nil when it has none.
func namedAgent(cfg *config.Config, id string) *config.Agent {
	for _, a := range cfg.Agents {
		if a.ID == id {
			return a
		}
	}
	return nil
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// hclTag is a struct field's gohcl tag: its name and kind ("" for an attribute).
func hclTag(f reflect.StructField) (name, kind string, ok bool) {
	tag, ok := f.Tag.Lookup("hcl")
	if !ok || !f.IsExported() {
		return "", "", false
	}
	name, kind, _ = strings.Cut(tag, ",")
	if kind == "optional" {
		kind = ""
	}
	return name, kind, true
}

func hasHCLFields(t reflect.Type) bool {
	for i := range t.NumField() {
		if _, _, ok := hclTag(t.Field(i)); ok {
			return true
		}
	}
	return false
}

// blockSlice reports whether t is a list of HCL blocks ([]*T or []T of a struct with hcl tags).
func blockSlice(t reflect.Type) bool {
	e := t.Elem()
	if e.Kind() == reflect.Pointer {
		e = e.Elem()
	}
	return e.Kind() == reflect.Struct && hasHCLFields(e)
}

// mapKeys are the keys of a and b, sorted.
func mapKeys(a, b reflect.Value) []reflect.Value {
	var names []string
	for _, m := range []reflect.Value{a, b} {
		for _, k := range m.MapKeys() {
			if !slices.Contains(names, k.String()) {
				names = append(names, k.String())
			}
		}
	}
	slices.Sort(names)
	out := make([]reflect.Value, len(names))
	for i, n := range names {
		out[i] = reflect.ValueOf(n).Convert(a.Type().Key())
	}
	return out
}
