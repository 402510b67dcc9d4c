// Package command is the one command registry of the core: the built-in
// commands the gateway answers itself and the commands of command plugins,
// how a message is parsed into a command, the command menu and help text,
// and which commands are for owners only.
//
// Grammar (OpenClaw's command detection, openclaw@2026.9.6, checked
// against its vectors): a command is recognised only at the start of the
// message, "/name" followed by ':' or whitespace and arguments, the name
// case-insensitive. "/status@somebot" is not a command: bot mentions are
// resolved by the channel adapter, which strips its own bot's name and
// drops commands addressed to another bot. Unknown "/words" are not
// commands; they go to the agent.
//
// The built-ins are values (name, help, the role they need, a handler), one
// file per group (session.go, settings.go, access.go, info.go,
// schedule.go), listed in /help order in one table (builtins.go). To add
// one: its value in its group's file and its line in that table. The
// handler acts on sessions through the [Sessions] port (with core/session's
// types) and on command plugins through the [Plugins] port.
package command

import (
	"sort"
	"strings"
	"sync"
	"unicode"

	"github.com/clawhost/clawhost/sdk/channel"
	sdkcommand "github.com/clawhost/clawhost/sdk/command"
)

// Spec is one command of the registry.
type Spec struct {
	// Name is the command without the slash, lower case.
	Name string
	// Help is the one-line description for /help and the command menu.
	Help string
	// OwnerOnly commands are refused to senders who are not owners.
	OwnerOnly bool
	// Instance is the command plugin that executes it; empty for built-ins.
	Instance string
	// Plugin is the plugin's own spec (its canonical name may differ from
	// Name when Name is an alias); zero for built-ins.
	Plugin sdkcommand.Spec
	// Aliases are a built-in's other names (/think for /effort); a plugin
	// command's are in Plugin.
	Aliases []string
}

// Builtin reports whether the core answers the command itself.
func (s Spec) Builtin() bool { return s.Instance == "" }

// PluginCommands are the commands one ready command plugin offers.
type PluginCommands struct {
	Instance string
	Specs    []sdkcommand.Spec
}

// Invocation is a parsed command.
type Invocation struct {
	Spec
	// Args is the text after the name (trimmed).
	Args string
}

// Registry holds the built-ins (fixed at creation) and the plugin commands
// (replaced as plugins come and go). It is safe for concurrent use.
type Registry struct {
	builtins []Spec

	mu      sync.RWMutex
	byName  map[string]Spec
	plugins []Spec          // sorted by name, one per plugin command (aliases folded)
	listed  map[string]bool // the instances whose offers SetPlugins got
}

// NewRegistry returns a registry of builtins, in the order /help lists them.
func NewRegistry(builtins []Spec) *Registry {
	r := &Registry{builtins: builtins}
	r.byName = r.index(nil)
	return r
}

func (r *Registry) index(plugins []Spec) map[string]Spec {
	m := make(map[string]Spec, len(r.builtins)+len(plugins))
	for _, b := range r.builtins {
		m[b.Name] = b
		for _, a := range b.Aliases {
			m[a] = b
		}
	}
	for _, p := range plugins {
		m[p.Name] = p
	}
	return m
}

// SetPlugins replaces the plugin commands. A plugin command (or alias)
// named like a built-in is ignored, and so is the second plugin offering a
// name already taken; each conflict is returned as a warning for the log.
func (r *Registry) SetPlugins(offers []PluginCommands) (warnings []string) {
	taken := map[string]string{}
	for _, b := range r.builtins {
		taken[b.Name] = ""
		for _, a := range b.Aliases {
			taken[a] = ""
		}
	}
	var named []Spec
	var canonical []Spec
	for _, o := range offers {
		for _, s := range o.Specs {
			first := true
			for _, n := range append([]string{s.Name}, s.Aliases...) {
				n = strings.ToLower(n)
				if prev, dup := taken[n]; dup {
					if prev == "" {
						warnings = append(warnings, "plugin command /"+n+" of "+o.Instance+" shadows a built-in; ignored")
					} else {
						warnings = append(warnings, "command /"+n+" offered by "+prev+" and "+o.Instance+"; "+prev+" kept")
					}
					continue
				}
				taken[n] = o.Instance
				spec := Spec{Name: n, Help: s.Description, OwnerOnly: s.OwnerOnly, Instance: o.Instance, Plugin: s}
				named = append(named, spec)
				if first {
					canonical = append(canonical, spec)
					first = false
				}
			}
		}
	}
	sort.Slice(canonical, func(i, j int) bool { return canonical[i].Name < canonical[j].Name })
	m := r.index(named)
	listed := make(map[string]bool, len(offers))
	for _, o := range offers {
		listed[o.Instance] = true
	}
	r.mu.Lock()
	r.byName, r.plugins, r.listed = m, canonical, listed
	r.mu.Unlock()
	return warnings
}

// Lists reports whether the commands of every one of instances were in the
// last SetPlugins (even when an instance offered none).
func (r *Registry) Lists(instances []string) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, n := range instances {
		if !r.listed[n] {
			return false
		}
	}
	return true
}

// Parse recognises a registered command at the start of text.
func (r *Registry) Parse(text string) (Invocation, bool) {
	name, args, ok := split(text)
	if !ok {
		return Invocation{}, false
	}
	r.mu.RLock()
	s, ok := r.byName[name]
	r.mu.RUnlock()
	if !ok {
		return Invocation{}, false
	}
	return Invocation{Spec: s, Args: args}, true
}

// split cuts "/name[:| ]args" into the lower-case name and trimmed args.
func split(text string) (name, args string, ok bool) {
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, "/") {
		return "", "", false
	}
	end := 1
	for end < len(t) && t[end] != ':' && !unicode.IsSpace(rune(t[end])) {
		end++
	}
	if end == 1 {
		return "", "", false
	}
	return strings.ToLower(t[1:end]), strings.TrimSpace(strings.TrimPrefix(t[end:], ":")), true
}

// Plugins returns the plugin commands, one per command (aliases folded),
// sorted by name.
func (r *Registry) Plugins() []Spec {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return append([]Spec(nil), r.plugins...)
}

// Menu is the command menu a channel shows: built-ins first, then plugin
// commands.
func (r *Registry) Menu() []channel.MenuEntry {
	var out []channel.MenuEntry
	for _, s := range append(append([]Spec(nil), r.builtins...), r.Plugins()...) {
		d := s.Help
		if d == "" {
			d = s.Name
		}
		out = append(out, channel.MenuEntry{Name: s.Name, Description: d})
	}
	return out
}

// Help is the text of /help.
func (r *Registry) Help() string {
	var b strings.Builder
	b.WriteString("Commands:\n")
	for _, s := range append(append([]Spec(nil), r.builtins...), r.Plugins()...) {
		b.WriteString("/" + s.Name + " — " + s.Help + "\n")
	}
	b.WriteString("Anything else goes to the agent.")
	return b.String()
}

// AbortWords stop the active run when sent as a whole message.
var AbortWords = []string{"stop", "esc", "abort", "interrupt", "halt", "exit"}

// IsAbortTrigger reports whether the whole message is an abort word
// ("stop", "esc", "abort", …), ignoring case, surrounding whitespace and
// trailing punctuation.
func IsAbortTrigger(text string) bool {
	t := strings.ToLower(strings.TrimRightFunc(strings.TrimSpace(text), unicode.IsPunct))
	for _, w := range AbortWords {
		if t == w {
			return true
		}
	}
	return false
}
