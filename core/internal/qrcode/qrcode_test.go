package qrcode

import (
	"bytes"
	"image/png"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/core/internal/qrcode/qrcodetest"
)

// payloads are what plugins put in an Attention: a WhatsApp-like pairing
// string (~240 bytes of base64 and commas), a link, a short code.
var payloads = []string{
	"2@Yw3bQ0vYdKk7dV0k9v2KfUo2m8bS4yjB3q1tYxq4m7L0a6E0yW3cPpTqGzQ1hFZ7bJf3KQ==,5aQ3nZ1wNQGQ0h8yJdxkq8n1bV0b7FvE2Wv2iU4n0Hg=,VtZkR1n2k0X3hY5s8t+Jm7wq2Yb5H0c1uQ9Z3sLq9Fk=,Cb1Y8xQ2Zp7s3vK9nR4tW6mA0eJ5hU1dG7fL2yX8qPo=",
	"https://t.me/BotFather",
	"ABCD-1234",
	"ünïcødé and spaces",
}

func TestPNGDecodes(t *testing.T) {
	t.Parallel()
	for _, p := range payloads {
		t.Run(p[:4], func(t *testing.T) {
			t.Parallel()
			b, err := PNG(p, 4)
			if err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			if got := qrcodetest.Decode(t, img); got != p {
				t.Fatalf("decoded %q, want %q", got, p)
			}
		})
	}
}

func TestTerminalDecodes(t *testing.T) {
	t.Parallel()
	for _, p := range payloads {
		t.Run(p[:4], func(t *testing.T) {
			t.Parallel()
			art, err := Terminal(p, "")
			if err != nil {
				t.Fatal(err)
			}
			if got := qrcodetest.Decode(t, qrcodetest.FromTerminal(t, art, 4)); got != p {
				t.Fatalf("decoded %q, want %q", got, p)
			}
		})
	}
}

func TestTerminalIndentAndQuietZone(t *testing.T) {
	t.Parallel()
	art, err := Terminal("https://t.me/BotFather", "    ")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(art, "\n"), "\n")
	// The first two lines are quiet zone: indent and spaces only.
	for _, l := range lines[:2] {
		if strings.TrimSpace(l) != "" || !strings.HasPrefix(l, "    ") {
			t.Fatalf("quiet zone line %q", l)
		}
	}
	if !strings.ContainsAny(lines[2], "█▀▄") {
		t.Fatalf("third line has no modules: %q", lines[2])
	}
}

func TestRefused(t *testing.T) {
	t.Parallel()
	for name, text := range map[string]string{"empty": "", "too long": strings.Repeat("x", MaxBytes+1)} {
		if _, err := PNG(text, 4); err == nil {
			t.Errorf("%s: PNG accepted it", name)
		}
		if _, err := Terminal(text, ""); err == nil {
			t.Errorf("%s: Terminal accepted it", name)
		}
	}
}
