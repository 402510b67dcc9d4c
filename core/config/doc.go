// Package config reads clawhost's HCL configuration file.
//
// Load decodes the host's own settings — data_dir, plugin_dir,
// log_level, log_format and the agent, access, admin, session, queue,
// messages and plugin blocks — into a Config, applies defaults, resolves
// relative paths against the directory of the file and checks cross-field
// rules. Every problem is collected into one hcl.Diagnostics with
// file:line:col, so a user sees all of them at once (FormatDiagnostics
// prints them with source snippets).
//
// Input is bounded: a file larger than MaxFileSize or nesting deeper than
// MaxNesting is refused with one diagnostic before the HCL parser, which
// recurses, sees it — a Go stack overflow cannot be recovered, and a SIGHUP
// must not kill the running host. FormatDiagnostics is linear in the
// diagnostics and the file.
//
// The config {} block of each plugin "<instance>" block is kept raw: its
// schema is only known once the plugin binary has been started and asked for
// it. DecodePluginConfig then decodes the block against that schema and
// returns the JSON object the host sends in Configure; Config.ProbePlugins
// says which plugins `clawhost validate` can still start for that when the
// file has errors. Plugin.Fingerprint lets a reload (SIGHUP) tell which
// instances changed without knowing the schema.
//
// Expressions may call env("NAME") or env("NAME", "default"), so secrets stay
// out of the file and plugins can be enabled from the environment:
//
//	plugin "tg" {
//	  source  = "telegram"
//	  enabled = env("TELEGRAM_BOT_TOKEN", "") != ""
//	  config {
//	    token = env("TELEGRAM_BOT_TOKEN")
//	  }
//	}
//
// Adding a block: write a struct with hcl tags and doc comments (the doc
// comments are the reference), add a pointer field with an hcl:"name,block"
// tag to Config, give its defaults in Default, and, if it has rules beyond
// types, give it a check(*checker) method and call it from Config.check.
//
// The package is a leaf of core: it imports the sdk's schema types and the
// HCL libraries, nothing else from clawhost.
package config
