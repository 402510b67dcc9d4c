package session

import "strings"

// TerminalCommand is the shell command that opens a chat's claude session
// in a terminal: `cd <workspace> && claude --resume <id>`, with
// CLAUDE_CONFIG_DIR=<configDir> before claude when the session's
// transcripts are in a config directory of the bot's own (configDir ""
// leaves claude its user's ~/.claude). Every part is quoted for a POSIX
// shell when it needs to be. "" when sessionID is empty (no turn yet:
// nothing to resume). The status page, /desktop and `clawhost sessions`
// print it alike.
func TerminalCommand(workspace, configDir, sessionID string) string {
	if sessionID == "" {
		return ""
	}
	var b strings.Builder
	if workspace != "" {
		b.WriteString("cd " + shellQuote(workspace) + " && ")
	}
	if configDir != "" {
		b.WriteString("CLAUDE_CONFIG_DIR=" + shellQuote(configDir) + " ")
	}
	b.WriteString("claude --resume " + shellQuote(sessionID))
	return b.String()
}

// shellQuote quotes s for a POSIX shell: as it is when it holds only
// characters no shell reads specially, else in single quotes.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:@%+=,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
