package settings

import (
	"os"

	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/core/session"
	"github.com/clawhost/clawhost/core/sessionkey"
)

// TerminalCommands returns what opens a session in a terminal
// (session.TerminalCommand) on the status page: its agent's workspace, and the config
// directory its transcripts are in — the chat's own when its claude runs
// sandboxed (runner.ChatConfigDir), else the agent's.
func TerminalCommands(cfg *config.Config) func(key sessionkey.Key, sessionID string) string {
	type where struct{ workspace, configDir, stateDir string }
	agents := map[string]where{}
	for _, a := range cfg.AllAgents() {
		p, _ := Agent(cfg, a) // the run_as error is the start's to report
		agents[a.ID] = where{a.Workspace, p.TranscriptDir, p.Runner.StateDir}
	}
	return func(key sessionkey.Key, sessionID string) string {
		if sessionID == "" {
			return ""
		}
		w := agents[key.Agent]
		dir := w.configDir
		if own := runner.ChatConfigDir(w.stateDir, key.String()); w.stateDir != "" {
			if _, err := os.Stat(own); err == nil {
				dir = own
			}
		}
		return session.TerminalCommand(w.workspace, dir, sessionID)
	}
}
