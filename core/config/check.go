package config

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agext/levenshtein"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// checker collects diagnostics about one body (the file, or one block of it)
// and finds the source ranges of its attributes.
type checker struct {
	cfg   *Config
	body  hcl.Body         // nil when the block is absent from the file
	where string           // "agent", `plugin "tg"`: prefixes attribute names in messages
	diags *hcl.Diagnostics // shared by a checker and its sub-checkers
}

func newChecker(cfg *Config, body hcl.Body) *checker {
	return &checker{cfg: cfg, body: body, diags: new(hcl.Diagnostics)}
}

// block returns a checker for the first top-level block of the given type,
// sharing k's diagnostics.
func (k *checker) block(typ string) *checker {
	var body hcl.Body
	if k.body != nil {
		content, _, _ := k.body.PartialContent(&hcl.BodySchema{
			Blocks: []hcl.BlockHeaderSchema{{Type: typ}},
		})
		if content != nil && len(content.Blocks) > 0 {
			body = content.Blocks[0].Body
		}
	}
	return k.sub(body, typ)
}

// sub returns a checker for body, sharing k's diagnostics.
func (k *checker) sub(body hcl.Body, where string) *checker {
	return &checker{cfg: k.cfg, body: body, where: where, diags: k.diags}
}

// subAt is sub for the i-th of blocks, the one a decoded list's i-th
// element came from (no body when there are fewer blocks: the element was
// not written in this body).
func (k *checker) subAt(blocks []*hcl.Block, i int, where string) *checker {
	sk := k.sub(nil, where)
	if i < len(blocks) {
		sk.body = blocks[i].Body
	}
	return sk
}

// attr returns the attribute called name in k.body, or nil.
func (k *checker) attr(name string) *hcl.Attribute {
	if k.body == nil {
		return nil
	}
	if sb, ok := k.body.(*hclsyntax.Body); ok {
		if a := sb.Attributes[name]; a != nil {
			return a.AsHCLAttribute()
		}
		return nil
	}
	content, _, _ := k.body.PartialContent(&hcl.BodySchema{
		Attributes: []hcl.AttributeSchema{{Name: name}},
	})
	if content == nil {
		return nil
	}
	return content.Attributes[name]
}

// valueRange is the range of the value of attribute name; nil when the
// attribute is absent (its default is in use).
func (k *checker) valueRange(name string) *hcl.Range {
	if a := k.attr(name); a != nil {
		r := a.Expr.Range()
		return &r
	}
	return nil
}

// elemRange is the range of element i of the list attribute name, or of the
// whole value when it is not written as a literal list.
func (k *checker) elemRange(name string, i, n int) *hcl.Range {
	a := k.attr(name)
	if a == nil {
		return nil
	}
	if t, ok := a.Expr.(*hclsyntax.TupleConsExpr); ok && len(t.Exprs) == n {
		r := t.Exprs[i].Range()
		return &r
	}
	r := a.Expr.Range()
	return &r
}

// qualified names attribute name for messages.
func (k *checker) qualified(name string) string { return qualify(k.where, name) }

// qualify names attribute name of block where for messages: "log_level",
// "agent.timeout", `start_timeout in plugin "tg"`.
func qualify(where, name string) string {
	switch {
	case where == "":
		return name
	case strings.Contains(where, " "):
		return name + " in " + where
	}
	return where + "." + name
}

func (k *checker) errorf(subject *hcl.Range, summary, format string, args ...any) {
	k.emit(&hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  summary,
		Detail:   fmt.Sprintf(format, args...),
		Subject:  subject,
	})
}

func (k *checker) emit(d *hcl.Diagnostic) { *k.diags = append(*k.diags, d) }

// enum checks that value is one of allowed, suggesting the nearest.
func (k *checker) enum(name, value string, allowed []string) {
	if slices.Contains(allowed, value) {
		return
	}
	k.errorf(k.valueRange(name), "Invalid value for "+k.qualified(name),
		"%q is not one of %s.%s", value, quoteList(allowed), didYouMean(value, allowed))
}

// duration checks that d parses and is positive.
func (k *checker) duration(name string, d Duration) {
	v, err := d.parse()
	switch {
	case err != nil:
		k.errorf(k.valueRange(name), "Invalid duration for "+k.qualified(name),
			"%q is not a duration: write a number with a unit, such as \"90s\", \"10m\" or \"1h30m\".", string(d))
	case v <= 0:
		k.errorf(k.valueRange(name), "Invalid duration for "+k.qualified(name),
			"The duration must be positive, not %q.", string(d))
	}
}

// atLeast checks that an integer setting is >= min.
func (k *checker) atLeast(name string, v, min int) {
	if v < min {
		k.errorf(k.valueRange(name), "Invalid value for "+k.qualified(name),
			"The value must be at least %d, not %d.", min, v)
	}
}

// suggest returns the candidate nearest to given when it is close enough to
// be a typo (the rule hcl uses for attribute names), or "".
func suggest(given string, candidates []string) string {
	best, bestDist := "", 3
	for _, c := range candidates {
		// Two edits turn "zz" into "a": only suggest when the distance is
		// small next to the names too.
		if d := levenshtein.Distance(given, c, nil); d < bestDist && d < len(c) && d < len(given) {
			best, bestDist = c, d
		}
	}
	return best
}

// didYouMean is " Did you mean \"x\"?" for a near miss, else "".
func didYouMean(given string, candidates []string) string {
	if s := suggest(given, candidates); s != "" {
		return fmt.Sprintf(" Did you mean %q?", s)
	}
	return ""
}

func quoteList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = fmt.Sprintf("%q", x)
	}
	switch len(q) {
	case 0:
		return "(none)"
	case 1:
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

func warning(subject *hcl.Range, summary, detail string) *hcl.Diagnostic {
	return &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: summary, Detail: detail, Subject: subject}
}

// blocks returns the blocks of the given type in k.body, in file order;
// labels names their labels (blocks with another number of labels are left
// out, as the decoder leaves them out).
func (k *checker) blocks(typ string, labels ...string) []*hcl.Block {
	if k.body == nil {
		return nil
	}
	content, _, _ := k.body.PartialContent(&hcl.BodySchema{
		Blocks: []hcl.BlockHeaderSchema{{Type: typ, LabelNames: labels}},
	})
	if content == nil {
		return nil
	}
	return content.Blocks
}

// optionalDuration checks a duration that may be empty (unset) or zero:
// when set it must parse and not be negative.
func (k *checker) optionalDuration(name string, d Duration) {
	if d == "" {
		return
	}
	v, err := d.parse()
	switch {
	case err != nil:
		k.errorf(k.valueRange(name), "Invalid duration for "+k.qualified(name),
			"%q is not a duration: write a number with a unit, such as \"500ms\" or \"2s\" (\"0s\" turns it off).", string(d))
	case v < 0:
		k.errorf(k.valueRange(name), "Invalid duration for "+k.qualified(name),
			"The duration must be zero or positive, not %q.", string(d))
	}
}
