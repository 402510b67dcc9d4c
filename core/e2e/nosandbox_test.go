package e2e

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// TestNoSandboxNoStrangers: on a machine where bubblewrap is not found
// (the host's PATH holds no bwrap), the real binary refuses to start when
// people besides the owners can reach the agent (pairing on Telegram) —
// one error naming who and the two ways out, no plugin configured (their
// processes start beside the sandbox's probe, held before their
// configuration: the Bot API sees no request) — and
// `clawhost validate` says the same; it starts when only the owners can,
// and when the agent block says sandbox = "off".
func TestNoSandboxNoStrangers(t *testing.T) {
	srv := telegramtest.NewServer(tgToken)
	t.Cleanup(srv.Close)
	noBwrap := t.TempDir() // PATH without bwrap: everything else is named by its path
	for _, tc := range []struct {
		name    string
		access  Attrs
		sandbox string
		starts  bool
	}{
		{"pairing", Attrs{"dm_policy": "pairing", "owners": []string{"tg:1"}}, "", false},
		{"owners only", Attrs{"dm_policy": "allowlist", "owners": []string{"tg:1"}, "allow_from": []string{"tg:1"}}, "", true},
		{"pairing, sandbox off", Attrs{"dm_policy": "pairing", "owners": []string{"tg:1"}}, "off", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			adminAddr := sdktest.FreeAddr(t)
			h := Host{Access: tc.access, Admin: Attrs{"listen": adminAddr}, Plugins: []Plugin{tgPlugin(srv.APIEndpoint())}}
			if tc.sandbox != "" {
				h.Agent.Attrs = Attrs{"sandbox": tc.sandbox}
			}
			cfg := h.Write(t)
			env := []string{"PATH=" + noBwrap, "HOME=" + t.TempDir(), "LANG=C.UTF-8"}

			validate := Command(t, cfg, "validate")
			validate.Args = []string{validate.Args[0], "validate", "-config", cfg}
			validate.Env = env
			var vout bytes.Buffer
			validate.Stdout, validate.Stderr = &vout, &vout
			verr := validate.Run()

			before := len(srv.Requests("getMe")) + len(srv.Requests("getUpdates"))
			cmd := Command(t, cfg)
			cmd.Env = env
			if !tc.starts {
				stop := time.AfterFunc(30*time.Second, func() { _ = cmd.Process.Kill() })
				out, err := cmd.CombinedOutput()
				stop.Stop()
				if err == nil || cmd.ProcessState.ExitCode() == 0 {
					t.Fatalf("the host started (or exited 0) unsandboxed with strangers reaching it:\n%s", out)
				}
				for _, want := range []string{
					"no sandbox for claude, and people besides the owners can reach it",
					"bubblewrap not installed",
					`dm_policy = "pairing": a stranger on tg is let in once a pairing code is approved`,
					"install bubblewrap: ",
					`write sandbox = "off" in the agent block`,
				} {
					if !strings.Contains(string(out), want) {
						t.Errorf("the refusal lacks %q:\n%s", want, out)
					}
				}
				if n := len(srv.Requests("getMe")) + len(srv.Requests("getUpdates")); n != before {
					t.Errorf("the telegram plugin reached the Bot API (%d requests) before the refusal", n-before)
				}
				if verr == nil || !strings.Contains(vout.String(), "no sandbox for claude") || !strings.Contains(vout.String(), "install bubblewrap: ") {
					t.Errorf("validate: %v\n%s", verr, vout.String())
				}
				return
			}
			if verr != nil {
				t.Errorf("validate: %v\n%s", verr, vout.String())
			}
			log := Run(t, cmd)
			sdktest.WaitFor(t, "the host's /healthz", func() error {
				code, _ := get(t, "http://"+adminAddr+"/healthz")
				return sdktest.Saw(code == 200, "/healthz %d; clawhost log:\n%s", code, log)
			})
			want := "claude runs without a sandbox" // the WARN of an unavailable sandbox
			if tc.sandbox == "off" {
				want = "sandbox=off"
			}
			if !strings.Contains(log.String(), want) {
				t.Errorf("the log lacks %q:\n%s", want, log.String())
			}
		})
	}
}
