package matrix

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/crypto/attachment"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/clawhost/clawhost/sdk/channel"
)

// The media repository. Downloads use the authenticated endpoints
// (/_matrix/client/v1/media/download, spec v1.11, MSC3916), falling back
// to the legacy /_matrix/media/v3 ones on a homeserver that does not know
// them (it answers 404 M_UNRECOGNIZED or 405). Dendrite has served the
// authenticated ones since v0.13.8 (mediaapi/routing: v1/media/config and
// v1/media/download), Synapse since 1.110.
//
// An encrypted attachment (an event's "file", EncryptedFileInfo) travels
// to the host as a Media.Ref of its own: the mxc:// URI, then '#' and the
// file's key, iv and SHA-256 hash (the EncryptedFile JSON, base64url), so
// that DownloadMedia can decrypt it after a restart, on another node of a
// cluster, without a store of its own. The key is as secret as the
// decrypted message text the host journals beside it, no more.

// encRefSep separates an encrypted attachment's mxc:// URI from its key.
const encRefSep = "#"

// encryptedRef is the Media.Ref of an encrypted attachment.
func encryptedRef(f *event.EncryptedFileInfo) (string, error) {
	b, err := json.Marshal(&f.EncryptedFile)
	if err != nil {
		return "", err
	}
	return string(f.URL) + encRefSep + base64.RawURLEncoding.EncodeToString(b), nil
}

// parseRef splits a Media.Ref into its mxc:// URI and, for an encrypted
// attachment, its key; a ref that is not one is an invalid request.
func parseRef(ref string) (id.ContentURI, *attachment.EncryptedFile, error) {
	uri, key, enc := strings.Cut(ref, encRefSep)
	mxc, err := id.ParseContentURI(uri)
	if err != nil || mxc.IsEmpty() {
		return id.ContentURI{}, nil, &channel.Error{Code: channel.CodeInvalidRequest, Message: "not an mxc:// URI: " + uri}
	}
	if !enc {
		return mxc, nil, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(key)
	var ef attachment.EncryptedFile
	if err == nil {
		err = json.Unmarshal(b, &ef)
	}
	if err == nil {
		err = ef.PrepareForDecryption()
	}
	if err != nil {
		return id.ContentURI{}, nil, &channel.Error{Code: channel.CodeInvalidRequest, Message: "the encrypted attachment's key does not parse: " + err.Error()}
	}
	return mxc, &ef, nil
}

// unknownEndpoint reports whether err is a homeserver saying it does not
// serve the endpoint (not that the media is missing).
func unknownEndpoint(err error) bool {
	var he mautrix.HTTPError
	if !errors.As(err, &he) || he.Response == nil {
		return false
	}
	if he.Response.StatusCode == http.StatusMethodNotAllowed {
		return true
	}
	if he.RespError != nil {
		return he.RespError.ErrCode == mautrix.MUnrecognized.ErrCode
	}
	return he.Response.StatusCode == http.StatusNotFound
}

// download opens the bytes of mxc: the authenticated endpoint, else the
// legacy one.
func (a *Adapter) download(ctx context.Context, cli *mautrix.Client, mxc id.ContentURI) (*http.Response, error) {
	resp, err := cli.Download(ctx, mxc)
	if err == nil || !unknownEndpoint(err) {
		return resp, err
	}
	a.log.Debug("the homeserver has no authenticated media endpoints; using the legacy ones")
	_, resp, err = cli.MakeFullRequestWithResp(ctx, mautrix.FullRequest{Method: http.MethodGet,
		URL: cli.BuildURL(mautrix.MediaURLPath{"v3", "download", mxc.Homeserver, mxc.FileID}), DontReadResponse: true})
	return resp, err
}

// DownloadMedia implements channel.MediaDownloader: the bytes of an mxc://
// URI, and of an encrypted attachment the plaintext, its SHA-256 checked
// before a byte is given out.
func (a *Adapter) DownloadMedia(ctx context.Context, req channel.DownloadRequest) (io.ReadCloser, channel.MediaInfo, error) {
	cli := a.client()
	if cli == nil {
		return nil, channel.MediaInfo{}, &channel.Error{Code: channel.CodeUnavailable, Message: "not connected to the homeserver yet"}
	}
	mxc, ef, err := parseRef(req.Ref)
	if err != nil {
		return nil, channel.MediaInfo{}, err
	}
	resp, err := a.download(ctx, cli, mxc)
	if err != nil {
		return nil, channel.MediaInfo{}, sendError(err)
	}
	tooLong := func(n int64) error {
		return &channel.Error{Code: channel.CodeMessageTooLong, Message: fmt.Sprintf("the file is %d bytes, over %d", n, req.MaxBytes)}
	}
	if req.MaxBytes > 0 && resp.ContentLength > req.MaxBytes {
		resp.Body.Close()
		return nil, channel.MediaInfo{}, tooLong(resp.ContentLength)
	}
	if ef == nil {
		return resp.Body, channel.MediaInfo{MIME: resp.Header.Get("Content-Type"), Size: resp.ContentLength}, nil
	}
	defer resp.Body.Close()
	body := io.Reader(resp.Body)
	if req.MaxBytes > 0 {
		body = io.LimitReader(body, req.MaxBytes+1)
	}
	data, err := io.ReadAll(body)
	if err != nil {
		return nil, channel.MediaInfo{}, err
	}
	if req.MaxBytes > 0 && int64(len(data)) > req.MaxBytes {
		return nil, channel.MediaInfo{}, tooLong(int64(len(data)))
	}
	if err := ef.DecryptInPlace(data); err != nil {
		// A wrong hash: the ciphertext is not what the sender uploaded.
		return nil, channel.MediaInfo{}, &channel.Error{Code: channel.CodeInvalidRequest, Message: "the encrypted attachment does not decrypt: " + err.Error()}
	}
	return io.NopCloser(bytes.NewReader(data)), channel.MediaInfo{Size: int64(len(data))}, nil
}

// uploadLimit is the largest file the homeserver takes (/media/config's
// m.upload.size), asked once per login; MaxFileBytes when it does not say.
func (a *Adapter) uploadLimit(ctx context.Context, cli *mautrix.Client) int64 {
	a.mu.Lock()
	n := a.maxUpload
	a.mu.Unlock()
	if n > 0 {
		return n
	}
	var cfg *mautrix.RespMediaConfig
	err := a.call(ctx, func(ctx context.Context) error {
		var err error
		cfg, err = cli.GetMediaConfig(ctx)
		if unknownEndpoint(err) {
			_, err = cli.MakeRequest(ctx, http.MethodGet, cli.BuildURL(mautrix.MediaURLPath{"v3", "config"}), nil, &cfg)
		}
		return err
	})
	n = MaxFileBytes
	if err != nil {
		a.log.Debug("the homeserver did not say its upload limit", "err", err)
		return n // asked again next time
	}
	if cfg != nil && cfg.UploadSize > 0 {
		n = min(n, cfg.UploadSize)
	}
	a.mu.Lock()
	a.maxUpload = n
	a.mu.Unlock()
	return n
}

// roomEncrypted reports whether the bot's messages to room are encrypted
// (the room is, and the device has encryption).
func (a *Adapter) roomEncrypted(ctx context.Context, room id.RoomID) bool {
	a.mu.Lock()
	e := a.e2ee
	a.mu.Unlock()
	if e == nil {
		return false
	}
	on, _ := e.state.IsEncrypted(ctx, room)
	return on
}
