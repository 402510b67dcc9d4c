package sdktest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/clawhost/clawhost/sdk"
	"github.com/clawhost/clawhost/sdk/conformance"
	"github.com/clawhost/clawhost/sdk/tool"
)

// echoTools offers echo (the arguments back) and, when sloppy, a tool
// with a schema that is no object and one that answers each call anew.
type echoTools struct {
	sloppy bool
	n      atomic.Int64
}

func (e *echoTools) Tools(context.Context) ([]tool.Spec, error) {
	specs := []tool.Spec{{Name: "echo", Description: "echoes", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"},"n":{"type":"integer","minimum":3}},"required":["text","n"]}`)}}
	if e.sloppy {
		specs = append(specs, tool.Spec{Name: "bad__name", Description: "x", InputSchema: json.RawMessage(`{"type":"object"}`)},
			tool.Spec{Name: "counter", Description: "counts", InputSchema: json.RawMessage(`{"type":"object"}`)})
	}
	return specs, nil
}

func (e *echoTools) Call(_ context.Context, req tool.CallRequest) (tool.Result, error) {
	if req.Tool == "counter" {
		return tool.Result{Text: fmt.Sprint(e.n.Add(1))}, nil
	}
	return tool.Result{Text: string(req.Arguments)}, nil
}

// TestToolChecks: a tool plugin with valid tools that answer a repeated
// call alike passes the tool checks (echo gets arguments its schema
// requires); one listing an invalid name and a tool answering each call
// anew fails them, naming both.
func TestToolChecks(t *testing.T) {
	t.Parallel()
	run := func(t *testing.T, sloppy bool) (notes, errs []string) {
		target := inProcess(t, ConformanceConfig{New: func(*testing.T) sdk.Plugin {
			return sdk.Plugin{Name: "echo", Tool: &echoTools{sloppy: sloppy}}
		}, Config: []byte(`{}`)})
		for _, c := range conformance.ToolChecks() {
			note, err := c.Run(context.Background(), target)
			notes = append(notes, note)
			if err != nil {
				errs = append(errs, err.Error())
			}
		}
		return notes, errs
	}
	t.Run("good", func(t *testing.T) {
		t.Parallel()
		notes, errs := run(t, false)
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		if !strings.Contains(notes[1], `echo: {"n":3,"text":"conformance"}`) {
			t.Errorf("call_tools: %q", notes[1])
		}
	})
	t.Run("sloppy", func(t *testing.T) {
		t.Parallel()
		_, errs := run(t, true)
		all := strings.Join(errs, "\n")
		if len(errs) != 2 || !strings.Contains(all, `tool name "bad__name"`) || !strings.Contains(all, "counter: the same call (call id conformance-3) answered otherwise") {
			t.Errorf("errors %q", errs)
		}
	})
}
