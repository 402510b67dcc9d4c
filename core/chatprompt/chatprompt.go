// Package chatprompt writes the messaging section of claude's system
// prompt: where claude is (the channel, the kind of chat, its title), what
// the channel renders, how to stay silent (NO_REPLY), answer one message
// (reply tags) and send a file, what "System:" lines are, today's date and
// time zone, and where the notes of earlier sessions are. The host appends
// it to every turn's system prompt (agent.system_prompt's path), so claude
// knows it is in a chat.
//
// The text is a text/template (section.tmpl; messages { prompt_template }
// replaces it) over [Chat]. It is deterministic for a session on a given
// day — a warm claude process keeps it, and restarts with --resume only
// when it changes (a new day, a renamed group) — and short: the default
// section is 1.0 to 1.9 thousand characters, about 250 to 465 tokens
// (TestSectionIsShort logs each case).
package chatprompt

import (
	_ "embed"
	"fmt"
	"os"
	"strings"
	"sync"
	"text/template"
	"time"

	"github.com/clawhost/clawhost/sdk/channel"
)

// Chat is what the section says about one session's chat.
type Chat struct {
	// Agent is the agent's id ("" leaves the name out).
	Agent string
	// Channel is the platform's name ("Telegram"); Markup the markup it
	// shows (channel.Capabilities.Markup); MaxText its message length
	// limit (0 unknown).
	Channel string
	Markup  channel.Markup
	MaxText int
	// Type is the kind of chat; Title the group's or channel's name.
	Type  channel.ChatType
	Title string
	// RequireMention: in a group, claude is asked only when addressed.
	RequireMention bool
	// Files: the channel takes documents from the host; SendFile: the
	// send_file tool is there; MaxFileMB: the size limit (0 unsaid).
	Files     bool
	SendFile  bool
	MaxFileMB int
	// Reactions: the channel sets reactions and the react tool is there.
	Reactions bool
	// Schedule: the schedule_message tool is there (what to use instead of
	// work that would outlive the answer).
	Schedule bool
	// Date is today in Location; Zone names the zone.
	Date time.Time
	Zone string
	// Memory: say where the notes of earlier sessions are; Flush: the
	// memory flush writes them before a compaction.
	Memory bool
	Flush  bool
}

//go:embed section.tmpl
var defaultText string

// Template is a parsed section template.
type Template struct {
	t *template.Template
	// daily: the text depends on Chat.Date's day only (the built-in
	// section), so a rendering is kept for the rest of the day: a warm
	// turn renders the section to see whether it changed, and text/template
	// costs about 0.1 ms of the host's CPU a turn (BenchmarkRender). A
	// template of messages { prompt_template } may read the clock to the
	// second and is rendered every time.
	daily bool
	mu    sync.Mutex
	memo  map[Chat]string
}

// memoMax bounds a daily template's memo (chats × agents seen today);
// when it is full it starts again.
const memoMax = 512

var funcs = template.FuncMap{"chatKind": chatKind, "format": format}

// Default is the built-in section.
var Default = daily(must(Parse("section", defaultText)))

func daily(t *Template) *Template {
	t.daily = true
	return t
}

// Parse parses a section template.
func Parse(name, text string) (*Template, error) {
	t, err := template.New(name).Funcs(funcs).Option("missingkey=error").Parse(text)
	if err != nil {
		return nil, err
	}
	return &Template{t: t}, nil
}

// ParseFile parses the template file at path (messages { prompt_template }).
func ParseFile(path string) (*Template, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, string(b))
}

func must(t *Template, err error) *Template {
	if err != nil {
		panic(err)
	}
	return t
}

// Render writes the section for c.
func (t *Template) Render(c Chat) (string, error) {
	if !t.daily {
		return t.render(c)
	}
	y, m, d := c.Date.Date()
	c.Date = time.Date(y, m, d, 0, 0, 0, 0, c.Date.Location())
	t.mu.Lock()
	text, ok := t.memo[c]
	t.mu.Unlock()
	if ok {
		return text, nil
	}
	text, err := t.render(c)
	if err != nil {
		return "", err
	}
	t.mu.Lock()
	if t.memo == nil || len(t.memo) >= memoMax {
		t.memo = make(map[Chat]string)
	}
	t.memo[c] = text
	t.mu.Unlock()
	return text, nil
}

func (t *Template) render(c Chat) (string, error) {
	var b strings.Builder
	if err := t.t.Execute(&b, c); err != nil {
		return "", fmt.Errorf("messages.prompt_template: %w", err)
	}
	return strings.TrimSpace(b.String()), nil
}

// chatKind is "a direct chat", "the group", "the channel" (and a thread of
// those).
func chatKind(c Chat) string {
	switch c.Type {
	case channel.ChatGroup:
		return "a group chat"
	case channel.ChatChannel:
		return "a channel"
	}
	return "a direct chat"
}

// format is what the channel renders, by the markup it shows.
func format(c Chat) string {
	var s string
	switch c.Markup {
	case channel.MarkupHTMLSubset:
		s = "Write Markdown: bold, italic, strikethrough, code, code blocks, links and quotes show as such; headings become bold lines and tables monospace blocks."
	case channel.MarkupRichHTML:
		s = "Write Markdown: " + c.Channel + " shows bold, italic, strikethrough, code, code blocks, headings, lists, quotes and links; tables become monospace blocks."
	case channel.MarkupMarkdown:
		s = "Write Markdown: " + c.Channel + " shows bold, italic, headings, lists, code blocks, quotes and links; tables may become code blocks."
	case channel.MarkupMrkdwn:
		s = "Write Markdown: " + c.Channel + " shows bold, italic, strikethrough, code, code blocks, quotes, lists and links; headings become bold lines and tables monospace blocks."
	case channel.MarkupLightweight:
		s = "Write short paragraphs with light Markdown (bold, italic, code, lists): " + c.Channel + " has no headings or link text, tables become monospace blocks, so give links as plain URLs."
	default:
		s = "Write plain text: " + c.Channel + " shows no formatting, and Markdown would appear as typed."
	}
	if c.MaxText > 0 {
		s += fmt.Sprintf(" Long answers are split into messages of up to %d characters by the host; keep answers as short as the question allows.", c.MaxText)
	}
	return s
}
