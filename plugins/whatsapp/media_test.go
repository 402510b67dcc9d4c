package whatsapp

import (
	"bytes"
	"io"
	"testing"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"google.golang.org/protobuf/proto"

	"github.com/clawhost/clawhost/plugins/whatsapp/whatsapptest"
	"github.com/clawhost/clawhost/sdk/channel"
)

func TestMediaHostAllowed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		host string
		ok   bool
	}{
		{"mmg.whatsapp.net", true},
		{"MMG.whatsapp.net", true},
		{"media-ams4-1.cdn.whatsapp.net", true},
		{"media.fdel3-1.fna.whatsapp.net", true},
		{"whatsapp.net", false},
		{"mmg.whatsapp.net.evil.example", false},
		{"media-x.cdn.whatsapp.net.evil.example", false},
		{"evilwhatsapp.net", false},
		{"web.whatsapp.net", false},
		{"g.whatsapp.net", false},
		{"media..whatsapp.net", false},
		{"127.0.0.1", false},
		{"169.254.169.254", false},
		{"", false},
	}
	for _, tc := range tests {
		if got := mediaHostAllowed(tc.host); got != tc.ok {
			t.Errorf("mediaHostAllowed(%q) = %v, want %v", tc.host, got, tc.ok)
		}
	}
}

func TestCheckDirectPath(t *testing.T) {
	t.Parallel()
	tests := []struct {
		path string
		ok   bool
	}{
		{"/v/t62.7118-24/30475438_1234/n.enc?ccb=11-4&oh=01_Q5&oe=68A&_nc_sid=5e03e0", true},
		{"/mms/image/abc", true},
		{"", false},
		{"v/t62/x.enc", false},
		{"//evil.example/x", false},
		{"@evil.example/x", false},
		{"/x@evil.example", false},
		{".evil.example/x", false},
		{"/x#frag", false},
		{"/x\\y", false},
		{"/x y", false},
		{"/x\ny", false},
		{"https://evil.example/x", false},
	}
	for _, tc := range tests {
		if err := checkDirectPath(tc.path); (err == nil) != tc.ok {
			t.Errorf("checkDirectPath(%q) = %v, want ok %v", tc.path, err, tc.ok)
		}
	}
}

// imageMessage is an image message for m with the length the sender
// declares.
func imageMessage(m whatsapptest.Media, directPath string, length uint64) *waE2E.Message {
	return &waE2E.Message{ImageMessage: &waE2E.ImageMessage{
		URL: proto.String(m.URL), DirectPath: proto.String(directPath), MediaKey: m.MediaKey,
		FileSHA256: m.FileSHA256, FileEncSHA256: m.FileEncSHA256, FileLength: proto.Uint64(length),
		Mimetype: proto.String("image/jpeg"),
	}}
}

// TestFakeMediaOnlyFromWhatsAppPaths: a direct path the sender forged is
// refused before any request, and a download stops as soon as the body
// exceeds the limit, whatever length the sender declared: the fake served
// a fraction of the blob (the old code read it whole, then failed).
func TestFakeMediaOnlyFromWhatsAppPaths(t *testing.T) {
	t.Parallel()
	srv := newFake(t)
	r := startLinked(t, srv, t.TempDir(), nil)
	ann := contact(t, srv, "15550007777", "200000000000007", "Ann")
	ctx := ctxLong(t)

	small, err := srv.UploadMedia([]byte("\xff\xd8\xff a photo"), whatsmeow.MediaImage)
	if err != nil {
		t.Fatal(err)
	}
	for _, forged := range []string{"@evil.example/x", "//evil.example/x", "/x@evil.example#", "https://evil.example" + small.DirectPath} {
		if _, err := ann.Send(ctx, imageMessage(small, forged, small.FileLength), whatsapptest.SendOptions{}); err != nil {
			t.Fatal(err)
		}
		m := r.in.next(t)
		if _, _, err := r.a.DownloadMedia(ctx, channel.DownloadRequest{Ref: m.Media[0].Ref}); channel.CodeOf(err) != channel.CodeInvalidRequest {
			t.Errorf("direct path %q: %v; want invalid_request", forged, err)
		}
	}
	if n, _ := srv.MediaDownloads(); n != 0 {
		t.Errorf("%d media requests for forged paths, want none", n)
	}

	// 16 MB behind a declared length of 100 bytes, with a 64 KB limit.
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<20)
	m, err := srv.UploadMedia(big, whatsmeow.MediaImage)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ann.Send(ctx, imageMessage(m, m.DirectPath, 100), whatsapptest.SendOptions{}); err != nil {
		t.Fatal(err)
	}
	in := r.in.next(t)
	if _, _, err := r.a.DownloadMedia(ctx, channel.DownloadRequest{Ref: in.Media[0].Ref, MaxBytes: 64 << 10}); channel.CodeOf(err) != channel.CodeMessageTooLong {
		t.Errorf("an attachment over the limit: %v; want message_too_long", err)
	}
	if n, served := srv.MediaDownloads(); n != 1 || served > int64(len(big))/2 {
		t.Errorf("%d downloads served %d of %d bytes; want one, stopped early", n, served, len(big))
	}

	// A genuine attachment still comes whole, from a file that is gone
	// from the file system.
	if _, err := ann.Send(ctx, imageMessage(small, small.DirectPath, small.FileLength), whatsapptest.SendOptions{}); err != nil {
		t.Fatal(err)
	}
	in = r.in.next(t)
	rc, info, err := r.a.DownloadMedia(ctx, channel.DownloadRequest{Ref: in.Media[0].Ref})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(rc)
	rc.Close()
	if string(got) != "\xff\xd8\xff a photo" || info.Size != int64(len(got)) || info.MIME != "image/jpeg" {
		t.Errorf("downloaded %q (%+v)", got, info)
	}
}

// TestFakeMediaHostsOnlyWhatsApps: a media host that is not WhatsApp's
// (announced by an impersonated server) is never asked.
func TestFakeMediaHostsOnlyWhatsApps(t *testing.T) {
	t.Parallel()
	srv := newFake(t)
	srv.SetMediaHost("metadata.evil.example")
	r := startLinked(t, srv, t.TempDir(), nil)
	ann := contact(t, srv, "15550006666", "200000000000006", "Ann")
	ctx := ctxLong(t)
	m, err := srv.UploadMedia([]byte("\xff\xd8\xff a photo"), whatsmeow.MediaImage)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ann.Send(ctx, imageMessage(m, m.DirectPath, m.FileLength), whatsapptest.SendOptions{}); err != nil {
		t.Fatal(err)
	}
	in := r.in.next(t)
	if _, _, err := r.a.DownloadMedia(ctx, channel.DownloadRequest{Ref: in.Media[0].Ref}); channel.CodeOf(err) != channel.CodeInvalidRequest {
		t.Errorf("a download from a host not WhatsApp's: %v; want invalid_request", err)
	}
	if n, _ := srv.MediaDownloads(); n != 0 {
		t.Errorf("%d media requests reached the host, want none", n)
	}
}
