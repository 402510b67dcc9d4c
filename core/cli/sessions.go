package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/clawhost/clawhost/core/admin"
	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/export"
	"github.com/clawhost/clawhost/core/gateway"
	"github.com/clawhost/clawhost/core/ownersession"
	"github.com/clawhost/clawhost/core/reports"
	"github.com/clawhost/clawhost/core/session"
	"github.com/clawhost/clawhost/core/settings"
)

const sessionsUsage = "usage: clawhost sessions [-config FILE] [-since 7d] [-json]"

// chatSession is one chat's session as `clawhost sessions` shows it.
type chatSession struct {
	Key     string    `json:"key"`
	Agent   string    `json:"agent"`
	Name    string    `json:"name,omitempty"`
	Title   string    `json:"title,omitempty"`
	Session string    `json:"claude_session"`
	Turns   int64     `json:"turns"`
	Last    time.Time `json:"last"`
	// Command opens the session in a terminal (what /desktop answers);
	// Terminal says whether the owner's claude directory has the chat's
	// latest transcript of it.
	Command  string `json:"command"`
	Terminal string `json:"terminal"`
}

// sessionsCommand lists each chat's claude session with the command that
// opens it in a terminal, from the database (running host or not).
func sessionsCommand(args []string, stdout, stderr io.Writer) int {
	path, since, asJSON, code := teamFlags("sessions", sessionsUsage, args, stdout, stderr, nil)
	if code >= 0 {
		return code
	}
	cfg, ok := load(path, stderr)
	if !ok {
		return 1
	}
	rows, ok := storedSessions(cfg, stderr)
	if !ok {
		return 1
	}
	profiles, _ := settings.Agents(cfg)
	out := []chatSession{}
	for _, s := range rows {
		if s.Turns == 0 || since > 0 && time.Since(s.Last) > since {
			continue
		}
		agent, ok := gateway.SessionAgent(s.Key)
		if !ok {
			continue
		}
		p, ok := profileOf(profiles, agent)
		if !ok {
			continue
		}
		c := chatSession{Key: s.Key, Agent: agent, Name: s.Name, Session: s.ClaudeSessionID, Turns: s.Turns, Last: s.Last}
		c.Title, c.Terminal = handBackState(cfg, p, s.ClaudeSessionID)
		c.Command = session.TerminalCommand(p.Runner.Workspace, ownersession.ConfigDirFor(p.OwnerClaudeDir, homeClaude()), s.ClaudeSessionID)
		out = append(out, c)
	}
	if asJSON {
		return writeJSON(stdout, stderr, "sessions", out)
	}
	if len(out) == 0 {
		fmt.Fprintln(stdout, "No chat has a session with a turn.")
		return 0
	}
	loc := cfg.Messages.Location()
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CHAT\tNAME\tTURNS\tLAST\tIN THE TERMINAL\tCOMMAND")
	for _, c := range out {
		name := c.Name
		if name == "" {
			name = c.Title
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", c.Key, dash(oneLine(name)), c.Turns, c.Last.In(loc).Format("2006-01-02 15:04"), c.Terminal, c.Command)
	}
	tw.Flush()
	return 0
}

// storedSessions reads the sessions from the running host's admin
// endpoint, else the database (SQLite's is the running host's alone).
func storedSessions(cfg *config.Config, stderr io.Writer) ([]admin.SessionRow, bool) {
	var rows []admin.SessionRow
	ok, err := fromHost(cfg, "/sessions.json", &rows)
	if err != nil {
		fmt.Fprintf(stderr, "clawhost sessions: %v\n", err)
		return nil, false
	}
	if ok {
		return rows, true
	}
	db, opened := openDB("sessions", cfg, stderr)
	if !opened {
		return nil, false
	}
	defer db.Close()
	stored, err := db.RecentSessions(context.Background(), 0)
	if err != nil {
		fmt.Fprintf(stderr, "clawhost sessions: %v\n", err)
		return nil, false
	}
	return reports.SessionRows(stored), true
}

func profileOf(ps []settings.Profile, agent string) (settings.Profile, bool) {
	for _, p := range ps {
		if p.ID == agent {
			return p, true
		}
	}
	return settings.Profile{}, false
}

// handBackState is claude's title of session id (from the chat's
// transcript) and whether the owner's claude directory holds the chat's
// latest transcript of it: "up to date", "behind: /desktop" (the chat went
// on since), "no: /desktop" (never handed back), "diverged" (the terminal
// went on with it too).
func handBackState(cfg *config.Config, p settings.Profile, id string) (title, state string) {
	chat, err := export.FindTranscript([]string{filepath.Join(cfg.DataDir, "runner", "chats"), p.TranscriptDir}, id)
	if err != nil {
		return "", "no transcript"
	}
	data, err := ownersession.Read(chat)
	if err != nil {
		return "", "unreadable"
	}
	if f, err := os.Open(chat); err == nil {
		sum, _ := ownersession.Parse(f)
		f.Close()
		title = sum.Title
	}
	own, err := ownersession.Read(filepath.Join(ownersession.ProjectDir(p.OwnerClaudeDir, p.Runner.Workspace), id+".jsonl"))
	switch {
	case err != nil:
		return title, "no: /desktop"
	case len(own) == len(data) && string(own) == string(data):
		return title, "up to date"
	case len(own) < len(data) && string(data[:len(own)]) == string(own):
		return title, "behind: /desktop"
	}
	return title, "diverged"
}

// homeClaude is ~/.claude of the user running the command ("" none).
func homeClaude() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".claude")
}
