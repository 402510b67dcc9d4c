package whatsapptest

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"go.mau.fi/whatsmeow"
	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/util/cbcutil"
	"go.mau.fi/whatsmeow/util/hkdfutil"
	"google.golang.org/protobuf/proto"
)

// mediaHost is the media host the fake's media URLs name; the fake
// announces it in media_conn unless SetMediaHost changed that. The
// client's media HTTP client dials the fake whatever the host.
const (
	mediaHost        = "mmg.whatsapp.net"
	defaultMediaHost = mediaHost
)

// SetMediaHost makes media_conn announce host as the one media host, as
// a compromised or impersonated server could. Call it before the client
// first asks (it caches the answer for an hour).
func (s *Server) SetMediaHost(host string) {
	s.mu.Lock()
	s.mediaHost = host
	s.mu.Unlock()
}

// MediaDownloads returns how many media downloads the fake answered and
// how many bytes of blobs it wrote to them (what the client's connection
// took before it stopped reading).
func (s *Server) MediaDownloads() (requests int, bytes int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mediaGets, s.mediaServed
}

// Media is an encrypted blob stored on the fake's media server, with what a
// message needs to reference it.
type Media struct {
	// URL is https://mmg.whatsapp.net/<direct path>; clients wired to the
	// fake download it from the fake.
	URL string
	// DirectPath is the path and query of the blob.
	DirectPath string
	// MediaKey is the random 32-byte key the blob is encrypted with.
	MediaKey []byte
	// FileSHA256 and FileEncSHA256 hash the plaintext and the blob.
	FileSHA256    []byte
	FileEncSHA256 []byte
	// FileLength is the plaintext length.
	FileLength uint64
}

func mediaKeys(key []byte, typ whatsmeow.MediaType) (iv, cipherKey, macKey []byte) {
	x := hkdfutil.SHA256(key, nil, []byte(typ), 112)
	return x[:16], x[16:48], x[48:80]
}

// UploadMedia encrypts data as WhatsApp does for media of typ (e.g.
// whatsmeow.MediaImage, whatsmeow.MediaAudio) and stores it on the fake's
// media server, as a contact's phone would before sending it.
func (s *Server) UploadMedia(data []byte, typ whatsmeow.MediaType) (Media, error) {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	iv, ck, mk := mediaKeys(key, typ)
	ct, err := cbcutil.Encrypt(ck, iv, data)
	if err != nil {
		return Media{}, fmt.Errorf("whatsapptest: encrypt media: %w", err)
	}
	h := hmac.New(sha256.New, mk)
	h.Write(iv)
	h.Write(ct)
	blob := append(ct, h.Sum(nil)[:10]...)
	plainSum := sha256.Sum256(data)
	encSum := sha256.Sum256(blob)
	path := s.storeBlob(blob, encSum[:])
	return Media{
		URL: "https://" + mediaHost + path, DirectPath: path, MediaKey: key,
		FileSHA256: plainSum[:], FileEncSHA256: encSum[:], FileLength: uint64(len(data)),
	}, nil
}

func (s *Server) storeBlob(blob, encSum []byte) string {
	path := "/v/t62.7118-24/" + hex.EncodeToString(encSum[:16]) + ".enc?ccb=11-4"
	s.mu.Lock()
	s.blobs[blobKey(path)] = blob
	s.mu.Unlock()
	return path
}

func blobKey(pathAndQuery string) string {
	p, _, _ := strings.Cut(pathAndQuery, "?")
	return p
}

// ImageOptions describe an image sent to the linked device.
type ImageOptions struct {
	// Data is the image file.
	Data []byte
	// Mimetype defaults to "image/jpeg".
	Mimetype string
	// Caption is shown under the image, none when empty.
	Caption string
	SendOptions
}

// SendImage uploads an image and sends it as an ImageMessage.
func (c *Contact) SendImage(ctx context.Context, o ImageOptions) (string, error) {
	m, err := c.s.UploadMedia(o.Data, whatsmeow.MediaImage)
	if err != nil {
		return "", err
	}
	if o.Mimetype == "" {
		o.Mimetype = "image/jpeg"
	}
	msg := &waE2E.Message{ImageMessage: &waE2E.ImageMessage{
		URL: proto.String(m.URL), DirectPath: proto.String(m.DirectPath), MediaKey: m.MediaKey,
		FileSHA256: m.FileSHA256, FileEncSHA256: m.FileEncSHA256, FileLength: proto.Uint64(m.FileLength),
		Mimetype: proto.String(o.Mimetype),
	}}
	if o.Caption != "" {
		msg.ImageMessage.Caption = proto.String(o.Caption)
	}
	return c.Send(ctx, msg, o.SendOptions)
}

// VoiceOptions describe a voice note (push-to-talk audio).
type VoiceOptions struct {
	// Data is the audio file.
	Data []byte
	// Mimetype defaults to "audio/ogg; codecs=opus".
	Mimetype string
	// Seconds is the announced duration.
	Seconds uint32
	SendOptions
}

// SendVoiceNote uploads audio and sends it as an AudioMessage with PTT set.
func (c *Contact) SendVoiceNote(ctx context.Context, o VoiceOptions) (string, error) {
	m, err := c.s.UploadMedia(o.Data, whatsmeow.MediaAudio)
	if err != nil {
		return "", err
	}
	if o.Mimetype == "" {
		o.Mimetype = "audio/ogg; codecs=opus"
	}
	msg := &waE2E.Message{AudioMessage: &waE2E.AudioMessage{
		URL: proto.String(m.URL), DirectPath: proto.String(m.DirectPath), MediaKey: m.MediaKey,
		FileSHA256: m.FileSHA256, FileEncSHA256: m.FileEncSHA256, FileLength: proto.Uint64(m.FileLength),
		Mimetype: proto.String(o.Mimetype), Seconds: proto.Uint32(o.Seconds), PTT: proto.Bool(true),
	}}
	return c.Send(ctx, msg, o.SendOptions)
}

// downloadable is what media messages have in common.
type downloadable interface {
	GetDirectPath() string
	GetMediaKey() []byte
	GetFileEncSHA256() []byte
	GetFileSHA256() []byte
}

// DownloadSent returns the decrypted media of a message the linked device
// sent (image, audio, video, document or sticker), from the blob it
// uploaded to the fake, checking both hashes and the MAC.
func (s *Server) DownloadSent(m SentMessage) ([]byte, error) {
	msg := m.Message
	var d downloadable
	var typ whatsmeow.MediaType
	switch {
	case msg.GetImageMessage() != nil:
		d, typ = msg.GetImageMessage(), whatsmeow.MediaImage
	case msg.GetAudioMessage() != nil:
		d, typ = msg.GetAudioMessage(), whatsmeow.MediaAudio
	case msg.GetVideoMessage() != nil:
		d, typ = msg.GetVideoMessage(), whatsmeow.MediaVideo
	case msg.GetDocumentMessage() != nil:
		d, typ = msg.GetDocumentMessage(), whatsmeow.MediaDocument
	case msg.GetStickerMessage() != nil:
		d, typ = msg.GetStickerMessage(), whatsmeow.MediaImage
	default:
		return nil, errors.New("whatsapptest: download: no media in message")
	}
	s.mu.Lock()
	blob := s.blobs[blobKey(d.GetDirectPath())]
	s.mu.Unlock()
	if blob == nil {
		return nil, fmt.Errorf("whatsapptest: download: no blob at %q", d.GetDirectPath())
	}
	if sum := sha256.Sum256(blob); !hmac.Equal(sum[:], d.GetFileEncSHA256()) || len(blob) <= 10 {
		return nil, errors.New("whatsapptest: download: encrypted hash mismatch")
	}
	iv, ck, mk := mediaKeys(d.GetMediaKey(), typ)
	ct, mac := blob[:len(blob)-10], blob[len(blob)-10:]
	h := hmac.New(sha256.New, mk)
	h.Write(iv)
	h.Write(ct)
	if !hmac.Equal(h.Sum(nil)[:10], mac) {
		return nil, errors.New("whatsapptest: download: bad media MAC")
	}
	data, err := cbcutil.Decrypt(ck, iv, ct)
	if err != nil {
		return nil, fmt.Errorf("whatsapptest: download: %w", err)
	}
	if sum := sha256.Sum256(data); !hmac.Equal(sum[:], d.GetFileSHA256()) {
		return nil, errors.New("whatsapptest: download: plaintext hash mismatch")
	}
	return data, nil
}

func (s *Server) mediaConn() waBinary.Node {
	s.mu.Lock()
	host := s.mediaHost
	s.mu.Unlock()
	return waBinary.Node{Tag: "media_conn", Attrs: waBinary.Attrs{
		"auth": "fake-media-auth", "ttl": 3600, "auth_ttl": 3600, "max_buckets": 12,
	}, Content: []waBinary.Node{{Tag: "host", Attrs: waBinary.Attrs{"hostname": host}}}}
}

// serveMedia is the media server: uploads (POST /mms/<type>/<token>) and
// downloads (GET of a direct path).
func (s *Server) serveMedia(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/mms/"):
		if r.URL.Query().Get("auth") != "fake-media-auth" {
			http.Error(w, "bad auth", http.StatusUnauthorized)
			return
		}
		blob, err := io.ReadAll(io.LimitReader(r.Body, 100<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		sum := sha256.Sum256(blob)
		token := r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:]
		if want, err := base64.URLEncoding.DecodeString(token); err != nil || !hmac.Equal(want, sum[:]) {
			http.Error(w, "token does not match the upload", http.StatusBadRequest)
			return
		}
		path := s.storeBlob(blob, sum[:])
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"url": "https://" + mediaHost + path, "direct_path": path})
	case r.Method == http.MethodGet:
		s.mu.Lock()
		blob := s.blobs[r.URL.Path]
		s.mediaGets++
		s.mu.Unlock()
		if blob == nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(blob)))
		// In pieces, counted: a client that stops reading early shows.
		for len(blob) > 0 {
			n := min(len(blob), 32<<10)
			if _, err := w.Write(blob[:n]); err != nil {
				return
			}
			if f, ok := w.(http.Flusher); ok {
				f.Flush()
			}
			s.mu.Lock()
			s.mediaServed += int64(n)
			s.mu.Unlock()
			blob = blob[n:]
		}
	default:
		http.Error(w, "not found", http.StatusNotFound)
	}
}
