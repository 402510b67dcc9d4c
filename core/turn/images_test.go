package turn

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/sdk/channel"
)

func pngOf(t *testing.T, w, h int, alpha bool) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			a := uint8(255)
			if alpha && x < w/2 {
				a = 0
			}
			img.Set(x, y, color.NRGBA{R: uint8(x * 7), G: uint8(y * 13), B: uint8(x ^ y), A: a})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestPrepareImage: a small JPEG passes byte for byte; a large PNG is
// downscaled to 1568 pixels on the long edge as JPEG, aspect kept and
// transparency on white; a small WebP passes as is; text and a huge
// declared size are refused.
func TestPrepareImage(t *testing.T) {
	t.Parallel()
	var small bytes.Buffer
	_ = jpeg.Encode(&small, image.NewRGBA(image.Rect(0, 0, 64, 48)), nil)
	im, ok := prepareImage(small.Bytes())
	if !ok || im.MIME != "image/jpeg" || !bytes.Equal(im.Data, small.Bytes()) {
		t.Errorf("small jpeg: ok %v mime %q, %d bytes", ok, im.MIME, len(im.Data))
	}
	big := pngOf(t, 3000, 1000, true)
	im, ok = prepareImage(big)
	if !ok || im.MIME != "image/jpeg" {
		t.Fatalf("big png: ok %v mime %q", ok, im.MIME)
	}
	got, err := jpeg.Decode(bytes.NewReader(im.Data))
	if err != nil {
		t.Fatal(err)
	}
	if b := got.Bounds(); b.Dx() != 1568 || b.Dy() != 522 {
		t.Errorf("downscaled to %v, want 1568x522", b.Size())
	}
	if r, g, b, _ := got.At(10, 10).RGBA(); r>>8 < 240 || g>>8 < 240 || b>>8 < 240 {
		t.Errorf("transparent pixel not on white: %d %d %d", r>>8, g>>8, b>>8)
	}
	webp := append([]byte("RIFF\x10\x00\x00\x00WEBPVP8 "), make([]byte, 64)...)
	if im, ok := prepareImage(webp); !ok || im.MIME != "image/webp" {
		t.Errorf("webp: %v %q", ok, im.MIME)
	}
	if _, ok := prepareImage([]byte("%PDF-1.7 not an image")); ok {
		t.Error("a PDF was taken as an image")
	}
	// A PNG header declaring 100000 x 100000 pixels: not decoded.
	bomb := pngOf(t, 1, 1, false)
	copy(bomb[16:24], []byte{0, 1, 0x86, 0xa0, 0, 1, 0x86, 0xa0})
	if _, ok := prepareImage(bomb); ok {
		t.Error("a decompression bomb was decoded")
	}
}

// TestImagesOfATurn: images and stickers of the turn's messages, in order,
// at most maxImages; documents and undownloaded media are left out.
func TestImagesOfATurn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var small bytes.Buffer
	_ = jpeg.Encode(&small, image.NewRGBA(image.Rect(0, 0, 8, 8)), nil)
	var media []message.Media
	for i := 0; i < maxImages+2; i++ {
		p := filepath.Join(dir, string(rune('a'+i))+".jpg")
		if err := os.WriteFile(p, small.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		media = append(media, message.Media{Kind: channel.MediaImage, Path: p})
	}
	media = append([]message.Media{{Kind: channel.MediaDocument, Path: media[0].Path}, {Kind: channel.MediaImage}}, media...)
	tt := &Turns{log: hclog.NewNullLogger()}
	got := tt.images([]message.Message{{Media: media[:5]}, {Media: media[5:]}})
	if len(got) != maxImages {
		t.Errorf("%d images, want %d", len(got), maxImages)
	}
}

// BenchmarkPrepareImage: a 12-megapixel photo (4000x3000 PNG) downscaled
// to 1568 px and encoded as JPEG — the host's cost of one large inbound
// image; a small JPEG passes untouched.
func BenchmarkPrepareImage(b *testing.B) {
	t := &testing.T{}
	for _, tc := range []struct {
		name string
		data []byte
	}{{"photo-4000x3000-png", pngOf(t, 4000, 3000, false)}, {"small-jpeg", func() []byte {
		var buf bytes.Buffer
		_ = jpeg.Encode(&buf, image.NewRGBA(image.Rect(0, 0, 800, 600)), nil)
		return buf.Bytes()
	}()}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := prepareImage(tc.data); !ok {
					b.Fatal("not prepared")
				}
			}
		})
	}
}
