package slack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slack-go/slack"

	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/status"
)

// Send implements channel.Channel: chat.postMessage into the chat (a
// channel, a DM, or a user id: Slack posts that in the bot's DM with the
// user), in ThreadID's thread when there is one; files are uploaded with
// files.getUploadURLExternal + files.completeUploadExternal into the same
// place, the text as the first file's comment when it has no text of its
// own. Buttons become a Block Kit actions block under the text. Slack
// has no reply-to-a-message outside threads: ReplyToMessageID is not
// shown. Mentions in the text never ping: <, > and & are escaped.
func (a *Adapter) Send(ctx context.Context, req channel.SendRequest) (channel.SendResponse, error) {
	if a.api == nil {
		return channel.SendResponse{}, channel.Errorf(channel.CodeInternal, "send before configure")
	}
	if req.ChatID == "" {
		return channel.SendResponse{}, channel.Errorf(channel.CodeInvalidRequest, "no chat")
	}
	text := render(req.Text, req.Format, req.Rendered)
	if err := fits(text); err != nil {
		return channel.SendResponse{}, err
	}
	blocks, err := messageBlocks(text, req.Buttons)
	if err != nil {
		return channel.SendResponse{}, err
	}
	d := callTimeout
	if len(req.Media) > 0 {
		d = uploadTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	target := a.resolve(req.ChatID)
	var ids []string
	comment := ""
	if len(req.Media) > 0 && strings.TrimSpace(text) == "" {
		var caps []string
		for _, m := range req.Media {
			if m.Caption != "" {
				caps = append(caps, render(m.Caption, req.Format, m.CaptionRendered))
			}
		}
		comment = strings.Join(caps, "\n")
	}
	for i, m := range req.Media {
		c := ""
		if i == 0 {
			c = comment
		}
		id, err := a.upload(ctx, target, req.ThreadID, m, c)
		if err != nil {
			return channel.SendResponse{MessageIDs: ids}, err
		}
		ids = append(ids, id)
	}
	if strings.TrimSpace(text) == "" && blocks == nil {
		if len(ids) == 0 {
			return channel.SendResponse{}, channel.Errorf(channel.CodeInvalidRequest, "nothing to send")
		}
		return channel.SendResponse{MessageIDs: ids}, nil
	}
	opts := []slack.MsgOption{slack.MsgOptionText(text, false)}
	if req.ThreadID != "" {
		opts = append(opts, slack.MsgOptionTS(req.ThreadID))
	}
	if blocks != nil {
		opts = append(opts, slack.MsgOptionBlocks(blocks...))
	}
	if req.DisableLinkPreview {
		opts = append(opts, slack.MsgOptionDisableLinkUnfurl(), slack.MsgOptionDisableMediaUnfurl())
	}
	// Kept before the post: a plugin killed between Slack's answer and this line
	// would forget a thread it did answer in (the reply there then needs a mention).
	a.noteThread(req.ChatID, req.ThreadID)
	tctx, wrote := traceWrites(ctx)
	ch, ts, err := a.api.PostMessageContext(tctx, target, opts...)
	if err != nil {
		a.noteScope("chat.postMessage", err)
		return channel.SendResponse{MessageIDs: ids}, sendErr(err, wrote)
	}
	a.noteScope("chat.postMessage", nil)
	if ch != "" && ch != target {
		a.mu.Lock()
		a.dm[req.ChatID] = ch
		a.mu.Unlock()
	}
	if ch != "" && ch != req.ChatID {
		a.noteThread(ch, req.ThreadID)
	}
	return channel.SendResponse{MessageIDs: append(ids, ts)}, nil
}

// noteScope keeps the status page saying which call Slack refuses for a
// scope the app lacks (missing_scope), naming the scope and what to do:
// the channel works without what the scope carries (degraded); the next
// call of that kind Slack takes (the app reinstalled with the scope)
// clears it, and with no call refused any more the plugin is ready again.
// err nil is a call that worked.
func (a *Adapter) noteScope(call string, err error) {
	var se slack.SlackErrorResponse
	missing := errors.As(err, &se) && se.Err == "missing_scope"
	a.mu.Lock()
	defer a.mu.Unlock()
	if !missing {
		if err == nil && a.scopeless[call] != "" {
			delete(a.scopeless, call)
			if len(a.scopeless) == 0 {
				a.status.Report(status.Status{State: status.Ready})
			}
		}
		return
	}
	scope := cmpOr(se.Needed, "a scope")
	if a.scopeless[call] == scope {
		return
	}
	a.scopeless[call] = scope
	a.log.Warn("slack refused a call for a missing scope", "call", call, "scope", scope)
	a.status.Report(status.Status{State: status.Degraded,
		Message: fmt.Sprintf("Slack refuses %s: the app lacks the scope %s (missing_scope); add it under OAuth & Permissions (or paste the manifest of docs/slack.md) and reinstall the app", call, scope)})
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// resolve is where a message for chatID goes: the DM channel Slack named
// for a user id once a Send posted there, else chatID itself.
func (a *Adapter) resolve(chatID string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if ch, ok := a.dm[chatID]; ok {
		return ch
	}
	return chatID
}

// upload posts one file; its id is the message id returned (Slack shares
// the file in a message of its own whose ts it does not return).
func (a *Adapter) upload(ctx context.Context, target, threadTS string, m channel.OutboundMedia, comment string) (string, error) {
	f, err := os.Open(m.Path)
	if err != nil {
		return "", channel.Errorf(channel.CodeInvalidRequest, "open media: %v", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", channel.Errorf(channel.CodeInvalidRequest, "open media: %v", err)
	}
	if st.Size() == 0 {
		return "", channel.Errorf(channel.CodeInvalidRequest, "media %s is empty; Slack takes no empty files", filepath.Base(m.Path))
	}
	if st.Size() > MaxFileBytes {
		return "", channel.Errorf(channel.CodeMessageTooLong, "file of %d bytes exceeds %d", st.Size(), MaxFileBytes)
	}
	name := filepath.Base(m.Path)
	tctx, wrote := traceWrites(ctx)
	sum, err := a.api.UploadFileContext(tctx, slack.UploadFileParameters{
		Reader: f, FileSize: int(st.Size()), Filename: name, Title: name,
		Channel: target, ThreadTimestamp: threadTS, InitialComment: comment,
	})
	a.noteScope("files.upload", err)
	if err != nil {
		return "", sendErr(err, wrote)
	}
	return sum.ID, nil
}

// Edit implements channel.Editor (live drafts, turn cards): chat.update.
// The message's buttons become the request's: none removes them.
func (a *Adapter) Edit(ctx context.Context, req channel.EditRequest) error {
	if a.api == nil {
		return channel.Errorf(channel.CodeInternal, "edit before configure")
	}
	text := render(req.Text, req.Format, req.Rendered)
	if err := fits(text); err != nil {
		return err
	}
	blocks, err := messageBlocks(text, req.Buttons)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	// Without buttons an empty block list clears the old ones.
	_, _, _, err = a.api.UpdateMessageContext(ctx, a.resolve(req.ChatID), req.MessageID,
		slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...))
	a.noteScope("chat.update", err)
	return mapErr(err)
}

// React implements channel.Reactor: the bot's reaction on a message
// (reactions.add / reactions.remove). Slack names emoji: the common ones
// are translated ("👀" is "eyes"), a name (":eyes:", "eyes") is taken as it
// is. Remove without an emoji takes off the one the bot set last.
func (a *Adapter) React(ctx context.Context, req channel.ReactRequest) error {
	if a.api == nil {
		return channel.Errorf(channel.CodeInternal, "react before configure")
	}
	if req.ChatID == "" || req.MessageID == "" {
		return channel.Errorf(channel.CodeInvalidRequest, "a reaction needs a chat and a message")
	}
	target := a.resolve(req.ChatID)
	key := target + "/" + req.MessageID
	emoji := strings.TrimSpace(req.Emoji)
	if emoji == "" && req.Remove {
		a.mu.Lock()
		emoji = a.reacted[key]
		a.mu.Unlock()
		if emoji == "" {
			return nil
		}
	}
	name, ok := emojiName(emoji)
	if !ok {
		return channel.Errorf(channel.CodeInvalidRequest, "slack names reactions; %q is not one it knows here", emoji)
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	ref := slack.NewRefToMessage(target, req.MessageID)
	if req.Remove {
		err := a.api.RemoveReactionContext(ctx, name, ref)
		if code(err) == "no_reaction" {
			err = nil
		}
		if err == nil {
			a.mu.Lock()
			delete(a.reacted, key)
			a.mu.Unlock()
		}
		return mapErr(err)
	}
	err := a.api.AddReactionContext(ctx, name, ref)
	if code(err) == "already_reacted" {
		err = nil
	}
	a.noteScope("reactions.add", err)
	if err == nil {
		a.mu.Lock()
		if len(a.reacted) > 4096 {
			clear(a.reacted)
		}
		a.reacted[key] = name
		a.mu.Unlock()
	}
	return mapErr(err)
}

// emojiNames are Slack's names of the emoji the host and agents use most.
var emojiNames = map[string]string{
	"👀": "eyes", "✅": "white_check_mark", "✔️": "heavy_check_mark", "❌": "x", "👍": "+1", "👎": "-1",
	"⚠️": "warning", "⚠": "warning", "🎉": "tada", "❤️": "heart", "🔥": "fire", "😀": "grinning",
	"😂": "joy", "🤔": "thinking_face", "⏳": "hourglass_flowing_sand", "🙏": "pray", "👌": "ok_hand",
	"💯": "100", "🚀": "rocket", "📝": "memo", "🛑": "octagonal_sign", "⛔": "no_entry", "🤖": "robot_face",
	"💡": "bulb", "🐛": "bug", "✨": "sparkles", "👋": "wave", "😊": "blush", "🙂": "slightly_smiling_face",
}

// emojiNameRE is compiled on the first reaction: {1,100} makes a program
// of 100 copies of the class, ~0.1 MB an idle plugin need not keep.
var emojiNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9_+'-]{1,100}$`) })

// emojiName is Slack's name of emoji.
func emojiName(emoji string) (string, bool) {
	if n, ok := emojiNames[emoji]; ok {
		return n, true
	}
	if n, ok := emojiNames[strings.TrimSuffix(emoji, "\ufe0f")]; ok {
		return n, true
	}
	n := strings.Trim(emoji, ":")
	return n, emojiNameRE().MatchString(n)
}

// DownloadMedia implements channel.MediaDownloader: Ref is a file's
// url_private_download, fetched with the bot token (slack-go sends it
// only to Slack's hosts or the api_endpoint's).
func (a *Adapter) DownloadMedia(ctx context.Context, req channel.DownloadRequest) (io.ReadCloser, channel.MediaInfo, error) {
	u, err := url.Parse(req.Ref)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, channel.MediaInfo{}, channel.Errorf(channel.CodeInvalidRequest, "not a file url")
	}
	limit := req.MaxBytes
	if limit <= 0 || limit > int64(a.cfg.MaxDownloadBytes) {
		limit = int64(a.cfg.MaxDownloadBytes)
	}
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		defer cancel()
		w := &limitWriter{w: pw, limit: limit}
		err := a.api.GetFileContext(ctx, req.Ref, w)
		a.noteScope("files.download", err)
		if err != nil && !errors.Is(err, errTooLong) {
			err = mapErr(err)
		}
		pw.CloseWithError(err)
	}()
	// The first bytes (or the failure) decide whether the download works.
	br := &peekReader{r: pr, c: pr, cancel: cancel}
	if err := br.peek(); err != nil {
		return nil, channel.MediaInfo{}, err
	}
	return br, channel.MediaInfo{Size: -1}, nil
}

var errTooLong = errors.New("file too long")

// limitWriter fails once more than limit bytes were written.
type limitWriter struct {
	w     io.Writer
	n     int64
	limit int64
}

func (l *limitWriter) Write(p []byte) (int, error) {
	l.n += int64(len(p))
	if l.n > l.limit {
		return 0, channel.Errorf(channel.CodeMessageTooLong, "file exceeds %d bytes", l.limit)
	}
	return l.w.Write(p)
}

// peekReader reads one byte ahead so a download that fails at once fails
// DownloadMedia instead of the first Read.
type peekReader struct {
	r      io.Reader
	c      io.Closer
	cancel context.CancelFunc
	first  []byte
}

func (p *peekReader) peek() error {
	b := make([]byte, 1)
	n, err := io.ReadFull(p.r, b)
	if n == 1 {
		p.first = b
		return nil
	}
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return nil // an empty file
	}
	p.Close()
	var ce *channel.Error
	if errors.As(err, &ce) {
		return ce
	}
	return &channel.Error{Code: channel.CodeUnavailable, Message: "download file: " + errText(err)}
}

func (p *peekReader) Read(b []byte) (int, error) {
	if len(p.first) > 0 && len(b) > 0 {
		b[0] = p.first[0]
		p.first = nil
		return 1, nil
	}
	return p.r.Read(b)
}

func (p *peekReader) Close() error {
	p.cancel()
	return p.c.Close()
}

// render turns the host's text into mrkdwn: markdown as the host rendered
// it (pre, SendRequest.Rendered: markup.Mrkdwn; the host split the reply
// by that rendering's length); plain text, and markdown the host sent no
// rendering of (the plugin links no markdown parser), escaped (&, <, >) so
// that it shows as written.
func render(text string, format channel.Format, pre *channel.Rendered) string {
	if out, _, ok := pre.Of(channel.MarkupMrkdwn); ok && format == channel.FormatMarkdown {
		return out
	}
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(text)
}

// fits refuses a text over MaxTextLength UTF-16 units with
// CodeMessageTooLong, as the channel contract asks.
func fits(text string) error {
	if n := channel.TextLen(text, channel.LengthUTF16); n > MaxTextLength {
		return channel.Errorf(channel.CodeMessageTooLong, "text is %d UTF-16 units, the limit is %d", n, MaxTextLength)
	}
	return nil
}

// traceWrites returns ctx noting in wrote when a request made with it has
// been written to the connection.
func traceWrites(ctx context.Context) (context.Context, *atomic.Bool) {
	var wrote atomic.Bool
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { wrote.Store(true) }}), &wrote
}

// sendErr maps the error of a call that posts: a transport failure after
// the request was written (the answer lost) may have posted it, so it is
// uncertain — the host then does not send it again.
func sendErr(err error, wrote *atomic.Bool) error {
	var se slack.SlackErrorResponse
	var rl *slack.RateLimitedError
	var sc slack.StatusCodeError
	if err != nil && wrote.Load() && !errors.As(err, &se) && !errors.As(err, &rl) && !errors.As(err, &sc) && !errors.Is(err, context.Canceled) {
		return &channel.Error{Code: channel.CodeUncertain, Message: "slack request: " + transportText(err) + " (the request was sent; it may have been posted)"}
	}
	return mapErr(err)
}

// code is Slack's error string of err ("channel_not_found"), "" for none.
func code(err error) string {
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		return se.Err
	}
	return ""
}

// transportText is a transport error without the URL (which holds no
// token here, but file URLs name private files).
func transportText(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Op + ": " + ue.Err.Error()
	}
	return err.Error()
}

// mapErr turns a slack-go error into the sdk's typed error; nil stays nil.
// This is the one place where Slack's error strings become codes the host
// acts on.
func mapErr(err error) error {
	if err == nil {
		return nil
	}
	var ce *channel.Error
	if errors.As(err, &ce) {
		return ce
	}
	var rl *slack.RateLimitedError
	if errors.As(err, &rl) {
		ra := rl.RetryAfter
		if ra <= 0 {
			ra = time.Second
		}
		return &channel.Error{Code: channel.CodeRateLimited, Message: "slack rate limit", RetryAfter: ra}
	}
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		msg := "slack: " + se.Err
		switch se.Err {
		case "channel_not_found", "not_in_channel", "is_archived", "user_not_found", "thread_not_found",
			"message_not_found", "cannot_dm_bot", "user_disabled", "team_access_not_granted":
			return &channel.Error{Code: channel.CodeChatNotFound, Message: msg}
		case "msg_too_long", "msg_blocks_too_long", "too_many_attachments":
			return &channel.Error{Code: channel.CodeMessageTooLong, Message: msg}
		case "invalid_blocks", "invalid_blocks_format", "invalid_attachments":
			return &channel.Error{Code: channel.CodeFormattingRejected, Message: msg}
		case "invalid_auth", "not_authed", "account_inactive", "token_revoked", "token_expired":
			return &channel.Error{Code: channel.CodeUnauthorized, Message: "slack rejected the bot token (" + se.Err + ")"}
		case "missing_scope":
			if se.Needed != "" {
				msg += " (needs " + se.Needed + ")"
			}
			return &channel.Error{Code: channel.CodeForbidden, Message: msg}
		case "restricted_action", "cant_update_message", "edit_window_closed", "not_allowed_token_type",
			"restricted_action_read_only_channel", "restricted_action_thread_only_channel", "ekm_access_denied":
			return &channel.Error{Code: channel.CodeForbidden, Message: msg}
		case "ratelimited", "rate_limited":
			return &channel.Error{Code: channel.CodeRateLimited, Message: msg, RetryAfter: time.Second}
		case "internal_error", "fatal_error", "service_unavailable", "request_timeout":
			return &channel.Error{Code: channel.CodeUnavailable, Message: msg}
		}
		return &channel.Error{Code: channel.CodeInvalidRequest, Message: msg}
	}
	var sc slack.StatusCodeError
	if errors.As(err, &sc) {
		switch {
		case sc.Code == http.StatusNotFound || sc.Code == http.StatusForbidden:
			return &channel.Error{Code: channel.CodeChatNotFound, Message: "slack: " + sc.Status}
		case sc.Code == http.StatusUnauthorized:
			return &channel.Error{Code: channel.CodeUnauthorized, Message: "slack: " + sc.Status}
		}
		return &channel.Error{Code: channel.CodeUnavailable, Message: "slack: " + sc.Status}
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	return &channel.Error{Code: channel.CodeUnavailable, Message: fmt.Sprintf("slack request: %s", transportText(err))}
}
