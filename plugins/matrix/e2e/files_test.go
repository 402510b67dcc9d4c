package e2e

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"testing"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/crypto/attachment"
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

// TestMatrixEncryptedFiles: in an encrypted DM, a file Alice sends
// encrypted (its bytes in the media repository are ciphertext, its key in
// the encrypted event) reaches claude byte for byte; claude's send_file
// reaches Alice as an encrypted attachment her device decrypts to the
// file's bytes, while the raw mxc:// download is not the plaintext.
func TestMatrixEncryptedFiles(t *testing.T) {
	t.Parallel()
	e := startMatrix(t)
	d := encryptedDM(t, e)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	secret := []byte("the secret notes, \x00\xff binary too")
	ef := attachment.NewEncryptedFile()
	cipher := bytes.Clone(secret)
	ef.EncryptInPlace(cipher)
	up, err := d.alice.UploadMedia(ctx, mautrix.ReqUploadMedia{ContentBytes: cipher, ContentLength: int64(len(cipher)),
		ContentType: "application/octet-stream"})
	if err != nil {
		t.Fatal(err)
	}
	e.fake.Enqueue(anthropictest.Reply{Text: "Got your secret notes."})
	d.send(t, &event.MessageEventContent{MsgType: event.MsgFile, Body: "notes.bin", FileName: "notes.bin",
		File: &event.EncryptedFileInfo{EncryptedFile: *ef, URL: up.ContentURI.CUString()},
		Info: &event.FileInfo{MimeType: "application/octet-stream", Size: len(secret)}})
	e.waitBot(t, d.aw, d.room, "the notes' answer", contains("Got your secret notes."))
	got := e.fake.Requests()[0].LastUserText()
	path := attached.FindStringSubmatch(got)
	if path == nil {
		t.Fatalf("claude was not given the file: %q", got)
	}
	if b, err := os.ReadFile(path[1]); err != nil || !bytes.Equal(b, secret) {
		t.Errorf("the file claude was given holds %q (%v), want %q", b, err, secret)
	}

	e.fake.Enqueue(sendFile("report.txt", "the report"), anthropictest.Reply{Text: "Here it is, encrypted."})
	d.send(t, text("send me the report"))
	e.waitBot(t, d.aw, d.room, "the report's answer", contains("Here it is, encrypted."))
	var files []*event.MessageEventContent
	for _, ev := range d.aw.from(d.room, e.bot.UserID) {
		if c := ev.Content.AsMessage(); c.MsgType == event.MsgFile {
			files = append(files, c)
		}
	}
	if len(files) != 1 {
		t.Fatalf("%d files sent, want 1", len(files))
	}
	f := files[0]
	if f.File == nil || f.URL != "" {
		t.Fatalf("the file went unencrypted: url %q, file %+v", f.URL, f.File)
	}
	uri, err := id.ParseContentURI(string(f.File.URL))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := d.alice.DownloadBytes(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte("quarterly")) || len(raw) != len("quarterly numbers") {
		t.Errorf("the media repository holds %q: not the ciphertext of the report", raw)
	}
	plain, err := f.File.Decrypt(raw)
	if err != nil || string(plain) != "quarterly numbers" || f.FileName != "report.txt" {
		t.Errorf("Alice's device decrypts %q (%v) as %q", plain, err, f.FileName)
	}
	d.noneInClear(t, e.bot.UserID)
}
