package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/command"
	"github.com/clawhost/clawhost/sdk/tool"
)

// ToolChecks are what a tool plugin owes the host: a list of tools with
// valid names, descriptions and input schemas (list_tools), and for each
// tool an answer within Target.Timeout to arguments built from its schema,
// the same answer to the same call repeated with its call id (call_tools).
func ToolChecks() []Check {
	return []Check{{"list_tools", checkListTools}, {"call_tools", checkCallTools}}
}

func checkListTools(ctx context.Context, tg Target) (string, error) {
	return tg.check(ctx, true, func(ctx context.Context, inst Instance) (string, error) {
		specs, err := inst.Plugin.ListTools(ctx)
		if err != nil {
			return "", fmt.Errorf("list tools: %w", err)
		}
		var p problems
		var names []string
		seen := map[string]bool{}
		for _, s := range specs {
			if err := tool.ValidSpec(s); err != nil {
				p.add(err)
			}
			if seen[s.Name] {
				p.addf("list tools: %s is listed twice", s.Name)
			}
			seen[s.Name] = true
			if strings.TrimSpace(s.Description) == "" {
				p.addf("list tools: %s has no description (the model chooses tools by it)", s.Name)
			}
			names = append(names, s.Name)
		}
		if len(specs) == 0 {
			p.addf("list tools: a tool plugin lists no tools")
		}
		return strings.Join(names, " "), p.err()
	})
}

func checkCallTools(ctx context.Context, tg Target) (string, error) {
	inst, _, stop, err := tg.configured(ctx)
	if err != nil {
		return "", err
	}
	defer stop()
	lctx, cancel := context.WithTimeout(ctx, tg.timeout())
	specs, err := inst.Plugin.ListTools(lctx)
	cancel()
	if err != nil {
		return "", fmt.Errorf("list tools: %w", err)
	}
	var p problems
	var notes []string
	called, failed := 0, 0
	for i, s := range specs {
		if tool.ValidSpec(s) != nil {
			continue // list_tools reports it
		}
		req := tool.CallRequest{
			CallID: fmt.Sprintf("conformance-%d", i+1), Tool: s.Name, Arguments: ExampleArguments(s.InputSchema),
			Conversation: command.Conversation{SessionKey: "conformance", Instance: "conformance", Channel: "conformance", ChatType: channel.ChatDirect, ChatID: "c1"},
			Sender:       channel.Sender{ID: "u1", Name: "Conformance"},
			Agent:        "main", Workspace: inst.DataDir, Workdir: tg.Workdir,
		}
		first, err1 := callTool(ctx, tg, inst, req)
		if err1 != nil && !isPluginError(err1) {
			p.addf("call %s %s: %v", s.Name, req.Arguments, err1)
			continue
		}
		again, err2 := callTool(ctx, tg, inst, req)
		switch {
		case err2 != nil && !isPluginError(err2):
			p.addf("call %s again with call id %s: %v", s.Name, req.CallID, err2)
			continue
		case fmt.Sprint(err1) != fmt.Sprint(err2) || first.Text != again.Text || first.IsError != again.IsError:
			p.addf("call %s: the same call (call id %s) answered otherwise the second time: %q then %q", s.Name, req.CallID, answer(first, err1), answer(again, err2))
			continue
		}
		notes = append(notes, s.Name+": "+short(answer(first, err1)))
		// A tool error (Result.IsError) is an answer: the model reads it,
		// and the checks' arguments and directory may well earn one (the
		// git plugin outside a repository). An error returned is not.
		called++
		if err1 != nil {
			failed++
		}
	}
	if called > 0 && failed == called {
		p.addf("every tool answered its call with an error (%s): a tool plugin that answers only errors does nothing for the model", strings.Join(notes, "; "))
	}
	return strings.Join(notes, "; "), p.err()
}

// callTool calls once, bounded by Target.Timeout.
func callTool(ctx context.Context, tg Target, inst Instance, req tool.CallRequest) (tool.Result, error) {
	ctx, cancel := context.WithTimeout(ctx, tg.timeout())
	defer cancel()
	res, err := inst.Plugin.CallTool(ctx, req)
	if ctx.Err() != nil {
		return res, fmt.Errorf("no answer within %s", tg.timeout())
	}
	return res, err
}

// isPluginError reports whether err is the plugin's own answer (its Call
// returned an error), not a transport failure.
func isPluginError(err error) bool {
	var ce *channel.Error
	return errors.As(err, &ce)
}

func answer(r tool.Result, err error) string {
	switch {
	case err != nil:
		return "error: " + err.Error()
	case r.IsError:
		return "tool error: " + r.Text
	}
	return r.Text
}

func short(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 60 {
		return string(r[:60]) + "…"
	}
	return s
}

// ExampleArguments are arguments that satisfy an object schema's required
// properties, each a value of its declared type (a string "conformance",
// the number 1 or its minimum, true, an empty array or object, an enum's
// first value): what the conformance checks call a tool with.
func ExampleArguments(inputSchema json.RawMessage) json.RawMessage {
	var s struct {
		Properties map[string]map[string]any `json:"properties"`
		Required   []string                  `json:"required"`
	}
	_ = json.Unmarshal(inputSchema, &s)
	args := map[string]any{}
	for _, name := range s.Required {
		prop := s.Properties[name]
		if enum, ok := prop["enum"].([]any); ok && len(enum) > 0 {
			args[name] = enum[0]
			continue
		}
		switch prop["type"] {
		case "integer", "number":
			if m, ok := prop["minimum"].(float64); ok {
				args[name] = m
			} else {
				args[name] = 1
			}
		case "boolean":
			args[name] = true
		case "array":
			args[name] = []any{}
		case "object":
			args[name] = map[string]any{}
		default:
			args[name] = "conformance"
		}
	}
	b, _ := json.Marshal(args)
	return b
}
