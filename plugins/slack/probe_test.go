package slack

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/plugins/slack/slacktest"
	"github.com/clawhost/clawhost/sdk/probe"
	"github.com/clawhost/clawhost/sdk/schema"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// TestProbe: auth.test names the bot and its scopes, apps.connections.open
// checks the app token; a refused token fails, a missing scope is named
// (failing for chat:write, warning for reactions:write), an unreachable
// Slack warns; no token shows in the report.
func TestProbe(t *testing.T) {
	t.Parallel()
	deadURL := "http://" + sdktest.FreeAddr(t)
	for _, tc := range []struct {
		name      string
		bot, app  string
		remove    string
		dead      bool
		want      probe.Verdict
		wantCheck string
		wantText  string
	}{
		{name: "accepted", bot: testBotToken, app: testAppToken, want: probe.OK},
		{name: "bot refused", bot: "xoxb-wrong", app: testAppToken, want: probe.Fail, wantCheck: "bot token", wantText: "invalid_auth"},
		{name: "app refused", bot: testBotToken, app: "xapp-wrong", want: probe.Fail, wantCheck: "app token", wantText: "invalid_auth"},
		{name: "no chat:write", bot: testBotToken, app: testAppToken, remove: "chat:write", want: probe.Fail, wantCheck: "scopes", wantText: "missing_scope: chat:write"},
		{name: "no reactions", bot: testBotToken, app: testAppToken, remove: "reactions:write", want: probe.Warn, wantCheck: "scopes", wantText: "reactions:write"},
		{name: "unreachable", bot: testBotToken, app: testAppToken, dead: true, want: probe.Warn, wantCheck: "bot token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			if tc.remove != "" {
				srv.RemoveScope(tc.remove)
			}
			endpoint := srv.Endpoint()
			if tc.dead {
				endpoint = deadURL
			}
			js, _ := json.Marshal(map[string]any{"bot_token": tc.bot, "app_token": tc.app, "api_endpoint": endpoint})
			rep, err := Probe(context.Background(), schema.Config{Instance: "sl", JSON: js})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Worst() != tc.want {
				t.Fatalf("report %+v, want %s", rep, tc.want)
			}
			for _, c := range rep.Checks {
				if c.Verdict != probe.OK && (c.Name != tc.wantCheck || c.Do == "" || !strings.Contains(c.Found, tc.wantText)) {
					t.Errorf("check %+v, want %q failing with %q", c, tc.wantCheck, tc.wantText)
				}
			}
			if tc.want == probe.OK && (rep.Identity.ID != slacktest.BotUserID || rep.Identity.Handle != "@"+slacktest.BotName) {
				t.Errorf("identity %+v", rep.Identity)
			}
			b, _ := json.Marshal(rep)
			if strings.Contains(string(b), "secret") {
				t.Errorf("a token in the report: %s", b)
			}
		})
	}
}

// TestIDForms: every form an operator may write maps to the id the
// plugin reports.
func TestIDForms(t *testing.T) {
	t.Parallel()
	canon := func(id string) (string, bool) {
		for _, f := range IDForms {
			re := regexp.MustCompile("^(?:" + f.Pattern + ")$")
			if m := re.FindStringSubmatchIndex(id); m != nil {
				if f.Canonical == "" {
					return id, true
				}
				return string(re.ExpandString(nil, f.Canonical, id, m)), true
			}
		}
		return id, false
	}
	for in, want := range map[string]string{
		"U0123ABCD": "U0123ABCD", "<@U0123ABCD>": "U0123ABCD", "<@U0123ABCD|alice>": "U0123ABCD", "W0123": "W0123",
		"C0123ABCD": "C0123ABCD", "<#C0123ABCD|general>": "C0123ABCD", "G0123": "G0123", "D0123": "D0123",
		"C0123ABCD:1700000000.000100":                                     "C0123ABCD:1700000000.000100",
		"https://acme.slack.com/archives/C0123ABCD/p1700000000000100":     "C0123ABCD:1700000000.000100",
		"https://acme.slack.com/archives/C0123ABCD":                       "C0123ABCD",
		"https://acme.slack.com/archives/C0123ABCD/p1700000000000100?x=1": "C0123ABCD:1700000000.000100",
	} {
		if got, ok := canon(in); !ok || got != want {
			t.Errorf("%q → %q %v, want %q", in, got, ok, want)
		}
	}
	for _, bad := range []string{"@alice", "alice", "u0123", "#general", "123456"} {
		if _, ok := canon(bad); ok {
			t.Errorf("%q matches a form", bad)
		}
	}
}

// TestManifestScopes: the manifest in docs/slack.md grants every scope the
// probe checks for, and no other.
func TestManifestScopes(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../docs/slack.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	if !strings.Contains(doc, "```yaml\n"+Manifest+"```") {
		t.Error("docs/slack.md does not show the plugin's Manifest (init prints that one)")
	}
	i := strings.Index(doc, "    bot:\n")
	j := strings.Index(doc, "settings:\n")
	if i < 0 || j < i {
		t.Fatal("no bot scopes in the manifest of docs/slack.md")
	}
	var got []string
	for _, l := range strings.Split(doc[i:j], "\n") {
		if s, ok := strings.CutPrefix(strings.TrimSpace(l), "- "); ok {
			got = append(got, s)
		}
	}
	if !strings.Contains(Manifest, "    bot:\n      - "+strings.Join(Scopes, "\n      - ")+"\n") {
		t.Errorf("Manifest does not grant exactly Scopes %v", Scopes)
	}
	if strings.Join(got, ",") != strings.Join(Scopes, ",") {
		t.Errorf("manifest scopes %v, the plugin's %v", got, Scopes)
	}
	for _, s := range Scopes {
		if scopeFeature[s] == "" && !slices.Contains(requiredScopes, s) {
			t.Errorf("scope %s: what its absence costs is not said", s)
		}
	}
}
