package webchat_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/plugins/webchat"
	"github.com/clawhost/clawhost/plugins/webchat/webchattest"
	"github.com/clawhost/clawhost/sdk/channel"
)

// upload posts a file (and text) from c's page.
func upload(t *testing.T, ctx context.Context, c *webchattest.Client, name string, data []byte, text string) (int, map[string]string) {
	t.Helper()
	code, out, err := c.Upload(ctx, name, data, text)
	if err != nil {
		t.Fatal(err)
	}
	return code, out
}

// TestFilesBothWays: a file uploaded from the page reaches the host as the
// message's attachment (downloaded through DownloadMedia) and shows under
// the user's message; a file the host sends shows under the bot's message
// and downloads from the page of that chat only; a file over the limit is
// refused with the limit.
func TestFilesBothWays(t *testing.T) {
	r := start(t, setup{token: "tok-files-0123456789", dataDir: t.TempDir()})
	ctx := testCtx(t)
	base := r.URL()
	c, _ := connect(t, ctx, base+"?token=tok-files-0123456789")
	other, _ := connect(t, ctx, base+"?token=tok-files-0123456789")

	code, out := upload(t, ctx, c, "notes.txt", []byte("my notes"), "read this")
	if code != http.StatusOK || out["id"] == "" {
		t.Fatalf("upload: %d %v", code, out)
	}
	in, err := r.inbox.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if in.Text != "read this" || len(in.Media) != 1 || in.Media[0].Filename != "notes.txt" || in.Media[0].Kind != channel.MediaDocument || in.Media[0].Size != 8 {
		t.Fatalf("inbound %+v", in)
	}
	rc, info, err := r.DownloadMedia(ctx, channel.DownloadRequest{Ref: in.Media[0].Ref, MaxBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(rc)
	rc.Close()
	if string(got) != "my notes" || !strings.HasPrefix(info.MIME, "text/plain") {
		t.Errorf("downloaded %q %+v", got, info)
	}
	ev := nextOf(t, ctx, c, webchat.EventMessage)
	if len(ev.Message.Files) != 1 || ev.Message.Files[0].Name != "notes.txt" {
		t.Errorf("the page's message %+v", ev.Message)
	}

	// The host sends a file.
	src := filepath.Join(t.TempDir(), "plot.png")
	if err := os.WriteFile(src, []byte("\x89PNG fake"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Send(ctx, channel.SendRequest{ChatID: c.SenderID(), Media: []channel.OutboundMedia{{Path: src, Kind: channel.MediaImage}}}); err != nil {
		t.Fatal(err)
	}
	var sent webchat.Event
	for sent.Message == nil || sent.Message.Role != webchat.RoleBot {
		sent = nextOf(t, ctx, c, webchat.EventMessage)
	}
	if len(sent.Message.Files) != 1 || sent.Message.Files[0].Name != "plot.png" || sent.Message.Files[0].MIME != "image/png" {
		t.Fatalf("the bot's message %+v", sent.Message)
	}
	fetch := func(cl *webchattest.Client) (int, string, string) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"files/"+sent.Message.Files[0].ID, nil)
		res, err := cl.HTTP.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b), res.Header.Get("Content-Disposition")
	}
	if code, body, disp := fetch(c); code != 200 || body != "\x89PNG fake" || !strings.Contains(disp, `attachment; filename=plot.png`) {
		t.Errorf("download: %d %q %q", code, body, disp)
	}
	if code, _, _ := fetch(other); code != http.StatusNotFound {
		t.Errorf("another chat's page got the file: %d", code)
	}

	big := bytes.Repeat([]byte("x"), webchat.MaxUploadBytes+1)
	if code, out := upload(t, ctx, c, "big.bin", big, ""); code != http.StatusRequestEntityTooLarge || !strings.Contains(out["error"], "larger than") {
		t.Errorf("a file over the limit: %d %v", code, out)
	}
}
