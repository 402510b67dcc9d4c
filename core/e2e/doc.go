// Package e2e holds clawhost's end-to-end harness, tests and load
// benchmarks: the real clawhost binary and its plugin binaries (make
// build's bin/, or CLAWHOST_BIN_DIR) against fake platform servers on
// loopback (Telegram's Bot API, Discord's gateway and REST, a WhatsApp
// server driving the real whatsmeow, the web chat in a headless Chromium),
// a fake claude or the real Claude Code CLI against the fake Anthropic API,
// and PostgreSQL from the machine's packages for the several-host tests.
//
// The harness is one builder: a test describes the host it needs as a
// Host (agents, access, admin, messages, storage, plugins) and Start
// writes its config.hcl and runs the binary on it:
//
//	d := e2e.Start(t, e2e.Host{
//		Access:  e2e.Attrs{"dm_policy": "allowlist", "allow_from": []string{"lo:u1"}},
//		Plugins: []e2e.Plugin{{Name: "lo", Source: "loopback", Config: e2e.Attrs{"addr_file": addrFile}}},
//	})
//
// The default agent is the fake claude (the test binary itself); RealClaude
// points the block at the real CLI. core/chaos builds its hosts the same
// way.
package e2e
