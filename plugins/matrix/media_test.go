package matrix

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/crypto/attachment"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// TestParseRef: an encrypted attachment's ref carries its key and comes
// back whole; a ref that is not an mxc:// URI, or whose key does not
// parse, is an invalid request.
func TestParseRef(t *testing.T) {
	t.Parallel()
	ef := attachment.NewEncryptedFile()
	ef.EncryptInPlace([]byte("x"))
	ref, err := encryptedRef(&event.EncryptedFileInfo{EncryptedFile: *ef, URL: "mxc://hs.example/abc"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ref      string
		wantKey  bool
		wantCode channel.Code
	}{
		{ref: "mxc://hs.example/abc"},
		{ref: ref, wantKey: true},
		{ref: "https://hs.example/abc", wantCode: channel.CodeInvalidRequest},
		{ref: "mxc://hs.example/abc#bm90IGpzb24", wantCode: channel.CodeInvalidRequest},
		{ref: "mxc://hs.example/abc#" + strings.Repeat("A", 20), wantCode: channel.CodeInvalidRequest},
	} {
		mxc, key, err := parseRef(tc.ref)
		if code := channel.CodeOf(err); code != tc.wantCode || (err != nil) != (tc.wantCode != "") {
			t.Errorf("%q: error %v, want code %q", tc.ref, err, tc.wantCode)
			continue
		}
		if err != nil {
			continue
		}
		if mxc.String() != "mxc://hs.example/abc" || (key != nil) != tc.wantKey {
			t.Errorf("%q: %s key %v", tc.ref, mxc, key)
		}
		if key != nil && (key.Key.Key != ef.Key.Key || key.Hashes.SHA256 != ef.Hashes.SHA256 || key.InitVector != ef.InitVector) {
			t.Errorf("the key came back as %+v, want %+v", key, ef)
		}
	}
}

// oldMedia is a proxy in front of the homeserver that plays one without
// the authenticated media endpoints: /_matrix/client/v1/media/* is 404
// M_UNRECOGNIZED. It records the media paths asked for.
type oldMedia struct {
	mu    sync.Mutex
	paths []string
}

func (o *oldMedia) wrap(t *testing.T, target string) string {
	u, _ := url.Parse(target)
	rp := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/media/") {
			o.mu.Lock()
			o.paths = append(o.paths, r.URL.Path)
			o.mu.Unlock()
		}
		if strings.HasPrefix(r.URL.Path, "/_matrix/client/v1/media/") {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"errcode":"M_UNRECOGNIZED","error":"Unrecognized request"}`))
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func (o *oldMedia) asked(prefix string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, p := range o.paths {
		if strings.HasPrefix(p, prefix) {
			return true
		}
	}
	return false
}

// TestMediaOnALegacyHomeserver: on a homeserver without the authenticated
// media endpoints (Dendrite behind oldMedia) an encrypted attachment is
// downloaded from the legacy one and decrypted byte for byte; one whose
// bytes were changed fails its hash and gives out nothing; the upload
// limit is read from the legacy config (Dendrite's 10 MiB), and a file
// over it is not uploaded: the room gets a notice naming it.
func TestMediaOnALegacyHomeserver(t *testing.T) {
	t.Parallel()
	h, ctx := startHS(t)
	proxy := &oldMedia{}
	cfg := h.botConfig(proxy.wrap(t, h.srv.URL), true)
	a, _, _ := runReady(t, cfg, t.TempDir(), nil)
	alice := h.srv.Client(h.alice)

	secret := []byte("encrypted \x00 notes")
	ef := attachment.NewEncryptedFile()
	cipher := bytes.Clone(secret)
	ef.EncryptInPlace(cipher)
	up, err := alice.UploadMedia(ctx, mautrix.ReqUploadMedia{ContentBytes: cipher, ContentLength: int64(len(cipher)), ContentType: "application/octet-stream"})
	if err != nil {
		t.Fatal(err)
	}
	ref, err := encryptedRef(&event.EncryptedFileInfo{EncryptedFile: *ef, URL: up.ContentURI.CUString()})
	if err != nil {
		t.Fatal(err)
	}
	rc, info, err := a.DownloadMedia(ctx, channel.DownloadRequest{Ref: ref, MaxBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(rc)
	rc.Close()
	if !bytes.Equal(got, secret) || info.Size != int64(len(secret)) {
		t.Errorf("downloaded %q (%d bytes), want %q", got, info.Size, secret)
	}
	if !proxy.asked("/_matrix/client/v1/media/download/") || !proxy.asked("/_matrix/media/v3/download/") {
		t.Errorf("the download did not try the authenticated endpoint, then the legacy one: %q", proxy.paths)
	}
	if _, _, err := a.DownloadMedia(ctx, channel.DownloadRequest{Ref: ref, MaxBytes: 4}); channel.CodeOf(err) != channel.CodeMessageTooLong {
		t.Errorf("a file over MaxBytes: %v", err)
	}

	// Bytes not the sender's: the same key over other ciphertext.
	other, err := alice.UploadMedia(ctx, mautrix.ReqUploadMedia{ContentBytes: bytes.Repeat([]byte{1}, len(cipher)), ContentType: "application/octet-stream"})
	if err != nil {
		t.Fatal(err)
	}
	bad, _ := encryptedRef(&event.EncryptedFileInfo{EncryptedFile: *ef, URL: other.ContentURI.CUString()})
	if rc, _, err := a.DownloadMedia(ctx, channel.DownloadRequest{Ref: bad}); err == nil || !strings.Contains(err.Error(), "SHA-256") {
		if rc != nil {
			rc.Close()
		}
		t.Errorf("changed ciphertext was given out: %v", err)
	}

	limit := a.uploadLimit(ctx, a.client())
	if limit != 10<<20 || !proxy.asked("/_matrix/media/v3/config") {
		t.Errorf("the upload limit is %d (asked %q), want Dendrite's 10 MiB from the legacy config", limit, proxy.paths)
	}
	room := createRoom(t, ctx, alice, &mautrix.ReqCreateRoom{Invite: []id.UserID{h.bot.UserID}})
	h.waitJoined(t, ctx, alice, room.RoomID)
	big := filepath.Join(t.TempDir(), "big.bin")
	if err := os.WriteFile(big, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, limit+1); err != nil { // sparse: no disk spent
		t.Fatal(err)
	}
	resp, err := a.Send(ctx, channel.SendRequest{ChatID: room.RoomID.String(), Media: []channel.OutboundMedia{{Path: big, Kind: channel.MediaDocument}}})
	if err != nil || len(resp.MessageIDs) != 1 {
		t.Fatalf("sending a file over the limit: %+v %v", resp, err)
	}
	// Dendrite can answer 404 for an event just sent, until its sync
	// side has it.
	var ev *event.Event
	sdktest.WaitFor(t, "the notice to be readable", func() error {
		ev, err = alice.GetEvent(ctx, room.RoomID, id.EventID(resp.MessageIDs[0]))
		return err
	})
	_ = ev.Content.ParseRaw(ev.Type)
	c := ev.Content.AsMessage()
	if c.MsgType != event.MsgNotice || c.URL != "" || !strings.Contains(c.Body, "big.bin was not sent") || !strings.Contains(c.Body, "10.0 MB this homeserver accepts") {
		t.Errorf("the chat got %s %q, want a notice that big.bin was not sent", c.MsgType, c.Body)
	}
}
