package pluginhost

import "github.com/clawhost/clawhost/core/internal/envfilter"

// inheritedEnv names the host variables every plugin inherits, when set:
// what any program needs to find executables, its home and temporary
// directory, who it runs as, how to format text and time. Nothing else of
// the host's environment reaches a plugin: TELEGRAM_BOT_TOKEN and any other
// secret of the host stays out of /proc/<pid>/environ of every plugin,
// third-party ones included. A plugin gets its secrets through its config
// block (sensitive attributes) and other variables through the block's env
// attribute (Spec.Env).
// LC_* are the locale categories (LC_ALL, LC_CTYPE, ...).
var inheritedEnv = []string{"PATH", "HOME", "TMPDIR", "USER", "LOGNAME", "LANG", "LC_*", "TZ"}

// pluginDefaults are set in every plugin's environment unless the plugin
// block's env sets them. GOMAXPROCS=1: a channel plugin translates
// between a platform's API and the host, I/O with little CPU, and each
// processor the Go runtime keeps costs an idle process memory it never
// returns (its caches, the threads that run it, their stacks): 0.2–0.3 MB
// less per plugin on a 2-core machine, more on a larger one. A plugin
// that needs more cores sets env = { GOMAXPROCS = "4" } in its block;
// Go's runtime reads the variable at start, other languages ignore it.
var pluginDefaults = []string{"GOMAXPROCS=1"}

// pluginEnv builds a plugin's environment from, in order of precedence
// (exec uses the last value of a duplicated name):
//   - own: the host's own variables — go-plugin's handshake (magic cookie,
//     protocol versions, ports, socket directory) and the launch's secret
//     (pluginclient.EnvSecret; the template cmd go-plugin hands the runner
//     carries them, and nothing else since the client is configured with
//     SkipHostEnv) and the sdk's (sdk.EnvLogLevel). They come last so a
//     configured env cannot break the handshake or replace the secret;
//     none of them is logged;
//   - extra: the plugin block's env attribute ("NAME=value");
//   - pluginDefaults;
//   - the variables of host named by inheritedEnv.
func pluginEnv(host, extra, own []string) []string {
	out := envfilter.Keep(host, inheritedEnv...)
	out = append(out, pluginDefaults...)
	out = append(out, extra...)
	return append(out, own...)
}
