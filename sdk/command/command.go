// Package command is the contract of a command plugin: handlers for
// "/name args" messages, answered without the agent.
//
// The host answers its built-in commands first (/new, /status, ...), then
// asks command plugins by name; unknown /words go to the agent.
package command

import (
	"context"

	"github.com/clawhost/clawhost/sdk/channel"
)

// Handler is implemented by command plugins.
type Handler interface {
	// Commands lists the commands handled. Called after Configure and on
	// every reload; must not block.
	Commands() []Spec
	// Execute runs one invocation. Business failures are returned as
	// *channel.Error; the host tells the user.
	Execute(ctx context.Context, req Request) (Response, error)
}

// Spec describes one command.
type Spec struct {
	// Name without the slash, lowercase.
	Name        string
	Aliases     []string
	Description string
	// OwnerOnly commands are refused for senders not in access.owners.
	OwnerOnly bool
	Usage     string
}

// Conversation identifies where a command or turn happens.
type Conversation struct {
	SessionKey string
	Instance   string
	Channel    string
	ChatType   channel.ChatType
	ChatID     string
	ThreadID   string
}

// Request is one command invocation.
type Request struct {
	// Command is the name as matched (an alias resolves to its Spec.Name).
	Command string
	// Args is the text after the command, trimmed.
	Args          string
	RawText       string
	Conversation  Conversation
	Sender        channel.Sender
	SenderIsOwner bool
	// SenderIsMember: the sender is one of access.members (or of the
	// group block's members). An owner has SenderIsOwner, not this.
	SenderIsMember bool
	// Workdir is the chat's own directory (absolute): its git worktree when
	// its agent has agent.worktrees, else the agent's workspace; "" when
	// the host knows none. A worktree need not exist yet (the chat's first
	// turn makes it). The chat's agent can write everything in it: never
	// run a program the directory's files name (sdk/safegit runs git so).
	Workdir string
	// WorktreeBranch is the branch of the chat's worktree when Workdir is
	// one; "" otherwise.
	WorktreeBranch string
}

// Reply is one message to send back.
type Reply struct {
	Text string
	// Format is channel.FormatPlain (default) or channel.FormatMarkdown.
	Format channel.Format
	Media  []channel.OutboundMedia
	// Buttons are offered under the reply where the channel has buttons:
	// a button's ID is the text its press stands for (e.g. "/mode plan"),
	// run as if the presser had typed it. Elsewhere the host lists the
	// choices as text.
	Buttons [][]channel.Button
}

// Response is the result of Execute.
type Response struct {
	Replies []Reply
}
