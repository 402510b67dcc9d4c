package telegram

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
	"github.com/clawhost/clawhost/sdk/channel"
)

func writeFile(t *testing.T, name, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// The text becomes the caption of the first file when it fits (as HTML for
// markdown); the reply, topic and silence go with it.
func TestSendTextAsCaption(t *testing.T) {
	t.Parallel()
	srv, a := newFake(t)
	img := writeFile(t, "chart.png", "\x89PNG")
	doc := writeFile(t, "data.csv", "a,b")
	resp, err := a.Send(context.Background(), channel.SendRequest{
		ChatID: "-100777", ThreadID: "42", ReplyToMessageID: "9", Silent: true,
		Text: "**the chart** and the data", Format: channel.FormatMarkdown,
		Media: []channel.OutboundMedia{{Path: img, Kind: channel.MediaImage}, {Path: doc, Kind: channel.MediaDocument}},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := srv.Sent()
	if len(s) != 2 || len(resp.MessageIDs) != 2 {
		t.Fatalf("sent %+v", s)
	}
	if s[0].Method != "sendPhoto" || s[0].Text != "<b>the chart</b> and the data" || s[0].ParseMode != "HTML" || s[0].Visible != "the chart and the data" ||
		s[0].ReplyTo != 9 || s[0].ThreadID != 42 || !s[0].Silent || s[0].File.Filename != "chart.png" {
		t.Fatalf("photo %+v", s[0])
	}
	if s[1].Method != "sendDocument" || s[1].Text != "" || s[1].ReplyTo != 0 || s[1].ThreadID != 42 || string(s[1].File.Data) != "a,b" {
		t.Fatalf("document %+v", s[1])
	}
}

// Text longer than a caption goes first, as its own message.
func TestSendLongTextBeforeMedia(t *testing.T) {
	t.Parallel()
	srv, a := newFake(t)
	doc := writeFile(t, "report.pdf", "%PDF")
	long := strings.Repeat("word ", 300) // 1500 units
	sendOK(t, a, channel.SendRequest{ChatID: "1", ReplyToMessageID: "3", Text: long,
		Media: []channel.OutboundMedia{{Path: doc, Kind: channel.MediaDocument}}})
	s := srv.Sent()
	if len(s) != 2 || s[0].Method != "sendMessage" || s[0].ReplyTo != 3 || s[1].Method != "sendDocument" || s[1].Text != "" || s[1].ReplyTo != 0 {
		t.Fatalf("sent %+v", s)
	}
}

// A refused caption HTML is re-uploaded with a plain caption; an image
// Telegram refuses as a photo goes as a document.
func TestSendMediaFallbacks(t *testing.T) {
	t.Parallel()
	srv, a := newFake(t)
	img := writeFile(t, "odd.png", "pixels")
	srv.Fail("sendPhoto", 1, telegramtest.Failure{Code: 400, Description: "Bad Request: can't parse entities: Unsupported start tag \"q\" at byte offset 0"})
	srv.Fail("sendPhoto", 1, telegramtest.Failure{Code: 400, Description: "Bad Request: PHOTO_INVALID_DIMENSIONS"})
	sendOK(t, a, channel.SendRequest{ChatID: "1", Text: "*look*", Format: channel.FormatMarkdown,
		Media: []channel.OutboundMedia{{Path: img, Kind: channel.MediaImage}}})
	photos := srv.Requests("sendPhoto")
	if len(photos) != 2 || photos[0].Params.Get("parse_mode") != "HTML" || photos[1].Params.Get("parse_mode") != "" || photos[1].Params.Get("caption") != "look" {
		t.Fatalf("photo attempts %+v", photos)
	}
	for _, p := range photos {
		if len(p.Files) != 1 || string(p.Files[0].Data) != "pixels" {
			t.Fatalf("file not re-sent in full: %+v", p.Files)
		}
	}
	s := srv.Sent()
	if len(s) != 1 || s[0].Method != "sendDocument" || s[0].Visible != "look" || string(s[0].File.Data) != "pixels" {
		t.Fatalf("sent %+v", s)
	}
}

// An OGG voice note goes as a voice message (sendVoice); other audio of
// kind voice, and a voice note Telegram refuses (the user's privacy
// setting), go as documents.
func TestSendVoiceNote(t *testing.T) {
	t.Parallel()
	srv, a := newFake(t)
	ogg := writeFile(t, "voice.ogg", "OggS opus")
	wav := writeFile(t, "voice.wav", "RIFF")
	sendOK(t, a, channel.SendRequest{ChatID: "1", Text: "spoken",
		Media: []channel.OutboundMedia{{Path: ogg, Kind: channel.MediaVoice}, {Path: wav, Kind: channel.MediaVoice}}})
	s := srv.Sent()
	if len(s) != 2 || s[0].Method != "sendVoice" || s[0].Visible != "spoken" || string(s[0].File.Data) != "OggS opus" || s[1].Method != "sendDocument" {
		t.Fatalf("sent %+v", s)
	}
	srv.Fail("sendVoice", 1, telegramtest.Failure{Code: 400, Description: "Bad Request: VOICE_MESSAGES_FORBIDDEN"})
	sendOK(t, a, channel.SendRequest{ChatID: "2", Media: []channel.OutboundMedia{{Path: ogg, Kind: channel.MediaVoice}}})
	if s := srv.Sent(); len(s) != 3 || s[2].Method != "sendDocument" || string(s[2].File.Data) != "OggS opus" {
		t.Fatalf("a refused voice note: %+v", s)
	}
}

func TestSendMediaErrors(t *testing.T) {
	t.Parallel()
	srv, a := newFake(t)
	empty := writeFile(t, "empty.txt", "")
	ok := writeFile(t, "ok.txt", "x")
	ctx := context.Background()
	// Every file is checked before anything is sent.
	_, err := a.Send(ctx, channel.SendRequest{ChatID: "1", Text: "hi", Media: []channel.OutboundMedia{{Path: ok}, {Path: empty}}})
	if channel.CodeOf(err) != channel.CodeInvalidRequest || len(srv.Requests("")) != 0 {
		t.Fatalf("empty file: %v, %d requests", err, len(srv.Requests("")))
	}
	_, err = a.Send(ctx, channel.SendRequest{ChatID: "1", Media: []channel.OutboundMedia{{Path: t.TempDir()}}})
	if channel.CodeOf(err) != channel.CodeInvalidRequest {
		t.Fatalf("directory: %v", err)
	}
	srv.Fail("sendDocument", 1, telegramtest.TooManyRequests(4))
	_, err = a.Send(ctx, channel.SendRequest{ChatID: "1", Media: []channel.OutboundMedia{{Path: ok}}})
	var ce *channel.Error
	if channel.CodeOf(err) != channel.CodeRateLimited || !asErr(err, &ce) || ce.RetryAfter.Seconds() != 4 {
		t.Fatalf("429 on upload: %v", err)
	}
	_, err = a.Send(ctx, channel.SendRequest{ChatID: "1", ReplyToMessageID: "abc", Text: "x"})
	if channel.CodeOf(err) != channel.CodeInvalidRequest {
		t.Fatalf("bad reply id: %v", err)
	}
}

// Inbound media over the cap: refused from the announced size before any
// download, and while streaming when the size is unknown or wrong.
func TestDownloadMediaCaps(t *testing.T) {
	t.Parallel()
	srv, a := newFake(t)
	ctx := context.Background()
	big := strings.Repeat("z", 5000)
	srv.AddFileWithSize("huge", "documents/huge.iso", []byte("tiny stand-in"), 700<<20) // 700 MB announced
	srv.AddFileWithSize("announced", "documents/a.bin", []byte(big), 5000)
	srv.AddFileWithSize("unknown", "documents/u.bin", []byte(big), -1)
	srv.AddFileWithSize("liar", "documents/l.bin", []byte(big), 100)

	// Over Telegram's own getFile limit.
	if _, _, err := a.DownloadMedia(ctx, channel.DownloadRequest{Ref: "huge"}); channel.CodeOf(err) != channel.CodeMessageTooLong {
		t.Fatalf("huge: %v", err)
	}
	// Over the request's cap, known from getFile: no download at all.
	if _, _, err := a.DownloadMedia(ctx, channel.DownloadRequest{Ref: "announced", MaxBytes: 4999}); channel.CodeOf(err) != channel.CodeMessageTooLong {
		t.Fatalf("announced: %v", err)
	}
	if n := len(srv.Requests(telegramtest.DownloadMethod)); n != 0 {
		t.Fatalf("%d downloads of files known to be too big", n)
	}
	// Unknown size and a size that was wrong: the stream stops at the cap.
	for _, ref := range []string{"unknown", "liar"} {
		rc, info, err := a.DownloadMedia(ctx, channel.DownloadRequest{Ref: ref, MaxBytes: 1000})
		if ref == "liar" && channel.CodeOf(err) == channel.CodeMessageTooLong {
			continue // caught by the download's Content-Length
		}
		if err != nil {
			t.Fatalf("%s: %v", ref, err)
		}
		n, err := io.Copy(io.Discard, rc)
		rc.Close()
		if channel.CodeOf(err) != channel.CodeMessageTooLong || n > 1001 {
			t.Fatalf("%s: read %d bytes, err %v (info %+v)", ref, n, err, info)
		}
	}
	// Exactly at the cap is fine; the file URL carries the token and path.
	rc, info, err := a.DownloadMedia(ctx, channel.DownloadRequest{Ref: "unknown", MaxBytes: 5000})
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || len(b) != 5000 || info.Size != -1 || info.MIME != "application/octet-stream" {
		t.Fatalf("read %d, %v, %+v", len(b), err, info)
	}
	d := srv.Requests(telegramtest.DownloadMethod)
	if last := d[len(d)-1]; last.Unauthorized || last.Params.Get("file_path") != "documents/u.bin" {
		t.Fatalf("download %+v", last)
	}
}

func TestEditErrors(t *testing.T) {
	t.Parallel()
	srv, a := newFake(t)
	ctx := context.Background()
	resp := sendOK(t, a, channel.SendRequest{ChatID: "5", Text: "draft"})
	id := resp.MessageIDs[0]
	srv.Fail("editMessageText", 1, telegramtest.TooManyRequests(2))
	err := a.Edit(ctx, channel.EditRequest{ChatID: "5", MessageID: id, Text: "more"})
	var ce *channel.Error
	if !asErr(err, &ce) || ce.Code != channel.CodeRateLimited || ce.RetryAfter.Seconds() != 2 {
		t.Fatalf("429: %v", err)
	}
	err = a.Edit(ctx, channel.EditRequest{ChatID: "5", MessageID: id, Text: strings.Repeat("x", 4097)})
	if channel.CodeOf(err) != channel.CodeMessageTooLong {
		t.Fatalf("too long: %v", err)
	}
	for _, req := range []channel.EditRequest{{ChatID: "5", MessageID: "x", Text: "t"}, {ChatID: "", MessageID: id, Text: "t"}, {ChatID: "5", MessageID: id, Text: " "}} {
		if err := a.Edit(ctx, req); channel.CodeOf(err) != channel.CodeInvalidRequest {
			t.Fatalf("%+v: %v", req, err)
		}
	}
	if n := len(srv.Requests("editMessageText")); n != 1 {
		t.Fatalf("%d edit requests; invalid ones must not reach the API", n)
	}
}

// When the HTML is refused and the raw markdown is longer than the limit,
// the converted text goes out without markup (it fits).
func TestPlainFallbackUsesConvertedTextWhenRawTooLong(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	a := newTestAdapter(t, srv, map[string]any{"text_limit": 30})
	srv.Fail("sendMessage", 1, telegramtest.Failure{Code: 400, Description: "Bad Request: can't parse entities: x"})
	md := "**aaaaaaaaaa** **bbbbbbbbbb** [c](https://example.com/long/url)" // raw > 30, visible 23
	sendOK(t, a, channel.SendRequest{ChatID: "1", Text: md, Format: channel.FormatMarkdown})
	s := srv.Sent()
	if len(s) != 1 || s[0].ParseMode != "" || s[0].Text != "aaaaaaaaaa bbbbbbbbbb c" {
		t.Fatalf("sent %+v", s)
	}
}

func TestSetCommandsLogsSkipped(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	a, logs := newLoggedAdapter(t, srv, nil)
	if err := a.SetCommands(context.Background(), []channel.MenuEntry{{Name: "Help", Description: "help"}, {Name: "no way", Description: "x"}}); err != nil {
		t.Fatal(err)
	}
	if got := srv.Commands(); len(got) != 1 || got[0].Command != "help" {
		t.Fatalf("commands %+v", got)
	}
	if !strings.Contains(logs.String(), `command not shown in the telegram menu`) || !strings.Contains(logs.String(), `"no way"`) {
		t.Fatalf("log:\n%s", logs.String())
	}
	// An empty menu clears it.
	if err := a.SetCommands(context.Background(), nil); err != nil || len(srv.Commands()) != 0 {
		t.Fatalf("clear: %v %+v", err, srv.Commands())
	}
}

func asErr(err error, target **channel.Error) bool { return errors.As(err, target) }

// A file's markdown caption goes as the host rendered it
// (OutboundMedia.CaptionRendered), in Telegram's HTML; the plugin alone,
// given none, sends the caption as plain text.
func TestSendMarkdownCaption(t *testing.T) {
	t.Parallel()
	srv, a := newFake(t)
	img := writeFile(t, "chart.png", "\x89PNG")
	req := channel.SendRequest{ChatID: "1", Format: channel.FormatMarkdown,
		Media: []channel.OutboundMedia{{Path: img, Kind: channel.MediaImage, Caption: "**the chart**"}}}
	for _, send := range []func(context.Context, channel.SendRequest) (channel.SendResponse, error){a.Send, a.Adapter.Send} {
		if _, err := send(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	if req.Media[0].CaptionRendered != nil {
		t.Fatal("the host's rendering changed the caller's media")
	}
	s := srv.Sent()
	if len(s) != 2 || s[0].Method != "sendPhoto" || s[0].Text != "<b>the chart</b>" || s[0].ParseMode != "HTML" {
		t.Fatalf("with the host's rendering: sent %+v", s)
	}
	if s[1].Text != "**the chart**" || s[1].ParseMode != "" {
		t.Fatalf("without: sent %+v", s[1])
	}
}
