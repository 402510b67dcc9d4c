// Package telegram is clawhost's Telegram channel: an adapter between the
// Telegram Bot API and the clawhost host, served as a plugin binary by
// cmd/clawhost-telegram. It uses github.com/go-telegram-bot-api/telegram-bot-api/v5
// only for its MakeRequest/UploadFiles calls and message types; the update
// loop, context handling, forum topics and newer send options are its own.
//
// # Configuration
//
//	plugin "tg" {
//	  source = "telegram"
//	  config {
//	    token        = env("TELEGRAM_BOT_TOKEN")
//	    api_endpoint = "https://api.telegram.org/bot%s/%s" # or a self-hosted Bot API server
//	    # poll_timeout = 30, text_limit = 4096, disable_web_page_preview = false,
//	    # max_download_bytes = 20971520, file_endpoint = (derived from api_endpoint)
//	    # webhook_listen = "127.0.0.1:8443", webhook_url = "https://…", webhook_secret = "…"
//	  }
//	}
//
// The token is never logged and is removed from every error text (the
// request URL contains it).
//
// # Receiving
//
// By default the plugin long-polls getUpdates. The offset advances past a
// batch only after inbox.Deliver returned nil, i.e. after the host stored
// the messages durably; until then Telegram keeps them and sends them again,
// so neither a plugin nor a host crash loses a message (the host may see one
// twice and dedupes). With webhook_listen set, updates arrive by webhook
// instead and are answered 200 only after Deliver returned nil.
//
// Startup needs no network: Configure only validates, and Run calls getMe
// (for the bot's username, needed for mention detection) with backoff in
// the background. Run never gives up on Bot API failures: network errors
// and 5xx back off up to 30s, 409 Conflict (a second poller with the same
// token, or a webhook still set) up to 1m, and 401 Unauthorized up to 10m,
// each logged as a clear error. A rejected token is fixed only by editing
// the config, which restarts the plugin anyway; returning an error instead
// would make the host restart the plugin in a loop that hammers Telegram.
//
// # Mapping
//
// Private chats are ChatDirect, groups and supergroups ChatGroup, channel
// posts ChatChannel. A message in a forum topic (is_topic_message) carries
// the topic as ThreadID, and sends with that ThreadID go back into the
// topic. WasMentioned is set for an @username mention of the bot, a
// text_mention of the bot, a reply to one of the bot's messages, and a
// "/cmd@botusername" command, whose CommandText is "/cmd …" without the
// mention. A command addressed to another bot ("/cmd@otherbot") is not
// delivered. Captions are the text of media messages; messages without
// text, caption or media (joins, pins, …) and unknown update kinds are
// skipped, and an update that does not decode is logged and skipped.
// Edited messages and edited channel posts are delivered with Edited set;
// what an edit means is the host's decision.
//
// Inbound photos (the largest size), documents, voice notes, audio, video,
// video notes and stickers become channel.Media with Ref = file_id;
// DownloadMedia fetches them with getFile and the file endpoint.
//
// # Sending
//
// Markdown is converted to Telegram HTML (see MarkdownToHTML). When Telegram
// answers 400 "can't parse entities", or the converted text would be longer
// than the limit, the original text is sent without parse_mode. Failures are
// *channel.Error: 429 → rate_limited with RetryAfter from
// parameters.retry_after, "message is too long" → message_too_long,
// "chat not found" → chat_not_found, 403 → forbidden, 401 → unauthorized,
// other 400 → invalid_request, 5xx and network errors → unavailable.
//
// Left out: reactions (Reactor), albums (media groups), inline keyboards,
// and files of a self-hosted Bot API server running with --local (whose
// getFile answers local paths).
package telegram
