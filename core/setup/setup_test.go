package setup

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/ownerclaim"
	"github.com/clawhost/clawhost/plugins/discord"
	"github.com/clawhost/clawhost/plugins/discord/discordtest"
	"github.com/clawhost/clawhost/plugins/slack"
	"github.com/clawhost/clawhost/plugins/slack/slacktest"
	"github.com/clawhost/clawhost/plugins/telegram"
	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
	"github.com/clawhost/clawhost/sdk/probe"
	"github.com/clawhost/clawhost/sdk/schema"
)

const tgToken = "123456:TESTTOKEN"

var day = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func env(m map[string]string) Getenv { return func(k string) string { return m[k] } }

func TestDefaultPaths(t *testing.T) {
	t.Parallel()
	get := env(map[string]string{"HOME": "/home/u"})
	if got := ConfigDir(get); got != "/home/u/.config/clawhost" {
		t.Errorf("ConfigDir = %q", got)
	}
	if got := DataDir(get); got != "/home/u/.local/state/clawhost" {
		t.Errorf("DataDir = %q", got)
	}
	if got := Workspace(get); got != "/home/u/clawhost-workspace" {
		t.Errorf("Workspace = %q", got)
	}
	get = env(map[string]string{"HOME": "/home/u", "XDG_CONFIG_HOME": "/x/cfg", "XDG_STATE_HOME": "/x/state"})
	if got := ConfigDir(get); got != "/x/cfg/clawhost" {
		t.Errorf("ConfigDir with XDG = %q", got)
	}
	if got := DataDir(get); got != "/x/state/clawhost" {
		t.Errorf("DataDir with XDG = %q", got)
	}
	// A relative XDG directory is ignored, as the spec says.
	if got := ConfigDir(env(map[string]string{"HOME": "/h", "XDG_CONFIG_HOME": "rel"})); got != "/h/.config/clawhost" {
		t.Errorf("ConfigDir with a relative XDG_CONFIG_HOME = %q", got)
	}
}

func TestConfigPath(t *testing.T) {
	t.Parallel()
	xdg := t.TempDir()
	get := env(map[string]string{"XDG_CONFIG_HOME": xdg})
	if got := ConfigPath(get); got != "config.hcl" {
		t.Errorf("without the user's file: %q, want config.hcl", got)
	}
	p := filepath.Join(xdg, "clawhost", "config.hcl")
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := ConfigPath(get); got != p {
		t.Errorf("with the user's file: %q, want %q", got, p)
	}
}

func TestReadEnvFile(t *testing.T) {
	t.Parallel()
	got, err := ReadEnvFile([]byte("# tokens\n\nA=1\nexport B = two words \nC=\"x=\\\"y\\\"\"\nD='single # not a comment'\nE=\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := [][2]string{{"A", "1"}, {"B", "two words"}, {"C", `x="y"`}, {"D", "single # not a comment"}, {"E", ""}}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
	for _, bad := range []string{"NOEQUALS\n", "1A=x\n", "A-B=x\n", "A=\"unterminated\\\"\n"} {
		if _, err := ReadEnvFile([]byte("OK=1\n" + bad)); err == nil || !strings.Contains(err.Error(), "line 2") {
			t.Errorf("%q: err %v, want one naming line 2", bad, err)
		}
	}
	// The error names the line, never the value.
	if _, err := ReadEnvFile([]byte("T=\"secret\\q\"\n")); err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("error %v: want one without the value", err)
	}
}

func TestLoadEnvFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.hcl")
	set := map[string]string{"ALREADY": "from the environment"}
	lookup := func(k string) (string, bool) { v, ok := set[k]; return v, ok }
	setenv := func(k, v string) error { set[k] = v; return nil }
	if names, err := LoadEnvFile(cfg, lookup, setenv); err != nil || names != nil {
		t.Fatalf("no file: %v, %v", names, err)
	}
	if err := os.WriteFile(filepath.Join(dir, EnvFile), []byte("TOKEN=abc\nALREADY=from the file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadEnvFile(cfg, lookup, setenv); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("a world-readable env file: %v, want a refusal", err)
	}
	if _, ok := set["TOKEN"]; ok {
		t.Error("a refused file set a variable")
	}
	if err := os.Chmod(filepath.Join(dir, EnvFile), 0o600); err != nil {
		t.Fatal(err)
	}
	names, err := LoadEnvFile(cfg, lookup, setenv)
	if err != nil || !slices.Equal(names, []string{"TOKEN"}) {
		t.Fatalf("names %q, %v; want [TOKEN]", names, err)
	}
	if set["TOKEN"] != "abc" || set["ALREADY"] != "from the environment" {
		t.Errorf("environment after: %q (the file fills only unset variables)", set)
	}
}

func plan(t *testing.T) Plan {
	d := t.TempDir()
	return Plan{ConfigDir: filepath.Join(d, "cfg"), DataDir: filepath.Join(d, "state"), Workspace: filepath.Join(d, "ws"), PluginDir: filepath.Join(d, "bin"),
		Claude: "claude", TelegramToken: tgToken, TelegramAPI: "http://127.0.0.1:1/bot%s/%s", DiscordToken: "dc-token", WhatsApp: true, WebChat: true,
		WebChatListen: "127.0.0.1:18790", AdminListen: "127.0.0.1:18791"}
}

// The files init writes: 0600, the tokens only in the env file, a
// configuration that loads with that env file, and nothing replaced
// without consent.
func TestWrite(t *testing.T) { // not parallel: t.Setenv
	p := plan(t)
	files, err := Write(p, day, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{files.Config, files.Env} {
		fi, err := os.Stat(f)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, mode %v; want 0600", f, err, fi.Mode().Perm())
		}
	}
	for _, d := range []string{p.ConfigDir, p.DataDir, p.Workspace} {
		if fi, err := os.Stat(d); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v; want a 0700 directory", d, err)
		}
	}
	cfgText, _ := os.ReadFile(files.Config)
	envText, _ := os.ReadFile(files.Env)
	if strings.Contains(string(cfgText), tgToken) || strings.Contains(string(cfgText), "dc-token") {
		t.Errorf("a token is in config.hcl:\n%s", cfgText)
	}
	if !strings.Contains(string(envText), "TELEGRAM_BOT_TOKEN=\""+tgToken+"\"") || !strings.Contains(string(envText), "DISCORD_BOT_TOKEN=") {
		t.Errorf("clawhost.env lacks the tokens:\n%s", envText)
	}
	vars, err := ReadEnvFile(envText)
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range vars {
		t.Setenv(kv[0], kv[1])
	}
	cfg, diags := config.Load(files.Config)
	if diags.HasErrors() {
		t.Fatalf("the written configuration does not load: %v\n%s", diags, cfgText)
	}
	var names []string
	for _, pl := range cfg.EnabledPlugins() {
		names = append(names, pl.Name+"="+pl.Source)
	}
	slices.Sort(names)
	if want := []string{"dc=discord", "tg=telegram", "wa=whatsapp", "web=webchat"}; !slices.Equal(names, want) {
		t.Errorf("plugins %q, want %q", names, want)
	}
	if cfg.DataDir != p.DataDir || cfg.Agent.Workspace != p.Workspace || cfg.Admin.Listen != p.AdminListen {
		t.Errorf("data_dir %q workspace %q admin %q", cfg.DataDir, cfg.Agent.Workspace, cfg.Admin.Listen)
	}

	// Existing files: refused without consent, kept as they were.
	p2 := p
	p2.TelegramToken = "999:OTHER"
	if _, err := Write(p2, day, nil); !errors.Is(err, ErrExists) {
		t.Errorf("second write: %v, want ErrExists", err)
	}
	if _, err := Write(p2, day, func(string) bool { return false }); !errors.Is(err, ErrExists) {
		t.Errorf("second write, declined: %v, want ErrExists", err)
	}
	if now, _ := os.ReadFile(files.Env); !bytes.Equal(now, envText) {
		t.Error("a refused write changed clawhost.env")
	}
	var asked []string
	if _, err := Write(p2, day, func(path string) bool { asked = append(asked, path); return true }); err != nil {
		t.Fatal(err)
	}
	if now, _ := os.ReadFile(files.Env); !strings.Contains(string(now), "999:OTHER") {
		t.Error("an accepted overwrite kept the old clawhost.env")
	}
	if !slices.Equal(asked, []string{files.Config, files.Env}) {
		t.Errorf("asked about %q", asked)
	}
}

// inProcess is init's Prober for tests: the plugins' own probes, called
// in this process (the cli runs them through the plugin launcher).
func inProcess(ctx context.Context, _, source string, block map[string]any) (probe.Report, error) {
	js, err := json.Marshal(block)
	if err != nil {
		return probe.Report{}, err
	}
	cfg := schema.Config{Instance: source, JSON: js}
	switch source {
	case "telegram":
		return telegram.Probe(ctx, cfg)
	case "discord":
		return discord.Probe(ctx, cfg)
	}
	return probe.Report{}, nil
}

// TestCheckToken: init takes a token its plugin's probe accepts, asks
// again for one the platform refused (ErrBadToken), reports a platform it
// could not ask as another error without the token, and passes on the
// plugin's advice (the Message Content intent) and link.
func TestCheckToken(t *testing.T) {
	t.Parallel()
	tg := telegramtest.NewServer(tgToken)
	defer tg.Close()
	dc := discordtest.NewServer("dc-token")
	defer dc.Close()
	ctx := context.Background()
	p := plan(t)
	p.TelegramAPI, p.DiscordAPI = tg.APIEndpoint(), dc.Endpoint()
	var out bytes.Buffer
	s := &session{o: Options{Out: &out, Probe: inProcess}}
	if err := s.checkToken(ctx, p, "telegram", "Telegram", telegramBlock(p, tgToken)); err != nil || !strings.Contains(out.String(), "✓ Telegram: the bot @clawbot") {
		t.Fatalf("good token: %v\n%s", err, out.String())
	}
	if err := s.checkToken(ctx, p, "telegram", "Telegram", telegramBlock(p, "123456:WRONG")); !errors.Is(err, ErrBadToken) {
		t.Errorf("wrong token: %v, want ErrBadToken", err)
	}
	dc.SetMessageContentAllowed(false)
	out.Reset()
	if err := s.checkToken(ctx, p, "discord", "Discord", discordBlock(p, "dc-token")); err != nil ||
		!strings.Contains(out.String(), "Message Content") || !strings.Contains(out.String(), "client_id=") {
		t.Errorf("without the intent: %v\n%s", err, out.String())
	}
	if err := s.checkToken(ctx, p, "discord", "Discord", discordBlock(p, "wrong")); !errors.Is(err, ErrBadToken) {
		t.Errorf("wrong discord token: %v, want ErrBadToken", err)
	}
	tg.Close()
	err := s.checkToken(ctx, p, "telegram", "Telegram", telegramBlock(p, tgToken))
	if err == nil || errors.Is(err, ErrBadToken) || strings.Contains(err.Error(), tgToken) {
		t.Errorf("unreachable: %v", err)
	}
}

// The prompts in order over a pipe: a wrong token is said and asked again,
// the right one names the bot, the owner code is made and printed.
func TestRunInteractive(t *testing.T) {
	t.Parallel()
	srv := telegramtest.NewServer(tgToken)
	defer srv.Close()
	p := plan(t)
	p.TelegramToken, p.DiscordToken, p.WhatsApp, p.WebChat, p.Workspace = "", "", false, false, ""
	p.TelegramAPI = srv.APIEndpoint()
	home := t.TempDir()
	in := strings.NewReader("telegram\n123456:WRONG\n" + tgToken + "\n~/ws\n3\n")
	var out bytes.Buffer
	res, err := Run(context.Background(), Options{Probe: inProcess, Plan: p, Interactive: true, In: in, Out: &out, Getenv: env(map[string]string{"HOME": home}), Now: func() time.Time { return day }})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	text := out.String()
	for _, want := range []string{"Channels to set up", "Telegram bot token", "does not know this token", "✓ Telegram: the bot @clawbot", "Workspace", "/owner " + res.OwnerCode, "clawhost run"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if res.Plan.Workspace != filepath.Join(home, "ws") || res.Plan.WebChat {
		t.Errorf("plan %+v", res.Plan)
	}
	if fi, err := os.Stat(res.Plan.Workspace); err != nil || !fi.IsDir() {
		t.Errorf("workspace not created: %v", err)
	}
	if _, err := os.Stat(filepath.Join(p.DataDir, ownerclaim.ClaimFile)); err != nil {
		t.Error("no owner claim in data_dir")
	}
	// Again: the existing files are asked about; "n" keeps them.
	in = strings.NewReader("telegram\n" + tgToken + "\n\n3\nn\n")
	out.Reset()
	if _, err := Run(context.Background(), Options{Probe: inProcess, Plan: p, Interactive: true, In: in, Out: &out, Getenv: env(map[string]string{"HOME": home}), Now: func() time.Time { return day }}); !errors.Is(err, ErrExists) {
		t.Errorf("second run answered n: %v, want ErrExists\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "exists. Replace it?") {
		t.Errorf("not asked:\n%s", out.String())
	}
	// The end of input stops init without writing.
	if _, err := Run(context.Background(), Options{Probe: inProcess, Plan: p, Interactive: true, In: strings.NewReader("telegram\n"), Out: io.Discard, Getenv: env(map[string]string{"HOME": home})}); err == nil {
		t.Error("init without a token succeeded")
	}
}

func TestRunNonInteractive(t *testing.T) {
	t.Parallel()
	srv := telegramtest.NewServer(tgToken)
	defer srv.Close()
	p := plan(t)
	p.TelegramToken, p.DiscordToken, p.WhatsApp = "", "", false
	p.TelegramAPI = srv.APIEndpoint()
	o := Options{Probe: inProcess, Plan: p, Out: io.Discard, Getenv: env(map[string]string{"HOME": t.TempDir(), "TELEGRAM_BOT_TOKEN": "123456:WRONG"})}
	if _, err := Run(context.Background(), o); !errors.Is(err, ErrBadToken) {
		t.Errorf("wrong token from the environment: %v, want ErrBadToken", err)
	}
	if _, err := os.Stat(p.ConfigDir); err == nil {
		t.Error("a refused token wrote the configuration directory")
	}
	o.Plan.TelegramToken = tgToken
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.OwnerCode) != ownerclaim.CodeLength || !res.Plan.WebChat {
		t.Errorf("result %+v", res)
	}
	if _, err := Run(context.Background(), o); !errors.Is(err, ErrExists) {
		t.Errorf("second run without -force: %v, want ErrExists", err)
	}
	o.Force = true
	if _, err := Run(context.Background(), o); err != nil {
		t.Errorf("second run with -force: %v", err)
	}
	o.Plan = Plan{ConfigDir: p.ConfigDir, DataDir: p.DataDir, PluginDir: p.PluginDir}
	o.Getenv = env(map[string]string{"HOME": t.TempDir()})
	if _, err := Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "no channel") {
		t.Errorf("no channel: %v", err)
	}
}

// TestRunSaysHowToInstallBubblewrap: without bwrap in PATH init prints
// the command that installs it and, with a chat platform set up (pairing
// lets strangers in), that clawhost refuses to start without it; with
// bwrap it says nothing of it.
func TestRunSaysHowToInstallBubblewrap(t *testing.T) {
	t.Parallel()
	srv := telegramtest.NewServer(tgToken)
	defer srv.Close()
	for _, tc := range []struct {
		name     string
		telegram bool
		bwrap    bool
		want     []string
		not      []string
	}{
		{"telegram, no bwrap", true, false, []string{"not installed here. Install it first:", "install bubblewrap", "refuses to start while strangers can pair", `sandbox = "off"`}, nil},
		{"web chat only, no bwrap", false, false, []string{"install bubblewrap"}, []string{"refuses to start"}},
		{"telegram, bwrap", true, true, nil, []string{"bubblewrap"}},
	} {
		p := plan(t)
		p.DiscordToken, p.WhatsApp, p.WebChat = "", false, true
		p.TelegramToken, p.TelegramAPI = "", ""
		if tc.telegram {
			p.TelegramToken, p.TelegramAPI = tgToken, srv.APIEndpoint()
		}
		var out bytes.Buffer
		look := func(string) (string, error) { return "", errors.New("not found") }
		if tc.bwrap {
			look = func(string) (string, error) { return "/usr/bin/bwrap", nil }
		}
		if _, err := Run(context.Background(), Options{Probe: inProcess, Plan: p, Out: &out, Getenv: env(map[string]string{"HOME": t.TempDir()}), LookPath: look}); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for _, w := range tc.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%s: output lacks %q:\n%s", tc.name, w, out.String())
			}
		}
		for _, w := range tc.not {
			if strings.Contains(out.String(), w) {
				t.Errorf("%s: output has %q:\n%s", tc.name, w, out.String())
			}
		}
	}
}

// TestRunOtherChannel: a channel plugin init does not know by name (the
// slack plugin, from the catalog) is offered and set up from its schema —
// its required and sensitive attributes asked, a block its probe fails
// asked again with the checks shown, the accepted one written with the
// secrets in clawhost.env under SLACK_*, an empty optional one left out.
func TestRunOtherChannel(t *testing.T) {
	t.Parallel()
	srv := slacktest.NewServer("xoxb-good", "xapp-good")
	defer srv.Close()
	p := plan(t)
	p.TelegramToken, p.DiscordToken, p.WhatsApp, p.WebChat, p.Workspace = "", "", false, false, ""
	catalog := func(context.Context, string) (map[string]CatalogEntry, error) {
		return map[string]CatalogEntry{"slack": {Schema: slack.Schema, Setup: slack.Setup}, "telegram": {Schema: telegram.Schema}}, nil
	}
	prober := func(ctx context.Context, dir, source string, block map[string]any) (probe.Report, error) {
		if source == "slack" {
			block["api_endpoint"] = srv.Endpoint() // the fake, as a test's block would name it
			js, _ := json.Marshal(block)
			return slack.Probe(ctx, schema.Config{Instance: source, JSON: js})
		}
		return inProcess(ctx, dir, source, block)
	}
	home := t.TempDir()
	in := strings.NewReader("slack\nxoxb-wrong\nxapp-good\n\nxoxb-good\nxapp-good\n\n~/ws\n3\n")
	var out bytes.Buffer
	res, err := Run(context.Background(), Options{Probe: prober, Catalog: catalog, Plan: p, Interactive: true, In: in, Out: &out,
		Getenv: env(map[string]string{"HOME": home}), Now: func() time.Time { return day }})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	text := out.String()
	for _, want := range []string{"comma-separated: telegram, slack [telegram]", "From an app manifest", "- chat:write", "bot_token", "✗ bot token", "invalid_auth",
		"Enter the settings of slack again", "✓ slack: the bot @clawbot", "✓ scopes"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "xoxb-good") {
		t.Error("the token was echoed")
	}
	if len(res.Plan.Others) != 1 || res.Plan.Others[0].Source != "slack" {
		t.Fatalf("plan %+v", res.Plan.Others)
	}
	cfg, _ := os.ReadFile(res.Files.Config)
	envf, _ := os.ReadFile(res.Files.Env)
	for _, want := range []string{"plugin \"slack\" {", "source = \"slack\"", "bot_token = env(\"SLACK_BOT_TOKEN\")", "app_token = env(\"SLACK_APP_TOKEN\")"} {
		if !strings.Contains(string(cfg), want) {
			t.Errorf("config lacks %q:\n%s", want, cfg)
		}
	}
	if strings.Contains(string(cfg), "signing_secret") || strings.Contains(string(cfg), "xoxb-") {
		t.Errorf("config:\n%s", cfg)
	}
	if !strings.Contains(string(envf), "SLACK_BOT_TOKEN=\"xoxb-good\"") || !strings.Contains(string(envf), "SLACK_APP_TOKEN=\"xapp-good\"") {
		t.Errorf("env file:\n%s", envf)
	}
	if _, diags := config.Load(res.Files.Config); diags.HasErrors() {
		t.Errorf("the written config does not load: %v", diags)
	}
}

// TestRunOffersInstalledChannels: init offers the channel plugins the
// plugin directory holds, and those alone — its own channels in their
// order, then the others sorted — with a default among them; a channel
// whose plugin is not installed is refused at the prompt.
func TestRunOffersInstalledChannels(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		catalog map[string]CatalogEntry
		answer  string
		prompt  string
		refused string
	}{
		{"webchat and slack", map[string]CatalogEntry{"slack": {Schema: slack.Schema}, "webchat": {}}, "webchat",
			"Channels to set up, comma-separated: webchat, slack [webchat]", `"discord" is not one of webchat, slack.`},
		{"every own channel, two others", map[string]CatalogEntry{"zulip": {}, "webchat": {}, "whatsapp": {}, "slack": {Schema: slack.Schema}, "discord": {}, "telegram": {}},
			"webchat", "Channels to set up, comma-separated: telegram, discord, whatsapp, webchat, slack, zulip [telegram,webchat]", `"irc" is not one of`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p := plan(t)
			p.TelegramToken, p.DiscordToken, p.WhatsApp, p.WebChat, p.Workspace = "", "", false, false, ""
			catalog := func(context.Context, string) (map[string]CatalogEntry, error) { return c.catalog, nil }
			bad := "discord"
			if _, ok := c.catalog["discord"]; ok {
				bad = "irc"
			}
			in := strings.NewReader(bad + "\n" + c.answer + "\n~/ws\n3\n")
			var out bytes.Buffer
			res, err := Run(context.Background(), Options{Catalog: catalog, Plan: p, Interactive: true, In: in, Out: &out,
				Getenv: env(map[string]string{"HOME": t.TempDir()}), Now: func() time.Time { return day }})
			if err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			for _, want := range []string{c.prompt, c.refused} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("output lacks %q:\n%s", want, out.String())
				}
			}
			if !res.Plan.WebChat || res.Plan.TelegramToken != "" || len(res.Plan.Others) != 0 {
				t.Errorf("plan %+v", res.Plan)
			}
		})
	}
}
