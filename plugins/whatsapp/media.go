package whatsapp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	"go.mau.fi/whatsmeow"

	"github.com/clawhost/clawhost/sdk/channel"
)

// Inbound attachments are fetched from WhatsApp's media servers. The
// sender of a message chooses its direct path (and its declared length);
// WhatsApp's server chooses the hosts (media_conn). So:
//   - every request of the media HTTP client must go over https to one of
//     WhatsApp's media hosts (mediaHostAllowed; mediaGuard enforces it for
//     uploads and downloads alike);
//   - a direct path must be a path: it starts with one '/' and joined to a
//     host leaves that host the URL's host (checkDirectPath);
//   - the encrypted body is written to an unlinked temporary file through a
//     cap (cappedFile): the download ends as soon as it exceeds what an
//     attachment of the allowed size can encrypt to, whatever the sender
//     declared, instead of being read whole before the size check.

// mediaHostAllowed reports whether host is one of WhatsApp's media hosts:
// mmg.whatsapp.net, or a host of its media CDN under whatsapp.net whose
// first label starts with "media" (media-<site>.cdn.whatsapp.net, and the
// fallback media.<site>.fna.whatsapp.net).
func mediaHostAllowed(host string) bool {
	host = strings.ToLower(host)
	if host == "mmg.whatsapp.net" {
		return true
	}
	name, ok := strings.CutSuffix(host, ".whatsapp.net")
	if !ok || !strings.HasPrefix(name, "media") {
		return false
	}
	for _, c := range name {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.') {
			return false
		}
	}
	return !strings.Contains(name, "..") && !strings.HasSuffix(name, ".")
}

// mediaGuard refuses a media request to anything but WhatsApp's media
// hosts over https. The refusal is an answer, 403 with refusedHeader set,
// not a transport error: whatsmeow retries transport errors (five times,
// sleeping between), and after the last one reports success.
type mediaGuard struct{ next http.RoundTripper }

// refusedHeader marks mediaGuard's refusals (see notMediaHost).
const refusedHeader = "X-Clawhost-Refused"

func (g mediaGuard) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Scheme != "https" || r.URL.Port() != "" || !mediaHostAllowed(r.URL.Hostname()) {
		if r.Body != nil {
			r.Body.Close()
		}
		h := http.Header{}
		h.Set(refusedHeader, fmt.Sprintf("not a WhatsApp media host: %s://%s", r.URL.Scheme, r.URL.Host))
		return &http.Response{Status: "403 Forbidden", StatusCode: http.StatusForbidden, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: h, Body: http.NoBody, ContentLength: 0, Request: r}, nil
	}
	return g.next.RoundTrip(r)
}

// notMediaHost returns mediaGuard's reason when err is its refusal.
func notMediaHost(err error) (string, bool) {
	var he whatsmeow.DownloadHTTPError
	if errors.As(err, &he) && he.Response != nil {
		if why := he.Header.Get(refusedHeader); why != "" {
			return why, true
		}
	}
	return "", false
}

// guardMedia makes cli's media requests go through mediaGuard over base;
// nil means a transport like whatsmeow's own (http.DefaultTransport's
// settings, proxies from the environment included).
func guardMedia(cli *whatsmeow.Client, base http.RoundTripper) {
	if base == nil {
		base = http.DefaultTransport.(*http.Transport).Clone()
	}
	cli.SetMediaHTTPClient(&http.Client{Transport: mediaGuard{next: base}})
}

// checkDirectPath accepts a direct path that, after any media host,
// stays a path on that host.
func checkDirectPath(p string) error {
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") {
		return errors.New("the media path does not start with a single '/'")
	}
	for _, c := range p {
		if c < 0x21 || c == 0x7f || c == '\\' || c == '@' || c == '#' {
			return errors.New("the media path has a character a path may not")
		}
	}
	u, err := url.Parse("https://mmg.whatsapp.net" + p)
	if err != nil || u.Host != "mmg.whatsapp.net" || u.User != nil {
		return errors.New("the media path is not a path")
	}
	return nil
}

// encOverhead is what encryption adds to an attachment: up to one block
// of padding (AES-CBC, 16 bytes) and the 10-byte MAC.
const encOverhead = 16 + 10

var errMediaTooBig = errors.New("the attachment exceeds the download limit")

// cappedFile is the whatsmeow.File an encrypted download is written to:
// Write fails once more than left bytes arrive (whatsmeow copies the body
// into it with io.Copy, which then stops reading). It has no ReadFrom, so
// io.Copy cannot go around Write.
type cappedFile struct {
	f    *os.File
	left int64
}

var _ whatsmeow.File = (*cappedFile)(nil)

func (c *cappedFile) Write(p []byte) (int, error) {
	if int64(len(p)) > c.left {
		n, _ := c.f.Write(p[:c.left])
		c.left = -1
		return n, errMediaTooBig
	}
	n, err := c.f.Write(p)
	c.left -= int64(n)
	return n, err
}

func (c *cappedFile) Read(p []byte) (int, error)                { return c.f.Read(p) }
func (c *cappedFile) ReadAt(p []byte, off int64) (int, error)   { return c.f.ReadAt(p, off) }
func (c *cappedFile) WriteAt(p []byte, off int64) (int, error)  { return c.f.WriteAt(p, off) }
func (c *cappedFile) Seek(off int64, whence int) (int64, error) { return c.f.Seek(off, whence) }
func (c *cappedFile) Truncate(size int64) error                 { return c.f.Truncate(size) }
func (c *cappedFile) Stat() (os.FileInfo, error)                { return c.f.Stat() }

// download fetches and decrypts ref into an unlinked temporary file of at
// most limit bytes, positioned at its start; the caller closes it.
func download(ctx context.Context, cli *whatsmeow.Client, ref mediaRef, limit int64) (*os.File, error) {
	f, err := os.CreateTemp("", "clawhost-whatsapp-media-*")
	if err != nil {
		return nil, channel.Errorf(channel.CodeInternal, "download: %v", err)
	}
	// Unlinked at once: the open file is all there is, gone when closed.
	_ = os.Remove(f.Name())
	fail := func(err error) (*os.File, error) {
		f.Close()
		return nil, err
	}
	cf := &cappedFile{f: f, left: limit + encOverhead}
	err = cli.DownloadMediaWithPathToFile(ctx, ref.DirectPath, ref.EncSHA256, ref.SHA256, ref.MediaKey, int(ref.Length), whatsmeow.MediaType(ref.Type), "", cf)
	if why, refused := notMediaHost(err); refused {
		return fail(channel.Errorf(channel.CodeInvalidRequest, "download refused: %s", why))
	}
	if err != nil {
		switch {
		case errors.Is(err, errMediaTooBig):
			return fail(channel.Errorf(channel.CodeMessageTooLong, "the attachment has more than %d bytes", limit))
		case errors.Is(err, whatsmeow.ErrMediaDownloadFailedWith404), errors.Is(err, whatsmeow.ErrMediaDownloadFailedWith410):
			return fail(channel.Errorf(channel.CodeChatNotFound, "the attachment is gone from WhatsApp's servers: %v", err))
		case errors.Is(err, whatsmeow.ErrMediaDownloadFailedWith403):
			return fail(channel.Errorf(channel.CodeForbidden, "download refused: %v", err))
		}
		return fail(channel.Errorf(channel.CodeUnavailable, "download: %v", err))
	}
	st, err := f.Stat()
	if err != nil {
		return fail(channel.Errorf(channel.CodeInternal, "download: %v", err))
	}
	if st.Size() > limit {
		return fail(channel.Errorf(channel.CodeMessageTooLong, "the attachment has %d bytes, more than %d", st.Size(), limit))
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fail(channel.Errorf(channel.CodeInternal, "download: %v", err))
	}
	return f, nil
}
