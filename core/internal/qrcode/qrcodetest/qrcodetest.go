// Package qrcodetest reads back the QR codes the operator is shown, with a
// decoder independent of the one that drew them (gozxing): from an image,
// from the status page's inline PNG, and from the half-block characters of
// a terminal. The qrcode package's tests, the status page's and the
// end-to-end tests use it.
package qrcodetest

import (
	"bytes"
	"encoding/base64"
	"html"
	"image"
	"image/color"
	"image/png"
	"regexp"
	"strings"
	"testing"

	"github.com/makiuchi-d/gozxing"
	gozxingqr "github.com/makiuchi-d/gozxing/qrcode"
)

// Decode reads the QR code that fills img (quiet zone included).
func Decode(t testing.TB, img image.Image) string {
	t.Helper()
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	if err != nil {
		t.Fatal(err)
	}
	res, err := gozxingqr.NewQRCodeReader().Decode(bmp, map[gozxing.DecodeHintType]any{gozxing.DecodeHintType_PURE_BARCODE: true})
	if err != nil {
		t.Fatalf("decode qr: %v", err)
	}
	return res.GetText()
}

// DecodePNG reads the QR code of a PNG image.
func DecodePNG(t testing.TB, data []byte) string {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("decode png: %v", err)
	}
	return Decode(t, img)
}

var pageImage = regexp.MustCompile(`<img class="qr" src="data:image/png;base64,([^"]+)" alt="QR code for ([a-z]+)">`)

// PageImage returns the PNG of the first QR image of a status page and the
// plugin instance its alt text names; nil and "" when the page has none.
func PageImage(t testing.TB, page string) (data []byte, instance string) {
	t.Helper()
	m := pageImage.FindStringSubmatch(page)
	if m == nil {
		return nil, ""
	}
	raw, err := base64.StdEncoding.DecodeString(html.UnescapeString(m[1]))
	if err != nil {
		t.Fatal(err)
	}
	return raw, m[2]
}

// FromTerminal turns half-block art (lines of ' ', '▀', '▄', '█', each
// two modules high) back into an image, scale pixels a module; a line of
// another width or another character fails the test.
func FromTerminal(t testing.TB, art string, scale int) image.Image {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(art, "\n"), "\n")
	w := len([]rune(lines[0]))
	img := image.NewGray(image.Rect(0, 0, w*scale, 2*len(lines)*scale))
	for i := range img.Pix {
		img.Pix[i] = 0xff
	}
	fill := func(x, y int) {
		for dy := range scale {
			for dx := range scale {
				img.SetGray(x*scale+dx, y*scale+dy, color.Gray{})
			}
		}
	}
	for row, line := range lines {
		r := []rune(line)
		if len(r) != w {
			t.Fatalf("line %d has %d cells, want %d", row, len(r), w)
		}
		for x, c := range r {
			switch c {
			case '█':
				fill(x, 2*row)
				fill(x, 2*row+1)
			case '▀':
				fill(x, 2*row)
			case '▄':
				fill(x, 2*row+1)
			case ' ':
			default:
				t.Fatalf("unexpected character %q", c)
			}
		}
	}
	return img
}
