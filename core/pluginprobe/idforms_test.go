package pluginprobe

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/internal/testbin"
	"github.com/clawhost/clawhost/sdk/channel"
)

// TestNormalizeIDsAsksThePlugins: the ids written for an instance take the
// forms its plugin declares — asked of the plugin binary (Describe before
// Configure, the whatsapp plugin) or, for an instance running with this
// configuration, of its running description — and so does where
// approvals may go (DirectToSender); an id no form matches is a warning;
// an instance whose plugin cannot be asked keeps its ids as written.
func TestNormalizeIDsAsksThePlugins(t *testing.T) {
	t.Parallel()
	bin, err := testbin.Dir()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "config.hcl")
	src := `plugin_dir = "` + bin + `"
access {
  owners = ["wa:15551234567@s.whatsapp.net", "wa:bob", "dc:<@77>", "gone:x"]
}
plugin "wa" {
  source = "whatsapp"
}
plugin "dc" {
  source = "discord"
  config {
    token = "x"
  }
}
plugin "gone" {
  source = "nosuchplugin"
}
`
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, diags := config.Load(path)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	asked := map[string]bool{}
	running := func(instance, _ string) (channel.Capabilities, bool) {
		asked[instance] = true
		if instance == "dc" {
			return channel.Capabilities{IDForms: []channel.IDForm{{Pattern: `<@([0-9]+)>`, Canonical: "$1"}}}, true
		}
		return channel.Capabilities{}, false
	}
	diags = NormalizeIDs(cfg, nil, running)
	if want := []string{"wa:+15551234567", "wa:bob", "dc:77", "gone:x"}; !slices.Equal(cfg.Access.Owners, want) {
		t.Errorf("owners %q, want %q", cfg.Access.Owners, want)
	}
	if len(diags) != 1 || !strings.Contains(diags[0].Detail, `"wa:bob"`) || diags.HasErrors() {
		t.Errorf("diagnostics: %v", diags)
	}
	if !cfg.DirectToSender("wa") || cfg.DirectToSender("dc") || cfg.DirectToSender("gone") {
		t.Errorf("DirectToSender: wa %v, dc %v, gone %v", cfg.DirectToSender("wa"), cfg.DirectToSender("dc"), cfg.DirectToSender("gone"))
	}
	if !asked["dc"] || !asked["wa"] {
		t.Errorf("the running instances were not asked first: %v", asked)
	}
}
