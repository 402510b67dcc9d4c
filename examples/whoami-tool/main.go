// Command clawhost-whoami-tool is the smallest tool plugin: it gives the
// agent two tools.
//
//   - whoami tells the agent whom and where it is answering: the chat, the
//     sender and the agent, as the host passes them to every tool call
//     (which also lets the host's tests check that they arrive).
//   - wait waits the given number of seconds, then answers: it shows a
//     tool that ends when its context does (the host's tool_timeout, a
//     stopped turn).
//   - note appends a line to notes.txt in the agent's workspace: a tool
//     with a side effect, done once per call (the host and the sdk answer
//     a repeated call's idempotency key themselves; the line carries the
//     key, so a line written twice for one call would show it).
//
// Grant them to an agent with agent { tools = ["whoami.*"] } for a plugin
// "whoami" { source = "whoami-tool" } block; claude calls them
// mcp__clawhost__whoami__whoami and mcp__clawhost__whoami__wait.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/clawhost/clawhost/sdk"
	"github.com/clawhost/clawhost/sdk/tool"
)

type tools struct{}

var _ tool.Provider = tools{}

func (tools) Tools(context.Context) ([]tool.Spec, error) {
	return []tool.Spec{{
		Name:        "whoami",
		Description: "Tells whom and where you are answering: the chat, the sender of the message and the agent you are.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{}}`),
	}, {
		Name:        "wait",
		Description: "Waits the given number of seconds, then says so.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"seconds":{"type":"number","description":"how long to wait"}},"required":["seconds"]}`),
	}, {
		Name:        "note",
		Description: "Appends a line of text to notes.txt in your workspace.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"the line to append"}},"required":["text"]}`),
	}}, nil
}

func (tools) Call(ctx context.Context, req tool.CallRequest) (tool.Result, error) {
	switch req.Tool {
	case "whoami":
		c := req.Conversation
		return tool.Result{Text: fmt.Sprintf("chat %s:%s (%s), sender %s (%s), agent %s, workspace %s",
			c.Instance, c.ChatID, c.ChatType, req.Sender.ID, req.Sender.Name, req.Agent, req.Workspace)}, nil
	case "wait":
		var in struct {
			Seconds float64 `json:"seconds"`
		}
		if err := json.Unmarshal(req.Arguments, &in); err != nil || in.Seconds < 0 {
			return tool.Result{Text: "give seconds, a number of at least 0", IsError: true}, nil
		}
		t := time.NewTimer(time.Duration(in.Seconds * float64(time.Second)))
		defer t.Stop()
		select {
		case <-t.C:
			return tool.Result{Text: fmt.Sprintf("waited %gs", in.Seconds)}, nil
		case <-ctx.Done():
			return tool.Result{}, ctx.Err()
		}
	case "note":
		return note(req)
	}
	return tool.Result{}, fmt.Errorf("%w %q", tool.ErrUnknownTool, req.Tool)
}

// note appends the text and the call's idempotency key to
// <workspace>/notes.txt.
func note(req tool.CallRequest) (tool.Result, error) {
	var in struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(req.Arguments, &in); err != nil || in.Text == "" || strings.ContainsAny(in.Text, "\r\n") {
		return tool.Result{Text: "give text, one line", IsError: true}, nil
	}
	if req.Workspace == "" {
		return tool.Result{Text: "no workspace to write notes.txt in", IsError: true}, nil
	}
	f, err := os.OpenFile(filepath.Join(req.Workspace, "notes.txt"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return tool.Result{}, fmt.Errorf("open notes.txt: %w", err)
	}
	defer f.Close()
	if _, err := fmt.Fprintf(f, "%s\t%s\n", in.Text, req.IdempotencyKey); err != nil {
		return tool.Result{}, fmt.Errorf("write notes.txt: %w", err)
	}
	return tool.Result{Text: "noted: " + in.Text}, nil
}

func main() {
	os.Exit(sdk.Serve(sdk.Plugin{Name: "whoami-tool", Version: "0.1.0", Tool: tools{}}))
}
