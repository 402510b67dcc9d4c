// A test host's configuration: the blocks a test names, written as the
// HCL file the real binary loads.

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"

	"github.com/clawhost/clawhost/core/internal/fakeclaude"
)

// Attrs are the attributes of an HCL block. A value is a string, bool,
// int, float64, []string, map[string]string, map[string]any, Attrs (an
// object) or an Expr; they are written sorted by name.
type Attrs map[string]any

// Expr is an HCL expression written as it is, e.g. Expr(`env("TOKEN")`)
// or a deliberately wrong value a validation test wants.
type Expr string

// Agent is an agent block: ID "" is the default agent {}, another ID an
// agent "<id>" {} block. An empty Command in the default block is the fake
// claude (the running test binary with fakeclaude.EnvVar set); Env is
// merged into the block's env map. Raw is more of the block written as it
// is (a benchmark flag's HCL).
type Agent struct {
	ID      string
	Command string
	Env     map[string]string
	Attrs   Attrs
	Raw     string
}

// RealClaude is a default agent block running the real Claude Code CLI at
// bin against the fake Anthropic API at apiURL, with HOME at home (claude
// keeps its state there) and its telemetry and updater off.
func RealClaude(bin, home, apiURL string, attrs Attrs) Agent {
	return Agent{Command: bin, Attrs: attrs, Env: map[string]string{
		"HOME":                                     home,
		"ANTHROPIC_BASE_URL":                       apiURL,
		"ANTHROPIC_API_KEY":                        "test",
		"DISABLE_TELEMETRY":                        "1",
		"DISABLE_ERROR_REPORTING":                  "1",
		"DISABLE_AUTOUPDATER":                      "1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
	}}
}

// Plugin is a plugin "<Name>" block: source, the host's settings for it
// (enabled, env, checksum, ...) and its config {} block.
type Plugin struct {
	Name   string
	Source string
	Attrs  Attrs
	Config Attrs
}

// Block is any other block (schedule, heartbeat, ...).
type Block struct {
	Type   string
	Labels []string
	Attrs  Attrs
	Blocks []Block
	raw    string
}

// Host describes one clawhost under test; Start writes its config.hcl and
// runs the real binary on it. Every path may be relative to Dir (the
// config's directory), as a user's would be.
type Host struct {
	// Dir holds config.hcl; a new temporary directory when empty.
	Dir string
	// DataDir defaults to "./data"; PluginDir to the built binaries
	// (testbin.Dir); LogLevel to "debug" ("-" leaves it out).
	DataDir, PluginDir, LogLevel string
	// Agent is the default agent block; Agents are agent "<id>" blocks.
	Agent  Agent
	Agents []Agent
	// Access, Admin, Messages and Storage are written as blocks when set.
	Access, Admin, Messages, Storage Attrs
	Plugins                          []Plugin
	Blocks                           []Block
	// Extra is appended to the file as it is (a test of a broken file).
	Extra string
}

// HCL renders the host's configuration.
func (h Host) HCL(tb testing.TB) string {
	tb.Helper()
	f := hclwrite.NewEmptyFile()
	root := f.Body()
	data := h.DataDir
	if data == "" {
		data = "./data"
	}
	setAttr(root, "data_dir", data)
	pdir := h.PluginDir
	if pdir == "" {
		pdir = binDir(tb)
	}
	setAttr(root, "plugin_dir", pdir)
	switch h.LogLevel {
	case "":
		setAttr(root, "log_level", "debug")
	case "-":
	default:
		setAttr(root, "log_level", h.LogLevel)
	}
	root.AppendNewline()
	writeAgent(tb, root, h.Agent)
	for _, a := range h.Agents {
		writeAgent(tb, root, a)
	}
	// No admin block: no admin endpoint. The default (127.0.0.1:8791) is one
	// port for every host: two tests running at once would both bind it and
	// the second host would exit at its start (a test then waited for a
	// plugin that never came). A test that wants the endpoint names a free
	// address.
	admin := h.Admin
	if admin == nil {
		admin = Attrs{"listen": ""}
	}
	for _, b := range []struct {
		name  string
		attrs Attrs
	}{{"access", h.Access}, {"admin", admin}, {"messages", h.Messages}, {"storage", h.Storage}} {
		if b.attrs != nil {
			writeBlock(root, Block{Type: b.name, Attrs: b.attrs})
		}
	}
	for _, p := range h.Plugins {
		attrs := Attrs{"source": p.Source}
		for k, v := range p.Attrs {
			attrs[k] = v
		}
		b := Block{Type: "plugin", Labels: []string{p.Name}, Attrs: attrs}
		if p.Config != nil {
			b.Blocks = []Block{{Type: "config", Attrs: p.Config}}
		}
		writeBlock(root, b)
	}
	for _, b := range h.Blocks {
		writeBlock(root, b)
	}
	return string(f.Bytes()) + h.Extra
}

func writeAgent(tb testing.TB, root *hclwrite.Body, a Agent) {
	attrs := Attrs{}
	env := map[string]string{}
	if a.ID == "" {
		if a.Command == "" {
			exe, err := os.Executable()
			if err != nil {
				tb.Fatal(err)
			}
			a.Command = exe
			env[fakeclaude.EnvVar] = "1"
			for k, v := range fakeAgentDefaults {
				attrs[k] = v
			}
		}
	}
	if a.Command != "" {
		attrs["command"] = a.Command
	}
	for k, v := range a.Env {
		env[k] = v
	}
	if len(env) > 0 {
		attrs["env"] = env
	}
	for k, v := range a.Attrs {
		attrs[k] = v
	}
	b := Block{Type: "agent", Attrs: attrs, raw: a.Raw}
	if a.ID != "" {
		b.Labels = []string{a.ID}
	}
	writeBlock(root, b)
}

func writeBlock(body *hclwrite.Body, b Block) {
	blk := body.AppendNewBlock(b.Type, b.Labels)
	if b.raw != "" {
		blk.Body().AppendUnstructuredTokens(hclwrite.Tokens{{Type: hclsyntax.TokenIdent, Bytes: []byte(strings.TrimSpace(b.raw) + "\n")}})
	}
	names := make([]string, 0, len(b.Attrs))
	for k := range b.Attrs {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		setAttr(blk.Body(), k, b.Attrs[k])
	}
	for _, sub := range b.Blocks {
		writeBlock(blk.Body(), sub)
	}
	body.AppendNewline()
}

func setAttr(body *hclwrite.Body, name string, v any) {
	if e, ok := v.(Expr); ok {
		body.SetAttributeRaw(name, hclwrite.Tokens{{Type: hclsyntax.TokenIdent, Bytes: []byte(e)}})
		return
	}
	body.SetAttributeValue(name, ctyValue(v))
}

// ctyValue converts a Go value of an Attrs map to its HCL value.
func ctyValue(v any) cty.Value {
	switch x := v.(type) {
	case string:
		return cty.StringVal(x)
	case bool:
		return cty.BoolVal(x)
	case int:
		return cty.NumberIntVal(int64(x))
	case int64:
		return cty.NumberIntVal(x)
	case float64:
		return cty.NumberFloatVal(x)
	case []string:
		if len(x) == 0 {
			return cty.ListValEmpty(cty.String)
		}
		vals := make([]cty.Value, len(x))
		for i, s := range x {
			vals[i] = cty.StringVal(s)
		}
		return cty.TupleVal(vals)
	case map[string]string:
		m := make(map[string]cty.Value, len(x))
		for k, s := range x {
			m[k] = cty.StringVal(s)
		}
		return cty.ObjectVal(m)
	case Attrs:
		return ctyValue(map[string]any(x))
	case map[string]any:
		m := make(map[string]cty.Value, len(x))
		for k, e := range x {
			m[k] = ctyValue(e)
		}
		return cty.ObjectVal(m)
	}
	panic(fmt.Sprintf("e2e: no HCL value for %T", v))
}

// Write writes the configuration to Dir/config.hcl (0600), making Dir
// when it is empty, and returns the file's path.
func (h *Host) Write(tb testing.TB) string {
	tb.Helper()
	if h.Dir == "" {
		h.Dir = tb.TempDir()
	}
	path := filepath.Join(h.Dir, "config.hcl")
	if err := os.WriteFile(path, []byte(h.HCL(tb)), 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}
