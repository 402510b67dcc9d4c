// Package discord is clawhost's Discord channel: a bot that talks to the
// agent in direct messages, server channels and threads, built on
// github.com/bwmarrin/discordgo (REST and event types) and its own small
// gateway client.
//
// # Configuration
//
//	plugin "dc" {
//	  source = "discord"
//	  config {
//	    token = env("DISCORD_BOT_TOKEN")
//	    # message_content         = true   # false: mention-only mode
//	    # guilds                  = ["123456789012345678"]  # slash commands per server
//	    # thread_per_conversation = false
//	  }
//	}
//
// See Schema for every attribute.
//
// # Inbound
//
// Direct messages are ChatDirect with the DM channel as chat id; server
// channels are ChatGroup; in a thread the chat is the parent channel and
// ThreadID the thread (replies go to the thread). A message mentions the
// bot when it names the bot (<@id>, <@!id>), its managed role, replies to
// one of its messages, or is written in a thread the bot opened; the
// mention is stripped from CommandText. The bot's own messages, other
// bots', webhooks', system messages and edits are not delivered.
// Attachments (voice messages as MediaVoice) are downloaded by URL.
//
// # Nothing missed, nothing lost
//
// The plugin keeps a state file in its data dir (0600): the gateway
// session id, resume URL and the sequence number of the last dispatch
// handled, the messages the host has not yet stored, and the newest
// message id per active channel. A message is written there before its
// sequence number counts as handled and removed only when the host stored
// it (inbox.Deliver returned). So after op 7, a dropped connection or a
// restart of the plugin (even kill -9) it RESUMEs and Discord replays what
// came after; messages saved but not stored are delivered again. When the
// session cannot be resumed (Discord forgets it after a while) the plugin
// identifies anew and reads each channel active in the last week back from
// its history after the newest id seen. The host drops duplicates.
//
// # Connection
//
// Intents are explicit: guilds, guild messages, direct messages and, unless
// message_content = false, the privileged Message Content intent. Reconnects
// back off exponentially (the first after a healthy session is immediate)
// and IDENTIFY is spaced at least 5 s apart. Close codes only a person can
// fix (4004 token rejected, 4010–4014, 4014 = Message Content intent not
// enabled) stop reconnecting and report needs_attention with what to do;
// Retry (the status page's button) tries again.
//
// # Outbound
//
// Messages are at most 2000 characters and, softly, 17 lines (the host
// splits); markdown is Discord's, with tables rendered as code blocks;
// allowed_mentions is empty so the agent never pings; replies reference the
// triggering message with fail_if_not_exists = false. A 429 becomes
// rate_limited with the retry_after Discord named (discordgo does not
// sleep). Typing is shown while a turn runs, drafts are edited in place,
// files go out as attachments. Reactions (channel.Reactor) are the bot's
// own (PUT …/reactions/{emoji}/@me), in a thread on the thread's channel;
// Discord keeps several, and Remove takes off the one named.
//
// # Slash commands
//
// The host's command menu is registered as application commands (per guild
// in guilds, else globally), each with an optional "args" text option. An
// interaction is deferred at once and its answer replaces "thinking…",
// further messages are follow-ups through the interaction webhook; after
// its 15-minute token expired the answer is posted in the channel.
//
// # Buttons
//
// Buttons the host puts on a message (tool approvals, pickers) are action
// rows of secondary buttons under it, with the host's id as custom_id, on
// channel messages and on answers to slash commands alike; more than 5
// rows or 5 in a row, an id that is empty, over 100 characters or used
// twice, and a blank label or one over 80 are refused (invalid_request)
// before any request. An edit sets a message's buttons to its own: none
// clears them, the same keep them (a turn card's Stop button).
//
// A press (a message-component interaction) is written to the state file
// like a message — MessageID "ix:<interaction id>", the button's label as
// text, the presser as sender, the button and its message as the Action —
// and acknowledged with a deferred update (type 6, nothing visible) once
// the host stored it. Discord wants that answer within 3 s, so a press the
// host has not stored after 2.5 s is acknowledged anyway and delivered
// when the host takes it; a press still waiting when the plugin stops is
// acknowledged then (it is in the state file). A failed acknowledgement is
// logged, the press counts all the same.
//
// # Threads per conversation
//
// With thread_per_conversation = true a mention in a server channel opens
// a thread on the message; the conversation continues there, one session
// per thread, and messages in the thread need no mention.
package discord
