package telegramtest

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/clawhost/clawhost/sdk/channel"
)

// supportedTags are the tags Telegram's parse_mode HTML accepts.
var supportedTags = map[string]bool{
	"a": true, "b": true, "strong": true, "i": true, "em": true, "u": true, "ins": true,
	"s": true, "strike": true, "del": true, "span": true, "tg-spoiler": true,
	"code": true, "pre": true, "blockquote": true, "tg-emoji": true,
}

// ParseHTML parses text the way the Bot API's parse_mode "HTML" does and
// returns the visible text (tags removed, entities decoded). Its errors are
// the texts Telegram puts after "Bad Request: can't parse entities: ", e.g.
// `Unsupported start tag "br" at byte offset 5` or
// "Can't find end tag corresponding to start tag b".
//
// Like Telegram, an '&' that does not start a known entity is kept as text;
// '<' always starts a tag.
func ParseHTML(s string) (string, error) {
	var out strings.Builder
	var stack []string
	for i := 0; i < len(s); {
		c := s[i]
		switch c {
		case '&':
			if r, n := decodeEntity(s[i:]); n > 0 {
				out.WriteRune(r)
				i += n
				continue
			}
			out.WriteByte('&')
			i++
		case '<':
			begin := i
			if i+1 < len(s) && s[i+1] == '/' {
				j := i + 2
				for j < len(s) && isTagNameByte(s[j]) {
					j++
				}
				name := strings.ToLower(s[i+2 : j])
				for j < len(s) && (s[j] == ' ' || s[j] == '\n' || s[j] == '\t') {
					j++
				}
				if j >= len(s) || s[j] != '>' {
					return "", fmt.Errorf("Unclosed end tag at byte offset %d", begin)
				}
				if len(stack) == 0 {
					return "", fmt.Errorf("Unexpected end tag at byte offset %d", begin)
				}
				if top := stack[len(stack)-1]; top != name {
					return "", fmt.Errorf("Unmatched end tag at byte offset %d, expected \"</%s>\", found \"</%s>\"", begin, top, name)
				}
				stack = stack[:len(stack)-1]
				i = j + 1
				continue
			}
			j := i + 1
			for j < len(s) && isTagNameByte(s[j]) {
				j++
			}
			name := strings.ToLower(s[i+1 : j])
			if name == "" {
				return "", fmt.Errorf("Empty tag name at byte offset %d", begin)
			}
			if !supportedTags[name] {
				return "", fmt.Errorf("Unsupported start tag \"%s\" at byte offset %d", name, begin)
			}
			attrs, end, err := parseAttributes(s, j, begin)
			if err != nil {
				return "", err
			}
			if name == "span" && attrs["class"] != "tg-spoiler" {
				return "", fmt.Errorf("Tag \"span\" must have class \"tg-spoiler\" at byte offset %d", begin)
			}
			stack = append(stack, name)
			i = end
		default:
			out.WriteByte(c)
			i++
		}
	}
	if len(stack) > 0 {
		return "", fmt.Errorf("Can't find end tag corresponding to start tag %s", stack[len(stack)-1])
	}
	return out.String(), nil
}

func isTagNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-'
}

// parseAttributes reads the attributes of a start tag from s[i:] up to and
// including '>' and returns the index after it.
func parseAttributes(s string, i, begin int) (map[string]string, int, error) {
	attrs := map[string]string{}
	for {
		for i < len(s) && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r') {
			i++
		}
		if i >= len(s) {
			return nil, 0, fmt.Errorf("Unclosed start tag at byte offset %d", begin)
		}
		if s[i] == '>' {
			return attrs, i + 1, nil
		}
		if s[i] == '/' && i+1 < len(s) && s[i+1] == '>' {
			return nil, 0, fmt.Errorf("Unclosed start tag at byte offset %d", begin)
		}
		j := i
		for j < len(s) && isTagNameByte(s[j]) {
			j++
		}
		if j == i {
			return nil, 0, fmt.Errorf("Empty attribute name in the tag at byte offset %d", begin)
		}
		name := strings.ToLower(s[i:j])
		i = j
		for i < len(s) && s[i] == ' ' {
			i++
		}
		if i >= len(s) || s[i] != '=' {
			return nil, 0, fmt.Errorf("Expected equal sign in declaration of an attribute of the tag at byte offset %d", begin)
		}
		i++
		for i < len(s) && s[i] == ' ' {
			i++
		}
		if i >= len(s) {
			return nil, 0, fmt.Errorf("Unclosed start tag at byte offset %d", begin)
		}
		var raw string
		if q := s[i]; q == '"' || q == '\'' {
			end := strings.IndexByte(s[i+1:], q)
			if end < 0 {
				return nil, 0, fmt.Errorf("Unclosed start tag at byte offset %d", begin)
			}
			raw = s[i+1 : i+1+end]
			i += end + 2
		} else {
			j := i
			for j < len(s) && s[j] != ' ' && s[j] != '>' && s[j] != '\n' && s[j] != '\t' {
				j++
			}
			raw = s[i:j]
			i = j
		}
		var v strings.Builder
		for k := 0; k < len(raw); {
			if raw[k] == '&' {
				if r, n := decodeEntity(raw[k:]); n > 0 {
					v.WriteRune(r)
					k += n
					continue
				}
			}
			v.WriteByte(raw[k])
			k++
		}
		attrs[name] = v.String()
	}
}

// decodeEntity decodes an HTML entity at the start of s ("&lt;", "&#60;",
// "&#x3C;"); n is 0 when s does not start with one Telegram knows.
func decodeEntity(s string) (rune, int) {
	semi := strings.IndexByte(s, ';')
	if semi < 2 || semi > 12 {
		return 0, 0
	}
	body := s[1:semi]
	switch body {
	case "lt":
		return '<', semi + 1
	case "gt":
		return '>', semi + 1
	case "amp":
		return '&', semi + 1
	case "quot":
		return '"', semi + 1
	}
	if body[0] != '#' {
		return 0, 0
	}
	var v uint64
	var err error
	if len(body) > 1 && (body[1] == 'x' || body[1] == 'X') {
		v, err = strconv.ParseUint(body[2:], 16, 32)
	} else {
		v, err = strconv.ParseUint(body[1:], 10, 32)
	}
	if err != nil || v == 0 || v > 0x10FFFF {
		return 0, 0
	}
	return rune(v), semi + 1
}

// UTF16Len is the length of s in UTF-16 code units, the unit of Telegram's
// text limits (channel.TextLen).
func UTF16Len(s string) int { return channel.TextLen(s, channel.LengthUTF16) }
