package discord

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// tableSep matches the separator row of a markdown table: | --- | :-: |.
var tableSep = regexp.MustCompile(`^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$`)

// tablesToCode renders markdown tables, which Discord shows as raw pipes,
// as aligned plain-text tables inside code blocks. Code blocks are left
// alone.
func tablesToCode(text string) string {
	lines := strings.Split(text, "\n")
	var out []string
	inFence := false
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			inFence = !inFence
		}
		if inFence || !strings.Contains(l, "|") || i+1 >= len(lines) || !tableSep.MatchString(lines[i+1]) {
			out = append(out, l)
			continue
		}
		rows := [][]string{cells(l)}
		j := i + 2
		for ; j < len(lines) && strings.Contains(lines[j], "|") && strings.TrimSpace(lines[j]) != ""; j++ {
			rows = append(rows, cells(lines[j]))
		}
		out = append(out, "```")
		out = append(out, alignTable(rows)...)
		out = append(out, "```")
		i = j - 1
	}
	return strings.Join(out, "\n")
}

// cells splits a table row.
func cells(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimPrefix(row, "|")
	row = strings.TrimSuffix(row, "|")
	parts := strings.Split(row, "|")
	for i, p := range parts {
		parts[i] = strings.TrimSpace(p)
	}
	return parts
}

// alignTable pads the columns; a rule follows the header.
func alignTable(rows [][]string) []string {
	var width []int
	for _, r := range rows {
		for c, s := range r {
			if c >= len(width) {
				width = append(width, 0)
			}
			width[c] = max(width[c], utf8.RuneCountInString(s))
		}
	}
	format := func(r []string) string {
		var b strings.Builder
		for c := range width {
			s := ""
			if c < len(r) {
				s = r[c]
			}
			if c > 0 {
				b.WriteString(" | ")
			}
			b.WriteString(s)
			if c < len(width)-1 {
				b.WriteString(strings.Repeat(" ", width[c]-utf8.RuneCountInString(s)))
			}
		}
		return strings.TrimRight(b.String(), " ")
	}
	out := []string{format(rows[0])}
	var rule []string
	for _, w := range width {
		rule = append(rule, strings.Repeat("-", max(w, 1)))
	}
	out = append(out, strings.Join(rule, "-+-"))
	for _, r := range rows[1:] {
		out = append(out, format(r))
	}
	return out
}

// markdownChars are the characters Discord's markdown reacts to anywhere.
var markdownChars = strings.NewReplacer(`\`, `\\`, `*`, `\*`, `_`, `\_`, "`", "\\`", `~`, `\~`, `|`, `\|`)

// lineStart are the markers Discord reacts to at the start of a line
// (quotes, headings, lists).
var lineStart = regexp.MustCompile(`(?m)^(\s*)(>|#{1,3} |-# |[-*] )`)

// escapeMarkdown makes text show literally.
func escapeMarkdown(text string) string {
	return lineStart.ReplaceAllString(markdownChars.Replace(text), `$1\$2`)
}
