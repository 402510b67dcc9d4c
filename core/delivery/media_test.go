package delivery

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/sdk/channel"
)

// mediaWorkspace builds a workspace, reached through a symlink, with
// two sessions' attachments and a file outside it.

// tg1 is the session whose media the checkMedia tests send.
var tg1 = sessionkey.Key{Agent: sessionkey.DefaultAgent, Chat: "tg:direct:1"}

func mediaWorkspace(t *testing.T) (ws, outside string) {
	t.Helper()
	base := t.TempDir()
	real := filepath.Join(base, "real-ws")
	ws = filepath.Join(base, "ws") // the configured path is a link
	outside = filepath.Join(base, "secret.txt")
	write := func(p, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(outside, "secret")
	write(filepath.Join(real, "report.pdf"), "%PDF")
	write(filepath.Join(real, "big.bin"), strings.Repeat("x", 2000))
	write(filepath.Join(real, "media", sessionkey.Dir("tg:direct:1"), "aaaa.jpg"), "mine")
	write(filepath.Join(real, "media", sessionkey.Dir("tg:direct:2"), "bbbb.jpg"), "theirs")
	write(filepath.Join(real, "media", "loose.jpg"), "nobody's")
	links := map[string]string{
		filepath.Join(real, "escape.txt"):      outside,
		filepath.Join(real, "peek.jpg"):        filepath.Join(real, "media", sessionkey.Dir("tg:direct:2"), "bbbb.jpg"),
		filepath.Join(real, "mine-link.jpg"):   filepath.Join(real, "media", sessionkey.Dir("tg:direct:1"), "aaaa.jpg"),
		filepath.Join(real, "dir-escape"):      filepath.Dir(outside),
		filepath.Join(real, "relative-escape"): "../secret.txt",
		ws:                                     real,
	}
	for link, target := range links {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	return ws, outside
}

func TestCheckMedia(t *testing.T) {
	t.Parallel()
	ws, outside := mediaWorkspace(t)
	own := filepath.Join("media", sessionkey.Dir("tg:direct:1"), "aaaa.jpg")
	other := filepath.Join("media", sessionkey.Dir("tg:direct:2"), "bbbb.jpg")
	tests := []struct {
		name, path string
		want       error  // nil: sent
		sent       string // the resolved path sent, relative to the real workspace
	}{
		{"workspace file", "report.pdf", nil, "report.pdf"},
		{"absolute inside", filepath.Join(ws, "report.pdf"), nil, "report.pdf"},
		{"own attachment", own, nil, own},
		{"link to own attachment", "mine-link.jpg", nil, own},
		{"another session's attachment", other, errOtherSession, ""},
		{"another session's by absolute path", filepath.Join(ws, other), errOtherSession, ""},
		{"link to another session's attachment", "peek.jpg", errOtherSession, ""},
		{"own dir then up into another's", filepath.Join("media", sessionkey.Dir("tg:direct:1"), "..", sessionkey.Dir("tg:direct:2"), "bbbb.jpg"), errOtherSession, ""},
		{"loose file in media", "media/loose.jpg", errOtherSession, ""},
		{"media directory itself", "media", errOtherSession, ""},
		{"dot dot", "../secret.txt", errOutside, ""},
		{"dot dot missing", "../nothing.txt", errOutside, ""},
		{"absolute outside", outside, errOutside, ""},
		{"etc passwd", "/etc/passwd", errOutside, ""},
		{"link pointing outside", "escape.txt", errOutside, ""},
		{"relative link pointing outside", "relative-escape", errOutside, ""},
		{"through a directory link", "dir-escape/secret.txt", errOutside, ""},
		{"missing", "nothing.txt", errNotFound, ""},
		{"directory", ".", errNotRegular, ""},
		{"empty", "", errEmptyPath, ""},
	}
	real, _ := filepath.EvalSymlinks(ws)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := checkMedia(ws, tg1, tc.path, 1000)
			if !errors.Is(err, tc.want) {
				t.Fatalf("checkMedia(%q) = %q, %v; want %v", tc.path, got, err, tc.want)
			}
			if tc.want == nil && got != filepath.Join(real, tc.sent) {
				t.Errorf("sent %q, want %q", got, filepath.Join(real, tc.sent))
			}
		})
	}
	t.Run("too big", func(t *testing.T) {
		t.Parallel()
		if _, err := checkMedia(ws, tg1, "big.bin", 1000); err == nil || !strings.Contains(err.Error(), "more than the 1000 bytes") {
			t.Errorf("a file over the limit: %v", err)
		}
	})
	t.Run("no workspace", func(t *testing.T) {
		t.Parallel()
		if _, err := checkMedia("", tg1, "report.pdf", 0); !errors.Is(err, errNoWorkspace) {
			t.Errorf("no workspace: %v", err)
		}
	})
}

// TestCheckMediaLinkedMediaDirectory: a media directory replaced by a
// link to another directory of the workspace still yields only the
// session's own part.
func TestCheckMediaLinkedMediaDirectory(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	store := filepath.Join(ws, "store")
	for _, k := range []string{"tg:direct:1", "tg:direct:2"} {
		if err := os.MkdirAll(filepath.Join(store, sessionkey.Dir(k)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(store, sessionkey.Dir(k), "f.jpg"), []byte(k), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("store", filepath.Join(ws, "media")); err != nil {
		t.Fatal(err)
	}
	if _, err := checkMedia(ws, tg1, filepath.Join("store", sessionkey.Dir("tg:direct:2"), "f.jpg"), 0); !errors.Is(err, errOtherSession) {
		t.Errorf("another session's file through the linked directory: %v", err)
	}
	if _, err := checkMedia(ws, tg1, filepath.Join("media", sessionkey.Dir("tg:direct:1"), "f.jpg"), 0); err != nil {
		t.Errorf("own file through the linked directory: %v", err)
	}
}

// TestMediaLines: a file that may go is attached; one that may not is
// named in the reply with the reason, by a path relative to the
// workspace, never silently dropped.
func TestMediaLines(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 4000)
	ws, outside := mediaWorkspace(t)
	f.d.SetSettings(Settings{Workspace: ws, MaxMediaBytes: 1000})
	other := filepath.Join(ws, "media", sessionkey.Dir("tg:direct:2"), "bbbb.jpg")
	id := f.entry()
	f.d.Deliver(Reply{Key: sk("tg:direct:1"), ID: id, Target: tgt, Format: channel.FormatMarkdown,
		Text: "Here you are.\nMEDIA: report.pdf\nMEDIA:`" + other + "`\nMEDIA: " + outside + "\nMEDIA: ../secret.txt"})
	calls := f.ch.log()
	if len(calls) != 1 {
		t.Fatalf("calls %+v", calls)
	}
	c := calls[0]
	real, _ := filepath.EvalSymlinks(ws)
	if len(c.media) != 1 || c.media[0] != filepath.Join(real, "report.pdf") {
		t.Errorf("attached %v, want only report.pdf", c.media)
	}
	want := []string{
		"Here you are.",
		"(File not sent: media/" + sessionkey.Dir("tg:direct:2") + "/bbbb.jpg — it is another conversation's attachment.)",
		"(File not sent: secret.txt — it is outside the workspace.)",
		"(File not sent: ../secret.txt — it is outside the workspace.)",
	}
	if c.text != strings.Join(want, "\n") {
		t.Errorf("text:\n%s\nwant:\n%s", c.text, strings.Join(want, "\n"))
	}
	if strings.Contains(c.text, filepath.Dir(outside)) {
		t.Errorf("a host path outside the workspace reached the chat: %q", c.text)
	}
}

// A MEDIA: line of an agent's session sends a file from that agent's
// workspace; another agent's workspace is outside it.
func TestMediaLinesPerAgent(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 4000)
	mainWS, _ := mediaWorkspace(t)
	opsWS, _ := mediaWorkspace(t)
	f.d.SetSettings(Settings{Workspace: mainWS, AgentWorkspaces: map[string]string{"ops": opsWS}, MaxMediaBytes: 1000})
	f.d.Deliver(Reply{Key: sessionkey.Key{Agent: "ops", Chat: "tg:direct:1"}, ID: f.entry(), Target: tgt, Format: channel.FormatMarkdown,
		Text: "MEDIA: report.pdf\nMEDIA: " + filepath.Join(mainWS, "report.pdf")})
	calls := f.ch.log()
	if len(calls) != 1 {
		t.Fatalf("calls %+v", calls)
	}
	real, _ := filepath.EvalSymlinks(opsWS)
	if c := calls[0]; len(c.media) != 1 || c.media[0] != filepath.Join(real, "report.pdf") || !strings.Contains(c.text, "outside the workspace") {
		t.Errorf("ops's reply attached %v, said %q; want only its own report.pdf", c.media, c.text)
	}
}

// A reply with a file recorded before a restart and not sent yet: the
// delivery resumed after the restart sends the file with its last chunk
// (the outbox keeps the reply's MEDIA: lines); one whose last chunk was
// sent sends nothing again.
func TestMediaAfterRestart(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 4000)
	ws, _ := mediaWorkspace(t)
	f.d.SetSettings(Settings{Workspace: ws})
	id := f.entry()
	f.record(store.Reply{JournalID: id, Text: "Here.\nMEDIA: report.pdf", Chunks: []string{"Here."}, Format: string(channel.FormatMarkdown)})
	f.d.DeliverPending(sk("tg:direct:1"), f.pending(id), tgt)
	real, _ := filepath.EvalSymlinks(ws)
	calls := f.ch.log()
	if len(calls) != 1 || calls[0].text != "Here." || len(calls[0].media) != 1 || calls[0].media[0] != filepath.Join(real, "report.pdf") {
		t.Fatalf("resumed delivery: %+v", calls)
	}
	f.d.DeliverPending(sk("tg:direct:1"), f.pending(id), tgt)
	if n := len(f.ch.log()); n != 1 {
		t.Errorf("a delivered reply was sent again: %d calls", n)
	}
	// The outbox keeps the reply as produced: its MEDIA: lines too.
	id2 := f.entry()
	f.d.Deliver(Reply{Key: sk("tg:direct:1"), ID: id2, Target: tgt, Format: channel.FormatMarkdown, Text: "Again.\nMEDIA: report.pdf"})
	if p := f.pending(id2); !strings.Contains(p.Reply.Text, "MEDIA: report.pdf") {
		t.Errorf("recorded text %q", p.Reply.Text)
	}
}

// TestChannelFileLimit: the channel's declared MaxFileBytes bounds a file
// sent (send_file's check and a MEDIA: line), above or below the host's
// default; a channel that declares none gets Settings.MaxMediaBytes, else
// DefaultMaxMediaBytes.
func TestChannelFileLimit(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 4000)
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "f.bin"), make([]byte, 3000), 0o600); err != nil {
		t.Fatal(err)
	}
	f.d.SetSettings(Settings{Workspace: ws})
	if got := f.d.MaxFileBytes("tg"); got != DefaultMaxMediaBytes {
		t.Errorf("no limit declared: %d, want the default", got)
	}
	f.d.SetSettings(Settings{Workspace: ws, MaxMediaBytes: 1000})
	if _, err := f.d.CheckFile(tg1, "tg", "f.bin"); err == nil || err.Error() != "it has 3000 bytes, more than the 1000 bytes a file sent may have" {
		t.Errorf("no limit declared, settings 1000: %v", err)
	}
	f.ch.mu.Lock()
	f.ch.desc.Capabilities.MaxFileBytes = 2000
	f.ch.mu.Unlock()
	if _, err := f.d.CheckFile(tg1, "tg", "f.bin"); err == nil || !strings.Contains(err.Error(), "more than the 2000 bytes") {
		t.Errorf("declared 2000: %v", err)
	}
	id := f.entry()
	f.d.Deliver(Reply{Key: sk("k"), ID: id, Target: tgt, Format: channel.FormatMarkdown, Text: "Here.\nMEDIA: f.bin"})
	if c := f.ch.log(); len(c) != 1 || len(c[0].media) != 0 || !strings.Contains(c[0].text, "(File not sent: f.bin — it has 3000 bytes, more than the 2000 bytes") {
		t.Errorf("a MEDIA: line over the channel's limit: %+v", c)
	}
	f.ch.mu.Lock()
	f.ch.desc.Capabilities.MaxFileBytes = 4000
	f.ch.mu.Unlock()
	if _, err := f.d.CheckFile(tg1, "tg", "f.bin"); err != nil {
		t.Errorf("declared 4000, over the settings' 1000: %v", err)
	}
}

// A reply that carries its agent's workspace (the turn's resolved
// settings) reads its MEDIA: files there, not in the workspace the
// settings have for the agent its key names.
func TestMediaLinesFromTheReplysWorkspace(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 4000)
	mainWS, _ := mediaWorkspace(t)
	opsWS, _ := mediaWorkspace(t)
	f.d.SetSettings(Settings{Workspace: mainWS, MaxMediaBytes: 1000})
	f.d.Deliver(Reply{Key: sessionkey.Key{Agent: "ops", Chat: "tg:direct:1"}, Workspace: opsWS, ID: f.entry(), Target: tgt, Format: channel.FormatMarkdown,
		Text: "MEDIA: report.pdf"})
	calls := f.ch.log()
	real, _ := filepath.EvalSymlinks(opsWS)
	if len(calls) != 1 || len(calls[0].media) != 1 || calls[0].media[0] != filepath.Join(real, "report.pdf") {
		t.Errorf("calls %+v, want ops's report.pdf from the reply's workspace", calls)
	}
}
