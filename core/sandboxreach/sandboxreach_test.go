package sandboxreach

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/core/pluginprobe/pluginprobetest"

	"github.com/clawhost/clawhost/core/settings"

	"github.com/clawhost/clawhost/core/config/configtest"
)

const (
	noBwrap    = "unavailable (bubblewrap not installed)"
	bwrapFails = "unavailable (bubblewrap failed: bwrap: No permissions to create new namespace)"
)

// TestUnsandboxedReach: the host refuses to start (and a reload is
// refused) when claude cannot be sandboxed and anyone besides the owners
// can reach the agent; owners only, a working sandbox, or sandbox = "off"
// written out start. The error names who can reach it and both ways out.
func TestUnsandboxedReach(t *testing.T) {
	t.Parallel()
	const web = `
plugin "web" {
  source = "webchat"
}
plugin "ping" {
  source = "ping"
}
`
	const tg = `
plugin "tg" {
  source = "telegram"
  config {
    token = "123:abc"
  }
}
`
	for _, tc := range []struct {
		name, src, state string
		want             []string // nil: starts
	}{
		{"web chat only, pairing", `access { allow_from = ["web:*"] }` + web, noBwrap, nil},
		{"web chat only, open dms", `access { dm_policy = "open" }` + web, noBwrap, nil},
		{"telegram, owners only", `access {
  dm_policy  = "allowlist"
  owners     = ["tg:1"]
  allow_from = ["web:*"]
}` + web + tg, noBwrap, nil},
		{"telegram, pairing, sandbox works", `access { owners = ["tg:1"] }` + web + tg, "bubblewrap", nil},
		{"telegram, pairing, sandbox off", `agent { sandbox = "off" }
access { owners = ["tg:1"] }` + web + tg, "off", nil},
		{"telegram, disabled", `access { dm_policy = "open" }
plugin "tg" {
  source  = "telegram"
  enabled = false
}`, noBwrap, nil},
		{"telegram, pairing", `access { owners = ["tg:1"] }` + web + tg, noBwrap,
			[]string{`dm_policy = "pairing": a stranger on tg is let in once a pairing code is approved`, "install bubblewrap: ", `write sandbox = "off" in the agent block`}},
		{"telegram, a friend", `access {
  dm_policy  = "allowlist"
  owners     = ["tg:1"]
  allow_from = ["tg:1", "tg:2"]
}` + tg, noBwrap, []string{`allow_from admits "tg:2", not an owner`}},
		{"telegram, a group", `access {
  dm_policy = "allowlist"
  owners    = ["tg:1"]
  groups    = ["tg:-100"]
}` + tg, noBwrap, []string{`group "tg:-100": its members write to the agent`}},
		{"web chat beyond loopback", `access {
  dm_policy  = "allowlist"
  allow_from = ["web:*"]
}
admin { listen = "127.0.0.1:0" }
plugin "web" {
  source = "webchat"
  config {
    listen   = "0.0.0.0:8790"
    tls_cert = "c.pem"
    tls_key  = "k.pem"
  }
}`, noBwrap, []string{`allow_from admits "web:*", not an owner`}},
		{"a third party's chat page on loopback", `access { allow_from = ["m:*"] }
plugin "m" { source = "mychat" }`, noBwrap, nil},
		{"a third party's chat page beyond loopback", `access { allow_from = ["m:*"] }
plugin "m" {
  source = "mychat"
  config { addr = "0.0.0.0:7000" }
}`, noBwrap, []string{`allow_from admits "m:*", not an owner`}},
		{"an unknown plugin counts as a channel", `plugin "x" { source = "mychannel" }`, noBwrap, []string{`a stranger on x`}},
		{"bubblewrap fails", `access { dm_policy = "open" }` + tg, bwrapFails,
			[]string{"(bubblewrap failed: bwrap: No permissions to create new namespace)", `dm_policy = "open": anyone who writes to tg`, "user namespaces"}},
		{"sandbox line named", `agent { sandbox = "auto" }
access { dm_policy = "open" }` + tg, noBwrap, []string{`in the agent block (config.hcl:1)`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := configtest.Load(t, tc.src)
			set, err := settings.Pipeline(cfg)
			if err != nil {
				t.Fatal(err)
			}
			err = Check(cfg, set.Access, tc.state, pluginprobetest.Declarations)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrNoSandbox) {
				t.Fatalf("err %v, want ErrNoSandbox", err)
			}
			msg := strings.ReplaceAll(err.Error(), cfg.Path(), "config.hcl")
			for _, w := range append(tc.want, "people besides the owners can reach it") {
				if !strings.Contains(msg, w) {
					t.Errorf("the error lacks %q:\n%s", w, msg)
				}
			}
		})
	}
}

// TestUnsandboxedReachOnMacOS: where bubblewrap does not exist the
// refusal says so and offers sandbox = "off" or owners only, no install
// command. Not parallel: it replaces installBubblewrap.
func TestUnsandboxedReachOnMacOS(t *testing.T) {
	defer func(f func() string) { installBubblewrap = f }(installBubblewrap)
	installBubblewrap = func() string { return "" }
	cfg := configtest.Load(t, `access { dm_policy = "open" }
plugin "tg" {
  source = "telegram"
  config { token = "123:abc" }
}`)
	set, err := settings.Pipeline(cfg)
	if err != nil {
		t.Fatal(err)
	}
	err = Check(cfg, set.Access, noBwrap, pluginprobetest.Declarations)
	if !errors.Is(err, ErrNoSandbox) || !strings.Contains(err.Error(), "bubblewrap exists on Linux only") ||
		!strings.Contains(err.Error(), `write sandbox = "off" in the agent block`) || strings.Contains(err.Error(), "install bubblewrap") {
		t.Errorf("the refusal on macOS: %v", err)
	}
}

// TestDefaultConfigStartsUnsandboxed: the shipped config.hcl lets only
// the operator in (the web chat on loopback; pairing reaches nobody
// without another channel), so `make run` starts without bubblewrap;
// with TELEGRAM_BOT_TOKEN set, pairing lets strangers in and it is
// refused.
func TestDefaultConfigStartsUnsandboxed(t *testing.T) {
	src, err := os.ReadFile("../../config.hcl")
	if err != nil {
		t.Fatal(err)
	}
	for _, token := range []string{"", "123:abc"} {
		t.Setenv("TELEGRAM_BOT_TOKEN", token)
		t.Setenv("DISCORD_BOT_TOKEN", "")
		t.Setenv("WHATSAPP_ENABLED", "")
		cfg := configtest.Load(t, string(src))
		set, err := settings.Pipeline(cfg)
		if err != nil {
			t.Fatal(err)
		}
		err = Check(cfg, set.Access, noBwrap, pluginprobetest.Declarations)
		if token == "" && err != nil {
			t.Errorf("the default config without Telegram is refused: %v", err)
		}
		if token != "" && !errors.Is(err, ErrNoSandbox) {
			t.Errorf("the default config with Telegram starts unsandboxed: %v", err)
		}
	}
}
