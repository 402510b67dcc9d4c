// Command clawhost-whoami-tool is the smallest tool plugin: it gives the
// agent two tools.
//
//   - whoami tells the agent whom and where it is answering: the chat, the
//     sender and the agent, as the host passes them to every tool call
//     (which also lets the host's tests check that they arrive).
//   - wait waits the given number of seconds, then answers: it shows a
//     tool that ends when its context does (the host's tool_timeout, a
//     stopped turn).
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
	}
	return tool.Result{}, fmt.Errorf("%w %q", tool.ErrUnknownTool, req.Tool)
}

func main() {
	os.Exit(sdk.Serve(sdk.Plugin{Name: "whoami-tool", Version: "0.1.0", Tool: tools{}}))
}
