// Package mcpchannel is clawhost's bridge to Claude Code channel servers,
// served as the plugin binary cmd/clawhost-mcp-channel (source =
// "mcp-channel"). A channel server is an MCP server on stdio that declares
// the experimental claude/channel capability, pushes each chat message as a
// notifications/claude/channel (content, and meta: chat_id, message_id,
// user, user_id, ts, attachment paths) and answers through its reply,
// react and edit_message tools. The plugin runs one as its child and is
// its MCP client, on the official go-sdk, in Claude Code's place; each chat
// then becomes a clawhost conversation with its own session.
//
// # Configuration
//
//	plugin "tgc" {
//	  source = "mcp-channel"
//	  config {
//	    command = ["bun", "run", "--cwd", "/path/to/telegram", "--shell=bun", "--silent", "start"]
//	    # or plugin_path = "/path/to/plugin" (its .mcp.json), server = "name"
//	    env = { TELEGRAM_BOT_TOKEN = env("TELEGRAM_BOT_TOKEN") }
//	  }
//	}
//
// # The wire
//
// The go-sdk client answers methods it does not know with an error and
// never shows them to its user, and the channel contract's notifications
// are not MCP's: the plugin taps the connection (server.go, tap) and takes
// every notifications/claude/... off the stream before the client reads
// it. The session is pinned to MCP 2025-11-25, which Claude Code's
// TypeScript servers answer.
//
// # Delivery
//
// A server has no acknowledgement and no redelivery: a message it pushed
// before clawhost journaled it (the plugin or the host died in between) is
// lost. From the journal on the host's guarantees hold. Outbound, the host
// records each call in its outbox before it is made; Send maps the outcome
// (see Send): a call never written (no server running) is retried, a call
// written and unanswered (the server died, the pipe broke) is
// channel.CodeUncertain and never repeated, and the host tells the chat a
// part may be missing. Edits and reactions are idempotent and retried.
//
// # Permission relay
//
// Opt-in with permission_relay_from: see relay.go.
//
// # Supervision
//
// Configure starts the server (bounded by start_timeout): its tools decide
// the capabilities. Run restarts a server that exits, after 1 s doubling
// to 30 s (reset after a minute of running), and Sends wait up to 10 s for
// the next one. The server runs in a process group of its own, which is
// killed when it exits; on Linux it gets SIGKILL when the plugin dies.
// Its environment is the plugin's (PATH, HOME, the locale: what the host
// gives every plugin) without the host's protocol variables, plus env.
package mcpchannel
