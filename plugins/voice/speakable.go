package voice

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// codeSpoken is said where a code block was.
const codeSpoken = "(The code is in the message.)"

// restSpoken ends a reply cut at max_spoken characters.
const restSpoken = "The rest is in the message."

var (
	// fenceLine opens or closes a fenced code block.
	fenceLine  = regexp.MustCompile("^\\s*(```|~~~)")
	link       = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	bareURL    = regexp.MustCompile(`https?://\S+`)
	inlineCode = regexp.MustCompile("`([^`]*)`")
	// markers are markdown's emphasis and heading, quote and list marks.
	emphasis    = regexp.MustCompile(`(\*\*|__|\*|~~)`)
	underscores = regexp.MustCompile(`(^|\W)_([^_\n]+)_(\W|$)`)
	lineStart   = regexp.MustCompile(`^\s*(#{1,6}\s+|>\s?|[-*+]\s+|\d+[.)]\s+)`)
	spaces      = regexp.MustCompile(`[ \t]+`)
)

// speakable returns what is read aloud of a reply: the text without its
// code blocks (one sentence says where the code is), MEDIA: lines, markdown
// marks and URLs, cut at a sentence end before max characters (0: no
// limit) with a last sentence saying the rest is in the message. "" when
// nothing is left to say.
func speakable(text string, max int) string {
	var out []string
	inCode, saidCode := false, false
	for _, line := range strings.Split(text, "\n") {
		if fenceLine.MatchString(line) {
			if !inCode && !saidCode {
				out = append(out, codeSpoken)
				saidCode = true
			}
			inCode = !inCode
			continue
		}
		if inCode || strings.HasPrefix(strings.TrimSpace(line), "MEDIA:") {
			continue
		}
		saidCode = false
		line = lineStart.ReplaceAllString(line, "")
		line = link.ReplaceAllString(line, "$1")
		line = bareURL.ReplaceAllString(line, "(a link)")
		line = inlineCode.ReplaceAllString(line, "$1")
		line = emphasis.ReplaceAllString(line, "")
		line = underscores.ReplaceAllString(line, "$1$2$3")
		line = strings.ReplaceAll(line, "|", " ")
		line = strings.TrimSpace(spaces.ReplaceAllString(line, " "))
		if line == "" || strings.Trim(line, "-: ") == "" {
			continue
		}
		out = append(out, line)
	}
	s := strings.Join(out, "\n")
	if strings.TrimSpace(strings.ReplaceAll(s, codeSpoken, "")) == "" {
		return ""
	}
	if max <= 0 || utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)[:max]
	cut := string(r)
	// The last sentence end in the second half, else the last space.
	end := -1
	for _, sep := range []string{". ", "! ", "? ", ".\n", "!\n", "?\n"} {
		if i := strings.LastIndex(cut, sep); i > end {
			end = i
		}
	}
	if end >= len(cut)/2 {
		cut = cut[:end+1]
	} else if i := strings.LastIndexAny(cut, " \n"); i > 0 {
		cut = cut[:i] + "…"
	}
	return strings.TrimSpace(cut) + "\n" + restSpoken
}
