package mcpchannel

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/clawhost/clawhost/sdk"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// TestConformance runs the sdk's channel conformance suite over a real
// gRPC connection, the bridge running the test binary as its channel
// server; a message is injected on the platform.
func TestConformance(t *testing.T) {
	p := newPlatform(t, t.TempDir())
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := json.Marshal(map[string]any{"command": []string{exe}, "env": p.Env()})
	if err != nil {
		t.Fatal(err)
	}
	sdktest.Conformance(t, sdktest.ConformanceConfig{
		New:    func(*testing.T) sdk.Plugin { return Plugin() },
		Config: cfg,
		Inject: func(t *testing.T, text string) string {
			if _, err := p.Push("c1", "u1", "u", text); err != nil {
				t.Fatal(err)
			}
			return "c1"
		},
	})
}
