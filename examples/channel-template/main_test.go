package main

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/clawhost/clawhost/sdk"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// TestConformance: the template passes what every channel owes the host,
// in process; core/e2e's TestPluginTestGo runs `clawhost plugin test` on
// its binary.
func TestConformance(t *testing.T) {
	var cur *spool
	sdktest.Conformance(t, sdktest.ConformanceConfig{
		New: func(t *testing.T) sdk.Plugin {
			p := plugin()
			cur = p.Channel.(*spool)
			return p
		},
		Config: []byte(`{"dir":"spool","poll":0.05}`),
		Inject: func(t *testing.T, text string) string {
			// Written aside, then renamed in: the plugin never reads half.
			tmp := filepath.Join(cur.dir, "inject.tmp")
			if err := os.WriteFile(tmp, []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
			name := filepath.Join(cur.dir, "inbox", strconv.FormatInt(time.Now().UnixNano(), 10)+".txt")
			if err := os.Rename(tmp, name); err != nil {
				t.Fatal(err)
			}
			return chat
		},
	})
}
