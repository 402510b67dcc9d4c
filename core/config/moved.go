package config

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// moved is a setting a release renamed or removed. A file written for an
// older release keeps working across an upgrade: a renamed attribute is
// read as its new name, a removed one is dropped, each with a warning at
// its line (validate and start print it) — never an error for a name that
// was once right, and never a silent ignore.
type moved struct {
	// path is the block types down to the attribute, dotted:
	// "agent.old_name" (the agent {} block and every agent "<id>" block),
	// "access.group.old_name", "old_top_level".
	path string
	// to is the new name in the same block; "" when the setting was
	// removed.
	to string
	// why says, for a removed setting, why and what to do instead.
	why string
}

// movedSettings are the renamed and removed settings, oldest first. Add an
// entry when a release renames or removes an attribute; keep it for at
// least two releases. No attribute of the configuration file has been
// renamed or removed yet.
var movedSettings []moved

// applyMoved rewrites body in place by table: a renamed attribute takes
// its new name (an error when the file sets both names), a removed one is
// dropped; each found gets a diagnostic at the old name.
func applyMoved(body *hclsyntax.Body, table []moved) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, m := range table {
		parts := strings.Split(m.path, ".")
		for _, b := range blocksAt(body, parts[:len(parts)-1]) {
			if d := m.apply(b, parts[len(parts)-1]); d != nil {
				diags = append(diags, d)
			}
		}
	}
	return diags
}

// blocksAt are the bodies reached from body through blocks of the given
// types (any labels), body itself for none.
func blocksAt(body *hclsyntax.Body, types []string) []*hclsyntax.Body {
	if len(types) == 0 {
		return []*hclsyntax.Body{body}
	}
	var out []*hclsyntax.Body
	for _, b := range body.Blocks {
		if b.Type == types[0] {
			out = append(out, blocksAt(b.Body, types[1:])...)
		}
	}
	return out
}

// apply renames or drops the attribute old of b.
func (m moved) apply(b *hclsyntax.Body, old string) *hcl.Diagnostic {
	a, ok := b.Attributes[old]
	if !ok {
		return nil
	}
	r := a.NameRange
	newPath := strings.TrimSuffix(m.path, old) + m.to
	if m.to == "" {
		delete(b.Attributes, old)
		return &hcl.Diagnostic{Severity: hcl.DiagWarning, Subject: &r,
			Summary: fmt.Sprintf("%s was removed", m.path),
			Detail:  fmt.Sprintf("%s It is ignored; delete it from the file.", m.why)}
	}
	if _, both := b.Attributes[m.to]; both {
		delete(b.Attributes, old)
		return &hcl.Diagnostic{Severity: hcl.DiagError, Subject: &r,
			Summary: fmt.Sprintf("%s was renamed to %s", m.path, newPath),
			Detail:  fmt.Sprintf("The block sets both %s and %s, its new name: delete %s.", old, m.to, old)}
	}
	delete(b.Attributes, old)
	a.Name = m.to
	b.Attributes[m.to] = a
	return &hcl.Diagnostic{Severity: hcl.DiagWarning, Subject: &r,
		Summary: fmt.Sprintf("%s was renamed to %s", m.path, newPath),
		Detail:  fmt.Sprintf("It is read as %s for now; rename it in the file: a later release drops the old name.", m.to)}
}
