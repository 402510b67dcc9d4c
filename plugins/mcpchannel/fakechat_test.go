package mcpchannel

import (
	"bytes"
	"context"
	"encoding/json"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/schema"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// EnvFakechat names the directory of the official fakechat plugin
// (claude-plugins-official's external_plugins/fakechat, its dependencies
// installed with `bun install`) for TestFakechat; bun must be on PATH.
const EnvFakechat = "CLAWHOST_FAKECHAT_DIR"

// TestFakechat: Anthropic's own fakechat server, under Bun, through the
// bridge: a message posted to its web UI arrives with its meta, and a
// reply through its reply tool is posted (fakechat answers "sent (<id>)").
// Skipped unless EnvFakechat names the plugin and bun is on PATH.
func TestFakechat(t *testing.T) {
	dir := os.Getenv(EnvFakechat)
	if dir == "" {
		t.Skip(EnvFakechat + " is not set (the official fakechat plugin's directory)")
	}
	if _, err := exec.LookPath("bun"); err != nil {
		t.Skip("bun is not on PATH (npm install bun)")
	}
	_, port, _ := net.SplitHostPort(sdktest.FreeAddr(t))
	home := t.TempDir()
	cfg, _ := json.Marshal(map[string]any{"plugin_path": dir, "env": map[string]string{"FAKECHAT_PORT": port, "HOME": home}})
	a := New()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := a.Configure(ctx, schema.Config{Instance: "fc", DataDir: t.TempDir(), JSON: cfg}); err != nil {
		t.Fatal(err)
	}
	box := runInBackground(t, a)
	// Its web UI's upload, as a person's browser posts it.
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	_ = w.WriteField("id", "u1")
	_ = w.WriteField("text", "hello from the web")
	fw, _ := w.CreateFormFile("file", "note.txt")
	_, _ = fw.Write([]byte("attached"))
	w.Close()
	var resp *http.Response
	var err error
	for i := 0; ; i++ {
		resp, err = http.Post("http://127.0.0.1:"+port+"/upload", w.FormDataContentType(), bytes.NewReader(body.Bytes()))
		if err == nil || i == 50 {
			break
		}
		time.Sleep(100 * time.Millisecond) // its HTTP server starts after the MCP connection
	}
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	m := box.next(t)
	if m.ChatID != "web" || m.MessageID != "u1" || m.Text != "hello from the web" || len(m.Media) != 1 || !strings.HasPrefix(m.Media[0].Ref, refPath+filepath.Join(home, ".claude")) {
		t.Fatalf("inbound %+v", m)
	}
	sent, err := a.Send(context.Background(), channel.SendRequest{ChatID: "web", Text: "hello back"})
	if err != nil {
		t.Fatal(err)
	}
	if len(sent.MessageIDs) != 1 || !strings.HasPrefix(sent.MessageIDs[0], "m") {
		t.Fatalf("sent %+v", sent)
	}
	if err := a.Edit(context.Background(), channel.EditRequest{ChatID: "web", MessageID: sent.MessageIDs[0], Text: "edited"}); err != nil {
		t.Fatal(err)
	}
}
