package discord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/clawhost/clawhost/sdk/channel"
)

// noMentions keeps the agent's text from pinging anyone: @everyone, roles
// and users stay plain text.
func noMentions() *discordgo.MessageAllowedMentions {
	return &discordgo.MessageAllowedMentions{Parse: []discordgo.AllowedMentionType{}}
}

// target is the channel a message goes to: the thread when there is one.
func target(chatID, threadID string) string {
	if threadID != "" {
		return threadID
	}
	return chatID
}

// Send implements channel.Channel. A reply in a chat where a slash command
// awaits its answer goes through the interaction's webhook (replacing
// "thinking…", then as follow-ups) while its token is valid, else into the
// channel. Replies reference the triggering message without failing when
// it is gone; mentions in the text never ping. Buttons go under the one
// message a Send posts (so under the last of a split reply), refused
// before any request when Discord would refuse them (see components).
func (a *Adapter) Send(ctx context.Context, req channel.SendRequest) (channel.SendResponse, error) {
	if a.rest == nil {
		return channel.SendResponse{}, channel.Errorf(channel.CodeInternal, "send before configure")
	}
	if err := fits(req.Text); err != nil {
		return channel.SendResponse{}, err
	}
	rows, err := components(req.Buttons)
	if err != nil {
		return channel.SendResponse{}, err
	}
	content := a.render(req.Text, req.Format, req.Rendered)
	files, closeFiles, err := openMedia(req.Media)
	if err != nil {
		return channel.SendResponse{}, err
	}
	defer closeFiles()
	if content == "" && len(files) > 0 {
		var caps []string
		for _, m := range req.Media {
			if m.Caption != "" {
				caps = append(caps, a.render(m.Caption, req.Format, m.CaptionRendered))
			}
		}
		content = strings.Join(caps, "\n")
	}
	d := callTimeout
	if len(files) > 0 {
		d = uploadTimeout
	}
	ctx, wrote := traceWrites(ctx)
	opt, cancel := a.call(ctx, d)
	defer cancel()

	if ix := a.state.interactionFor(req.ChatID, req.ThreadID, a.now()); ix != nil {
		id, err := a.sendInteraction(ix, content, files, rows, opt)
		if err == nil {
			return channel.SendResponse{MessageIDs: []string{id}}, nil
		}
		if code := restCode(err); code != 10015 && code != 50027 { // unknown webhook, invalid token: post in the channel
			return channel.SendResponse{}, sendErr(err, wrote)
		}
		a.log.Info("slash command token expired; answering in the channel")
		a.state.dropInteractions(req.ChatID, req.ThreadID)
	}

	msg := &discordgo.MessageSend{Content: content, AllowedMentions: noMentions(), Files: files, Components: rows}
	if req.Silent {
		msg.Flags = discordgo.MessageFlagsSuppressNotifications
	}
	if req.DisableLinkPreview {
		msg.Flags |= discordgo.MessageFlagsSuppressEmbeds
	}
	if req.ReplyToMessageID != "" && isSnowflake(req.ReplyToMessageID) {
		no := false
		msg.Reference = &discordgo.MessageReference{MessageID: req.ReplyToMessageID, FailIfNotExists: &no}
	}
	wrote.Store(false)
	m, err := a.rest.ChannelMessageSendComplex(target(req.ChatID, req.ThreadID), msg, opt)
	if err != nil {
		return channel.SendResponse{}, sendErr(err, wrote)
	}
	return channel.SendResponse{MessageIDs: []string{m.ID}}, nil
}

// sendInteraction answers a slash command: the first message replaces the
// deferred response, later ones are follow-ups.
func (a *Adapter) sendInteraction(ix *interaction, content string, files []*discordgo.File, rows []discordgo.MessageComponent, opt discordgo.RequestOption) (string, error) {
	di := &discordgo.Interaction{ID: ix.ID, AppID: ix.AppID, Token: ix.Token}
	var m *discordgo.Message
	var err error
	if !ix.Answered {
		edit := &discordgo.WebhookEdit{Content: &content, Files: files, AllowedMentions: noMentions()}
		if rows != nil {
			edit.Components = &rows
		}
		m, err = a.rest.InteractionResponseEdit(di, edit, opt)
	} else {
		m, err = a.rest.FollowupMessageCreate(di, true, &discordgo.WebhookParams{Content: content, Files: files, AllowedMentions: noMentions(), Components: rows}, opt)
	}
	if err != nil {
		return "", err
	}
	if err := a.state.answered(ix, m.ID); err != nil {
		a.log.Warn("could not save the state", "error", err)
	}
	return m.ID, nil
}

// Edit implements channel.Editor (live drafts, turn cards). The message's
// buttons become the request's: none removes them, as the contract asks
// of an edit.
func (a *Adapter) Edit(ctx context.Context, req channel.EditRequest) error {
	if a.rest == nil {
		return channel.Errorf(channel.CodeInternal, "edit before configure")
	}
	if err := fits(req.Text); err != nil {
		return err
	}
	rows, err := components(req.Buttons)
	if err != nil {
		return err
	}
	content := a.render(req.Text, req.Format, req.Rendered)
	opt, cancel := a.call(ctx, callTimeout)
	defer cancel()
	// An edit sets the message's buttons: without any (an answered
	// question keeps none) an empty list clears them on Discord.
	none := []discordgo.MessageComponent{}
	if len(rows) > 0 {
		none = rows
	}
	if ix := a.state.interactionOf(req.MessageID, a.now()); ix != nil {
		di := &discordgo.Interaction{ID: ix.ID, AppID: ix.AppID, Token: ix.Token}
		if len(ix.Messages) > 0 && ix.Messages[0] == req.MessageID {
			_, err = a.rest.InteractionResponseEdit(di, &discordgo.WebhookEdit{Content: &content, AllowedMentions: noMentions(), Components: &none}, opt)
		} else {
			_, err = a.rest.FollowupMessageEdit(di, req.MessageID, &discordgo.WebhookEdit{Content: &content, AllowedMentions: noMentions(), Components: &none}, opt)
		}
		return mapErr(err)
	}
	_, err = a.rest.ChannelMessageEditComplex(&discordgo.MessageEdit{
		ID: req.MessageID, Channel: target(req.ChatID, req.ThreadID), Content: &content, AllowedMentions: noMentions(), Components: &none,
	}, opt)
	return mapErr(err)
}

// React implements channel.Reactor: the bot's reaction on a message (the
// seen 👀, the agent's react tool). Discord keeps several reactions of
// one user; Remove takes the one Emoji names off (without one it is
// refused: the adapter does not remember what it set).
func (a *Adapter) React(ctx context.Context, req channel.ReactRequest) error {
	if a.rest == nil {
		return channel.Errorf(channel.CodeInternal, "react before configure")
	}
	emoji := strings.TrimSpace(req.Emoji)
	if req.ChatID == "" || req.MessageID == "" || emoji == "" {
		return channel.Errorf(channel.CodeInvalidRequest, "a reaction needs a chat, a message and an emoji")
	}
	opt, cancel := a.call(ctx, callTimeout)
	defer cancel()
	if req.Remove {
		return mapErr(a.rest.MessageReactionRemove(target(req.ChatID, req.ThreadID), req.MessageID, emoji, "@me", opt))
	}
	return mapErr(a.rest.MessageReactionAdd(target(req.ChatID, req.ThreadID), req.MessageID, emoji, opt))
}

// SetTyping implements channel.Typer. Discord shows typing for about 10 s
// (the host refreshes it every few seconds) and has no call to clear it:
// Off is a no-op, the indicator ends with the next message.
func (a *Adapter) SetTyping(ctx context.Context, req channel.TypingRequest) error {
	if !req.On {
		return nil
	}
	if a.rest == nil {
		return channel.Errorf(channel.CodeInternal, "typing before configure")
	}
	opt, cancel := a.call(ctx, callTimeout)
	defer cancel()
	return mapErr(a.rest.ChannelTyping(target(req.ChatID, req.ThreadID), opt))
}

// DownloadMedia implements channel.MediaDownloader: Ref is the
// attachment's URL. The bot token is not sent (attachment URLs are signed).
func (a *Adapter) DownloadMedia(ctx context.Context, req channel.DownloadRequest) (io.ReadCloser, channel.MediaInfo, error) {
	u, err := url.Parse(req.Ref)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, channel.MediaInfo{}, channel.Errorf(channel.CodeInvalidRequest, "not an attachment url")
	}
	limit := req.MaxBytes
	if limit <= 0 || limit > int64(a.cfg.MaxDownloadBytes) {
		limit = int64(a.cfg.MaxDownloadBytes)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, channel.MediaInfo{}, channel.Errorf(channel.CodeInvalidRequest, "download: %v", err)
	}
	resp, err := a.http.Do(hreq)
	if err != nil {
		return nil, channel.MediaInfo{}, &channel.Error{Code: channel.CodeUnavailable, Message: "download attachment: " + err.Error()}
	}
	switch {
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusForbidden:
		resp.Body.Close()
		return nil, channel.MediaInfo{}, channel.Errorf(channel.CodeChatNotFound, "download attachment: %s (expired or deleted)", resp.Status)
	case resp.StatusCode != http.StatusOK:
		resp.Body.Close()
		return nil, channel.MediaInfo{}, channel.Errorf(channel.CodeUnavailable, "download attachment: %s", resp.Status)
	}
	if resp.ContentLength > limit {
		resp.Body.Close()
		return nil, channel.MediaInfo{}, channel.Errorf(channel.CodeMessageTooLong, "attachment of %d bytes exceeds %d", resp.ContentLength, limit)
	}
	info := channel.MediaInfo{MIME: resp.Header.Get("Content-Type"), Size: resp.ContentLength}
	return &limitedBody{r: io.LimitReader(resp.Body, limit+1), c: resp.Body, limit: limit}, info, nil
}

// limitedBody fails a download that turns out longer than its limit.
type limitedBody struct {
	r     io.Reader
	c     io.Closer
	n     int64
	limit int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.n += int64(n)
	if b.n > b.limit {
		return n, channel.Errorf(channel.CodeMessageTooLong, "attachment exceeds %d bytes", b.limit)
	}
	return n, err
}

func (b *limitedBody) Close() error { return b.c.Close() }

// openMedia opens the files of a Send.
func openMedia(media []channel.OutboundMedia) ([]*discordgo.File, func(), error) {
	var files []*discordgo.File
	var closers []io.Closer
	done := func() {
		for _, c := range closers {
			c.Close()
		}
	}
	for _, m := range media {
		f, err := os.Open(m.Path)
		if err != nil {
			done()
			return nil, func() {}, channel.Errorf(channel.CodeInvalidRequest, "open media: %v", err)
		}
		closers = append(closers, f)
		ct := m.MIME
		if ct == "" {
			ct = mime.TypeByExtension(filepath.Ext(m.Path))
		}
		if ct == "" {
			ct = "application/octet-stream"
		}
		files = append(files, &discordgo.File{Name: filepath.Base(m.Path), ContentType: ct, Reader: f})
	}
	return files, done, nil
}

// render turns the host's text into Discord's markup: markdown as the host
// rendered it (pre, SendRequest.Rendered: markup.Markdown, tables as code
// blocks; the host split the reply by that rendering's length), or as it
// is when the host sent no rendering (Discord shows markdown; the plugin
// links no markdown parser); plain text with markdown characters escaped
// when that still fits the limit.
func (a *Adapter) render(text string, format channel.Format, pre *channel.Rendered) string {
	if format == channel.FormatMarkdown {
		if out, _, ok := pre.Of(channel.MarkupMarkdown); ok {
			return out
		}
		return text
	}
	if out := escapeMarkdown(text); channel.TextLen(out, channel.LengthUTF16) <= MaxTextLength {
		return out
	}
	return text
}

// fits refuses a text over the declared limit (Capabilities: MaxTextLength
// UTF-16 units) with CodeMessageTooLong, as the channel contract asks,
// although Discord itself would take up to 2000 code points.
func fits(text string) error {
	if n := channel.TextLen(text, channel.LengthUTF16); n > MaxTextLength {
		return channel.Errorf(channel.CodeMessageTooLong, "text is %d UTF-16 units, the limit is %d", n, MaxTextLength)
	}
	return nil
}

// restCode is Discord's JSON error code of err, 0 for none.
func restCode(err error) int {
	var re *discordgo.RESTError
	if errors.As(err, &re) && re.Message != nil {
		return re.Message.Code
	}
	return 0
}

// contentTooLong reports whether a 50035 "Invalid Form Body" answer is
// about the length of the content (not, say, of a button's label).
func contentTooLong(body []byte) bool {
	var b struct {
		Errors map[string]json.RawMessage `json:"errors"`
	}
	return json.Unmarshal(body, &b) == nil && strings.Contains(string(b.Errors["content"]), "BASE_TYPE_MAX_LENGTH")
}

// mapErr turns a discordgo error into the sdk's typed error; nil stays nil.
// This is the one place where Discord's statuses and codes become codes
// the host acts on.
// traceWrites returns ctx noting in wrote when a request made with it has
// been written to the connection.
func traceWrites(ctx context.Context) (context.Context, *atomic.Bool) {
	var wrote atomic.Bool
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { wrote.Store(true) }}), &wrote
}

// sendErr maps the error of a call that posts a message: a transport
// failure after the request was written (the answer lost, a deadline
// passed while waiting for it) may have posted it, so it is uncertain —
// the host then does not send it again — rather than unavailable.
func sendErr(err error, wrote *atomic.Bool) error {
	var re *discordgo.RESTError
	var rl *discordgo.RateLimitError
	if err != nil && wrote.Load() && !errors.As(err, &re) && !errors.As(err, &rl) && !errors.Is(err, context.Canceled) {
		if ce, ok := mapErr(err).(*channel.Error); ok {
			return &channel.Error{Code: channel.CodeUncertain, Message: ce.Message + " (the request was sent; it may have been posted)"}
		}
	}
	return mapErr(err)
}

func mapErr(err error) error {
	if err == nil {
		return nil
	}
	var rl *discordgo.RateLimitError
	if errors.As(err, &rl) {
		return &channel.Error{Code: channel.CodeRateLimited, Message: "discord rate limit", RetryAfter: rl.RetryAfter}
	}
	var re *discordgo.RESTError
	if !errors.As(err, &re) || re.Response == nil {
		if errors.Is(err, context.Canceled) {
			return err
		}
		// A transport error names the URL, and webhook URLs hold the
		// interaction's token: keep only what went wrong.
		var ue *url.Error
		if errors.As(err, &ue) {
			return &channel.Error{Code: channel.CodeUnavailable, Message: "discord request: " + ue.Err.Error()}
		}
		return &channel.Error{Code: channel.CodeUnavailable, Message: err.Error()}
	}
	msg, code := re.Response.Status, 0
	if re.Message != nil {
		code = re.Message.Code
		msg = fmt.Sprintf("%s (%d %s)", re.Response.Status, code, re.Message.Message)
	}
	st := re.Response.StatusCode
	switch {
	case code == 50035 && contentTooLong(re.ResponseBody):
		return &channel.Error{Code: channel.CodeMessageTooLong, Message: msg}
	case st == http.StatusUnauthorized:
		return &channel.Error{Code: channel.CodeUnauthorized, Message: "discord rejected the bot token"}
	case st == http.StatusNotFound || code == 10003 || code == 10008:
		return &channel.Error{Code: channel.CodeChatNotFound, Message: msg}
	case st == http.StatusForbidden || code == 50001 || code == 50013 || code == 50007:
		return &channel.Error{Code: channel.CodeForbidden, Message: msg}
	case st == http.StatusTooManyRequests:
		return &channel.Error{Code: channel.CodeRateLimited, Message: msg, RetryAfter: time.Second}
	case st >= 500:
		return &channel.Error{Code: channel.CodeUnavailable, Message: msg}
	}
	return &channel.Error{Code: channel.CodeInvalidRequest, Message: msg}
}
