// Package pluginprobetest gives a test's configuration what its plugins
// would declare of themselves (pluginprobe.Declared) without starting them:
// the audits' tests (core/configaudit, core/sandboxreach) use it in place
// of pluginprobe.Declarations, which asks each plugin in a process.
package pluginprobetest

import (
	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/pluginprobe"
)

// Bundled is what the bundled plugins the tests configure declare of
// themselves, by source (their descriptions and schemas; the web chat's is
// checked against its schema in plugins/webchat): the web chat serves
// people on its listen attribute, 127.0.0.1:8790 unless the block says
// otherwise, and asks them for a token; ping and the hooks are no channels.
// "mychat" stands for a third party's chat page, its address under a name
// of its own.
var Bundled = map[string]pluginprobe.Declared{
	"webchat":         {Channel: true, Listen: "listen", ListenDefault: "127.0.0.1:8790", ListenToken: true},
	"telegram":        {Channel: true},
	"discord":         {Channel: true},
	"ping":            {},
	"clock-hook":      {},
	"transcribe-hook": {},
	"mychat":          {Channel: true, Listen: "addr", ListenDefault: "127.0.0.1:7000"},
}

// Declarations declares for cfg's plugins, by instance, what Bundled says
// of their sources; any other plugin declares nothing (as one that could
// not be asked).
func Declarations(cfg *config.Config) map[string]pluginprobe.Declared {
	out := map[string]pluginprobe.Declared{}
	for _, p := range cfg.Plugins {
		if d, ok := Bundled[p.Source]; ok {
			out[p.Name] = d
		}
	}
	return out
}
