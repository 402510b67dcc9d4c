// Package tool is the contract of a tool plugin: tools the agent (claude)
// may call during a turn.
//
// The host lists a plugin's tools (Tools), exposes those an agent's `tools`
// setting grants through its own MCP server, namespaced by the plugin
// instance (claude sees "mcp__clawhost__<instance>__<name>", the name its
// permission rules use), and routes each call to Call with the chat, the
// sender and the agent it comes from.
//
// A tool runs in the plugin's process, outside the agent's sandbox, with
// the plugin's rights: it is a capability the operator grants. Check
// arguments as untrusted input (the model writes them, and the model reads
// what anyone in the chat wrote).
package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/command"
)

// Provider is implemented by tool plugins.
type Provider interface {
	// Tools lists the tools the plugin offers. The host calls it after
	// Configure and again whenever it starts an agent process; it must
	// answer quickly and not block. Nil or empty: no tools.
	Tools(ctx context.Context) ([]Spec, error)
	// Call runs one call. ctx ends at the host's per-call timeout (the
	// plugin block's tool_timeout), when the model's turn is stopped, or
	// when the host stops: return promptly then. A failure the model
	// should see is a Result with IsError; an error return is reported to
	// the model as the tool having failed, with its text.
	//
	// Calls may be concurrent (several chats). A call with a CallID seen
	// before is a repetition of that call (the host retried it): it must
	// not act twice, and should answer as the first time.
	//
	// Exactly once across a crash: a turn the host's crash interrupted
	// runs again, and its claude makes its calls again. The host answers
	// a call it holds a finished result for (same IdempotencyKey) itself,
	// and the sdk answers a key it saw finish or running in this process
	// with that call's result, so Call is not called twice for one key in
	// either case. What remains for the author is a call that was running
	// when the host died: it comes again with the same IdempotencyKey, and
	// a tool with a side effect records the key with the effect (in the
	// same transaction, or before acting) and skips a key it holds.
	Call(ctx context.Context, req CallRequest) (Result, error)
}

// Spec describes one tool.
type Spec struct {
	// Name is the tool's name within the plugin: letters, digits, "_"
	// and "-", at most 64, without "__" (see ValidName).
	Name string
	// Description tells the model what the tool does and when to use it.
	Description string
	// InputSchema is the JSON Schema of the arguments: an object schema,
	// e.g. {"type":"object","properties":{"query":{"type":"string"}},
	// "required":["query"]}.
	InputSchema json.RawMessage
}

// CallRequest is one call of a tool by the agent.
type CallRequest struct {
	// CallID is unique per call (see Provider.Call).
	CallID string
	// IdempotencyKey is the same for the same call when the host runs the
	// turn again after a crash: it names the turn (its first journal
	// entry, on this host's storage), the tool, the arguments (a digest)
	// and the call's ordinal among the turn's calls of this tool with these
	// arguments (the second identical call of a turn is a call of its
	// own). Key a side effect on it (see Provider.Call). "" from a host
	// older than the field, or for a call outside a turn.
	IdempotencyKey string
	// Tool is the Spec.Name called.
	Tool string
	// Arguments is the JSON object the model passed.
	Arguments json.RawMessage
	// Conversation is the chat whose turn called the tool.
	Conversation command.Conversation
	// Sender is who sent the message the turn answers.
	Sender channel.Sender
	// Agent is the id of the agent whose turn called the tool ("main" for
	// the default agent).
	Agent string
	// Workspace is that agent's working directory (absolute), as the host
	// configured it: the place a tool looks for the agent's files, rather
	// than a path of its own configuration.
	Workspace string
	// Workdir is the chat's own directory (absolute), as
	// command.Request.Workdir: its worktree when the agent has
	// agent.worktrees, else Workspace; "" when the host knows none.
	Workdir string
}

// Result is a call's outcome as the model sees it.
type Result struct {
	// Text is what the model gets back.
	Text string
	// IsError marks Text as the tool's error.
	IsError bool
	// Files are sent to the chat with the turn's reply, once, each checked
	// by the host like the send_file tool's (inside the workspace, within
	// the channel's limits); a refused one is reported to the model.
	Files []File
}

// File is a file a tool sends with the reply.
type File struct {
	// Path is absolute, or relative to the workspace.
	Path    string
	Caption string
}

// nameRe is compiled on first use: {1,64} makes a program of 64 copies
// (60 KB), which every plugin would otherwise build at its start.
var nameRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`) })

// ValidName reports why name cannot be a tool's name (nil: it can). The
// host joins it with the instance name ("<instance>__<name>"), which the
// model's API limits to those characters.
func ValidName(name string) error {
	if !nameRe().MatchString(name) {
		return fmt.Errorf("tool name %q: use 1 to 64 letters, digits, \"_\" or \"-\"", name)
	}
	if strings.Contains(name, "__") {
		return fmt.Errorf("tool name %q: \"__\" separates the plugin instance from the tool", name)
	}
	return nil
}

// ValidSpec reports what is wrong with s (nil: nothing): its name, and an
// input schema that is not a JSON object with "type": "object".
func ValidSpec(s Spec) error {
	if err := ValidName(s.Name); err != nil {
		return err
	}
	var schema map[string]any
	if err := json.Unmarshal(s.InputSchema, &schema); err != nil || schema == nil {
		return fmt.Errorf("tool %s: the input schema is not a JSON object", s.Name)
	}
	if schema["type"] != "object" {
		return fmt.Errorf("tool %s: the input schema's type must be \"object\"", s.Name)
	}
	return nil
}

// ErrUnknownTool is what Call returns for a name it does not offer (wrap
// it; the host tells the model).
var ErrUnknownTool = errors.New("unknown tool")
