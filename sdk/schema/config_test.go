package schema

import (
	"bytes"
	"log/slog"
	"testing"

	"github.com/clawhost/clawhost/sdk/status"
)

// TestConfigLogAndReporter: Log and Reporter are the host's when set, and
// a discarding logger and status.Discard when a test leaves them nil.
func TestConfigLogAndReporter(t *testing.T) {
	var c Config
	c.Log().Error("dropped") // must not panic
	if c.Reporter() != status.Discard {
		t.Error("a nil Status is not status.Discard")
	}
	var buf bytes.Buffer
	rep := &recorder{}
	c = Config{Logger: slog.New(slog.NewTextHandler(&buf, nil)), Status: rep}
	c.Log().Info("kept")
	if !bytes.Contains(buf.Bytes(), []byte("kept")) {
		t.Errorf("the host's logger was not used: %q", buf.String())
	}
	if c.Reporter() != status.Reporter(rep) {
		t.Error("the host's reporter was not used")
	}
}

type recorder struct{ status.Reporter }
