// Package slack is clawhost's Slack channel: a bot that talks to the agent
// in direct messages, channels, private channels and threads, built on
// github.com/slack-go/slack (Web API, Block Kit, Socket Mode).
//
// # Configuration
//
//	plugin "sl" {
//	  source = "slack"
//	  config {
//	    bot_token = env("SLACK_BOT_TOKEN")   # xoxb-…
//	    app_token = env("SLACK_APP_TOKEN")   # xapp-…, connections:write
//	    # mode = "events"; signing_secret = env("SLACK_SIGNING_SECRET")
//	  }
//	}
//
// See Schema for every attribute and docs/slack.md for the app manifest.
//
// # Inbound
//
// Events arrive over Socket Mode (slack-go's socketmode client: it opens
// the connection with apps.connections.open, reconnects with backoff and
// follows Slack's disconnect requests) or, with mode = "events", as signed
// HTTP requests. A DM (channel_type im) is ChatDirect with the D… channel
// as chat id; channels and group DMs are ChatGroup; a thread reply has the
// thread's ts as ThreadID, so each thread is its own session. A message
// mentions the bot when it names it (<@U…>, or an app_mention event) or
// is written in a thread the bot answered in (kept in the data directory,
// bounded: threads.go); Slack's control sequences
// become readable text (@name, #channel, "label (url)"), and CommandText
// drops the bot's mention. Bots', the bot's own, edited, deleted and
// system messages are not delivered. Shared files are Media whose Ref is
// url_private_download, fetched with the bot token.
//
// # Nothing lost
//
// An envelope is acknowledged only once the host stored what it carries
// (inbox.Deliver returned); one the plugin did not acknowledge — it was
// killed, the host did not take it — Slack sends again, on the next
// connection, and the host drops duplicates. Button presses and slash
// commands must be acknowledged within 3 s: they are acknowledged when
// stored or at 2.5 s, whichever comes first (Slack does not send those
// again, so a press during a plugin crash is lost; the presser sees it
// fail and presses again).
//
// # Outbound
//
// Text is mrkdwn (markup.Mrkdwn) of at most 4000 UTF-16 units (Slack's
// practical size; it takes 40,000), posted with chat.postMessage into the
// thread asked for; a user id as chat posts in the bot's DM with them
// (DirectToSender). Edits are chat.update; reactions reactions.add and
// .remove with Slack's emoji names; files the three-step external upload.
// Buttons are a Block Kit actions block under the text (in section
// blocks); an edit sets them, none clears them. A 429 becomes
// rate_limited with Slack's Retry-After; slack-go neither sleeps nor
// retries. Errors map to the sdk's codes in mapErr.
package slack
