package gateway

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/clawhost/clawhost/core/chunk"
	"github.com/clawhost/clawhost/core/reply"
	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/host"
)

const (
	formatPlain    = channel.FormatPlain
	formatMarkdown = channel.FormatMarkdown
)

// Delivery tuning.
const (
	typingRefresh  = 6 * time.Second
	typingMax      = 2 * time.Minute
	draftInterval  = time.Second
	sendAttempts   = 6
	firstRetry     = 500 * time.Millisecond
	maxRetryWait   = 30 * time.Second
	readyWait      = 60 * time.Second
	progressMaxLen = 120
)

// streamed is what runAgent leaves for delivery.
type streamed struct {
	// remainder is the normalized reply text not yet delivered.
	remainder string
	replyTo   reply.ReplyTarget
	draft     *draft
}

// streamMode resolves the streaming setting for a target: auto is a live
// draft where the channel can edit, blocks otherwise.
func (g *Gateway) streamMode(set Settings, tgt target) string {
	mode := set.Streaming
	if mode != StreamAuto && mode != StreamDraft {
		return mode
	}
	if g.host != nil {
		if inst := g.host.Instance(tgt.Instance); inst != nil {
			if _, desc, ok := inst.Client(); ok && desc.Edit {
				return StreamDraft
			}
		}
	}
	return StreamBlocks
}

// runAgent runs the turn and streams its text: blocks are delivered as they
// are coalesced (800–1200 characters, paragraph breaks preferred, 1 s idle
// flush), or shown as a live draft edited at most once a second. What the
// final result adds is returned for the outbox; nothing is delivered twice.
func (g *Gateway) runAgent(ctx context.Context, set Settings, key string, sess store.Session, fresh bool, prompt, system string, tgt target, m *Message) (runner.Result, streamed) {
	var out streamed
	t, err := g.agent.Run(ctx, runner.TurnRequest{Key: key, SessionID: sess.ClaudeSessionID, NewSession: fresh, Prompt: prompt, ExtraSystemPrompt: system})
	if err != nil {
		return runner.Result{Err: &runner.Error{Kind: runner.KindCrash, Notice: "The agent is unavailable right now.", Detail: err.Error()}}, out
	}
	mode := g.streamMode(set, tgt)
	verbose := sess.Verbose || set.Verbose
	opts := g.replyOptions(set)
	c := runner.NewCoalescer(runner.CoalesceConfig{}, g.opts.Now)
	var d *draft
	if mode == StreamDraft {
		d = g.newDraft(key, tgt)
		out.draft = d
	}
	var acc strings.Builder // the whole streamed text, for the draft
	emit := func(block string) {
		switch mode {
		case StreamBlocks:
			p, skip := reply.Normalize(reply.Payload{Text: block}, opts)
			if skip != reply.Deliver || strings.TrimSpace(p.Text) == "" {
				return
			}
			if !p.ReplyTo.IsZero() && out.replyTo.IsZero() {
				out.replyTo = p.ReplyTo
			}
			g.sendDirect(key, tgt, p.Text, formatMarkdown)
		case StreamDraft:
			if acc.Len() > 0 {
				acc.WriteString("\n\n")
			}
			acc.WriteString(block)
			d.update(acc.String())
		}
	}
	var res runner.Result
	var timer *time.Timer
	var timerC <-chan time.Time
	events := t.Events()
loop:
	for {
		select {
		case e, ok := <-events:
			if !ok {
				break loop
			}
			switch e.Kind {
			case runner.EventResult:
				res = *e.Result
			case runner.EventToolUse:
				if verbose && e.Tool != nil {
					g.sendDirect(key, tgt, progressLine(e.Tool), formatPlain)
				}
			default:
				if mode != StreamOff {
					for _, b := range c.Feed(e) {
						emit(b)
					}
				}
			}
		case <-timerC:
			for _, b := range c.Poll() {
				emit(b)
			}
		}
		if at, ok := c.Deadline(); ok && mode != StreamOff {
			wait := max(at.Sub(g.opts.Now()), time.Millisecond)
			if timer == nil {
				timer = time.NewTimer(wait)
			} else {
				timer.Reset(wait)
			}
			timerC = timer.C
		} else {
			timerC = nil
		}
	}
	if timer != nil {
		timer.Stop()
	}
	if d != nil {
		d.stop()
	}
	if res.Err != nil {
		return res, out
	}
	final := res.Text
	if mode != StreamOff {
		blocks, diverged := c.Finish(res.Text)
		if diverged {
			g.log.Debug("final result differs from the streamed text; delivered in full", "session", key)
		}
		if mode == StreamDraft {
			// The draft shows the streamed text; the final message is the
			// whole reply.
			// Finish already reconciled the result with the stream.
			final = strings.TrimSpace(acc.String() + "\n\n" + strings.Join(blocks, "\n\n"))
		} else {
			final = strings.Join(blocks, "\n\n")
		}
	}
	p, skip := reply.Normalize(reply.Payload{Text: final}, opts)
	if skip != reply.Deliver {
		return res, out
	}
	out.remainder = p.Text
	if out.replyTo.IsZero() {
		out.replyTo = p.ReplyTo
	}
	return res, out
}

func (g *Gateway) replyOptions(set Settings) reply.Options {
	return reply.Options{ResponsePrefix: set.ResponsePrefix, PrefixContext: reply.PrefixContext{Model: set.Model, ModelFull: set.Model, Provider: "anthropic"}}
}

func progressLine(t *runner.ToolUse) string {
	s := "⚙ " + t.Name
	if t.Summary != "" {
		s += ": " + t.Summary
	}
	if r := []rune(s); len(r) > progressMaxLen {
		s = string(r[:progressMaxLen-1]) + "…"
	}
	return s
}

// limit is the chunk limit for an instance: the configured limit capped by
// the channel's capability.
func (g *Gateway) limit(ctx context.Context, instance string) int {
	set := g.settings()
	configured := set.TextLimit
	if v := set.TextLimitByInstance[instance]; v > 0 {
		configured = v
	}
	capability := 0
	if g.host != nil {
		if inst := g.host.Instance(instance); inst != nil {
			wctx, cancel := context.WithTimeout(ctx, readyWait)
			if _, desc, err := inst.WaitReady(wctx); err == nil {
				capability = desc.Capabilities.MaxTextLength
				if desc.Capabilities.LengthUnit == channel.LengthBytes && capability > 0 {
					// UTF-8 needs up to 3 bytes per UTF-16 unit.
					capability /= 3
				}
			}
			cancel()
		}
	}
	return chunk.CapLimit(configured, capability)
}

func (g *Gateway) chunks(ctx context.Context, instance, text string) []string {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	return chunk.MarkdownWithMode(text, g.limit(ctx, instance), g.settings().ChunkMode)
}

// deliver records a reply to journal entry id in the outbox, then sends its
// chunks in order. An empty text records "no reply" (the entry is done).
// covers are further entries the reply answers.
func (g *Gateway) deliver(key string, id int64, covers []int64, tgt target, text, format, replyTo string) {
	g.deliverWith(key, id, covers, tgt, text, format, replyTo, nil)
}

// deliverWith is deliver with a live draft: first, when set, may deliver
// the first chunk by editing the draft; it returns the platform id.
func (g *Gateway) deliverWith(key string, id int64, covers []int64, tgt target, text, format, replyTo string, first func(string) (string, bool)) {
	ctx := g.ctx
	text, media := g.extractMedia(text)
	parts := g.chunks(ctx, tgt.Instance, text)
	if len(parts) == 0 && len(media) > 0 {
		parts = []string{""}
	}
	err := g.store.RecordReply(ctx, store.Reply{JournalID: id, Covers: covers, Instance: tgt.Instance, ChatID: tgt.ChatID, ThreadID: tgt.ThreadID, Text: text, Chunks: parts, ProducedAt: g.opts.Now()})
	if err != nil {
		if ctx.Err() == nil {
			g.log.Error("recording the reply failed; not sent", "id", id, "error", err)
		}
		return
	}
	chunks := make([]store.Chunk, len(parts))
	for i, p := range parts {
		chunks[i] = store.Chunk{Index: i, Text: p}
	}
	if first != nil && len(chunks) > 0 && len(media) == 0 {
		if pid, ok := first(chunks[0].Text); ok {
			chunks[0].SentAt = g.opts.Now()
			if _, err := g.store.MarkSent(ctx, store.ChunkSent{JournalID: id, Index: 0, PlatformIDs: []string{pid}}); err != nil && ctx.Err() == nil {
				g.log.Error("outbox mark failed", "id", id, "chunk", 0, "error", err)
			}
		}
	}
	g.sendChunks(key, id, tgt, chunks, format, replyTo, media)
}

// deliverPending sends the unsent chunks of a reply recovered from the
// outbox after a restart.
func (g *Gateway) deliverPending(key string, p store.PendingReply, m Message) {
	tgt := target{p.Reply.Instance, p.Reply.ChatID, p.Reply.ThreadID}
	if tgt.Instance == "" {
		tgt = targetOf(&m)
	}
	g.log.Info("delivering a reply produced before the restart", "id", p.Entry.ID, "chunks", len(p.Unsent()))
	g.sendChunks(key, p.Entry.ID, tgt, p.Unsent(), formatMarkdown, "", nil)
}

// sendChunks sends chunks in order under the session's delivery lock and
// marks each in the outbox once the channel accepted it. A chunk that cannot
// be delivered ends the reply: the entry fails and the user is told, when
// that is possible, rather than left waiting.
func (g *Gateway) sendChunks(key string, id int64, tgt target, chunks []store.Chunk, format, replyTo string, media []channel.OutboundMedia) {
	unlock := g.sendLocks.lock(key)
	defer unlock()
	for i, c := range chunks {
		if c.Sent() {
			continue
		}
		req := channel.SendRequest{ChatID: tgt.ChatID, ThreadID: tgt.ThreadID, Text: c.Text, Format: format}
		if i == 0 {
			req.ReplyToMessageID = replyTo
		}
		if i == len(chunks)-1 {
			req.Media = media
		}
		ids, err := g.sendOne(tgt, req)
		if err != nil {
			if g.ctx.Err() != nil {
				return // the outbox keeps it for the next start
			}
			g.log.Error("reply could not be delivered", "id", id, "instance", tgt.Instance, "chat", tgt.ChatID, "chunk", c.Index, "error", err)
			g.finish([]int64{id}, store.StateFailed, "delivery failed: "+string(channel.CodeOf(err)))
			if i > 0 || channel.CodeOf(err) == channel.CodeMessageTooLong || channel.CodeOf(err) == channel.CodeInvalidRequest {
				_, _ = g.sendOne(tgt, channel.SendRequest{ChatID: tgt.ChatID, ThreadID: tgt.ThreadID, Text: "(Part of the reply could not be delivered.)", Format: formatPlain})
			}
			return
		}
		if _, err := g.store.MarkSent(g.ctx, store.ChunkSent{JournalID: id, Index: c.Index, PlatformIDs: ids}); err != nil && g.ctx.Err() == nil {
			g.log.Error("outbox mark failed", "id", id, "chunk", c.Index, "error", err)
		}
	}
}

// sendDirect sends text that is not recorded in the outbox (streamed
// blocks, progress lines, notices), chunked and in session order.
func (g *Gateway) sendDirect(key string, tgt target, text, format string) []string {
	unlock := g.sendLocks.lock(key)
	defer unlock()
	var all []string
	for _, part := range g.chunks(g.ctx, tgt.Instance, text) {
		ids, err := g.sendOne(tgt, channel.SendRequest{ChatID: tgt.ChatID, ThreadID: tgt.ThreadID, Text: part, Format: format})
		if err != nil {
			if g.ctx.Err() == nil {
				g.log.Error("send failed", "instance", tgt.Instance, "chat", tgt.ChatID, "error", err)
			}
			return all
		}
		all = append(all, ids...)
	}
	return all
}

// notify tells a chat something outside any reply.
func (g *Gateway) notify(key string, tgt target, text string) {
	g.sendDirect(key, tgt, text, formatPlain)
}

// sendOne sends one message, waiting for the instance to be ready (it may
// be restarting) and retrying retryable failures with backoff, honouring
// the platform's retry_after. A formatting_rejected error is retried at
// once as plain text.
func (g *Gateway) sendOne(tgt target, req channel.SendRequest) ([]string, error) {
	wait := firstRetry
	var err error
	for attempt := 0; attempt < sendAttempts; attempt++ {
		if g.host == nil {
			return nil, errors.New("no plugin host")
		}
		inst := g.host.Instance(tgt.Instance)
		if inst == nil {
			return nil, fmt.Errorf("instance %q is not running", tgt.Instance)
		}
		ctx, cancel := context.WithTimeout(g.ctx, readyWait)
		var plug *host.Plugin
		plug, _, err = inst.WaitReady(ctx)
		if err == nil {
			var resp channel.SendResponse
			resp, err = plug.Send(ctx, req)
			if err == nil {
				cancel()
				g.obs.MessageOut(tgt.Instance)
				return resp.MessageIDs, nil
			}
		}
		cancel()
		if g.ctx.Err() != nil {
			return nil, g.ctx.Err()
		}
		code := channel.CodeOf(err)
		g.obs.SendError(tgt.Instance, string(code))
		var ce *channel.Error
		switch {
		case code == channel.CodeFormattingRejected && req.Format != formatPlain:
			g.log.Debug("channel rejected the formatting; sending as plain text", "instance", tgt.Instance)
			req.Format = formatPlain
			continue
		case errors.As(err, &ce) && !code.Retryable():
			return nil, err
		}
		d := wait
		if ce != nil && ce.RetryAfter > 0 {
			d = min(ce.RetryAfter, 5*time.Minute)
		}
		g.log.Warn("send failed; retrying", "instance", tgt.Instance, "chat", tgt.ChatID, "attempt", attempt+1, "in", d, "error", err)
		select {
		case <-g.ctx.Done():
			return nil, g.ctx.Err()
		case <-time.After(d):
		}
		wait = min(wait*2, maxRetryWait)
	}
	return nil, err
}

// typingCtl shows the typing indicator while the agent works: refreshed
// every 6 s, given up after 2 min, sealed when the turn ends so a late
// event cannot restart it.
type typingCtl struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func (g *Gateway) startTyping(tgt target) *typingCtl {
	t := &typingCtl{cancel: func() {}, done: make(chan struct{})}
	var plug *host.Plugin
	if g.host != nil {
		if inst := g.host.Instance(tgt.Instance); inst != nil {
			if p, desc, ok := inst.Client(); ok && desc.Typing {
				plug = p
			}
		}
	}
	if plug == nil {
		close(t.done)
		return t
	}
	ctx, cancel := context.WithTimeout(g.ctx, typingMax)
	t.cancel = cancel
	go func() {
		defer close(t.done)
		tick := time.NewTicker(typingRefresh)
		defer tick.Stop()
		for {
			c, cc := context.WithTimeout(ctx, 5*time.Second)
			_ = plug.SetTyping(c, channel.TypingRequest{ChatID: tgt.ChatID, ThreadID: tgt.ThreadID, On: true})
			cc()
			select {
			case <-ctx.Done():
				c, cc := context.WithTimeout(g.ctx, 5*time.Second)
				_ = plug.SetTyping(c, channel.TypingRequest{ChatID: tgt.ChatID, ThreadID: tgt.ThreadID, On: false})
				cc()
				return
			case <-tick.C:
			}
		}
	}()
	return t
}

func (t *typingCtl) seal() {
	t.cancel()
	<-t.done
}

// draft is a live draft: one message edited in place as text streams, at
// most once per draftInterval. When editing fails the draft is abandoned
// and the reply is delivered as ordinary messages.
type draft struct {
	g     *Gateway
	key   string
	tgt   target
	limit int

	id       string
	last     time.Time
	pending  string
	shown    string
	failed   bool
	overflow bool
	timer    *time.Timer
	mu       sync.Mutex // also taken by the throttle timer's goroutine
}

func (g *Gateway) newDraft(key string, tgt target) *draft {
	return &draft{g: g, key: key, tgt: tgt, limit: g.limit(g.ctx, tgt.Instance)}
}

// update shows text (the whole streamed reply so far).
func (d *draft) update(text string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.failed || d.overflow {
		return
	}
	if reply.IsSilentReplyPrefixText(strings.TrimSpace(text), reply.SilentToken) {
		return
	}
	if chunk.Len(text) > d.limit {
		d.overflow = true
		return
	}
	d.pending = text
	if wait := draftInterval - d.g.opts.Now().Sub(d.last); wait > 0 && !d.last.IsZero() {
		if d.timer == nil {
			d.timer = time.AfterFunc(wait, func() {
				d.mu.Lock()
				defer d.mu.Unlock()
				d.timer = nil
				d.flushLocked()
			})
		}
		return
	}
	d.flushLocked()
}

func (d *draft) flushLocked() {
	if d.failed || d.pending == "" || d.pending == d.shown {
		return
	}
	text := d.pending
	d.last = d.g.opts.Now()
	if d.id == "" {
		ids := d.g.sendDirect(d.key, d.tgt, text, formatMarkdown)
		if len(ids) == 0 {
			d.failed = true
			return
		}
		d.id = ids[0]
		d.shown = text
		return
	}
	if err := d.g.edit(d.tgt, d.id, text); err != nil {
		d.g.log.Debug("draft edit failed; falling back to separate messages", "error", err)
		d.failed = true
		return
	}
	d.shown = text
}

func (d *draft) stop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.timer != nil {
		d.timer.Stop()
		d.timer = nil
	}
}

// takeFirst is called with the first chunk of the final reply: when the
// draft message exists it is edited to that chunk and true is returned (the
// chunk is delivered); otherwise the chunk is sent normally.
func (d *draft) takeFirst(first string) (string, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.id == "" || d.failed {
		return "", false
	}
	if d.shown == first {
		return d.id, true
	}
	if err := d.g.edit(d.tgt, d.id, first); err != nil {
		d.g.log.Debug("final draft edit failed; sending the reply as new messages", "error", err)
		return "", false
	}
	d.shown = first
	return d.id, true
}

func (g *Gateway) edit(tgt target, id, text string) error {
	inst := g.host.Instance(tgt.Instance)
	if inst == nil {
		return errors.New("instance gone")
	}
	plug, _, ok := inst.Client()
	if !ok {
		return errors.New("instance not ready")
	}
	ctx, cancel := context.WithTimeout(g.ctx, 10*time.Second)
	defer cancel()
	err := plug.Edit(ctx, channel.EditRequest{ChatID: tgt.ChatID, ThreadID: tgt.ThreadID, MessageID: id, Text: text, Format: formatMarkdown})
	if channel.CodeOf(err) == channel.CodeFormattingRejected {
		err = plug.Edit(ctx, channel.EditRequest{ChatID: tgt.ChatID, ThreadID: tgt.ThreadID, MessageID: id, Text: text, Format: formatPlain})
	}
	return err
}

// extractMedia removes "MEDIA:<path>" lines from a reply and returns the
// files to attach: only regular files inside the workspace (symlinks
// resolved) are sent; others are logged and dropped.
func (g *Gateway) extractMedia(text string) (string, []channel.OutboundMedia) {
	if !strings.Contains(text, "MEDIA:") {
		return text, nil
	}
	ws := g.settings().Workspace
	var keep []string
	var media []channel.OutboundMedia
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		if !strings.HasPrefix(t, "MEDIA:") {
			keep = append(keep, line)
			continue
		}
		p := strings.Trim(strings.TrimSpace(strings.TrimPrefix(t, "MEDIA:")), "`\"'")
		if path, ok := insideWorkspace(ws, p); ok {
			media = append(media, channel.OutboundMedia{Path: path, Kind: mediaKind(path)})
		} else {
			g.log.Warn("MEDIA path outside the workspace or not a file; not sent", "path", p)
		}
	}
	return strings.TrimSpace(strings.Join(keep, "\n")), media
}

func insideWorkspace(ws, p string) (string, bool) {
	if ws == "" || p == "" {
		return "", false
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(ws, p)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", false
	}
	root, err := filepath.EvalSymlinks(ws)
	if err != nil {
		return "", false
	}
	rel, err := filepath.Rel(root, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	if fi, err := os.Stat(real); err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	return real, true
}

func mediaKind(path string) channel.MediaKind {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".png", ".jpg", ".jpeg", ".gif", ".webp":
		return channel.MediaImage
	case ".mp4", ".mov", ".webm":
		return channel.MediaVideo
	case ".mp3", ".m4a", ".wav", ".flac":
		return channel.MediaAudio
	case ".ogg", ".oga", ".opus":
		return channel.MediaVoice
	}
	return channel.MediaDocument
}

// fetchMedia downloads a message's attachments into
// <workspace>/media/<instance>/ (0600 files), so the prompt can name their
// paths and claude can read them. Failures are logged; the prompt then says
// the attachment could not be downloaded.
func (g *Gateway) fetchMedia(set Settings, m *Message, id int64) {
	if len(m.Media) == 0 || g.host == nil || set.Workspace == "" {
		return
	}
	inst := g.host.Instance(m.Instance)
	if inst == nil {
		return
	}
	dir := filepath.Join(set.Workspace, "media", m.Instance)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		g.log.Error("media directory", "error", err)
		return
	}
	for i := range m.Media {
		md := &m.Media[i]
		if md.Path != "" {
			continue
		}
		name := fmt.Sprintf("%d-%d%s", id, i, mediaExt(md))
		path := filepath.Join(dir, name)
		ctx, cancel := context.WithTimeout(g.ctx, 2*time.Minute)
		plug, _, err := inst.WaitReady(ctx)
		if err == nil {
			err = downloadTo(ctx, plug, md.Ref, g.opts.MaxMediaBytes, path)
		}
		cancel()
		if err != nil {
			g.log.Warn("media download failed", "instance", m.Instance, "kind", md.Kind, "error", err)
			continue
		}
		md.Path = path
	}
}

func downloadTo(ctx context.Context, plug *host.Plugin, ref string, maxBytes int64, path string) error {
	f, err := os.OpenFile(path+".part", os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = plug.DownloadMedia(ctx, ref, maxBytes, f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path + ".part")
		return err
	}
	return os.Rename(path+".part", path)
}

func mediaExt(md *Media) string {
	if e := filepath.Ext(md.Filename); e != "" && len(e) <= 8 {
		return strings.ToLower(e)
	}
	switch {
	case strings.Contains(md.MIME, "jpeg"):
		return ".jpg"
	case strings.Contains(md.MIME, "png"):
		return ".png"
	case strings.Contains(md.MIME, "ogg"):
		return ".ogg"
	case strings.Contains(md.MIME, "mp4"):
		return ".mp4"
	case strings.Contains(md.MIME, "pdf"):
		return ".pdf"
	}
	return ".bin"
}
