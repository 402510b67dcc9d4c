package approval

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/clawhost/clawhost/core/internal/spoken"
	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/sdk/channel"
)

// What a person reads before deciding is what will run: the whole command
// (or file content, or diff), never silently cut. The model wrote the
// input, so it is shown visibly — runs of spaces counted (a command padded
// with 320 spaces then "; curl … | sh" shows its tail), tabs, control,
// invisible and direction characters written as escapes. An input over
// longLen characters or longLines lines is shown by its start in the
// question and sent whole as an attached text file; where the channel
// cannot attach one, the question carries all of it, over several
// messages.
const (
	longLen   = 1000
	longLines = 20
	// writeLines is how much of a Write's content the question shows.
	writeLines = 10
	// summaryLen and summaryLines bound the Summary listed by /status and
	// the status page (not the question).
	summaryLen   = 300
	summaryLines = 6
	// spaceRun is the shortest run of spaces shown counted.
	spaceRun = 4
)

// rendering is a tool input made readable.
type rendering struct {
	// text is all of it, visible.
	text string
	// long: text is over longLen or longLines; the question shows head
	// and the input goes along as file (named name).
	long bool
	head string
	file []byte
	name string
	// what names the thing shown ("command", "content", "edit", "input").
	what string
}

// Summary renders a tool's input briefly, for /status and the status page:
// visible like the question, at most summaryLines lines of summaryLen
// characters, a cut marked "…".
func Summary(tool string, raw json.RawMessage) string {
	return cut(renderInput(tool, raw).text, summaryLen, summaryLines)
}

// renderInput renders a tool's input: the command line of Bash; the path
// and a diff summary of Write, Edit, MultiEdit and NotebookEdit; the URL of
// WebFetch; the query of WebSearch; every field of other tools.
func renderInput(tool string, raw json.RawMessage) rendering {
	var in toolInput
	_ = json.Unmarshal(raw, &in)
	var b strings.Builder
	r := rendering{what: "input", name: "input.json"}
	render, ok := toolRenderers[tool]
	if !ok {
		render = renderOther
	}
	body := render(in, &b, &r) // the part whose length decides "long"
	if r.file == nil {
		var pretty strings.Builder
		enc := json.NewEncoder(&pretty)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		_ = enc.Encode(map[string]any(in))
		r.file = []byte(pretty.String())
	}
	r.text = b.String()
	if utf8.RuneCountInString(body) > longLen || lineCount(body) > longLines || utf8.RuneCountInString(r.text) > longLen+summaryLen || lineCount(r.text) > longLines+writeLines {
		r.long = true
		r.head = cut(r.text, longLen, longLines)
	}
	if tool == "Write" && lineCount(in.str("content")) > writeLines {
		// A Write shows the first lines of its content; the file has all.
		r.long = true
		if r.head == "" || lineCount(r.head) > 2+writeLines {
			r.head = cut(r.text, longLen, 2+writeLines)
		}
	}
	return r
}

// toolInput is a tool call's input as claude sent it.
type toolInput map[string]any

// str is the input's string k, "" when absent or not a string.
func (in toolInput) str(k string) string { s, _ := in[k].(string); return s }

// A toolRenderer writes the summary of one tool's input to b, sets what
// the attached file holds in r, and returns the part of the input whose
// length decides whether the rendering is long.
type toolRenderer func(in toolInput, b *strings.Builder, r *rendering) string

// toolRenderers are the tools with a rendering of their own; any other
// tool's input is listed key by key (renderOther).
var toolRenderers = map[string]toolRenderer{
	"Bash":         renderBash,
	"Write":        renderWrite,
	"Edit":         renderEdit,
	"MultiEdit":    renderMultiEdit,
	"NotebookEdit": renderNotebookEdit,
	"WebFetch":     renderWebFetch,
	"WebSearch":    renderWebSearch,
}

func renderBash(in toolInput, b *strings.Builder, r *rendering) string {
	r.what, r.name = "command", "command.sh"
	body := in.str("command")
	b.WriteString("$ " + visible(body))
	if bg, _ := in["run_in_background"].(bool); bg {
		b.WriteString("\n(in the background)")
	}
	if d := in.str("description"); d != "" {
		b.WriteString("\n(" + cut(visible(d), summaryLen, 1) + ")")
	}
	r.file = []byte(body)
	return body
}

func renderWrite(in toolInput, b *strings.Builder, r *rendering) string {
	r.what, r.name = "content", fileName(in.str("file_path"))
	body := in.str("content")
	fmt.Fprintf(b, "%s\nwrite %s, %s", visible(in.str("file_path")), count(lineCount(body), "line"), count(len(body), "byte"))
	if body != "" {
		b.WriteString(":\n" + quoted("│ ", body))
	}
	r.file = []byte(body)
	return body
}

func renderEdit(in toolInput, b *strings.Builder, r *rendering) string {
	r.what, r.name = "edit", fileName(in.str("file_path"))+".diff"
	all, _ := in["replace_all"].(bool)
	body := diff(in.str("old_string"), in.str("new_string"))
	b.WriteString(visible(in.str("file_path")) + "\n" + editLine(in.str("old_string"), in.str("new_string"), all) + "\n" + visible(body))
	r.file = []byte(unified(in.str("file_path"), body))
	return body
}

func renderMultiEdit(in toolInput, b *strings.Builder, r *rendering) string {
	r.what, r.name = "edits", fileName(in.str("file_path"))+".diff"
	edits, _ := in["edits"].([]any)
	var parts []string
	for i, e := range edits {
		m, _ := e.(map[string]any)
		old, _ := m["old_string"].(string)
		nw, _ := m["new_string"].(string)
		all, _ := m["replace_all"].(bool)
		parts = append(parts, fmt.Sprintf("edit %d: %s\n%s", i+1, editLine(old, nw, all), diff(old, nw)))
	}
	body := strings.Join(parts, "\n")
	fmt.Fprintf(b, "%s\n%s\n%s", visible(in.str("file_path")), count(len(edits), "edit"), visible(body))
	r.file = []byte(unified(in.str("file_path"), body))
	return body
}

func renderNotebookEdit(in toolInput, b *strings.Builder, r *rendering) string {
	r.what, r.name = "cell", fileName(in.str("notebook_path"))+".txt"
	body := in.str("new_source")
	fmt.Fprintf(b, "%s\n", visible(in.str("notebook_path")))
	var meta []string
	for _, k := range []string{"cell_id", "cell_type", "edit_mode"} {
		if v := in.str(k); v != "" {
			meta = append(meta, k+": "+visible(v))
		}
	}
	b.WriteString(strings.Join(meta, ", "))
	if body != "" {
		fmt.Fprintf(b, "\nnew source, %s:\n%s", count(lineCount(body), "line"), quoted("+ ", body))
	}
	r.file = []byte(body)
	return body
}

func renderWebFetch(in toolInput, b *strings.Builder, _ *rendering) string {
	b.WriteString(visible(in.str("url")))
	if p := in.str("prompt"); p != "" {
		b.WriteString("\nasking: " + visible(p))
	}
	return in.str("url") + "\n" + in.str("prompt")
}

func renderWebSearch(in toolInput, b *strings.Builder, _ *rendering) string {
	body := in.str("query")
	b.WriteString("search: " + visible(body))
	return body
}

// renderOther lists any other tool's input key by key, sorted; values
// that are not strings as JSON.
func renderOther(in toolInput, b *strings.Builder, _ *rendering) string {
	keys := make([]string, 0, len(in))
	for k := range in {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var lines []string
	for _, k := range keys {
		s, ok := in[k].(string)
		if !ok {
			v, _ := json.Marshal(in[k])
			s = string(v)
		}
		lines = append(lines, visible(k)+": "+visible(s))
	}
	body := strings.Join(lines, "\n")
	b.WriteString(body)
	return body
}

// visible writes s so that nothing in it hides: a run of spaceRun or more
// spaces as "⟨N spaces⟩", a run of more than two empty lines counted, and
// tabs, control characters, invisible (format) characters and spaces
// other than the plain one as escapes (\t, \r, \x1b, \u202e).
func visible(s string) string {
	var b strings.Builder
	spaces, newlines := 0, 0
	flush := func() {
		switch {
		case spaces >= spaceRun:
			fmt.Fprintf(&b, "⟨%d spaces⟩", spaces)
		case spaces > 0:
			b.WriteString(strings.Repeat(" ", spaces))
		}
		spaces = 0
		switch {
		case newlines > 3:
			fmt.Fprintf(&b, "\n⟨%d empty lines⟩\n", newlines-1)
		case newlines > 0:
			b.WriteString(strings.Repeat("\n", newlines))
		}
		newlines = 0
	}
	for _, r := range s {
		switch {
		case r == ' ':
			if newlines > 0 {
				flush()
			}
			spaces++
			continue
		case r == '\n':
			if spaces > 0 {
				flush()
			}
			newlines++
			continue
		}
		flush()
		switch {
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x80 && unicode.IsControl(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.IsSpace(r) || unicode.In(r, unicode.Zl, unicode.Zp) ||
			r == '\u115f' || r == '\u1160' || r == '\u3164' || r == '\uffa0' || (r >= '\ufe00' && r <= '\ufe0f'):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	if spaces > 0 {
		flush()
	}
	if newlines > 0 {
		fmt.Fprintf(&b, "\n⟨%s at the end⟩", count(newlines, "line break"))
	}
	return b.String()
}

// cut is s up to n characters and lines lines, with "…" where it was cut.
func cut(s string, n, lines int) string {
	ls := strings.Split(s, "\n")
	cutLines := len(ls) > lines
	if cutLines {
		ls = ls[:lines]
	}
	out := strings.Join(ls, "\n")
	if r := []rune(out); len(r) > n {
		return string(r[:n]) + "…"
	}
	if cutLines {
		return out + "\n…"
	}
	return out
}

// quoted is s, visible, each line after prefix.
func quoted(prefix, s string) string {
	lines := strings.Split(visible(strings.TrimSuffix(s, "\n")), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}

// diff is an edit as removed ("- ") and added ("+ ") lines.
func diff(old, nw string) string {
	var lines []string
	for _, l := range splitLines(old) {
		lines = append(lines, "- "+l)
	}
	for _, l := range splitLines(nw) {
		lines = append(lines, "+ "+l)
	}
	return strings.Join(lines, "\n")
}

// unified is the attached form of an edit's diff.
func unified(path, body string) string {
	return "--- " + path + "\n+++ " + path + "\n" + body + "\n"
}

func editLine(old, nw string, all bool) string {
	s := fmt.Sprintf("edit: −%d +%d lines", lineCount(old), lineCount(nw))
	if all {
		s += ", every occurrence"
	}
	return s
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// fileName is the attachment's name for a file the tool touches.
func fileName(path string) string {
	base := filepath.Base(path)
	if base == "." || base == "/" || base == "" {
		return "content.txt"
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == '/' || r == '\\' || r == 0x7f || unicode.Is(unicode.Cf, r) {
			return '_'
		}
		return r
	}, base) + ".txt"
}

// question is the text and buttons of a permission question; whole: the
// question carries the whole input (no file could be attached, or none is
// needed).
func (qu *question) render(cfg Config, buttons, whole bool) (string, [][]channel.Button) {
	if qu.plan {
		return qu.renderPlanQuestion(cfg, buttons, whole)
	}
	req := qu.q.Request
	var b strings.Builder
	fmt.Fprintf(&b, "claude wants to use %s:\n", toolName(req.Tool))
	switch {
	case !qu.r.long || whole:
		b.WriteString(qu.r.text)
		if qu.r.long {
			fmt.Fprintf(&b, "\n(the whole %s, %s)", qu.r.what, count(utf8.RuneCount(qu.r.file), "character"))
		}
	default:
		fmt.Fprintf(&b, "%s\n⟨continued: the whole %s, %s in %s, is in the attached file %s — read it before you allow it⟩",
			qu.r.head, qu.r.what, count(utf8.RuneCount(qu.r.file), "character"), count(lineCount(string(qu.r.file)), "line"), qu.r.name)
	}
	b.WriteString("\n")
	if req.Reason != "" {
		fmt.Fprintf(&b, "Why it asks: %s\n", cut(visible(req.Reason), summaryLen, 2))
	}
	if qu.forOther {
		fmt.Fprintf(&b, "Asked in a turn of %s in %s:%s.\n", visible(qu.asker()), qu.q.Target.Instance, qu.q.Target.ChatID)
	}
	always := len(qu.rules) > 0
	if buttons {
		fmt.Fprintf(&b, "Allow it? No answer in %s denies it.", spoken.Precise(cfg.Timeout))
		rows := [][]channel.Button{{{ID: buttonPrefix + qu.id + ":y", Label: "Allow"}, {ID: buttonPrefix + qu.id + ":n", Label: "Deny"}}}
		if always {
			whole := "Always allow " + rulesLabel(qu.rules)
			rows = append(rows, []channel.Button{{ID: buttonPrefix + qu.id + ":a", Label: label(whole, 60)}})
			if label(whole, 60) != whole {
				// The button is cut: the text says the whole rule (the
				// options before a subcommand, the subcommand itself).
				fmt.Fprintf(&b, "\n%s for the rest of this session.", whole)
			}
		}
		return b.String(), rows
	}
	if always {
		fmt.Fprintf(&b, "Reply yes, no, or always (allows %s for the rest of this session). No answer in %s denies it.", rulesLabel(qu.rules), spoken.Precise(cfg.Timeout))
	} else {
		fmt.Fprintf(&b, "Reply yes or no. No answer in %s denies it.", spoken.Precise(cfg.Timeout))
	}
	return b.String(), nil
}

// format is the question's format: a plan is markdown, the rest plain.
func (qu *question) format() channel.Format {
	if qu.plan {
		return channel.FormatMarkdown
	}
	return channel.FormatPlain
}

// resultLine replaces the question once it is decided.
func (qu *question) resultLine(o Outcome, cfg Config) string {
	if qu.plan {
		return qu.planResultLine(o, cfg)
	}
	what := toolName(qu.q.Request.Tool) + ":\n" + qu.summary
	switch {
	case o.By == "withdrawn":
		return "(Question withdrawn: the turn ended.) " + what
	case o.By == "timeout":
		return fmt.Sprintf("⏱ No answer within %s — denied. %s", spoken.Precise(cfg.Timeout), what)
	case len(o.Decision.Always) > 0:
		return fmt.Sprintf("✅ Allowed by %s, and %s from now on in this session. %s", o.By, rulesLabel(o.Decision.Always), what)
	case o.Decision.Allow:
		return fmt.Sprintf("✅ Allowed by %s. %s", o.By, what)
	}
	return fmt.Sprintf("❌ Denied by %s. %s", o.By, what)
}

// rulesLabel says what rules allow, for people: `git log …` for
// Bash(git log:*), "edits of notes.md" for Edit(//w/notes.md).
func rulesLabel(rules []runner.Rule) string {
	if len(rules) == 0 {
		return ""
	}
	s := ruleLabel(rules[0])
	if len(rules) > 1 {
		s += fmt.Sprintf(" and %d more", len(rules)-1)
	}
	return s
}

func ruleLabel(r runner.Rule) string {
	c := r.Content
	switch {
	case c == "":
		return toolName(r.Tool)
	case r.Tool == "Bash":
		if p, ok := strings.CutSuffix(c, ":*"); ok {
			return "`" + visible(p) + " …`"
		}
		if p, ok := strings.CutSuffix(c, " *"); ok {
			return "`" + visible(p) + " …`"
		}
		return "`" + visible(c) + "`"
	case r.Tool == "Edit":
		return "edits of " + visible(strings.TrimPrefix(c, "/"))
	case r.Tool == "Read":
		return "reads of " + visible(strings.TrimPrefix(c, "/"))
	case r.Tool == "WebFetch":
		return "fetches from " + visible(strings.TrimPrefix(c, "domain:"))
	}
	return visible(r.String())
}

// label is s cut to n characters for a button.
func label(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// toolName names a tool for people: an MCP tool by its server and name.
func toolName(tool string) string {
	if rest, ok := strings.CutPrefix(tool, "mcp__"); ok {
		if server, name, ok := strings.Cut(rest, "__"); ok {
			// A plugin's tool, which the host's server offers as
			// <instance>__<tool> (core/agenttools.ToolSeparator).
			if instance, t, ok := strings.Cut(name, "__"); ok && server == "clawhost" {
				return instance + "." + t + " (a tool of plugin " + instance + ")"
			}
			return name + " (MCP server " + server + ")"
		}
	}
	return tool
}

func lineCount(s string) int {
	if s == "" {
		return 0
	}
	return strings.Count(strings.TrimSuffix(s, "\n"), "\n") + 1
}

func count(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}
