package e2e

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/plugins/webchat"
	"github.com/clawhost/clawhost/plugins/webchat/webchattest"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// TestWebchatUploadAcrossKill9: a file uploaded from the web chat's page,
// with a message, and the host killed -9 at a point chosen from events:
// once the upload's POST returned (the host stored the message), once
// claude's turn on it started, once its answer shows and the journal
// recorded it. After the restart the message is answered once, the page
// keeps one copy of the file, and the host one downloaded copy, however
// often the turn ran (a download a kill cut off is a .part file, not a
// copy).
func TestWebchatUploadAcrossKill9(t *testing.T) {
	t.Parallel()
	for _, point := range []string{"stored", "running", "answered"} {
		t.Run(point, func(t *testing.T) {
			dir := t.TempDir()
			listen := sdktest.FreeAddr(t)
			f := &faultHost{t: t, runLog: filepath.Join(dir, "claude-runs.jsonl")}
			h := Host{
				Dir:      dir,
				Access:   Attrs{"dm_policy": "allowlist", "allow_from": []string{"web:*"}},
				Messages: Attrs{"streaming": "off", "turn_card": "off"},
				Agent: Agent{Env: map[string]string{"CLAWHOST_FAKE_CLAUDE_LOG": f.runLog},
					Attrs: Attrs{"sandbox": "off", "workspace": "./workspace", "timeout": "30s"}},
				Plugins: []Plugin{{Name: "web", Source: "webchat", Config: Attrs{"listen": listen}}},
			}
			f.d = Start(t, h)
			url := "http://" + listen + "/"
			f.d.waitFor(func() bool { return wcHealthy(url) }, "the webchat page at "+url)
			link := wcFileLink(t, filepath.Join(dir, "data"), "web", url)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			c, err := webchattest.NewClient(ctx, link)
			if err != nil {
				t.Fatal(err)
			}

			mark := "w-" + point
			code, out, err := c.Upload(ctx, "notes.txt", []byte("my notes"), "read this #mark="+mark+" #sleep=1500ms")
			if err != nil {
				t.Fatal(err)
			}
			if code != http.StatusOK || out["id"] == "" {
				t.Fatalf("upload: %d %v", code, out)
			}
			switch point {
			case "running":
				f.d.waitFor(func() bool { return f.runs(mark) > 0 }, "claude's turn on the upload")
			case "answered":
				f.d.waitFor(func() bool { return wcBotShows(ctx, c, mark) > 0 && f.settled() }, "the answer shown and recorded")
			}
			_ = f.d.cmd.Process.Kill()
			_ = f.d.cmd.Wait()
			f.d.spawn()
			// Settled: the journal holds nothing open, so no turn or send
			// of it is still to come.
			f.d.waitFor(func() bool { return wcBotShows(ctx, c, mark) > 0 && f.settled() }, "the answer after the restart")
			if n := wcBotShows(ctx, c, mark); n != 1 {
				t.Errorf("%s: the page shows %d answers to the upload, want 1", point, n)
			}
			runs := f.runs(mark)
			if runs < 1 || runs > 1 && point != "running" {
				t.Errorf("%s: claude's turn ran %d times", point, runs)
			}
			if n := wcFiles(t, filepath.Join(dir, "data", "plugins", "web", "files")); n != 1 {
				t.Errorf("%s: the web chat keeps %d copies of the upload, want 1", point, n)
			}
			if n := wcFiles(t, filepath.Join(dir, "workspace", "media")); n != 1 {
				t.Errorf("%s: the host keeps %d downloaded copies of the upload for %d turns, want 1", point, n, runs)
			}
		})
	}
}

// wcBotShows is how many bot messages of c's chat show s, from the
// history a new connection gets (0 while the page does not answer).
func wcBotShows(ctx context.Context, c *webchattest.Client, s string) int {
	hello, err := c.Connect(ctx)
	if err != nil {
		return 0
	}
	n := 0
	for _, m := range hello.History {
		if m.Role == webchat.RoleBot && strings.Contains(m.HTML, s) {
			n++
		}
	}
	return n
}

// wcFiles counts the regular files under dir but downloads in progress
// or cut off (.part).
func wcFiles(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	_ = filepath.WalkDir(dir, func(_ string, e os.DirEntry, err error) error {
		if err == nil && e.Type().IsRegular() && !strings.HasSuffix(e.Name(), ".part") {
			n++
		}
		return nil
	})
	return n
}
