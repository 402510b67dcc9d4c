package approval

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode"

	"github.com/clawhost/clawhost/core/internal/spoken"
	"github.com/clawhost/clawhost/sdk/channel"
)

// Limits of a rendered input: the model wrote it, so it is cut short and
// stripped of control characters before anyone sees it.
const (
	maxLine  = 300
	maxLines = 6
)

// Summary renders a tool's input for a person deciding on it, in plain
// text: the command line of Bash, the file and the size of the change of
// Write and Edit, the URL of WebFetch, the query of WebSearch; for other
// tools their input's fields, each cut short. Never more than maxLines
// lines of maxLine characters, without control characters.
func Summary(tool string, raw json.RawMessage) string {
	var in map[string]any
	_ = json.Unmarshal(raw, &in)
	str := func(k string) string { s, _ := in[k].(string); return s }
	var lines []string
	switch tool {
	case "Bash":
		lines = append(lines, "$ "+str("command"))
		if d := str("description"); d != "" {
			lines = append(lines, "("+d+")")
		}
	case "Write":
		c := str("content")
		lines = append(lines, str("file_path"), fmt.Sprintf("write %s, %s", count(strings.Count(c, "\n")+boolInt(c != "" && !strings.HasSuffix(c, "\n")), "line"), count(len(c), "byte")))
	case "Edit":
		old, nw := str("old_string"), str("new_string")
		change := fmt.Sprintf("replace %s with %s", count(lineCount(old), "line"), count(lineCount(nw), "line"))
		if all, _ := in["replace_all"].(bool); all {
			change += ", every occurrence"
		}
		lines = append(lines, str("file_path"), change)
	case "MultiEdit":
		edits, _ := in["edits"].([]any)
		lines = append(lines, str("file_path"), count(len(edits), "edit"))
	case "NotebookEdit":
		lines = append(lines, str("notebook_path"))
	case "WebFetch":
		lines = append(lines, str("url"))
	case "WebSearch":
		lines = append(lines, "search: "+str("query"))
	case "Read", "Glob", "Grep":
		for _, k := range []string{"file_path", "path", "pattern"} {
			if v := str(k); v != "" {
				lines = append(lines, k+": "+v)
			}
		}
	}
	if len(lines) == 0 {
		keys := make([]string, 0, len(in))
		for k := range in {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			v, _ := json.Marshal(in[k])
			s := string(v)
			if str, ok := in[k].(string); ok {
				s = str
			}
			lines = append(lines, k+": "+s)
		}
	}
	return clean(lines)
}

// clean joins lines, each without control characters and cut at maxLine,
// at most maxLines of them.
func clean(lines []string) string {
	var out []string
	for _, l := range lines {
		for _, part := range strings.Split(l, "\n") {
			part = strings.Map(func(r rune) rune {
				if r == '\t' {
					return ' '
				}
				if unicode.IsControl(r) || r == '\u202e' || r == '\u202d' || r == '\u2066' || r == '\u2067' || r == '\u2068' || r == '\u2069' {
					return -1
				}
				return r
			}, part)
			if strings.TrimSpace(part) == "" {
				continue
			}
			if r := []rune(part); len(r) > maxLine {
				part = string(r[:maxLine-1]) + "…"
			}
			if len(out) == maxLines {
				out[maxLines-1] = "…"
				return strings.Join(out, "\n")
			}
			out = append(out, part)
		}
	}
	return strings.Join(out, "\n")
}

// render is the question's text and buttons.
func render(qu *question, cfg Config, buttons bool) (string, [][]channel.Button) {
	req := qu.q.Request
	var b strings.Builder
	fmt.Fprintf(&b, "claude wants to use %s:\n%s\n", toolName(req.Tool), qu.summary)
	if req.Reason != "" {
		fmt.Fprintf(&b, "Why it asks: %s\n", clean([]string{req.Reason}))
	}
	always := !req.NoAlways
	if buttons {
		fmt.Fprintf(&b, "Allow it? No answer in %s denies it.", spoken.Precise(cfg.Timeout))
		row := []channel.Button{{ID: buttonPrefix + qu.id + ":y", Label: "Allow"}, {ID: buttonPrefix + qu.id + ":n", Label: "Deny"}}
		rows := [][]channel.Button{row}
		if always {
			rows = append(rows, []channel.Button{{ID: buttonPrefix + qu.id + ":a", Label: "Always allow " + shortTool(req.Tool) + " here"}})
		}
		return b.String(), rows
	}
	if always {
		fmt.Fprintf(&b, "Reply yes, no, or always (allow %s for the rest of this session). No answer in %s denies it.", shortTool(req.Tool), spoken.Precise(cfg.Timeout))
	} else {
		fmt.Fprintf(&b, "Reply yes or no. No answer in %s denies it.", spoken.Precise(cfg.Timeout))
	}
	return b.String(), nil
}

// resultLine replaces the question once it is decided.
func resultLine(qu *question, o Outcome, cfg Config) string {
	what := toolName(qu.q.Request.Tool) + ":\n" + qu.summary
	switch {
	case o.By == "withdrawn":
		return "(Question withdrawn: the turn ended.) " + what
	case o.By == "timeout":
		return fmt.Sprintf("⏱ No answer within %s — denied. %s", spoken.Precise(cfg.Timeout), what)
	case o.Decision.Always:
		return fmt.Sprintf("✅ Allowed by %s, and %s from now on in this session. %s", o.By, shortTool(qu.q.Request.Tool), what)
	case o.Decision.Allow:
		return fmt.Sprintf("✅ Allowed by %s. %s", o.By, what)
	}
	return fmt.Sprintf("❌ Denied by %s. %s", o.By, what)
}

// toolName names a tool for people: an MCP tool by its server and name.
func toolName(tool string) string {
	if rest, ok := strings.CutPrefix(tool, "mcp__"); ok {
		if server, name, ok := strings.Cut(rest, "__"); ok {
			return name + " (MCP server " + server + ")"
		}
	}
	return tool
}

// shortTool is the tool's name cut to fit a button.
func shortTool(tool string) string {
	if r := []rune(toolName(tool)); len(r) > 20 {
		return string(r[:19]) + "…"
	}
	return toolName(tool)
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

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
