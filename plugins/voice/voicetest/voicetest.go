// Package voicetest is what the voice plugin's tests and the end-to-end
// voice tests share: the check that the audio tools are installed and
// ffprobe's reading of the audio a test got back.
//
// The package does not import "testing"; it takes the few methods it needs
// of a test as TB.
package voicetest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// TB is the part of testing.TB the helpers use.
type TB interface {
	Helper()
	TempDir() string
	Fatalf(format string, args ...any)
	Skipf(format string, args ...any)
}

// Tools are the programs the voice tests run: espeak-ng speaks, ffmpeg
// converts, ffprobe reads what came back. make voice installs them.
var Tools = []string{"espeak-ng", "ffmpeg", "ffprobe"}

// NeedTools skips the test when one of Tools is missing, or fails it when
// CLAWHOST_REQUIRE_VOICE=1 (make test).
func NeedTools(t TB) {
	t.Helper()
	for _, p := range Tools {
		if _, err := exec.LookPath(p); err != nil {
			if os.Getenv("CLAWHOST_REQUIRE_VOICE") == "1" {
				t.Fatalf("%s is needed for the voice tests (make voice): %v", p, err)
			}
			t.Skipf("%s not found (make voice); set CLAWHOST_REQUIRE_VOICE=1 to fail instead", p)
		}
	}
}

// Probe returns ffprobe's codec and duration of audio data, written to a
// file whose name ends in ext (".ogg", ".wav"; "" lets ffprobe go by the
// content alone).
func Probe(t TB, data []byte, ext string) (codec string, seconds float64) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "audio"+ext)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatalf("probe audio: %v", err)
	}
	out, err := exec.Command("ffprobe", "-v", "error", "-select_streams", "a:0", "-show_entries", "stream=codec_name:format=duration", "-of", "default=nw=1", p).Output()
	if err != nil {
		t.Fatalf("ffprobe: %v", err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		k, v, _ := strings.Cut(l, "=")
		switch k {
		case "codec_name":
			codec = v
		case "duration":
			seconds, _ = strconv.ParseFloat(v, 64)
		}
	}
	return codec, seconds
}
