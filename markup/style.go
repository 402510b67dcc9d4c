package markup

import "strings"

// style is what a walker flavour writes for each construct. A pair is the
// open and close marks; empty marks write nothing.
type style struct {
	bold, italic, strike, code [2]string
	// html: marks are tags (not visible), text is escaped, quotes and code
	// blocks are elements.
	html bool
	// bullet is an unordered list's marker; "" keeps the author's.
	bullet string
	// rule is a thematic break.
	rule string
	// fence writes code blocks between ``` lines (else verbatim, or <pre>
	// in html).
	fence bool
	// links makes <a> elements of allowed urls (html).
	links bool
	// angle: text is escaped as Slack's mrkdwn wants (&, <, > as entities,
	// counted as written) and allowed urls become <url|label> links.
	angle bool
	// elems (with html): blocks are elements (elements.go): paragraphs,
	// headings, lists and nested quotes; line breaks are <br>; list
	// markers and quote marks are in the visible text only.
	elems bool
	// item wraps a list item's blocks (elems: <li>); pre a code block
	// without a language (html).
	item, pre [2]string
}

var styles = map[Flavour]style{
	Plain: {bullet: "", rule: "---"},
	HTMLSubset: {
		bold: [2]string{"<b>", "</b>"}, italic: [2]string{"<i>", "</i>"}, strike: [2]string{"<s>", "</s>"},
		code: [2]string{"<code>", "</code>"}, html: true, bullet: "• ", rule: "———", links: true,
		pre: [2]string{"<pre>", "</pre>"},
	},
	RichHTML: {
		bold: [2]string{"<strong>", "</strong>"}, italic: [2]string{"<em>", "</em>"}, strike: [2]string{"<del>", "</del>"},
		code: [2]string{"<code>", "</code>"}, html: true, elems: true, bullet: "• ", rule: "———", links: true,
		item: [2]string{"<li>", "</li>"}, pre: [2]string{"<pre><code>", "</code></pre>"},
	},
	Lightweight: {
		bold: [2]string{"*", "*"}, italic: [2]string{"_", "_"}, strike: [2]string{"~", "~"},
		code: [2]string{"`", "`"}, bullet: "- ", rule: "———", fence: true,
	},
	Mrkdwn: {
		bold: [2]string{"*", "*"}, italic: [2]string{"_", "_"}, strike: [2]string{"~", "~"},
		code: [2]string{"`", "`"}, bullet: "• ", rule: "———", fence: true, angle: true,
	},
}

// escapeHTML escapes text for HTML: &, <, > and ".
func escapeHTML(s string) string {
	if !strings.ContainsAny(s, "&<>\"") {
		return s
	}
	return htmlEscaper.Replace(s)
}

var htmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")

// escapeAngle escapes text for Slack's mrkdwn: &, < and > (the three
// characters Slack reads as control sequences).
func escapeAngle(s string) string {
	if !strings.ContainsAny(s, "&<>") {
		return s
	}
	return angleEscaper.Replace(s)
}

var angleEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
