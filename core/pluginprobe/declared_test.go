package pluginprobe

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/sdk/schema"
)

// TestDeclaredListen: the attribute a schema marks Listen is the address
// the plugin serves people on — as the block writes it, else its default —
// whatever the attribute is called; a schema that marks none declares no
// address.
func TestDeclaredListen(t *testing.T) {
	t.Parallel()
	s := schema.Schema{
		{Name: "token", Sensitive: true},
		{Name: "page", Type: "string", Default: "127.0.0.1:9000", Listen: true, ListenToken: true},
	}
	d := declared(true, s)
	if d != (Declared{Channel: true, Listen: "page", ListenDefault: "127.0.0.1:9000", ListenToken: true}) {
		t.Fatalf("declared %+v", d)
	}
	// A plugin's schema arrives through the wire with its defaults as JSON
	// (sdk/internal/wire: json.RawMessage): the address is the string in it.
	wired := schema.Schema{{Name: "page", Type: "string", Default: json.RawMessage(`"127.0.0.1:9000"`), Listen: true}}
	if got := declared(true, wired).ListenDefault; got != "127.0.0.1:9000" {
		t.Errorf("the default through the wire is %q", got)
	}
	if none := declared(true, schema.Schema{{Name: "listen", Default: "0.0.0.0:1"}}); none.Listen != "" {
		t.Errorf("an unmarked listen attribute is declared: %+v", none)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "config.hcl")
	src := "plugin \"a\" {\n  source = \"mine\"\n  config {\n    page = \"0.0.0.0:9001\"\n  }\n}\nplugin \"b\" {\n  source = \"mine\"\n}\n"
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, diags := config.Load(path)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if addr, at := d.ListenOf(cfg, cfg.Plugin("a")); addr != "0.0.0.0:9001" || at != path+":4" {
		t.Errorf("written: %q at %q", addr, at)
	}
	if addr, at := d.ListenOf(cfg, cfg.Plugin("b")); addr != "127.0.0.1:9000" || at != "" {
		t.Errorf("default: %q at %q", addr, at)
	}
	if addr, _ := (Declared{Channel: true}).ListenOf(cfg, cfg.Plugin("a")); addr != "" {
		t.Errorf("no address declared, yet %q", addr)
	}
}
