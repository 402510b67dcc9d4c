package command

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/ownersession"
	"github.com/clawhost/clawhost/core/sessionkey"
)

// Terminal is the port to the owner's own claude sessions — the ones
// claude keeps for the person who runs it in a terminal (agent.
// owner_claude_dir) — for /continue and /desktop; the composer
// (core/gateway) implements it. Only an owner's chat that nobody else
// reaches calls it (Role.NotOwnersChat).
type Terminal interface {
	// Sessions are the owner's recent sessions of the workspace of key's
	// agent, the most recently written first; where is that workspace.
	Sessions(ctx context.Context, key sessionkey.Key, m *message.Message) (list []ownersession.Session, where string, err error)
	// Continue makes s the chat's session: forked (a copy under a session
	// id of the chat's own; the owner's file is never written) or taken
	// over (the same id, handed back by /desktop). The chat's warm claude
	// is retired, so the next turn resumes it. It returns the chat's
	// claude session id.
	Continue(ctx context.Context, key sessionkey.Key, m *message.Message, s ownersession.Session, takeover bool) (string, error)
	// Desktop puts the chat's latest transcript in the owner's config
	// directory and returns the command that opens it in a terminal.
	Desktop(ctx context.Context, key sessionkey.Key, m *message.Message) (string, error)
}

var (
	cmdName = &builtin{name: "name", help: "name this chat's session: /name TITLE (/list shows it, /switch takes it)", needs: control,
		run: func(h *Handler, c call) string { return h.name(c.ctx, c.key, c.args) }}
	cmdContinue = &builtin{name: "continue", help: "go on here with a session of your terminal's claude: /continue lists them, /continue N forks one, /continue N takeover takes it over", needs: ownersChat,
		run: func(h *Handler, c call) string { return h.continueSession(c) }}
	cmdDesktop = &builtin{name: "desktop", help: "the command that opens this chat's session in your terminal", needs: ownersChat,
		run: func(h *Handler, c call) string { return h.desktop(c) }}
)

// maxNameLen bounds a session's name.
const maxNameLen = 80

// name answers /name TITLE.
func (h *Handler) name(ctx context.Context, key sessionkey.Key, arg string) string {
	arg = strings.Join(strings.Fields(arg), " ")
	if arg == "" {
		return "Usage: /name TITLE — names this chat's session (/list shows it, /switch TITLE goes back to it)."
	}
	if len([]rune(arg)) > maxNameLen {
		return fmt.Sprintf("Not named: a name has at most %d characters.", maxNameLen)
	}
	if err := h.Sessions.Name(ctx, key, arg); err != nil {
		return "Not named: " + err.Error() + "."
	}
	return fmt.Sprintf("This session is now named %q.", arg)
}

// when is t as the commands show a date, in messages.timezone.
func (h *Handler) when(t time.Time) string {
	loc := time.Local
	if h.Location != nil && h.Location() != nil {
		loc = h.Location()
	}
	return t.In(loc).Format("2006-01-02 15:04")
}

// continueSession answers /continue [N|id|title] [takeover].
func (h *Handler) continueSession(c call) string {
	if h.Terminal == nil {
		return "Continuing a terminal session is not available here."
	}
	arg, takeover := strings.TrimSpace(c.args), false
	if rest, ok := cutLastWord(arg, "takeover"); ok {
		arg, takeover = rest, true
	}
	list, where, err := h.Terminal.Sessions(c.ctx, c.key, c.m)
	if err != nil {
		return "Your terminal sessions could not be read: " + err.Error() + "."
	}
	if len(list) == 0 {
		return fmt.Sprintf("No terminal session of %s was found (agent.owner_claude_dir says where your claude keeps them).", where)
	}
	if arg == "" && len(list) > 1 {
		return h.terminalList(list, where)
	}
	s, err := ownersession.Find(list, arg)
	if err != nil {
		return "Not continued: " + err.Error() + ". /continue lists them."
	}
	if takeover && s.Live {
		return fmt.Sprintf("Not taken over: %q looks open in your terminal (written in the last %s, or a running claude holds it) — two claudes writing one session lose turns. Quit it there first, or /continue %s without takeover to fork it.",
			s.Label(), ownersession.LiveWindow, strings.TrimSpace(arg+" "))
	}
	id, err := h.Terminal.Continue(c.ctx, c.key, c.m, s, takeover)
	if err != nil {
		return "Not continued: " + err.Error() + "."
	}
	how := "Forked into this chat as session " + shortID(id) + ": your terminal's file stays as it is. /desktop hands this chat's version back."
	if takeover {
		how = "Taken over: this chat now goes on with session " + shortID(id) + ". /desktop hands it back to your terminal under the same id."
	}
	return fmt.Sprintf("Continuing %q (%d turns, last %s). %s", s.Label(), s.Turns, h.when(s.Modified), how)
}

// cutLastWord cuts word (case ignored) off the end of s.
func cutLastWord(s, word string) (string, bool) {
	f := strings.Fields(s)
	if len(f) > 0 && strings.EqualFold(f[len(f)-1], word) {
		return strings.Join(f[:len(f)-1], " "), true
	}
	return s, false
}

// terminalList is /continue's list of the owner's sessions.
func (h *Handler) terminalList(list []ownersession.Session, where string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Your terminal sessions in %s, newest first:\n", where)
	for i, s := range list {
		live := ""
		if s.Live {
			live = " · looks live"
		}
		fmt.Fprintf(&b, "%d. %s — %s, %d turns (%s)%s\n", i+1, s.Label(), h.when(s.Modified), s.Turns, shortID(s.ID), live)
	}
	b.WriteString("/continue N forks one into this chat (your terminal's file stays as it is); /continue N takeover takes it over.")
	return b.String()
}

// desktop answers /desktop.
func (h *Handler) desktop(c call) string {
	if h.Terminal == nil {
		return "Handing a session to the terminal is not available here."
	}
	cmd, err := h.Terminal.Desktop(c.ctx, c.key, c.m)
	if err != nil {
		return "Not handed back: " + err.Error() + "."
	}
	return "Open this chat's session in your terminal:\n" + cmd
}
