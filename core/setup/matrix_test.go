package setup

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/pluginhost"
	"github.com/clawhost/clawhost/sdk/probe"
	"github.com/clawhost/clawhost/sdk/schema"
)

// matrixSchema is the Matrix plugin's schema as init sees it (the plugin
// is a module of its own; its real schema is tested with the plugin).
var matrixSchema = schema.Schema{
	{Name: "homeserver", Type: "string", Required: true, Description: "the bot's homeserver"},
	{Name: "user_id", Type: "string", Required: true, Description: "the bot's Matrix id"},
	{Name: "access_token", Type: "string", Default: "", Sensitive: true, Description: "the bot's access token"},
	{Name: "password", Type: "string", Default: "", Sensitive: true, Description: "the bot account's password"},
	{Name: "recovery_key", Type: "string", Default: "", Sensitive: true, Description: "the recovery key"},
}

// TestRunStartsMatrix: after writing a Matrix block, init starts the
// plugin once and says how its device's cross-signing went — where the
// recovery key it made is kept (the plugin's report names the file), or,
// for one given, that it is kept in clawhost.env — or what to do when
// the plugin needs attention; the recovery key itself is never shown.
func TestRunStartsMatrix(t *testing.T) {
	t.Parallel()
	const keyFile = "/data/plugins/matrix/matrix-recovery-key.txt"
	for _, c := range []struct {
		name, key string
		reports   []pluginhost.Status
		want      []string
	}{
		{"made", "", []pluginhost.Status{{State: pluginhost.StateStarting}, {State: pluginhost.StateReady},
			{State: pluginhost.StateReady, Message: "syncing as @bot:hs; the device is cross-signed with the recovery key in " + keyFile + ": keep a copy elsewhere"}},
			[]string{"✓ matrix: syncing as @bot:hs", keyFile}},
		{"given", "EsTc 1234", []pluginhost.Status{{State: pluginhost.StateReady, Message: "syncing as @bot:hs"}},
			[]string{"✓ matrix: syncing as @bot:hs.", "as MATRIX_RECOVERY_KEY", "clawhost.env"}},
		{"wrong", "EsTc 9999", []pluginhost.Status{{State: pluginhost.StateNeedsAttention, Message: "the recovery key in recovery_key is not the account's: set recovery_key to the account's current recovery key, then reload"}},
			[]string{"✗ matrix: the recovery key in recovery_key is not the account's", "set recovery_key"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p := plan(t)
			p.TelegramToken, p.DiscordToken, p.WhatsApp, p.WebChat, p.Workspace = "", "", false, false, ""
			catalog := func(context.Context, string) (map[string]CatalogEntry, error) {
				return map[string]CatalogEntry{"matrix": {Schema: matrixSchema}}, nil
			}
			prober := func(context.Context, string, string, map[string]any) (probe.Report, error) {
				return probe.Report{Checks: []probe.Check{{Name: "password", Verdict: probe.OK, Found: "accepted"}}}, nil
			}
			var ran []string
			run := func(ctx context.Context, configFile, instance string, watch func(pluginhost.Status, func(context.Context) error) (bool, error)) error {
				ran = append(ran, instance)
				if _, err := os.Stat(configFile); err != nil {
					t.Errorf("the plugin ran before the configuration was written: %v", err)
				}
				for _, st := range c.reports {
					if done, err := watch(st, nil); done || err != nil {
						return err
					}
				}
				t.Error("init did not stop watching after the plugin's report")
				return nil
			}
			in := strings.NewReader("matrix\nhttps://hs.example\n@bot:hs.example\n\nhunter2\n" + c.key + "\n~/ws\n3\n")
			var out bytes.Buffer
			res, err := Run(context.Background(), Options{Probe: prober, Catalog: catalog, RunPlugin: run, Plan: p, Interactive: true, In: in, Out: &out,
				Getenv: env(map[string]string{"HOME": t.TempDir()}), Now: func() time.Time { return day }})
			if err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			text := out.String()
			if len(ran) != 1 || ran[0] != "matrix" {
				t.Errorf("ran %v, want the matrix instance once", ran)
			}
			for _, want := range c.want {
				if !strings.Contains(text, want) {
					t.Errorf("output lacks %q:\n%s", want, text)
				}
			}
			if c.key != "" && strings.Contains(text, c.key) {
				t.Errorf("the recovery key was shown:\n%s", text)
			}
			if c.key != "" {
				envf, _ := os.ReadFile(res.Files.Env)
				if !strings.Contains(string(envf), `MATRIX_RECOVERY_KEY="`+c.key+`"`) {
					t.Errorf("env file:\n%s", envf)
				}
			}
		})
	}
}
