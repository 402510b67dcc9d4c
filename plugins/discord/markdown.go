package discord

import (
	"regexp"
	"strings"
)

// markdownChars are the characters Discord's markdown reacts to anywhere.
var markdownChars = strings.NewReplacer(`\`, `\\`, `*`, `\*`, `_`, `\_`, "`", "\\`", `~`, `\~`, `|`, `\|`)

// lineStart are the markers Discord reacts to at the start of a line
// (quotes, headings, lists).
var lineStart = regexp.MustCompile(`(?m)^(\s*)(>|#{1,3} |-# |[-*] )`)

// escapeMarkdown makes text show literally.
func escapeMarkdown(text string) string {
	return lineStart.ReplaceAllString(markdownChars.Replace(text), `$1\$2`)
}
