package settings

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/core/agenttools"
	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/core/turn"
)

// agentNotMapped are the fields of config.Agent that a named agent's
// mapping does not carry, each with where it goes instead. Every other
// field must reach the agent's runner configuration or a per-agent table of
// the pipeline (TestAgentFieldsMapped).
var agentNotMapped = map[string]string{
	// The key of every per-agent table, not a setting.
	"ID": "the key",
	// Read per agent by the host's media pruner (Host.startMediaPruner),
	// which keeps no table to compare.
	"MediaKeep": "the host's media pruner",
	// Read per agent, at each plugin tool call, by the tools endpoint's
	// grants (pluginToolGrants over the running configuration).
	"Tools": "the plugin tool grants",
	// The host's, not an agent's: refused in an agent "<id>" block by
	// validate (config.DefaultAgentOnly). max_concurrent and one_shot are
	// mapped like every field, but the runner takes the runner's (the
	// default agent's) values (runner.Config.forAgent); approvers and
	// approval_timeout make the one approval policy (Pipeline).
	"MaxConcurrent":   "refused",
	"OneShot":         "refused",
	"Approvers":       "refused",
	"ApprovalTimeout": "refused",
}

// agentMapping is everything a named agent id is mapped into: its runner
// configuration, its turn settings and its entries in the pipeline's
// per-agent tables.
type agentMapping struct {
	Runner     runner.Config
	Turn       turn.AgentSettings
	Bindings   any
	Switchable bool
	Budget     *config.Budget
	Workspace  string
	Transcript []string
}

func mapAgent(t *testing.T, cfg *config.Config, id string) agentMapping {
	t.Helper()
	rc, err := Runner(cfg)
	if err != nil {
		t.Fatal(err)
	}
	set, err := Pipeline(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return agentMapping{
		Runner: rc.Agents[id], Turn: set.Turn.Agents[id], Bindings: set.Agents, Switchable: slices.Contains(set.Switchable, id),
		Budget: set.Budgets.Agents[id], Workspace: set.Delivery.AgentWorkspaces[id], Transcript: set.TranscriptDirs,
	}
}

// TestAgentFieldsMapped: each field of config.Agent, set to a value of its
// own in an agent "<id>" block, changes what that agent is mapped into — so
// a named agent's block holds as the default's does, and a field added to
// config.Agent without a mapping fails here (unless agentNotMapped says
// where it goes instead).
func TestAgentFieldsMapped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "config.hcl")
	src := fmt.Sprintf("data_dir = %q\nagent {\n  workspace = %q\n}\nagent \"x\" {\n  workspace = %q\n}\n", filepath.Join(dir, "data"), filepath.Join(dir, "main"), filepath.Join(dir, "x"))
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, diags := config.Load(path)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	base := mapAgent(t, cfg, "x")
	named := cfg.Agents[0]
	typ := reflect.TypeOf(*named)
	refused := map[string]bool{}
	for _, h := range config.DefaultAgentOnly {
		refused[h.Name] = true
	}
	for i := range typ.NumField() {
		f := typ.Field(i)
		if !f.IsExported() {
			continue
		}
		attr, _, _ := strings.Cut(f.Tag.Get("hcl"), ",")
		if why, ok := agentNotMapped[f.Name]; ok {
			if (why == "refused") != refused[attr] {
				t.Errorf("%s (%s): agentNotMapped says %q, config.DefaultAgentOnly refused: %v", f.Name, attr, why, refused[attr])
			}
			continue
		}
		if refused[attr] {
			t.Errorf("%s (%s) is refused in a named block (config.DefaultAgentOnly) but not listed in agentNotMapped", f.Name, attr)
		}
		t.Run(f.Name, func(t *testing.T) {
			a := *named
			v := reflect.ValueOf(&a).Elem().Field(i)
			(&agentFiller{n: i}).fill(f.Name, v)
			c := *cfg
			c.Agents = []*config.Agent{&a}
			if got := mapAgent(t, &c, "x"); reflect.DeepEqual(got, base) {
				t.Errorf("config.Agent.%s (%s = %v) in agent \"x\" reaches none of what the agent is mapped into: map it (runnerConfig, turnAgent, Pipeline) or say in agentNotMapped where it goes", f.Name, attr, v.Interface())
			}
		})
	}
	for name := range agentNotMapped {
		if _, ok := typ.FieldByName(name); !ok {
			t.Errorf("agentNotMapped lists %s, which config.Agent does not have", name)
		}
	}
}

// agentFiller sets a field to a value of its own that differs from the
// one it was loaded with: strings "s<n>", numbers 100+n, a bool flipped,
// one-element lists and maps, pointers to filled structs. A few fields
// need a value the mapping can use (a user that exists, a binding that
// parses, the one value that turns a setting on).
type agentFiller struct{ n int }

var agentFieldValues = map[string]any{
	"RunAs":     "nobody",
	"Chats":     []string{"lo:c1"},
	"Approvals": "chat",
}

var agentDurationType = reflect.TypeOf(config.Duration(""))

func (f *agentFiller) fill(name string, v reflect.Value) {
	f.n++
	if x, ok := agentFieldValues[name]; ok {
		v.Set(reflect.ValueOf(x))
		return
	}
	if v.Type() == agentDurationType {
		v.SetString(fmt.Sprintf("%dm", 100+f.n))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d", f.n))
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(100 + f.n))
	case reflect.Float64:
		v.SetFloat(float64(f.n) + 0.5)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		f.fill("", s.Index(0))
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		f.fill("", k)
		f.fill("", e)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		f.fill("", p.Elem())
		v.Set(p)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				f.fill(v.Type().Field(i).Name, v.Field(i))
			}
		}
	default:
		panic("agentFiller: no value for a " + v.Type().String())
	}
}

// TestNamedAgentSandboxBoundaries: a named agent's sandbox hides what the
// default agent's does — data_dir, the config file — and the other agent's
// workspace, and binds back the same agent tool socket (and executable):
// without them the agent's own tools would not reach the host.
func TestNamedAgentSandboxBoundaries(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "config.hcl")
	src := fmt.Sprintf("data_dir = %q\nagent {\n  workspace = %q\n}\nagent \"x\" {\n  workspace = %q\n}\n", filepath.Join(dir, "data"), filepath.Join(dir, "main"), filepath.Join(dir, "x"))
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, diags := config.Load(path)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	rc, err := Runner(cfg)
	if err != nil {
		t.Fatal(err)
	}
	x := rc.Agents["x"]
	if !reflect.DeepEqual(x.Expose, rc.Expose) || !slices.Contains(x.Expose, filepath.Join(AgentRunDir(cfg), agenttools.SocketName)) {
		t.Errorf("Expose: agent x %q, main %q", x.Expose, rc.Expose)
	}
	for _, c := range []struct {
		name string
		hide []string
		want []string
	}{
		{"main", rc.Hide, []string{cfg.DataDir, path, filepath.Join(dir, "x")}},
		{"x", x.Hide, []string{cfg.DataDir, path, filepath.Join(dir, "main")}},
	} {
		for _, w := range c.want {
			if !slices.Contains(c.hide, w) {
				t.Errorf("agent %s's sandbox does not hide %s: %q", c.name, w, c.hide)
			}
		}
	}
	if x.Name != "x" || x.ConfigDir != claudeConfigDir(cfg) {
		t.Errorf("agent x: Name %q, ConfigDir %q (want the default's, %q: same user)", x.Name, x.ConfigDir, claudeConfigDir(cfg))
	}

	// Run as another user, agent x gets a claude config directory of its
	// own, where /export looks for its transcripts too.
	cfg.Agents[0].RunAs = "nobody"
	if rc, err = Runner(cfg); err != nil {
		t.Skip(err) // no user nobody here
	}
	own := filepath.Join(cfg.DataDir, "claude-x")
	if got := rc.Agents["x"].ConfigDir; got != own || rc.ConfigDir != claudeConfigDir(cfg) {
		t.Errorf("ConfigDir: agent x %q, want %q; main %q", got, own, rc.ConfigDir)
	}
	set, err := Pipeline(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(set.TranscriptDirs, own) {
		t.Errorf("TranscriptDirs %q lack %s", set.TranscriptDirs, own)
	}
}
