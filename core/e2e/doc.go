// Package e2e holds clawhost's end-to-end tests and load benchmarks: the
// real clawhost binary and its plugin binaries (make build's bin/, or
// CLAWHOST_BIN_DIR) against fake platform servers on loopback (Telegram's
// Bot API, Discord's gateway and REST, a WhatsApp server driving the real
// whatsmeow, the web chat in a headless Chromium), a fake claude or the
// real Claude Code CLI against the fake Anthropic API, and PostgreSQL from
// the machine's packages for the several-host tests. It has no code of its
// own; the process-level tests left core/cmd/clawhost, whose main only calls
// cli.Main.
package e2e
