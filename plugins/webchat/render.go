package webchat

import (
	"html"
	"regexp"
	"sync"

	"github.com/microcosm-cc/bluemonday"

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
// result then goes through bluemonday's UGC policy, which removes scripts,
// event handlers, styles and javascript: URLs whatever the markdown
// produced. Plain text and user messages are escaped, never parsed. The
// page's Content-Security-Policy (no inline script, images only from the
// page's own origin) is a second wall behind this one.
//
// The policy is built when the first markdown text is rendered: its
// expressions and element tables are about 80 KB of the heap that an idle
// plugin, or one that only shows plain text, does not need.
type renderer struct {
	policy func() *bluemonday.Policy
}

func newRenderer() *renderer {
	return &renderer{policy: sync.OnceValue(ugcPolicy)}
}

// ugcPolicy is bluemonday's UGC policy with code blocks' language class,
// no referrer on links and a new tab for links that leave the page.
func ugcPolicy() *bluemonday.Policy {
	p := bluemonday.UGCPolicy()
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^language-[\w.+-]+$`)).OnElements("code")
	p.RequireNoReferrerOnLinks(true)
	p.AddTargetBlankToFullyQualifiedLinks(true)
	return p
}

// render returns the HTML of text in format (channel.FormatMarkdown or
// plain). The host's rendering of a send (SendRequest.Rendered) is not
// taken: it is made for the declared markup (markdown, tables as code
// blocks), not this HTML (tables as tables), and parsing here is what
// the sanitiser checks.
func (r *renderer) render(text string, format channel.Format) string {
	if format != channel.FormatMarkdown {
		return plainHTML(text)
	}
	return r.policy().Sanitize(markup.Render(text, markup.HTML))
}

// plainHTML is text escaped, in a block the page shows with its line breaks.
func plainHTML(text string) string {
	return `<div class="plain">` + html.EscapeString(text) + `</div>`
}
