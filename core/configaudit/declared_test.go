package configaudit

import (
	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/pluginprobe"
)

// bundledDeclared is what the bundled plugins these tests configure
// declare of themselves, by source (their descriptions and schemas; the
// web chat's is checked against its schema in plugins/webchat): the web
// chat serves people on its listen attribute, 127.0.0.1:8790 unless the
// block says otherwise, and asks them for a token; ping and the hooks are no channels.
var bundledDeclared = map[string]pluginprobe.Declared{
	"webchat":         {Channel: true, Listen: "listen", ListenDefault: "127.0.0.1:8790", ListenToken: true},
	"telegram":        {Channel: true},
	"discord":         {Channel: true},
	"ping":            {},
	"clock-hook":      {},
	"transcribe-hook": {},
}

// bundled declares for cfg's plugins what bundledDeclared says of their
// sources; any other plugin declares nothing (it could not be asked).
func bundled(cfg *config.Config) map[string]pluginprobe.Declared {
	out := map[string]pluginprobe.Declared{}
	for _, p := range cfg.Plugins {
		if d, ok := bundledDeclared[p.Source]; ok {
			out[p.Name] = d
		}
	}
	return out
}
