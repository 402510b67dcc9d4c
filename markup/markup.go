// Package markup renders the agent's markdown for a chat channel and splits
// it to the channel's length limit measured after rendering.
//
// One goldmark parse (CommonMark with GitHub's tables, strikethrough,
// autolinks and task lists) feeds one walker; a [Flavour] says what the
// walker emits, as mautrix's format package has one converter per network:
//
//   - [Plain]: text without markup (emphasis markers, backticks and link
//     syntax go; code stays verbatim; quotes keep "> ");
//   - [HTMLSubset]: the HTML subset Telegram's parse_mode HTML accepts
//     (b, i, s, code, pre, a, blockquote), everything else escaped text;
//   - [RichHTML]: the HTML of a chat client that shows block elements
//     (Matrix's formatted_body): strong, em, del, code, pre with its
//     language, a, and p, br, ul/ol/li, h1–h6, hr, nested blockquote;
//     its visible text is the plain fallback sent beside it (Matrix's
//     body);
//   - [Lightweight]: WhatsApp-style marks: *bold* _italic_ ~strike~
//     `code` and ``` blocks;
//   - [Mrkdwn]: Slack's mrkdwn: the same marks, • bullets, &, < and >
//     as entities, links as <url|label>;
//   - [Markdown]: the markdown itself, for a channel that renders it
//     (Discord), with tables as code blocks;
//   - [HTML]: a whole HTML fragment for a page (tables as tables), to be
//     sanitised by the page's own policy.
//
// One table policy: a table is its cells' text in aligned columns, the
// header underlined ("---+---"), in a code block where the flavour has one.
// One link policy: "label (url)", or the url alone when the label is the
// url or empty; [HTMLSubset] makes a link of http, https, tg and mailto
// urls instead; images are their alt text and url.
//
// "Render then measure": a channel's limit counts what the reader sees
// ([Visible]), so [Split] cuts the markdown where each piece, rendered,
// fits — and never cuts a reply whose rendering fits. The host splits
// (it records every message before sending it, so the split must be its
// own); a plugin renders each piece it is given with [Render].
//
// Everything here is pure and safe for concurrent use.
package markup

import (
	"slices"
	"strings"
	"sync"

	"github.com/clawhost/clawhost/markup/internal/gfm"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

// Flavour is what markdown is rendered to.
type Flavour string

// Flavours.
const (
	// Plain is text without markup.
	Plain Flavour = "plain"
	// HTMLSubset is Telegram's HTML subset; its visible text is measured.
	HTMLSubset Flavour = "html-subset"
	// RichHTML is HTML with block elements (Matrix's formatted_body); its
	// visible text, sent beside it as the plain fallback, is measured.
	RichHTML Flavour = "rich-html"
	// Lightweight is WhatsApp's marks.
	Lightweight Flavour = "lightweight"
	// Mrkdwn is Slack's mrkdwn; its text is measured as written
	// (entities count whole).
	Mrkdwn Flavour = "mrkdwn"
	// Markdown is markdown for a channel that renders it, tables as code
	// blocks.
	Markdown Flavour = "markdown"
	// HTML is an HTML fragment for a web page.
	HTML Flavour = "html"
)

// For is the flavour a channel declaring m shows: MarkupNone (and an
// unknown kind) is Plain.
func For(m channel.Markup) Flavour {
	switch m {
	case channel.MarkupMarkdown:
		return Markdown
	case channel.MarkupHTMLSubset:
		return HTMLSubset
	case channel.MarkupRichHTML:
		return RichHTML
	case channel.MarkupLightweight:
		return Lightweight
	case channel.MarkupMrkdwn:
		return Mrkdwn
	}
	return Plain
}

// md is the markdown parser, built on first use: a process that renders
// nothing (an idle plugin, the host's CLI commands) does not keep its
// block and inline parsers.
var md = sync.OnceValue(func() goldmark.Markdown { return goldmark.New(goldmark.WithExtensions(gfm.GFM)) })

func parse(src []byte) ast.Node { return md().Parser().Parse(text.NewReader(src)) }

// Render renders markdown src in flavour f. The result has no leading or
// trailing white space (but for HTML).
func Render(src string, f Flavour) string {
	out, _ := render(src, f)
	return out
}

// Visible is the text a reader sees of Render(src, f): the rendering
// itself, but for HTMLSubset and RichHTML (its text without tags, entities
// decoded, RichHTML's with the line structure Plain has) and HTML (the
// Plain rendering).
func Visible(src string, f Flavour) string {
	_, vis := render(src, f)
	return vis
}

// RenderVisible is Render(src, f) and Visible(src, f) from one
// rendering: for a channel that sends the one and measures the other (or
// falls back to it), at half the cost of calling both.
func RenderVisible(src string, f Flavour) (out, visible string) { return render(src, f) }

// RenderFor is src rendered for a channel declaring the markup kind m, as
// the host sends it beside the source (channel.SendRequest.Rendered):
// nil for a kind rendered as Plain (MarkupNone, unknown kinds), whose
// text the host sends as plain text instead.
func RenderFor(src string, m channel.Markup) *channel.Rendered {
	f := For(m)
	if f == Plain {
		return nil
	}
	out, vis := RenderVisible(src, f)
	return &channel.Rendered{Markup: m, Text: out, Visible: vis}
}

// RenderSend gives a markdown send the rendering of its text and of its
// media's captions for a channel declaring m wherever it carries none for
// m (channel.SendRequest.Rendered, channel.OutboundMedia.CaptionRendered),
// as the host does before every send: the bundled plugins link no markdown
// parser and send text without one as plain text. A send in another
// format, or for a channel that shows no markup, is left as it is.
func RenderSend(req *channel.SendRequest, m channel.Markup) {
	if req.Format != channel.FormatMarkdown || For(m) == Plain {
		return
	}
	req.Rendered = ensureRendered(req.Rendered, req.Text, m)
	copied := false
	for i, md := range req.Media {
		r := ensureRendered(md.CaptionRendered, md.Caption, m)
		if r == md.CaptionRendered {
			continue
		}
		if !copied { // the caller's slice stays as it was
			req.Media, copied = slices.Clone(req.Media), true
		}
		req.Media[i].CaptionRendered = r
	}
}

// RenderEdit is RenderSend for an edit.
func RenderEdit(req *channel.EditRequest, m channel.Markup) {
	if req.Format != channel.FormatMarkdown || For(m) == Plain {
		return
	}
	req.Rendered = ensureRendered(req.Rendered, req.Text, m)
}

// ensureRendered is pre when it is a rendering for m or src is blank, else
// src rendered for m.
func ensureRendered(pre *channel.Rendered, src string, m channel.Markup) *channel.Rendered {
	if _, _, ok := pre.Of(m); ok || strings.TrimSpace(src) == "" {
		return pre
	}
	return RenderFor(src, m)
}

// RenderVisibleFrom is RenderVisible(src, f), taken from pre when that is
// the host's rendering of src for f (channel.SendRequest.Rendered, with
// src the request's Text) instead of parsing src again. pre of another
// markup, or nil, renders src.
func RenderVisibleFrom(pre *channel.Rendered, src string, f Flavour) (out, visible string) {
	if pre != nil && For(pre.Markup) == f {
		return pre.Text, pre.Visible
	}
	return RenderVisible(src, f)
}

// Len is the length of Visible(src, f) in unit: what a channel's limit is
// compared with.
func Len(src string, f Flavour, unit channel.LengthUnit) int {
	return channel.TextLen(Visible(src, f), unit)
}

func render(src string, f Flavour) (out, vis string) {
	switch f {
	case Markdown:
		s := markdown(src)
		return s, s
	case HTML:
		return renderHTML(src), walk(src, Plain).out
	}
	w := walk(src, f)
	if f == HTMLSubset || f == RichHTML {
		return w.out, w.vis
	}
	return w.out, w.out
}

// walk renders src with the walker in f (Plain, HTMLSubset, RichHTML,
// Lightweight or Mrkdwn).
func walk(src string, f Flavour) rendered {
	if strings.TrimSpace(src) == "" {
		return rendered{}
	}
	b := []byte(src)
	w := &walker{src: b, st: styles[f]}
	w.init()
	w.blocks(parse(b))
	return rendered{out: strings.TrimSpace(w.out.String()), vis: strings.TrimSpace(w.vis.String())}
}

type rendered struct{ out, vis string }
