package webchat

import (
	"html"

	"github.com/clawhost/clawhost/markup"
	"github.com/clawhost/clawhost/sdk/channel"
)

// renderer turns message text into HTML that is safe to put into the page.
//
// Markdown is rendered by the markup module's HTML flavour (CommonMark +
// GFM: tables, strikethrough, autolinks, task lists; single newlines as
// line breaks) without the unsafe option; raw HTML in the text is
// shown as literal, escaped text rather than dropped, so
// "<img src=x onerror=...>" reads as written and creates no element. The
// result then goes through sanitize, which writes again only the
// elements and attributes markdown needs: no script, event handler,
// style or javascript: URL whatever the markdown produced. Plain text and
// user messages are escaped, never parsed. The page's
// Content-Security-Policy (no inline script, images only from the page's
// own origin) is a second wall behind this one.
type renderer struct{}

func newRenderer() *renderer { return &renderer{} }

// render returns the HTML of text in format (channel.FormatMarkdown or
// plain). The host's rendering of a send (SendRequest.Rendered) is not
// taken: it is made for the declared markup (markdown, tables as code
// blocks), not this HTML (tables as tables), and parsing here is what
// the sanitiser checks.
func (r *renderer) render(text string, format channel.Format) string {
	if format != channel.FormatMarkdown {
		return plainHTML(text)
	}
	return sanitize(markup.Render(text, markup.HTML))
}

// plainHTML is text escaped, in a block the page shows with its line breaks.
func plainHTML(text string) string {
	return `<div class="plain">` + html.EscapeString(text) + `</div>`
}
