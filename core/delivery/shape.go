package delivery

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/clawhost/clawhost/core/chunk"
	"github.com/clawhost/clawhost/markup"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/pluginclient"
)

// shape is what an instance's capabilities ask of outbound text.
type shape struct {
	// limit is the longest message in unit: the configured limit capped
	// by the channel's MaxTextLength.
	limit int
	// unit is how the channel counts (Capabilities.LengthUnit).
	unit channel.LengthUnit
	// maxLines is the channel's soft line limit per message; 0 is none.
	maxLines int
	// flavour is what the channel renders markdown to (markup.For of its
	// Capabilities.Markup): markup.Plain for a channel that shows none,
	// whose markdown the core renders to plain text.
	flavour markup.Flavour
	// markup is the channel's declared markup, which flavour is of (what
	// a rendering sent with the text says it is for).
	markup channel.Markup
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
	sh := shape{unit: channel.LengthUTF16, flavour: markup.Plain}
	capability := 0
	if desc, ok := d.describe(ctx, instance); ok {
		caps := desc.Capabilities
		capability = caps.MaxTextLength
		sh.unit = cmp.Or(caps.LengthUnit, channel.LengthUTF16)
		sh.maxLines = max(caps.MaxLines, 0)
		sh.flavour, sh.markup = markup.For(caps.Markup), caps.Markup
	} else {
		// Never seen ready: the configured limit, and markdown as before.
		sh.flavour, sh.markup = markup.Markdown, channel.MarkupMarkdown
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

// known is the instance's description now, or as it was when last seen
// ready (false when it never was), without waiting.
func (d *Dispatcher) known(instance string) (pluginclient.Description, bool) {
	if desc, ok := d.ch.Ready(instance); ok {
		d.remember(instance, desc)
		return desc, true
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	desc, ok := d.seen[instance]
	return desc, ok
}

func (d *Dispatcher) remember(instance string, desc pluginclient.Description) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.seen == nil {
		d.seen = map[string]pluginclient.Description{}
	}
	d.seen[instance] = desc
}

// utf16Limit is the limit in UTF-16 units: a third of a limit counted in
// bytes (UTF-8 needs up to 3 bytes per UTF-16 unit).
func (sh shape) utf16Limit() int {
	if sh.unit == channel.LengthBytes && sh.limit > 0 {
		return sh.limit / 3
	}
	return sh.limit
}

// plain reports whether the channel shows no markup: the core renders
// markdown to plain text for it.
func (sh shape) plain() bool { return sh.flavour == markup.Plain }

// render converts markdown for a channel that shows none: the agent's
// markdown becomes plain text (markup.Plain) and the format plain. Text
// already plain, or for a channel that renders markdown, is unchanged.
func (sh shape) render(text string, format channel.Format) (string, channel.Format) {
	if !sh.plain() || format != channel.FormatMarkdown {
		return text, format
	}
	return markup.Render(text, markup.Plain), channel.FormatPlain
}

// split cuts text into the messages to send, each within the length
// limit after rendering (markup.Split: a reply whose rendering fits is
// never split; the channel renders each piece) and then within the line
// limit; both keep code fences balanced. Plain text is cut by
// chunk.Markdown in UTF-16 units (a third of the limit for a channel
// counting bytes: UTF-8 needs up to 3 bytes per UTF-16 unit).
//
// For markdown, rendered (nil when none) holds beside each part the
// rendering its measure made (markup.SplitRendered: a part that fit
// whole), so that it is not parsed again to be sent.
func (sh shape) split(text string, format channel.Format, mode chunk.Mode) (parts []string, rendered []markup.Piece) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	if format != channel.FormatMarkdown {
		limit := sh.utf16Limit()
		return chunk.Lines(chunk.MarkdownWithMode(text, limit, mode), limit, sh.maxLines), nil
	}
	var pieces []markup.Piece
	paragraphs := []string{text}
	if mode == chunk.ModeNewline {
		paragraphs = chunk.MarkdownWithMode(text, sh.limit, mode)
	}
	for _, p := range paragraphs {
		pieces = append(pieces, markup.SplitRendered(p, sh.flavour, sh.limit, sh.unit)...)
	}
	srcs := make([]string, len(pieces))
	for i, p := range pieces {
		srcs[i] = p.Src
	}
	parts = chunk.Lines(srcs, 0, sh.maxLines)
	if !slices.Equal(parts, srcs) {
		return parts, nil // cut at the line limit: the renderings are of other texts
	}
	return parts, pieces
}

// prepare splits text into the messages to send to the instance and
// renders them for it, returning them with the format to send them in:
// markdown is split by its rendered length, then rendered to plain text
// for a channel that shows no markup.
func (d *Dispatcher) prepare(ctx context.Context, instance, text string, format channel.Format) ([]string, channel.Format) {
	parts, _, format := d.prepareRendered(ctx, instance, text, format)
	return parts, format
}

// prepareRendered is prepare with, beside each markdown part the channel
// renders, the rendering the measure made (nil where none; rendered is nil
// when there is none at all): the send carries it (SendRequest.Rendered),
// so the plugin does not parse the part again.
func (d *Dispatcher) prepareRendered(ctx context.Context, instance, text string, format channel.Format) ([]string, []*channel.Rendered, channel.Format) {
	sh := d.shapeOf(ctx, instance)
	parts, pieces := sh.split(text, format, d.settings().ChunkMode)
	if format != channel.FormatMarkdown {
		return parts, nil, format
	}
	if sh.plain() {
		for i, p := range parts {
			if pieces != nil && pieces[i].Rendered {
				parts[i] = pieces[i].Out
				continue
			}
			parts[i] = markup.Render(p, markup.Plain)
		}
		return parts, nil, channel.FormatPlain
	}
	var rendered []*channel.Rendered
	for i, p := range pieces {
		if !p.Rendered {
			continue
		}
		if rendered == nil {
			rendered = make([]*channel.Rendered, len(parts))
		}
		rendered[i] = &channel.Rendered{Markup: sh.markup, Text: p.Out, Visible: p.Visible}
	}
	return parts, rendered, format
}

// fits reports whether text, in the format the channel is sent (format),
// can be shown as one message: within the length limit once rendered,
// and the line limit.
func (sh shape) fits(text string) bool { return sh.fitsAs(text, sh.format()) }

// fitsAs is fits for text in format.
func (sh shape) fitsAs(text string, format channel.Format) bool {
	n := channel.TextLen(text, sh.unit)
	if format == channel.FormatMarkdown {
		n = markup.Len(text, sh.flavour, sh.unit)
	}
	return (sh.limit <= 0 || n <= sh.limit) && (sh.maxLines <= 0 || strings.Count(text, "\n") < sh.maxLines)
}

// format is the format text rendered for the channel is sent in.
func (sh shape) format() channel.Format {
	if sh.plain() {
		return channel.FormatPlain
	}
	return channel.FormatMarkdown
}
