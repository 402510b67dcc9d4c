package webchat

import (
	"html"
	"net/url"
	"strings"
)

// sanitize returns what of src, the HTML the markup module writes for a
// page, a message may show: the elements of markdown, with the attributes
// they need, and nothing else. It does not filter the HTML it reads, it
// writes a new one: every tag is read by a strict grammar (a tag the
// grammar does not read is text, its "<" escaped), and only an allowed
// element is written again, with only its allowed attributes, each value
// decoded and escaped again; text keeps its character references and
// nothing that could start a tag. A closing tag closes only an element it
// opened (what it left open is closed at the end), so the fragment cannot
// close the page's own elements.
//
// What is kept is bluemonday's UGC policy as far as the markdown reaches
// it (it sanitised the page's messages until 2026-11-29; its package
// initialisers alone held about 1 MB of every idle web chat): links only
// to http, https, mailto or a relative URL, with rel="nofollow noreferrer"
// and, when they leave the page, target="_blank" and noopener; images
// from the same URLs (the page's Content-Security-Policy loads only its
// own); a code block's language class. No style, event handler, form or
// script survives, whatever src holds (FuzzSanitize).
func sanitize(src string) string {
	src = strings.ToValidUTF8(src, "\uFFFD")
	s := sanitizer{}
	s.b.Grow(len(src) + len(src)/8)
	for i := 0; i < len(src); {
		switch src[i] {
		case '<':
			t, n := readTag(src[i:])
			if n == 0 {
				s.b.WriteString("&lt;")
				i++
				continue
			}
			s.tag(t)
			i += n
		case '&':
			if n := referenceLen(src[i:]); n > 0 {
				s.b.WriteString(src[i : i+n])
				i += n
			} else {
				s.b.WriteString("&amp;")
				i++
			}
		case '>':
			s.b.WriteString("&gt;")
			i++
		default:
			j := i + 1
			for j < len(src) && src[j] != '<' && src[j] != '&' && src[j] != '>' {
				j++
			}
			s.b.WriteString(src[i:j])
			i = j
		}
	}
	for len(s.open) > 0 {
		s.pop()
	}
	return s.b.String()
}

// containers are the elements with content a message may have; voids
// those without (no closing tag).
var (
	containers = setOf("p", "h1", "h2", "h3", "h4", "h5", "h6", "em", "strong", "del", "code", "pre",
		"blockquote", "ul", "ol", "li", "a", "table", "thead", "tbody", "tr", "th", "td")
	voids = setOf("br", "hr", "img")
)

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// maxOpen bounds how deep the elements sanitize writes nest: deeper ones are
// left out (their text stays), so a closing tag looks through at most
// maxOpen open elements, whatever the input.
const maxOpen = 256

type attr struct{ name, val string }

type tag struct {
	name    string // lower case
	closing bool
	attrs   []attr // values decoded
}

// openElem is an element the output opened, or one it left out (an "a"
// without a link it may keep) whose closing tag is left out too.
type openElem struct {
	name    string
	written bool
}

type sanitizer struct {
	b    strings.Builder
	open []openElem
}

func (s *sanitizer) tag(t tag) {
	if t.closing {
		for k := len(s.open) - 1; k >= 0; k-- {
			if s.open[k].name == t.name {
				for len(s.open) > k {
					s.pop()
				}
				return
			}
		}
		return
	}
	if !containers[t.name] && !voids[t.name] || containers[t.name] && len(s.open) >= maxOpen {
		return
	}
	attrs, ok := allowedAttrs(t)
	if containers[t.name] {
		s.open = append(s.open, openElem{name: t.name, written: ok})
	}
	if !ok {
		return
	}
	s.b.WriteString("<" + t.name)
	for _, a := range attrs {
		s.b.WriteString(" " + a.name + `="` + html.EscapeString(a.val) + `"`)
	}
	s.b.WriteString(">")
}

func (s *sanitizer) pop() {
	e := s.open[len(s.open)-1]
	s.open = s.open[:len(s.open)-1]
	if e.written {
		s.b.WriteString("</" + e.name + ">")
	}
}

// allowedAttrs returns the attributes t's element keeps, and false when
// the element itself goes (a link or an image without a URL it may keep).
func allowedAttrs(t tag) ([]attr, bool) {
	var keep []attr
	switch t.name {
	case "a":
		var u *url.URL
		for _, a := range t.attrs {
			switch a.name {
			case "href":
				if p, ok := safeURL(a.val); ok && u == nil {
					u = p
					keep = append(keep, a)
				}
			case "title":
				keep = append(keep, a)
			}
		}
		if u == nil {
			return nil, false
		}
		if u.Host != "" {
			return append(keep, attr{"rel", "nofollow noreferrer noopener"}, attr{"target", "_blank"}), true
		}
		return append(keep, attr{"rel", "nofollow noreferrer"}), true
	case "img":
		src := false
		for _, a := range t.attrs {
			switch a.name {
			case "src":
				if _, ok := safeURL(a.val); ok && !src {
					src = true
					keep = append(keep, a)
				}
			case "alt", "title":
				keep = append(keep, a)
			}
		}
		return keep, src
	case "code":
		for _, a := range t.attrs {
			if a.name == "class" && languageClass(a.val) {
				keep = append(keep, a)
			}
		}
	case "ol":
		for _, a := range t.attrs {
			if a.name == "start" && a.val != "" && len(a.val) <= 9 && strings.Trim(a.val, "0123456789") == "" {
				keep = append(keep, a)
			}
		}
	}
	return keep, true
}

// safeURL reports whether v (decoded) may be a link's or an image's URL:
// one that parses, relative or with the scheme http, https or mailto. A
// browser drops tabs and newlines inside a URL ("java\tscript:"); url.Parse
// refuses every control character.
func safeURL(v string) (*url.URL, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil, false
	}
	u, err := url.Parse(v)
	if err != nil {
		return nil, false
	}
	switch strings.ToLower(u.Scheme) {
	case "", "http", "https", "mailto":
		return u, true
	}
	return nil, false
}

// languageClass: a code block's "language-<name>", name of letters,
// digits, "_", ".", "+" and "-".
func languageClass(v string) bool {
	name, ok := strings.CutPrefix(v, "language-")
	if !ok || name == "" {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("_.+-", c)) {
			return false
		}
	}
	return true
}

// readTag reads the tag at the start of s ("<"): <name( attr(="value")?)*( /)?>
// or </name>, names of ASCII letters and digits, values in double quotes
// (as goldmark writes them). It returns the tag and its length, 0 when s
// does not start with one.
func readTag(s string) (tag, int) {
	var t tag
	i := 1
	if i < len(s) && s[i] == '/' {
		t.closing = true
		i++
	}
	name := nameLen(s[i:], false)
	if name == 0 {
		return tag{}, 0
	}
	t.name = strings.ToLower(s[i : i+name])
	i += name
	for {
		sp := spaceLen(s[i:])
		i += sp
		if i >= len(s) {
			return tag{}, 0
		}
		switch {
		case s[i] == '>':
			return t, i + 1
		case strings.HasPrefix(s[i:], "/>") && !t.closing:
			return t, i + 2
		}
		if sp == 0 || t.closing {
			return tag{}, 0
		}
		n := nameLen(s[i:], true)
		if n == 0 {
			return tag{}, 0
		}
		a := attr{name: strings.ToLower(s[i : i+n])}
		i += n
		if strings.HasPrefix(s[i:], `="`) {
			end := strings.IndexByte(s[i+2:], '"')
			if end < 0 {
				return tag{}, 0
			}
			a.val = html.UnescapeString(s[i+2 : i+2+end])
			i += 2 + end + 1
		}
		t.attrs = append(t.attrs, a)
	}
}

// nameLen is the length of the element's (or, attr, the attribute's) name
// at the start of s: an ASCII letter, then letters, digits (and for an
// attribute "-", "_", ":").
func nameLen(s string, attr bool) int {
	i := 0
	for i < len(s) {
		c := s[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		more := c >= '0' && c <= '9' || attr && (c == '-' || c == '_' || c == ':')
		if !letter && (i == 0 || !more) {
			break
		}
		i++
	}
	return i
}

func spaceLen(s string) int {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r' || s[i] == '\f') {
		i++
	}
	return i
}

// referenceLen is the length of the character reference at the start of s
// ("&"): &name; &#digits; or &#xhex;, 0 when there is none.
func referenceLen(s string) int {
	i := 1
	digit := func(c byte) bool { return c >= '0' && c <= '9' }
	hex := func(c byte) bool { return digit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
	alnum := func(c byte) bool { return digit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
	ok, limit := alnum, 32
	if strings.HasPrefix(s[i:], "#x") || strings.HasPrefix(s[i:], "#X") {
		i, ok, limit = 3, hex, 6
	} else if strings.HasPrefix(s[i:], "#") {
		i, ok, limit = 2, digit, 7
	}
	start := i
	for i < len(s) && i-start < limit && ok(s[i]) {
		i++
	}
	if i == start || i >= len(s) || s[i] != ';' {
		return 0
	}
	return i + 1
}
