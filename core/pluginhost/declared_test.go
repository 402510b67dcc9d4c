package pluginhost

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/clawhost/clawhost/sdk/schema"
)

// TestDeclared: what an instance's plugin declares of itself before it is
// configured comes from the instance's own first run — also when its block
// is then refused — and an instance whose first run ended without it (its
// binary missing, its handshake broken) or that is unknown answers false
// once that is so, without waiting for ctx.
func TestDeclared(t *testing.T) {
	h := newHost(t, newRecorder())
	good := faultSpec("good", "good")
	bad, _ := loopbackSpec(t, "bad")
	bad.Decode = func(schema.Schema) ([]byte, error) { return nil, errors.New("config.hcl:3,1: unsupported argument") }
	missing, _ := loopbackSpec(t, "missing")
	missing.Path = filepath.Join(t.TempDir(), "clawhost-nothing")
	broken := faultSpec("broken", "stdout") // its handshake fails: it never answers
	h.Apply([]Spec{good, bad, missing, broken})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for name, want := range map[string]string{"good": "fault-good", "bad": "loopback"} {
		d, ok := h.Declared(ctx, name)
		if !ok || d.Name != want || !d.Channel {
			t.Errorf("%s declared %+v, %v; want %s's channel", name, d, ok, want)
		}
	}
	waitState(t, h.Instance("bad"), StateMisconfigured)
	for _, name := range []string{"missing", "broken", "nobody"} {
		if d, ok := h.Declared(ctx, name); ok {
			t.Errorf("%s declared %+v", name, d)
		}
	}
	if ctx.Err() != nil {
		t.Fatal("an instance that will not declare made Declared wait for ctx")
	}
}
