package webchat

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/sdk/probe"
	"github.com/clawhost/clawhost/sdk/schema"
)

// TestProbe: the probe says where the page is served and where its token
// comes from, without binding the address or writing the token.
func TestProbe(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	run := func(js string) probe.Report {
		t.Helper()
		rep, err := Probe(context.Background(), schema.Config{Instance: "web", DataDir: dir, JSON: []byte(js)})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Worst() != probe.OK || len(rep.Checks) != 2 {
			t.Fatalf("report %+v", rep)
		}
		return rep
	}
	rep := run(`{"listen":"127.0.0.1:18789"}`)
	if rep.Identity.Link != "http://127.0.0.1:18789/" || !strings.Contains(rep.Checks[1].Found, "made at the first start") {
		t.Errorf("no token yet: %+v", rep)
	}
	if _, err := os.Stat(filepath.Join(dir, TokenFile)); !os.IsNotExist(err) {
		t.Errorf("the probe wrote the token file: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, TokenFile), []byte("t0k3n-kept-here-0123456789"), 0o600); err != nil {
		t.Fatal(err)
	}
	if rep = run(`{"listen":"127.0.0.1:18789"}`); !strings.Contains(rep.Checks[1].Found, "kept in") {
		t.Errorf("kept token: %+v", rep)
	}
	rep = run(`{"listen":"127.0.0.1:18789","access_token":"s3cret-token-of-the-block-xyz"}`)
	if strings.Contains(rep.Checks[1].Found, "s3cret") || !strings.Contains(rep.Checks[1].Found, "config block") {
		t.Errorf("configured token: %+v", rep)
	}
}

// TestSchemaMarksTheListenAddress: the page's address is the one attribute
// the schema marks Listen, with the token the page asks for (ListenToken):
// the host audits it and counts the chat local on loopback from it alone,
// as it would any channel's.
func TestSchemaMarksTheListenAddress(t *testing.T) {
	t.Parallel()
	var marked []string
	for _, a := range Schema {
		if a.Listen {
			marked = append(marked, a.Name)
			if !a.ListenToken || a.Default != DefaultListen {
				t.Errorf("%s: ListenToken %v, Default %v", a.Name, a.ListenToken, a.Default)
			}
		}
	}
	if len(marked) != 1 || marked[0] != "listen" {
		t.Errorf("attributes marked Listen: %q, want listen", marked)
	}
}
