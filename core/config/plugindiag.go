package config

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/clawhost/clawhost/sdk/schema"
)

// PluginDiagnostics turns the diagnostics plugin p's own checks returned
// (its Validate or Configure) into file diagnostics at the value each one
// names inside p's config {} block. s is the schema the plugin declared; it
// says which attributes are sensitive.
//
// An attribute path ("token", "guilds[1]", "pacing.min", `labels["a.b"]`)
// is followed through the block's expressions as far as they are written:
// a list element of a literal list, an item of a literal object. When the
// exact value cannot be found (the attribute is not written and its
// default was checked, the value comes from a function call, the path is
// malformed) the diagnostic points at the closest enclosing value, or at
// the config block, and its detail names the path. An empty path is the
// block as a whole: the "config" header.
//
// A diagnostic with Warning set becomes an hcl warning. Diagnostics whose
// source lines show a sensitive attribute (of s) are marked to be printed
// without a snippet, as DecodePluginConfig's are: the plugin's words are
// shown, the user's secret is not.
func PluginDiagnostics(p *Plugin, s schema.Schema, diags schema.Diagnostics) hcl.Diagnostics {
	if len(diags) == 0 {
		return nil
	}
	sensitive := map[string]bool{}
	for _, a := range s {
		if a.Sensitive {
			sensitive[a.Name] = true
		}
	}
	body, _ := p.configBody().(*hclsyntax.Body)
	var hidden []hcl.Range // sources of sensitive attributes
	if body != nil {
		for name, a := range body.Attributes {
			if sensitive[name] {
				hidden = append(hidden, a.SrcRange)
			}
		}
	}
	out := make(hcl.Diagnostics, 0, len(diags))
	for _, d := range diags {
		subject, exact := p.valueRange(body, d.Attribute)
		summary := strings.TrimSpace(d.Summary)
		if summary == "" {
			summary = "Invalid configuration"
		}
		hd := &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  fmt.Sprintf("%s in plugin %q", summary, p.Name),
			Detail:   pluginDetail(d, exact),
			Subject:  &subject,
		}
		if d.Warning {
			hd.Severity = hcl.DiagWarning
		}
		if sensitive[rootName(d.Attribute)] || linesTouch(subject, hidden) {
			hd.Extra = sensitiveDiag{}
		}
		out = append(out, hd)
	}
	sortDiagnostics(out)
	return out
}

// pluginDetail is the plugin's detail, with the attribute path named when
// the diagnostic could not be placed on its value.
func pluginDetail(d schema.Diagnostic, exact bool) string {
	detail := strings.TrimSpace(d.Detail)
	if detail != "" && !strings.HasSuffix(detail, ".") {
		detail += "."
	}
	if d.Attribute == "" || exact {
		return detail
	}
	note := fmt.Sprintf("(The plugin reports this about %s, which is not written as such in the block.)", d.Attribute)
	if detail == "" {
		return note
	}
	return detail + " " + note
}

// valueRange finds the source range of the value at path in the config
// block. exact is false when it had to stop at an enclosing value (or the
// block).
func (p *Plugin) valueRange(body *hclsyntax.Body, path string) (r hcl.Range, exact bool) {
	block := *p.configRange()
	if path == "" {
		return block, true
	}
	steps, ok := parseAttributePath(path)
	if !ok || body == nil {
		return block, false
	}
	attr := body.Attributes[steps[0].name]
	if attr == nil {
		return block, false
	}
	expr := hclsyntax.Expression(attr.Expr)
	for _, st := range steps[1:] {
		next := childExpr(expr, st)
		if next == nil {
			return expr.Range(), false
		}
		expr = next
	}
	return expr.Range(), true
}

// pathStep is one step of an attribute path: a name (attribute, object or
// map key) or a list index.
type pathStep struct {
	name  string
	index int
	isIdx bool
}

// parseAttributePath splits "a.b[2].c" or `a["x.y"]` into steps. The first
// step is always a name.
func parseAttributePath(path string) ([]pathStep, bool) {
	var steps []pathStep
	i := 0
	readName := func() (string, bool) {
		j := i
		for j < len(path) && path[j] != '.' && path[j] != '[' {
			j++
		}
		if j == i {
			return "", false
		}
		n := path[i:j]
		i = j
		return n, true
	}
	first, ok := readName()
	if !ok {
		return nil, false
	}
	steps = append(steps, pathStep{name: first})
	for i < len(path) {
		switch path[i] {
		case '.':
			i++
			n, ok := readName()
			if !ok {
				return nil, false
			}
			steps = append(steps, pathStep{name: n})
		case '[':
			end := strings.IndexByte(path[i:], ']')
			if end < 0 {
				return nil, false
			}
			inner := path[i+1 : i+end]
			if strings.HasPrefix(inner, `"`) {
				// A quoted key may hold "]": find the closing quote.
				q, err := strconv.QuotedPrefix(path[i+1:])
				if err != nil || !strings.HasPrefix(path[i+1+len(q):], "]") {
					return nil, false
				}
				key, _ := strconv.Unquote(q)
				steps = append(steps, pathStep{name: key})
				i += 1 + len(q) + 1
				continue
			}
			n, err := strconv.Atoi(inner)
			if err != nil || n < 0 {
				return nil, false
			}
			steps = append(steps, pathStep{index: n, isIdx: true})
			i += end + 1
		default:
			return nil, false
		}
	}
	return steps, true
}

// rootName is the attribute a path starts with.
func rootName(path string) string {
	if i := strings.IndexAny(path, ".["); i >= 0 {
		return path[:i]
	}
	return path
}

// childExpr is the element of a literal list or the item of a literal
// object that st names, or nil.
func childExpr(e hclsyntax.Expression, st pathStep) hclsyntax.Expression {
	switch x := e.(type) {
	case *hclsyntax.TupleConsExpr:
		if st.isIdx && st.index < len(x.Exprs) {
			return x.Exprs[st.index]
		}
	case *hclsyntax.ObjectConsExpr:
		if st.isIdx {
			return nil
		}
		for _, item := range x.Items {
			// A bare identifier key is its own name; a literal string key
			// evaluates without a context. Keys that need one are skipped.
			k, diags := item.KeyExpr.Value(nil)
			if diags.HasErrors() || !k.IsKnown() || k.IsNull() || k.Type() != cty.String {
				continue
			}
			if k.AsString() == st.name {
				return item.ValueExpr
			}
		}
	case *hclsyntax.ParenthesesExpr:
		return childExpr(x.Expression, st)
	}
	return nil
}

// linesTouch reports whether a snippet of r (the whole lines it spans)
// would show any line of the ranges in hidden.
func linesTouch(r hcl.Range, hidden []hcl.Range) bool {
	for _, h := range hidden {
		if h.Filename == r.Filename && r.Start.Line <= h.End.Line && h.Start.Line <= r.End.Line {
			return true
		}
	}
	return false
}
