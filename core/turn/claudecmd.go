package turn

import (
	"github.com/clawhost/clawhost/core/claudecmds"
	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/session"
)

// claudeCommand is the prompt line of a turn whose one message is one of
// claude's own commands: "/cc name args" always (the name as typed; the
// gateway refused the names a chat may not run), "/name args" when name is
// a command of the agent's that clawhost does not claim (the gateway
// routed clawhost's away). The line names claude's spelling of it
// ("/code_review" from Telegram's menu runs code-review).
func (t *Turns) claudeCommand(agent string, msgs []message.Message) (string, bool) {
	if len(msgs) != 1 || msgs[0].Forward != nil {
		return "", false
	}
	text := msgs[0].Command()
	name, args, cc, ok := claudecmds.Split(text)
	if !ok || name == "" {
		return "", false
	}
	if _, _, _, directive := session.SplitDirective(text); !cc && (directive || t.MatchTrigger(text).Triggered) {
		return "", false // clawhost's /model, /think, /new…: its own
	}
	if t.opts.ClaudeCommands.NotInChat(agent, name) != "" {
		return "", false // the gateway told the chat why
	}
	if cmd, found := t.opts.ClaudeCommands.Lookup(agent, name); found {
		name = cmd.Name
	} else if !cc {
		return "", false
	}
	if args != "" {
		return "/" + name + " " + args, true
	}
	return "/" + name, true
}

// isSlashWord reports whether m is the sender's "/word …" (claudecmds.Split).
func isSlashWord(m message.Message) bool {
	_, _, _, ok := claudecmds.Split(m.Command())
	return ok && m.Forward == nil
}
