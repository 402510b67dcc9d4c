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
// batch only after channel.Offer returned nil, i.e. after the host stored
// the messages durably; until then Telegram keeps them and sends them again,
// so neither a plugin nor a host crash loses a message (the host may see one
// twice and dedupes). With webhook_listen set, updates arrive by webhook
// instead and are answered 200 only after Offer returned nil (503 at once
// when the host cannot store them). The
// webhook_secret (at least 16 characters) is compared in constant time; an
// address that sends 10 wrong ones within a minute is answered 429 for 5
// minutes.
//
// Startup needs no network: Configure only validates, and Run calls getMe
// (for the bot's username, needed for mention detection) with backoff in
// the background before it starts polling; until then updates simply wait
// at Telegram. Run never gives up on Bot API failures: network errors and
// 5xx back off from 1s up to 30s, 429 waits retry_after, 409 Conflict (a
// second poller with the same token, or a webhook still set) backs off from
// 5s up to 1m, and 401 Unauthorized (also 404, a malformed token) from 10s
// up to 10m, each logged as a clear error that names the cause but never
// the token. Decision on 401: back off in the plugin rather than return an
// error from Run. A rejected token is fixed only by editing the config,
// which restarts the plugin anyway; returning an error would make the host
// restart the plugin every ≤30s, each start calling getMe again. With
// poll_timeout = 0 (short polling) an empty answer is followed by a 1s
// pause, so the loop never spins.
//
// # Mapping
//
// Private chats are ChatDirect, groups and supergroups ChatGroup, channel
// posts ChatChannel. A message in a forum topic (is_topic_message) carries
// the topic as ThreadID, and sends with that ThreadID go back into the
// topic. WasMentioned is set for an @username mention of the bot, a
// text_mention of the bot, a reply to one of the bot's messages, and a
// "/cmd@botusername" command, whose CommandText is "/cmd …" without the
// mention. Decision on "/cmd@otherbot": such a message is not delivered at
// all (the offset still moves past it). Delivering it with WasMentioned
// false is not enough, because the host's command parser strips any "@bot"
// suffix and would run "/cmd" as if it were addressed to us. Captions are
// the text of media messages (Text = caption); messages without text,
// caption or media (joins, pins, empty texts, …) and update kinds other
// than (edited) messages, channel posts and button presses (see Buttons)
// are skipped with a debug log line naming the update's kind; unknown
// fields are ignored; an update that does not decode at all is logged as a
// warning and skipped. Decision on edits: edited messages and edited
// channel posts are delivered with Edited set (and the edit time as
// Timestamp); what an edit means is the host's decision (it ignores them).
//
// Inbound photos (the largest size), documents, voice notes, audio, video,
// video notes and stickers become channel.Media with Ref = file_id;
// DownloadMedia fetches them with getFile and the file endpoint, refusing
// with message_too_long files over the smaller of DownloadRequest.MaxBytes
// and max_download_bytes: before the download from getFile's file_size or
// the response's Content-Length, and while streaming otherwise. The file
// endpoint is file_endpoint when set; otherwise it is derived from
// api_endpoint by replacing its "/bot%s/%s" with "/file/bot%s/%s" (for the
// default endpoint "https://api.telegram.org/file/bot<token>/<file_path>",
// the layout of self-hosted telegram-bot-api servers too); an api_endpoint
// without that suffix needs an explicit file_endpoint.
//
// # Sending
//
// Markdown is rendered to Telegram HTML by the markup module
// (markup.HTMLSubset, declared as channel.MarkupHTMLSubset); the host
// splits replies so that each message's visible text fits. Decision on
// refused markup: the plain fallback happens inside the plugin, so the host
// never sees formatting_rejected. When Telegram answers 400 "can't parse
// entities", the visible text is sent without parse_mode. The plugin never
// sends more than the limit (4096 UTF-16 units, or text_limit), counting
// the visible text of markdown: longer text is refused with
// message_too_long. Replies use reply_parameters, topics
// message_thread_id, and disable_web_page_preview (or
// SendRequest.DisableLinkPreview) link_preview_options.
//
// Media of a SendRequest are multipart uploads of the local files: images
// with sendPhoto, other kinds with sendDocument. The text is the caption of
// the first file when it fits a caption (1024 units) and that file has no
// caption of its own; otherwise it is sent as a message before the files.
// Typing is sendChatAction "typing" (SetTyping with On=false does nothing:
// Telegram clears it by itself); Edit is editMessageText, where "message
// is not modified" counts as success and other failures are typed errors;
// SetCommands is setMyCommands with names lowercased ('-' as '_') and entries Telegram
// would refuse skipped with a log line; SetChatCommands the same with the
// scope BotCommandScopeChat of that chat.
//
// Failures are *channel.Error: 429 → rate_limited with RetryAfter from
// parameters.retry_after, "message is too long" → message_too_long,
// "chat not found" → chat_not_found, 403 → forbidden, 401 → unauthorized,
// other 400 → invalid_request, 5xx and network errors → unavailable.
//
// # Buttons
//
// Capabilities.Buttons is set. SendRequest.Buttons become an inline
// keyboard (reply_markup) under the last message a Send posts (the text
// message, or the last file, or the message carrying that file's too long
// caption); a button's ID is its callback_data, so an ID must be 1-64
// bytes and a label non-blank, or Send fails with invalid_request before
// any request. EditRequest.Buttons are the edit's reply_markup (a turn
// card keeps its Stop button as it is edited); an edit without buttons
// sends none, so Telegram removes the keyboard.
//
// A press arrives as a callback_query update (requested in allowed_updates
// of getUpdates and setWebhook) and is delivered as an InboundMessage with
// Action{ButtonID: callback_data, MessageID: the message's id}; its chat,
// topic and title are those of the message the button was under, Sender
// is who pressed, MessageID is "cb:<callback query id>" (unique per
// press, the host's dedupe key), Text is the button's label as the
// message's keyboard shows it (the data when the keyboard is not sent
// along), Timestamp the time of receipt (Telegram gives none), and
// WasMentioned is set. Callback queries without a message (inline mode) or
// without data (games) are skipped with a debug line, the offset moving
// past them. Once Deliver returned nil for the batch (or the webhook
// update) holding a press, the plugin answers it with answerCallbackQuery,
// without text, which stops the spinner on the button; a failed answer is
// logged as a warning and not retried (the spinner stops by itself after a
// while). A press redelivered after a crash is answered again; Telegram
// refuses the second answer, which is only logged.
//
// Reactions (channel.Reactor): setMessageReaction with one emoji of
// Telegram's reaction set (another is refused before the call; ❤️ is sent
// as ❤); the bot's reaction replaces its earlier one, Remove clears it.
//
// Left out: albums (media groups), and files of a self-hosted Bot API server running with --local (whose
// getFile answers local paths).
package telegram
