package config

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// TestDecodeBodyIsGohcls decodes every configuration of the tests, the
// repository's config.hcl and bodies made to fail (repeated, missing and
// mistyped blocks and attributes) with decodeBody and with gohcl.DecodeBody
// (which decodeBody replaces so that the binary does not link hclwrite and
// go-cmp), into the same prefilled values, and wants the same values and
// the same diagnostics.
func TestDecodeBodyIsGohcls(t *testing.T) {
	t.Parallel()
	srcs := map[string][]byte{
		"repeated": []byte(`
data_dir = "/tmp/x"
agent { max_warm = 2 }
agent { max_warm = 3 }
plugin "a" { source = "x" }
plugin "a" {
  source = "y"
  config { k = 1 }
  config { k = 2 }
}
plugin "b" { source = "z" enabled = false }
`),
		"mistyped": []byte(`
data_dir = ["not", "a", "string"]
agent {
  max_warm = "many"
  args = "one"
  env = { A = 1, B = true }
}
plugin { source = "x" }
plugin "c" "d" { source = 3 }
plugin "e" {}
access { dm_policy = 7 }
`),
		"unknown": []byte(`
nonsense = 1
agent { nonsense = 2 }
block_that_is_not {}
plugin "a" { source = "x" nonsense { } }
`),
		"empty": nil,
	}
	for _, dir := range []string{"testdata/diag", "testdata/plugindiag", "testdata", "../.."} {
		files, err := filepath.Glob(filepath.Join(dir, "*.hcl"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			srcs[f] = b
		}
	}
	if len(srcs) < 20 {
		t.Fatalf("only %d configurations found", len(srcs))
	}
	for name, src := range srcs {
		file, diags := hclsyntax.ParseConfig(src, name, hcl.InitialPos)
		if diags.HasErrors() {
			continue
		}
		ours, ourDiags := decodeWith(file.Body.(*hclsyntax.Body), decodeBody)
		theirs, theirDiags := decodeWith(file.Body.(*hclsyntax.Body), gohcl.DecodeBody)
		if !reflect.DeepEqual(ours, theirs) {
			t.Errorf("%s: decodeBody decoded\n%+v\ngohcl\n%+v", name, ours, theirs)
		}
		if !slices.Equal(ourDiags, theirDiags) {
			t.Errorf("%s: decodeBody said\n%q\ngohcl\n%q", name, ourDiags, theirDiags)
		}
	}
}

// decodeWith decodes body as parse does (the plugins prefilled with their
// defaults, each agent block over the default agent) with decode, and
// returns the value and the diagnostics' texts, sorted.
func decodeWith(body *hclsyntax.Body, decode func(hcl.Body, *hcl.EvalContext, any) hcl.Diagnostics) (*Config, []string) {
	cfg := Default()
	cfg.ctx = evalContext(func(string) (string, bool) { return "", false })
	pcontent, _, _ := body.PartialContent(&hcl.BodySchema{
		Blocks: []hcl.BlockHeaderSchema{{Type: "plugin", LabelNames: []string{"name"}}},
	})
	if pcontent != nil {
		for _, b := range pcontent.Blocks {
			p := defaultPlugin()
			p.block = b
			cfg.Plugins = append(cfg.Plugins, p)
		}
	}
	diags := decode(body, cfg.ctx, cfg)
	a := cfg.Agent.inherited()
	diags = append(diags, decode(body, cfg.ctx, a)...)
	cfg.Agents = append(cfg.Agents, a)
	cfg.ctx = nil
	var texts []string
	for _, d := range diags {
		texts = append(texts, d.Error())
	}
	slices.Sort(texts)
	return cfg, texts
}
