// Package claudecmds is what clawhost knows of the claude CLI's own slash
// commands and skills, per agent: the names the CLI's system/init message
// lists (slash_commands, skills, terminal_slash_commands; recorded from each
// turn's init), and the project's own (.claude/commands/*.md and
// .claude/skills/*/SKILL.md in the agent's workspace, read when asked, so a
// new file is offered before claude ran once). It decides which of them a
// chat may run and what the command menu offers next to clawhost's own.
package claudecmds

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
)

// Prefix is the command that reaches claude's own command of a name
// clawhost uses too: "/cc compact" is claude's /compact, "/compact"
// clawhost's.
const Prefix = "cc"

// notInChat are the CLI's built-in commands that make no sense in a chat:
// they change the terminal's display or the CLI's own setup, manage
// clawhost's session behind its back (clawhost's /new, /model, /compact,
// /usage, /think and /status do that), or are internal. A chat cannot run
// them, not even as /cc name; the reason is what the chat is told.
var notInChat = map[string]string{
	"clear":           "it would empty claude's session behind clawhost's back; use /new",
	"color":           "it changes the terminal's colours",
	"focus":           "it is a terminal view",
	"heapdump":        "it writes a memory dump of the CLI",
	"doctor":          "it checks the CLI's installation in a terminal; use clawhost doctor",
	"config":          "it opens the CLI's settings screen",
	"output-style":    "it changes the terminal's output style",
	"fast":            "it changes the CLI's own settings",
	"effort":          "use clawhost's /think",
	"model":           "use clawhost's /model",
	"rename":          "it renames the CLI's session",
	"autocompact":     "it changes the CLI's own settings; clawhost compacts with /compact",
	"auto-mode-setup": "it changes the CLI's permission setup; use /mode",
	"mcp":             "it manages the CLI's MCP servers in a terminal",
	"agents":          "it opens the CLI's agent editor",
	"reload-plugins":  "it is a terminal command",
	"reload-skills":   "it is a terminal command",
	"resume":          "clawhost resumes sessions itself; use /sessions",
	"exit":            "clawhost runs claude; use /stop",
	"login":           "log in on the host with claude /login",
	"logout":          "it would log the host's claude out",
}

// NotInChat reports why claude's command name cannot run from a chat; ""
// when it can. Names the CLI marks as terminal-only (terminal_slash_commands)
// and internal ones ("__…") are refused too.
func (c *Catalog) NotInChat(agent, name string) string {
	name = strings.ToLower(name)
	if r, ok := notInChat[name]; ok {
		return r
	}
	if strings.HasPrefix(name, "__") {
		return "it is the CLI's internal command"
	}
	if c == nil {
		return ""
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if a := c.agents[agent]; a != nil && slices.Contains(a.terminal, name) {
		return "the CLI runs it only in a terminal"
	}
	return ""
}

// Command is one of claude's commands a chat may run.
type Command struct {
	// Name is claude's name of it ("greet", "code-review").
	Name string
	// Description is the project file's description (its front matter's
	// description, else its first line), or a generic line.
	Description string
}

// Catalog keeps, per agent, what the CLI's init listed. Safe for
// concurrent use.
type Catalog struct {
	// Workspace is an agent's workspace ("" for none).
	workspace func(agent string) string
	onChange  func(agent string)
	mu        sync.Mutex
	agents    map[string]*seen
}

type seen struct {
	slash, skills, terminal []string
}

// New returns a catalog reading the project commands under workspace(agent).
// onChange, when not nil, is called (outside the lock) when an init lists
// other names than the agent's last one.
func New(workspace func(agent string) string, onChange func(agent string)) *Catalog {
	return &Catalog{workspace: workspace, onChange: onChange, agents: map[string]*seen{}}
}

// Saw records an init message's lists for agent.
func (c *Catalog) Saw(agent string, slash, skills, terminal []string) {
	if c == nil || (slash == nil && skills == nil) {
		return
	}
	n := &seen{slash: slices.Clone(slash), skills: slices.Clone(skills), terminal: slices.Clone(terminal)}
	c.mu.Lock()
	old := c.agents[agent]
	changed := old == nil || !slices.Equal(old.slash, n.slash) || !slices.Equal(old.skills, n.skills) || !slices.Equal(old.terminal, n.terminal)
	c.agents[agent] = n
	c.mu.Unlock()
	if changed && c.onChange != nil {
		c.onChange(agent)
	}
}

// Key is how a typed or menu name matches claude's: lowercased, '-' as
// '_' (Telegram's menu allows only [a-z0-9_]; "/code_review" runs
// claude's code-review).
func Key(name string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(name, "/")), "-", "_")
}

// Commands are agent's commands a chat may run, sorted by name: the
// project's files first known, then what the last init listed.
func (c *Catalog) Commands(agent string) []Command {
	if c == nil {
		return nil
	}
	byKey := map[string]Command{}
	for _, cmd := range c.project(agent) {
		byKey[Key(cmd.Name)] = cmd
	}
	c.mu.Lock()
	var names []string
	if a := c.agents[agent]; a != nil {
		names = append(append(names, a.slash...), a.skills...)
	}
	c.mu.Unlock()
	for _, n := range names {
		if _, ok := byKey[Key(n)]; !ok {
			byKey[Key(n)] = Command{Name: n, Description: "claude's " + n}
		}
	}
	out := make([]Command, 0, len(byKey))
	for _, cmd := range byKey {
		if c.NotInChat(agent, cmd.Name) == "" {
			out = append(out, cmd)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Lookup finds claude's command a typed name means (Key-equal), for a chat.
func (c *Catalog) Lookup(agent, name string) (Command, bool) {
	k := Key(name)
	for _, cmd := range c.Commands(agent) {
		if Key(cmd.Name) == k {
			return cmd, true
		}
	}
	return Command{}, false
}

// project reads the workspace's .claude/commands/*.md and
// .claude/skills/*/SKILL.md. The workspace is claude's to write and the
// host reads as itself, so no symlink is followed (a command file linked
// to a secret of the host's would put it in every chat's menu) and only
// regular files are opened (a FIFO would block).
func (c *Catalog) project(agent string) []Command {
	if c.workspace == nil {
		return nil
	}
	ws := c.workspace(agent)
	if ws == "" || !realDir(filepath.Join(ws, ".claude")) {
		return nil
	}
	var out []Command
	cmds := filepath.Join(ws, ".claude", "commands")
	if ents, err := os.ReadDir(cmds); err == nil && realDir(cmds) {
		for _, e := range ents {
			name, ok := strings.CutSuffix(e.Name(), ".md")
			if !e.Type().IsRegular() || !ok || name == "" {
				continue
			}
			out = append(out, Command{Name: name, Description: describe(filepath.Join(cmds, e.Name()), name)})
		}
	}
	skills := filepath.Join(ws, ".claude", "skills")
	if ents, err := os.ReadDir(skills); err == nil && realDir(skills) {
		for _, e := range ents {
			p := filepath.Join(skills, e.Name(), "SKILL.md")
			if fi, err := os.Lstat(p); err == nil && e.IsDir() && fi.Mode().IsRegular() {
				out = append(out, Command{Name: e.Name(), Description: describe(p, e.Name())})
			}
		}
	}
	return out
}

// realDir reports whether p is a directory and not a symlink.
func realDir(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.IsDir()
}

// describe is a command file's description: its front matter's
// "description:", else its first non-empty line, else "claude's <name>".
// The file is opened without following a symlink and without blocking,
// and read only when it is a regular file.
func describe(path, name string) string {
	fallback := "claude's " + name
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return fallback
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return fallback
	}
	sc := bufio.NewScanner(io.LimitReader(f, 64<<10))
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	front, first := false, ""
	for i := 0; sc.Scan() && i < 40; i++ {
		ln := strings.TrimSpace(sc.Text())
		switch {
		case i == 0 && ln == "---":
			front = true
		case front && ln == "---":
			front = false
		case front:
			if v, ok := strings.CutPrefix(ln, "description:"); ok {
				if v = strings.Trim(strings.TrimSpace(v), `"'`); v != "" {
					return v
				}
			}
		case first == "" && ln != "":
			first = strings.TrimLeft(ln, "# ")
		}
	}
	if first == "" {
		return fallback
	}
	return first
}

// Split reads text as one of claude's commands: "/cc name args" (cc true)
// or "/name args". ok is false for text that is no "/word".
func Split(text string) (name, args string, cc, ok bool) {
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, "/") {
		return "", "", false, false
	}
	body := t[1:]
	word, rest := body, ""
	if i := strings.IndexAny(body, " \t\n"); i >= 0 {
		word, rest = body[:i], strings.TrimSpace(body[i:])
	}
	word, _, _ = strings.Cut(word, "@") // "/greet@my_bot" in a Telegram group
	if word == "" {
		return "", "", false, false
	}
	if strings.EqualFold(word, Prefix) {
		if rest == "" {
			return "", "", true, true
		}
		n, a, _, _ := Split("/" + strings.TrimPrefix(rest, "/"))
		return n, a, true, true
	}
	return word, rest, false, true
}
