package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// TestStartRunsEachPluginOnce: a sandboxed host whose configuration writes
// ids for a plugin (allow_from = ["tg:1001"]) starts that plugin's binary
// once, and reads the forms of its ids from the process it started. Until
// 2026-11-27 it first ran a probe process of the plugin to ask them, then
// started the plugin: every start paid a second process and waited for it
// (about 30 ms of the 2-core development machine's 90 to the first poll).
// The plugin runs through a script that counts its execs.
func TestStartRunsEachPluginOnce(t *testing.T) {
	t.Parallel()
	srv := telegramtest.NewServer(tgToken)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	count := filepath.Join(dir, "execs")
	wrapper := filepath.Join(dir, "clawhost-telegram")
	script := "#!/bin/sh\necho exec >> " + count + "\nexec " + filepath.Join(binDir(t), "clawhost-telegram") + " \"$@\"\n"
	sdktest.WriteExecutable(t, wrapper, []byte(script), 0o700)
	tg := tgPlugin(srv.APIEndpoint())
	tg.Attrs = Attrs{"path": wrapper}
	d := startOnTelegram(t, srv, Host{Dir: dir, Access: Attrs{"dm_policy": "allowlist", "allow_from": []string{"tg:1001"}}, Plugins: []Plugin{tg}})
	b, err := os.ReadFile(count)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "exec"); n != 1 {
		t.Fatalf("the telegram plugin's binary ran %d times to start the host, want 1\n%s", n, d.Log())
	}
}
