package config

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// Attribute returns the attribute at path in the file as written, or nil
// when it is not written (its default applies). path names blocks, each
// followed by its label when the block has one, then the attribute:
//
//	c.Attribute("access", "dm_policy")
//	c.Attribute("plugin", "tg", "config", "webhook_secret")
//	c.Attribute("access", "group", "tg:-100", "allow_from")
//	c.Attribute("agent", "ops", "allowed_tools")
//
// Tools that read the file without running it (`clawhost security audit`)
// use it for positions and for values the schema of a plugin would give.
func (c *Config) Attribute(path ...string) *hcl.Attribute {
	body, _ := c.body.(*hclsyntax.Body)
	if len(path) > 2 && path[0] == "agent" {
		// Labelled agent blocks are decoded apart from the file's body.
		for _, a := range c.Agents {
			if a.ID == path[1] && a.block != nil {
				body, path = a.block.Body, path[2:]
				break
			}
		}
	}
	for len(path) > 1 && body != nil {
		typ := path[0]
		path = path[1:]
		var next *hclsyntax.Body
		for _, b := range body.Blocks {
			if b.Type != typ {
				continue
			}
			if len(b.Labels) > 0 {
				if len(path) < 2 || b.Labels[0] != path[0] {
					continue
				}
			}
			next = b.Body
			if len(b.Labels) > 0 {
				path = path[1:]
			}
			break
		}
		body = next
	}
	if body == nil || len(path) != 1 {
		return nil
	}
	if a := body.Attributes[path[0]]; a != nil {
		return a.AsHCLAttribute()
	}
	return nil
}

// StringValue evaluates a, as Load does (env() included), as a string; ok
// is false when a is nil or its value is not a known string.
func (c *Config) StringValue(a *hcl.Attribute) (string, bool) {
	if a == nil {
		return "", false
	}
	v, diags := a.Expr.Value(c.ctx)
	if diags.HasErrors() || v.IsNull() || !v.IsKnown() || v.Type() != cty.String {
		return "", false
	}
	return v.AsString(), true
}

// BoolValue evaluates a's expression in the file's context (env()); ok
// is false when a is nil or its value is not a known bool.
func (c *Config) BoolValue(a *hcl.Attribute) (v, ok bool) {
	if a == nil {
		return false, false
	}
	val, diags := a.Expr.Value(c.ctx)
	if diags.HasErrors() || val.IsNull() || !val.IsKnown() || val.Type() != cty.Bool {
		return false, false
	}
	return val.True(), true
}

// Literal reports whether e is written out in the file — a string, a
// number, a list or map of them — rather than computed by a function
// such as env(): a secret written so is readable by whoever can read the
// file.
func Literal(e hcl.Expression) bool {
	literal := true
	if se, ok := e.(hclsyntax.Expression); ok {
		_ = hclsyntax.VisitAll(se, func(n hclsyntax.Node) hcl.Diagnostics {
			switch n.(type) {
			case *hclsyntax.FunctionCallExpr, *hclsyntax.ScopeTraversalExpr:
				literal = false
			}
			return nil
		})
	}
	return literal
}

// ObjectItems returns the key = value items of a written object such as
// env = { GITHUB_TOKEN = "..." }: each literal key with its value
// expression. It is nil when a is nil or not written as an object.
func ObjectItems(a *hcl.Attribute) map[string]hcl.Expression {
	if a == nil {
		return nil
	}
	obj, ok := a.Expr.(*hclsyntax.ObjectConsExpr)
	if !ok {
		return nil
	}
	out := map[string]hcl.Expression{}
	for _, it := range obj.Items {
		k, diags := it.KeyExpr.Value(nil)
		if diags.HasErrors() || k.Type() != cty.String {
			continue
		}
		out[k.AsString()] = it.ValueExpr
	}
	return out
}

// Position is "file:line" of r, as diagnostics name places.
func Position(r hcl.Range) string { return fmt.Sprintf("%s:%d", r.Filename, r.Start.Line) }

// LookupEnv reads the environment the file was evaluated in (env(),
// PGSSLMODE); false when the variable is unset or c was not loaded.
func (c *Config) LookupEnv(name string) (string, bool) {
	if c.lookupEnv == nil {
		return "", false
	}
	return c.lookupEnv(name)
}

// DisabledBecause says why plugin p is not enabled: the enabled
// expression as written and where ("enabled = env(\"TOKEN\", \"\") != \"\"
// at config.hcl:12 is false"), or "enabled = false" when it cannot be
// read back. "" when p is enabled.
func (c *Config) DisabledBecause(p *Plugin) string {
	if p.Enabled {
		return ""
	}
	why := "enabled = false"
	if a := c.Attribute("plugin", p.Name, "enabled"); a != nil {
		r := a.Expr.Range()
		if f := c.Files()[r.Filename]; f != nil && r.End.Byte <= len(f.Bytes) {
			why = "enabled = " + string(f.Bytes[r.Start.Byte:r.End.Byte]) + " at " + Position(r) + " is false"
		}
	}
	return why
}
