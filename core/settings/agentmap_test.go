package settings

import (
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/core/agenttools"
	"github.com/clawhost/clawhost/core/config"
)

// agentElsewhere are the fields of config.Agent whose home is not the
// agent's Profile or HostWide, each with where it is. Every other field
// must reach the Profile (or, in the default agent block, HostWide) of the
// agent that sets it (TestProfileHomesEveryField).
var agentElsewhere = map[string]string{
	// The chats bound to the agent are the routing table config resolves
	// for every agent at once (config.Config.Bindings, Pipeline's Agents).
	"Chats": "config.Config.Bindings",
}

// agentHome is everything an agent block is mapped into: its Profile, the
// host-wide settings (the default agent's) and the routing table.
type agentHome struct {
	Profile  Profile
	Host     HostWide
	Bindings any
}

func homeOf(t *testing.T, cfg *config.Config, a *config.Agent) agentHome {
	t.Helper()
	p, err := Agent(cfg, a)
	if err != nil {
		t.Fatal(err)
	}
	return agentHome{Profile: p, Host: Host(cfg), Bindings: cfg.Bindings()}
}

// TestProfileHomesEveryField: each field of config.Agent, set to a value
// of its own in the default agent block and in an agent "<id>" block,
// changes what that agent is mapped into (Agent's Profile, or HostWide for
// the host's settings of the default block) — so one rule maps every
// agent, a named agent's block holds as the default's does, and a field
// added to config.Agent without a home fails here (unless agentElsewhere
// says where it goes). The host's settings are exactly those
// config.DefaultAgentOnly refuses in a named block.
func TestProfileHomesEveryField(t *testing.T) {
	t.Parallel()
	cfg, _, _ := twoAgents(t)
	typ := reflect.TypeOf(config.Agent{})
	refused := map[string]bool{}
	for _, h := range config.DefaultAgentOnly {
		refused[h.Name] = true
	}
	for _, which := range []string{"default", "named"} {
		agentOf := func(c *config.Config) **config.Agent {
			if which == "default" {
				return &c.Agent
			}
			return &c.Agents[0]
		}
		base := homeOf(t, cfg, *agentOf(cfg))
		for i := range typ.NumField() {
			f := typ.Field(i)
			if !f.IsExported() {
				continue
			}
			attr, _, _ := strings.Cut(f.Tag.Get("hcl"), ",")
			if _, ok := agentElsewhere[f.Name]; ok {
				continue
			}
			if which == "named" && refused[attr] {
				continue // validate refuses it in a named block
			}
			t.Run(which+"/"+f.Name, func(t *testing.T) {
				c := *cfg
				c.Agents = slices.Clone(cfg.Agents)
				a := **agentOf(&c)
				v := reflect.ValueOf(&a).Elem().Field(i)
				(&agentFiller{n: i}).fill(f.Name, v)
				*agentOf(&c) = &a
				got := homeOf(t, &c, &a)
				if reflect.DeepEqual(got, base) {
					t.Fatalf("config.Agent.%s (%s = %v) in the %s agent block has no home: map it in Agent (or HostWide) or say in agentElsewhere where it goes", f.Name, attr, v.Interface(), which)
				}
				if toHost := !reflect.DeepEqual(got.Host, base.Host); toHost != refused[attr] {
					t.Errorf("config.Agent.%s (%s): reaches HostWide %v, refused in a named block (config.DefaultAgentOnly) %v: the host's settings are exactly the refused ones", f.Name, attr, toHost, refused[attr])
				}
			})
		}
	}
	for name := range agentElsewhere {
		if _, ok := typ.FieldByName(name); !ok {
			t.Errorf("agentElsewhere lists %s, which config.Agent does not have", name)
		}
	}
}

// TestRunnerAndPipelineReadProfiles: the runner's and the pipeline's
// per-agent settings are the agents' Profiles, the default agent's as
// their own, and the runner's limits HostWide's — nothing else maps an
// agent block.
func TestRunnerAndPipelineReadProfiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "config.hcl")
	src := fmt.Sprintf("data_dir = %q\nagent {\n  workspace = %q\n  max_concurrent = 7\n  one_shot = true\n  approvers = \"owners\"\n  memory_flush {\n    context_window = 1000\n  }\n  budget {\n    per_chat_daily_usd = 3\n  }\n}\nagent \"x\" {\n  workspace = %q\n  switchable = true\n  model = \"opus\"\n  budget {\n    per_chat_daily_usd = 1\n  }\n}\n",
		filepath.Join(dir, "data"), filepath.Join(dir, "main"), filepath.Join(dir, "x"))
	cfg := loadConfig(t, path, src)
	profiles, err := Agents(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(profiles) != 2 || !profiles[0].Default || profiles[1].Default || profiles[1].ID != "x" {
		t.Fatalf("profiles %+v", profiles)
	}
	main, x, hw := profiles[0], profiles[1], Host(cfg)
	rc, err := Runner(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mainRC := rc
	mainRC.Agents, mainRC.MaxConcurrent, mainRC.OneShot = nil, 0, false
	if !reflect.DeepEqual(mainRC, main.Runner) || !reflect.DeepEqual(rc.Agents["x"], x.Runner) {
		t.Errorf("Runner does not carry the profiles' runner settings")
	}
	if rc.MaxConcurrent != 7 || !rc.OneShot || hw.MaxConcurrent != 7 || !hw.OneShot || !hw.Approval.OwnersOnly {
		t.Errorf("host-wide: runner %d %v, HostWide %+v", rc.MaxConcurrent, rc.OneShot, hw)
	}
	set, err := Pipeline(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(set.Turn.Agents["x"], x.Turn) {
		t.Errorf("turn settings of agent x: %+v, want %+v", set.Turn.Agents["x"], x.Turn)
	}
	// The default agent's turn settings are turn.Settings' own fields, by
	// name: each field of turn.AgentSettings must be there and hold the
	// default Profile's value (a pointer: the value it points at).
	own := reflect.ValueOf(set.Turn)
	want := reflect.ValueOf(main.Turn)
	for i := range want.NumField() {
		name := want.Type().Field(i).Name
		got := own.FieldByName(name)
		if got.IsValid() && got.Kind() == reflect.Pointer && want.Field(i).Kind() != reflect.Pointer {
			if got.IsNil() {
				t.Errorf("turn.Settings.%s is nil: the default agent's %s falls between the mappings", name, name)
				continue
			}
			got = got.Elem()
		}
		if !got.IsValid() || !reflect.DeepEqual(got.Interface(), want.Field(i).Interface()) {
			t.Errorf("turn.Settings.%s does not hold the default agent's %s (%v): it falls between the mappings", name, name, want.Field(i).Interface())
		}
	}
	if set.Delivery.AgentWorkspaces["x"] != x.Runner.Workspace || !slices.Equal(set.Switchable, []string{"x"}) ||
		!reflect.DeepEqual(set.Budgets.Agents["x"], x.Budget) || !reflect.DeepEqual(set.Budgets.Agents["main"], main.Budget) || x.Budget == nil || !set.Approval.OwnersOnly {
		t.Errorf("per-agent tables: workspaces %v, switchable %v, budgets %v, approval %+v", set.Delivery.AgentWorkspaces, set.Switchable, set.Budgets.Agents, set.Approval)
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
	// A size that parses (any other string maps to the default).
	"WarmMemory": config.Size("300MB"),
	// Unset is true: false is the value of its own.
	"Spare": new(bool),
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

// twoAgents loads a configuration in a fresh dir with data_dir, the
// default agent (workspace dir/main) and agent "x" (workspace dir/x);
// path is the configuration file's.
func twoAgents(t *testing.T) (cfg *config.Config, dir, path string) {
	t.Helper()
	dir = t.TempDir()
	path = filepath.Join(dir, "config.hcl")
	src := fmt.Sprintf("data_dir = %q\nagent {\n  workspace = %q\n}\nagent \"x\" {\n  workspace = %q\n}\n", filepath.Join(dir, "data"), filepath.Join(dir, "main"), filepath.Join(dir, "x"))
	return loadConfig(t, path, src), dir, path
}

// TestNamedAgentSandboxBoundaries: a named agent's sandbox hides what the
// default agent's does — data_dir, the config file — and the other agent's
// workspace, and binds back the same agent tool socket (and executable):
// without them the agent's own tools would not reach the host.
func TestNamedAgentSandboxBoundaries(t *testing.T) {
	t.Parallel()
	cfg, dir, path := twoAgents(t)
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
