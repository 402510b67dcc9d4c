package config_test

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/sdk/schema"
)

// The host loads the file, starts each enabled plugin, asks it for its
// schema, and decodes the plugin's config block against it. All problems are
// printed together.
func Example() {
	cfg, diags := config.Load("testdata/example.hcl")
	for _, p := range cfg.EnabledPlugins() {
		// In the host the schema comes from the plugin's ConfigSchema RPC.
		s := schema.Schema{
			{Name: "token", Required: true, Sensitive: true},
			{Name: "poll_timeout", Type: "number", Default: json.RawMessage(`30`)},
		}
		js, pdiags := config.DecodePluginConfig(p, s)
		diags = append(diags, pdiags...)
		if js != nil {
			fmt.Printf("configure %s with %s\n", p.Name, js)
		}
	}
	if diags.HasErrors() {
		_ = config.FormatDiagnostics(os.Stdout, diags, cfg.Files())
	}
	// Output:
	// Error: Missing required argument in plugin "tg"
	//
	//   on testdata/example.hcl line 4, in plugin "tg":
	//    4:   config {
	//
	// The argument "token" is required, but no definition was found.
	//
	//   -> testdata/example.hcl:4:10
	//
	// Error: Unsupported argument in plugin "tg"
	//
	//   on testdata/example.hcl line 5:
	//   (source not shown: it may contain a sensitive value)
	//
	// An argument named "tokn" is not expected here. Did you mean "token"?
	//
	//   -> testdata/example.hcl:5:5
	//
	// 2 errors
}
