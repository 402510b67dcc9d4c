package delivery

import (
	"context"
	"strings"

	"github.com/clawhost/clawhost/core/chunk"
	"github.com/clawhost/clawhost/core/plaintext"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/pluginclient"
)

// shape is what an instance's capabilities ask of outbound text.
type shape struct {
	// limit is the chunk limit in UTF-16 units: the configured limit
	// capped by the channel's MaxTextLength.
	limit int
	// maxLines is the channel's soft line limit per message; 0 is none.
	maxLines int
	// plain: the channel renders no markdown (MarkdownNone, or nothing
	// declared), so markdown is rendered to plain text by the core.
	plain bool
}

// shapeOf reads the instance's capabilities: from the instance when it is
// ready, else from the description last seen of it (a plugin restarting
// or degraded keeps its capabilities), else by waiting for it to be ready
// (bounded, and ended by a drain). An instance never seen ready gets the
// configured limit and markdown as before. Not waiting for an instance
// that was seen is what lets a graceful stop record a reply in hand: the
// reply is shaped, then recorded, before anything waits for the channel.
func (d *Dispatcher) shapeOf(ctx context.Context, instance string) shape {
	set := d.settings()
	configured := set.TextLimit
	if v := set.TextLimitByInstance[instance]; v > 0 {
		configured = v
	}
	var sh shape
	capability := 0
	if desc, ok := d.describe(ctx, instance); ok {
		caps := desc.Capabilities
		capability = caps.MaxTextLength
		if caps.LengthUnit == channel.LengthBytes && capability > 0 {
			// UTF-8 needs up to 3 bytes per UTF-16 unit.
			capability /= 3
		}
		sh.maxLines = max(caps.MaxLines, 0)
		sh.plain = caps.Markdown == "" || caps.Markdown == channel.MarkdownNone
	}
	sh.limit = chunk.CapLimit(configured, capability)
	return sh
}

// describe returns the instance's description: the ready instance's (and
// remembers it), else the last one seen, else the one it has once ready,
// waiting at most readyWait and never past a drain.
func (d *Dispatcher) describe(ctx context.Context, instance string) (pluginclient.Description, bool) {
	if desc, ok := d.ch.Ready(instance); ok {
		d.remember(instance, desc)
		return desc, true
	}
	d.mu.Lock()
	desc, ok := d.seen[instance]
	d.mu.Unlock()
	if ok {
		return desc, true
	}
	wctx, cancel := context.WithTimeout(ctx, readyWait)
	defer cancel()
	go func() {
		select {
		case <-d.draining:
			cancel()
		case <-wctx.Done():
		}
	}()
	desc, err := d.ch.WaitReady(wctx, instance)
	if err != nil {
		return pluginclient.Description{}, false
	}
	d.remember(instance, desc)
	return desc, true
}

func (d *Dispatcher) remember(instance string, desc pluginclient.Description) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.seen == nil {
		d.seen = map[string]pluginclient.Description{}
	}
	d.seen[instance] = desc
}

// render converts markdown for a channel that shows none: the agent's
// markdown becomes plain text (core/plaintext) and the format plain. Text
// already plain, or for a channel that renders markdown, is unchanged.
func (sh shape) render(text, format string) (string, string) {
	if !sh.plain || format != channel.FormatMarkdown {
		return text, format
	}
	return plaintext.FromMarkdown(text), channel.FormatPlain
}

// split chunks text to the length limit, then to the line limit; both
// keep code fences balanced.
func (sh shape) split(text string, mode chunk.Mode) []string {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	return chunk.Lines(chunk.MarkdownWithMode(text, sh.limit, mode), sh.limit, sh.maxLines)
}

// prepare renders text for the instance and splits it into the messages
// to send, returning them with the format to send them in.
func (d *Dispatcher) prepare(ctx context.Context, instance, text, format string) ([]string, string) {
	sh := d.shapeOf(ctx, instance)
	text, format = sh.render(text, format)
	return sh.split(text, d.settings().ChunkMode), format
}

// fits reports whether text can be shown as one message: within the
// length and line limits.
func (sh shape) fits(text string) bool {
	return chunk.Len(text) <= sh.limit && (sh.maxLines <= 0 || strings.Count(text, "\n") < sh.maxLines)
}

// format is the format text rendered for the channel is sent in.
func (sh shape) format() string {
	if sh.plain {
		return channel.FormatPlain
	}
	return channel.FormatMarkdown
}
