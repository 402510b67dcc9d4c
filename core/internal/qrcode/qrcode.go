// Package qrcode renders text as a QR code for the operator: a PNG image
// for the status page and half-block characters for a terminal. Both come
// from one encoding (rsc.io/qr, error correction level M) so the page and
// `clawhost status` show the same code, each with the four-module quiet
// zone a scanner needs around it.
package qrcode

import (
	"fmt"
	"strings"

	"rsc.io/qr"
)

// quiet is the width of the white border, in modules, that the QR
// specification asks for.
const quiet = 4

// MaxBytes bounds the text accepted: a version 40 code at level M holds
// 2331 bytes; anything longer cannot be encoded.
const MaxBytes = 2331

// PNG returns text encoded as a QR code in a PNG image, scale pixels per
// module (a WhatsApp pairing payload of ~240 bytes gives a 57-module code:
// 520 px at scale 8).
func PNG(text string, scale int) ([]byte, error) {
	c, err := encode(text)
	if err != nil {
		return nil, err
	}
	if scale > 0 {
		c.Scale = scale
	}
	return c.PNG(), nil
}

// Terminal returns text encoded as a QR code drawn with the half-block
// characters ▀ ▄ █ and spaces, two modules per character cell vertically,
// one line per two rows of modules, each line ending in "\n" and prefixed
// by indent. Dark modules are drawn as blocks, so it scans on a terminal
// with a light background; on a dark one most phone scanners read the
// inverted code too.
func Terminal(text, indent string) (string, error) {
	c, err := encode(text)
	if err != nil {
		return "", err
	}
	n := c.Size + 2*quiet
	dark := func(x, y int) bool { return c.Black(x-quiet, y-quiet) }
	var b strings.Builder
	for y := 0; y < n; y += 2 {
		b.WriteString(indent)
		for x := 0; x < n; x++ {
			top, bottom := dark(x, y), y+1 < n && dark(x, y+1)
			switch {
			case top && bottom:
				b.WriteString("█")
			case top:
				b.WriteString("▀")
			case bottom:
				b.WriteString("▄")
			default:
				b.WriteString(" ")
			}
		}
		b.WriteString("\n")
	}
	return b.String(), nil
}

func encode(text string) (*qr.Code, error) {
	if text == "" {
		return nil, fmt.Errorf("encode qr code: empty text")
	}
	if len(text) > MaxBytes {
		return nil, fmt.Errorf("encode qr code: %d bytes, at most %d fit", len(text), MaxBytes)
	}
	c, err := qr.Encode(text, qr.M)
	if err != nil {
		return nil, fmt.Errorf("encode qr code: %w", err)
	}
	return c, nil
}
