package setup

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
)

// fakeClaude answers init's one real request: a good key or the subscription token
// works, another key is refused; it records what it was asked with.
type fakeClaude struct{ asked []map[string]string }

func (f *fakeClaude) check(_ context.Context, _, configDir string, env map[string]string) (ClaudeAnswer, error) {
	f.asked = append(f.asked, env)
	switch {
	case env[EnvAPIKey] == "sk-good", env[EnvOAuthToken] != "":
		return ClaudeAnswer{OK: true}, nil
	case env[EnvAPIKey] != "":
		return ClaudeAnswer{Refused: true, Message: "Invalid API key · Fix external API key"}, nil
	}
	return ClaudeAnswer{Refused: true, Message: "Not logged in · Please run /login"}, nil
}

// TestRunClaudeAuth: init asks how the bot reaches Claude. An API key the API refuses is
// asked again, the one it takes goes to clawhost.env only; a subscription runs claude
// setup-token and takes the token it prints; "later" writes none and init says what is
// missing. Every path ends with one real request before "Start clawhost now".
func TestRunClaudeAuth(t *testing.T) {
	t.Parallel()
	srv := telegramtest.NewServer(tgToken)
	t.Cleanup(srv.Close)
	for _, c := range []struct {
		name, answers string
		wantEnv       string
		wantOut       []string
	}{
		{"api key", "1\nsk-bad\nsk-good\n", EnvAPIKey + `="sk-good"`, []string{"✗ Claude refused: Invalid API key", "Paste it again", "✓ Claude answers the bot"}},
		{"subscription", "2\n", EnvOAuthToken + `="sk-ant-oat01-` + strings.Repeat("x", 40) + `"`, []string{"Running claude setup-token", "✓ Claude answers the bot"}},
		{"later", "3\n", "", []string{"✗ Claude refused: Not logged in", "give it a credential"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p := plan(t)
			p.TelegramToken, p.DiscordToken, p.WhatsApp, p.WebChat, p.Workspace = "", "", false, false, ""
			p.TelegramAPI = srv.APIEndpoint()
			fc := &fakeClaude{}
			var ranSetup bool
			o := Options{Plan: p, Interactive: true, Out: &bytes.Buffer{}, Getenv: env(map[string]string{"HOME": t.TempDir()}), Now: func() time.Time { return day },
				In:          strings.NewReader("telegram\n" + tgToken + "\n\n" + c.answers),
				CheckClaude: fc.check,
				RunClaude: func(_ context.Context, _, configDir string, out io.Writer, args ...string) (string, error) {
					ranSetup = len(args) == 1 && args[0] == "setup-token" && strings.HasSuffix(configDir, "/claude")
					s := "Your OAuth token (valid for one year):\n\nsk-ant-oat01-" + strings.Repeat("x", 40) + "\n"
					io.WriteString(out, s)
					return s, nil
				}}
			res, err := Run(context.Background(), o)
			out := o.Out.(*bytes.Buffer).String()
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			for _, w := range append(c.wantOut, "How will the bot reach Claude?") {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if i, j := strings.LastIndex(out, "Claude"), strings.Index(out, "Start clawhost now"); j < 0 || i > j {
				t.Errorf("the last check does not come before \"Start clawhost now\":\n%s", out)
			}
			envFile, _ := os.ReadFile(res.Files.Env)
			cfg, _ := os.ReadFile(res.Files.Config)
			if c.wantEnv != "" && !strings.Contains(string(envFile), c.wantEnv) {
				t.Errorf("clawhost.env lacks %s:\n%s", c.wantEnv, envFile)
			}
			if strings.Contains(string(cfg), "sk-") || strings.Contains(out, "sk-good") {
				t.Errorf("a credential is in config.hcl or on the screen")
			}
			if ranSetup != (c.name == "subscription") {
				t.Errorf("claude setup-token ran: %v", ranSetup)
			}
			if len(fc.asked) == 0 {
				t.Error("no real request was made")
			}
		})
	}
}

// TestRenderWhatsAppPersonal: a personal number's block turns on self-chat mode.
func TestRenderWhatsAppPersonal(t *testing.T) {
	t.Parallel()
	p := plan(t)
	p.WhatsApp, p.WhatsAppPersonal = true, true
	cfg, _ := Render(p, day)
	if !strings.Contains(string(cfg), "self_chat      = true\n    only_self_chat = true\n") {
		t.Errorf("the whatsapp block:\n%s", cfg)
	}
}

// TestRunWebChatLink: init makes the web chat's access token, keeps it in clawhost.env
// and prints the page's whole link (before, a bare address that answered 401).
func TestRunWebChatLink(t *testing.T) {
	t.Parallel()
	p := plan(t)
	p.TelegramToken, p.DiscordToken, p.WhatsApp, p.WebChat = "", "", false, true
	var out bytes.Buffer
	res, err := Run(context.Background(), Options{Plan: p, Out: &out, Getenv: env(map[string]string{"HOME": t.TempDir()}), Now: func() time.Time { return day }})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	tok := res.Plan.WebChatToken
	if len(tok) != 32 || !strings.Contains(out.String(), "http://"+p.WebChatListen+"/?token="+tok) {
		t.Fatalf("token %q; output:\n%s", tok, out.String())
	}
	envFile, _ := os.ReadFile(res.Files.Env)
	cfg, _ := os.ReadFile(res.Files.Config)
	if !strings.Contains(string(envFile), EnvWebChatToken+`="`+tok+`"`) || strings.Contains(string(cfg), tok) || !strings.Contains(string(cfg), `access_token = env("`+EnvWebChatToken+`")`) {
		t.Errorf("clawhost.env:\n%s\nconfig.hcl:\n%s", envFile, cfg)
	}
}
