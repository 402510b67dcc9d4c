package e2e

import (
	"context"
	"os"
	"regexp"
	"testing"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/clawhost/clawhost/core/anthropictest"
)

// TestMatrixFiles: a file Alice sends (uploaded to the media repository)
// reaches claude; claude's send_file reaches Alice once as an m.file whose
// mxc:// URI downloads (authenticated media) to the file's bytes.
func TestMatrixFiles(t *testing.T) {
	t.Parallel()
	e := startMatrix(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	up, err := e.alice.UploadMedia(ctx, mautrix.ReqUploadMedia{ContentBytes: []byte("the shared notes"), ContentLength: 16,
		ContentType: "text/plain", FileName: "notes.txt"})
	if err != nil {
		t.Fatal(err)
	}
	e.fake.Enqueue(anthropictest.Reply{Text: "Got your notes."})
	send(t, e.alice, e.dm, &event.MessageEventContent{MsgType: event.MsgFile, Body: "notes.txt", FileName: "notes.txt",
		URL: up.ContentURI.CUString(), Info: &event.FileInfo{MimeType: "text/plain", Size: 16}})
	e.waitBot(t, e.aw, e.dm, "the notes' answer", contains("Got your notes."))
	got := e.fake.Requests()[0].LastUserText()
	path := attached.FindStringSubmatch(got)
	if path == nil {
		t.Fatalf("claude was not given the file: %q", got)
	}
	if b, err := os.ReadFile(path[1]); err != nil || string(b) != "the shared notes" {
		t.Errorf("the file claude was given holds %q (%v)", b, err)
	}

	e.fake.Enqueue(sendFile("report.txt", "the report"), anthropictest.Reply{Text: "Here it is."})
	send(t, e.alice, e.dm, text("send me the report"))
	e.waitBot(t, e.aw, e.dm, "the report's answer", contains("Here it is."))
	var files []*event.MessageEventContent
	for _, ev := range e.aw.from(e.dm, e.bot.UserID) {
		if c := ev.Content.AsMessage(); c.MsgType == event.MsgFile {
			files = append(files, c)
		}
	}
	if len(files) != 1 {
		t.Fatalf("%d files sent, want 1", len(files))
	}
	uri, err := id.ParseContentURI(string(files[0].URL))
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.alice.DownloadBytes(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != "quarterly numbers" || files[0].FileName != "report.txt" {
		t.Errorf("sent %q as %q", b, files[0].FileName)
	}
}

// attached is the path of an attachment in claude's prompt.
var attached = regexp.MustCompile(`Attached document: ([^\]]+)\]`)

func sendFile(path, caption string) anthropictest.Reply {
	return anthropictest.Reply{ToolUse: &anthropictest.ToolUse{Name: "mcp__clawhost__send_file", Input: map[string]any{"path": path, "caption": caption}}}
}
