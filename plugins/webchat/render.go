package webchat

import (
	"bytes"
	"html"
	"regexp"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	gmhtml "github.com/yuin/goldmark/renderer/html"

	"github.com/clawhost/clawhost/sdk/channel"
)

// renderer turns message text into HTML that is safe to put into the page.
//
// Markdown is rendered by goldmark (CommonMark + GFM: tables, strikethrough,
// autolinks, task lists) without its unsafe option, so raw HTML in the text
// is dropped; the result then goes through bluemonday's UGC policy, which
// removes scripts, event handlers, styles and javascript: URLs whatever the
// markdown produced. Plain text and user messages are escaped, never parsed.
// The page's Content-Security-Policy (no inline script, images only from the
// page's own origin) is a second wall behind this one.
type renderer struct {
	md     goldmark.Markdown
	policy *bluemonday.Policy
}

func newRenderer() *renderer {
	p := bluemonday.UGCPolicy()
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^language-[\w.+-]+$`)).OnElements("code")
	p.RequireNoReferrerOnLinks(true)
	p.AddTargetBlankToFullyQualifiedLinks(true)
	return &renderer{
		md: goldmark.New(
			goldmark.WithExtensions(extension.GFM),
			// Chat text uses single newlines as line breaks.
			goldmark.WithRendererOptions(gmhtml.WithHardWraps()),
		),
		policy: p,
	}
}

// render returns the HTML of text in format (channel.FormatMarkdown or
// plain).
func (r *renderer) render(text, format string) string {
	if format != channel.FormatMarkdown {
		return plainHTML(text)
	}
	var buf bytes.Buffer
	if err := r.md.Convert([]byte(text), &buf); err != nil {
		return plainHTML(text)
	}
	return r.policy.Sanitize(buf.String())
}

// plainHTML is text escaped, in a block the page shows with its line breaks.
func plainHTML(text string) string {
	return `<div class="plain">` + html.EscapeString(text) + `</div>`
}
