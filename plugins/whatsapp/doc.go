// Package whatsapp is clawhost's WhatsApp channel: the agent talks through
// a WhatsApp account that this plugin joins as a linked device (like
// WhatsApp Web), built on go.mau.fi/whatsmeow with its SQLite device store
// in the plugin's data dir.
//
// # Configuration
//
//	plugin "wa" {
//	  source = "whatsapp"
//	  config {
//	    # pair_phone     = "+15551234567"   # link with a code instead of a QR code
//	    # self_chat      = true             # personal number: "Message yourself" talks to the agent
//	    # pacing         = { min = "1s", max = "3s" }
//	    # backlog_margin = "30s"
//	  }
//	}
//
// See Schema for every attribute.
//
// # Linking
//
// An unlinked plugin reports needs_attention with a QR code (status page,
// `clawhost status`, and its log): on the phone, WhatsApp → Settings →
// Linked devices → Link a device. Codes rotate (the first is valid 60 s,
// each next one 20 s); when none was scanned the plugin stops asking
// WhatsApp for codes and waits for the operator's retry ("Show a new QR
// code", `clawhost retry <instance>`). With pair_phone set, a pairing code
// is shown instead, typed on the phone under "Link with phone number
// instead". The link lives in whatsapp.db (0600) in the data dir and
// survives restarts.
//
// # Connection
//
// whatsmeow reconnects by itself after a dropped connection (the plugin
// reports degraded meanwhile). Events only a person can fix end the
// connection and report needs_attention with what to do and a retry:
// LoggedOut (the device was removed on the phone: retry shows a new QR
// code for a new device), StreamReplaced (another session took over),
// TemporaryBan (wait until the time shown), ClientOutdated (update the
// plugin or set web_version). The plugin never crash-loops and never asks
// for codes by itself after that.
//
// # Inbound
//
// Direct chats and groups. WhatsApp addresses people by phone number or by
// LID; a sender's id is "+<phone number>" whenever the number is known
// (from the message or whatsmeow's LID map) with the LID ("…@lid") as an
// alternate id, so allow_from = ["wa:+15551234567"] admits a person who
// writes LID-addressed. A group message mentions the bot when it
// @-mentions the account (by number or LID) or quotes one of its messages.
// Not delivered: the sender-key distribution that precedes group messages,
// status broadcasts and newsletters, protocol messages, history sync
// (never downloaded), edits, reactions and other content without text or
// media, the plugin's own sent messages, the account's own messages (but
// the self chat with self_chat = true), and a backlog: messages older than
// the connection time minus backlog_margin. Images, videos, documents,
// stickers, audio and voice notes (MediaVoice) are fetched through
// DownloadMedia.
//
// Delivery is at least once: the event handler returns success, and
// whatsmeow sends the receipt (SynchronousAck), only after the host stored
// the message; a message the host did not store is delivered again by
// WhatsApp after a reconnect, from whatsmeow's decrypted-event buffer.
//
// # Outbound
//
// Markdown becomes WhatsApp's formatting (the markup module's Lightweight
// flavour, declared as channel.MarkupLightweight); texts are at most 4000
// UTF-16 units once rendered (the host splits by that measure); the first message quotes the triggering one;
// typing is the chat's "composing" presence; files go out as images,
// videos, audio, voice notes or documents. Every message waits its turn in
// the pacing (a random pause between sends): WhatsApp bans numbers that
// send like machines.
package whatsapp
