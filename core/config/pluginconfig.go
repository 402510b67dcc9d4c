package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hcldec"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/clawhost/clawhost/sdk/schema"
)

// DecodePluginConfig decodes the config {} block of p against the schema the
// plugin declared and returns the JSON object to send in Configure: one key
// per schema attribute, absent optional attributes set to their default (or
// null).
//
// Every problem is reported: unknown attributes (with "did you mean"), values
// of the wrong type, missing required attributes, an invalid schema. Each
// diagnostic names the instance. The values of Sensitive attributes never
// appear in a diagnostic: diagnostics about them carry no expression values,
// and FormatDiagnostics prints them without a source snippet.
func DecodePluginConfig(p *Plugin, s schema.Schema) ([]byte, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	spec := hcldec.ObjectSpec{}
	sensitive := map[string]bool{}
	var names []string
	for _, a := range s {
		ty, tdiags := attributeType(p, a)
		diags = append(diags, tdiags...)
		if tdiags.HasErrors() {
			ty = cty.DynamicPseudoType
		}
		names = append(names, a.Name)
		if a.Sensitive {
			sensitive[a.Name] = true
		}
		var attr hcldec.Spec = &hcldec.AttrSpec{Name: a.Name, Type: ty, Required: a.Required}
		if a.Default != nil && !a.Required {
			def, ddiags := defaultValue(p, a, ty)
			diags = append(diags, ddiags...)
			if !ddiags.HasErrors() && !def.IsNull() {
				attr = &hcldec.DefaultSpec{Primary: attr, Default: &hcldec.LiteralSpec{Value: def}}
			}
		}
		spec[a.Name] = attr
	}

	body := p.configBody()
	val, ddiags := hcldec.Decode(body, spec, p.ctx)
	for _, d := range ddiags {
		diags = append(diags, p.scrub(d, body, sensitive, names))
	}
	sortDiagnostics(diags)
	if diags.HasErrors() {
		return nil, diags
	}
	out, err := ctyjson.Marshal(val, val.Type())
	if err != nil {
		// Values come from literals and env(): always known and
		// serialisable; this is a bug, reported without the value.
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Cannot encode plugin configuration",
			Detail:   fmt.Sprintf("Plugin %q: the decoded config block cannot be encoded as JSON.", p.Name),
			Subject:  p.configRange(),
		})
		return nil, diags
	}
	return out, diags
}

// configBody is the raw config body, empty when the block is absent.
func (p *Plugin) configBody() hcl.Body {
	if p.ConfigBlock == nil || p.ConfigBlock.Body == nil {
		return &missingBody{Body: hcl.EmptyBody(), at: p.DefRange}
	}
	return p.ConfigBlock.Body
}

// missingBody is an absent config {} block: empty, with "missing attribute"
// diagnostics pointing at the plugin block header.
type missingBody struct {
	hcl.Body
	at hcl.Range
}

func (m *missingBody) Content(s *hcl.BodySchema) (*hcl.BodyContent, hcl.Diagnostics) {
	c, _, d := m.PartialContent(s)
	return c, d
}

func (m *missingBody) PartialContent(s *hcl.BodySchema) (*hcl.BodyContent, hcl.Body, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	for _, a := range s.Attributes {
		if a.Required {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Missing required argument",
				Detail:   fmt.Sprintf("The argument %q is required, but there is no config block.", a.Name),
				Subject:  m.at.Ptr(),
			})
		}
	}
	return &hcl.BodyContent{Attributes: hcl.Attributes{}, MissingItemRange: m.at}, m, diags
}

func (m *missingBody) JustAttributes() (hcl.Attributes, hcl.Diagnostics) {
	return hcl.Attributes{}, nil
}

func (m *missingBody) MissingItemRange() hcl.Range { return m.at }

func (p *Plugin) configRange() *hcl.Range {
	if p.ConfigBlock != nil {
		return &p.ConfigBlock.DefRange
	}
	return &p.DefRange
}

// attributeType parses the HCL type expression of a schema attribute.
func attributeType(p *Plugin, a schema.Attribute) (cty.Type, hcl.Diagnostics) {
	src := strings.TrimSpace(a.Type)
	if src == "" {
		return cty.String, nil
	}
	bad := func() hcl.Diagnostics {
		return hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Invalid plugin schema",
			Detail: fmt.Sprintf("Plugin %q (source %q) declares attribute %q with type %q, which is not an HCL type expression. This is a bug in the plugin.",
				p.Name, p.Source, a.Name, a.Type),
			Subject: p.configRange(),
		}}
	}
	expr, diags := hclsyntax.ParseExpression([]byte(src), "<type>", hcl.InitialPos)
	if diags.HasErrors() {
		return cty.DynamicPseudoType, bad()
	}
	ty, diags := typeexpr.TypeConstraint(expr)
	if diags.HasErrors() {
		return cty.DynamicPseudoType, bad()
	}
	return ty, nil
}

// defaultValue converts a schema default (JSON text, or a JSON-encodable Go
// value) to the attribute's type.
func defaultValue(p *Plugin, a schema.Attribute, ty cty.Type) (cty.Value, hcl.Diagnostics) {
	var raw []byte
	switch d := a.Default.(type) {
	case json.RawMessage:
		raw = d
	case []byte:
		raw = d
	default:
		var err error
		if raw, err = json.Marshal(d); err != nil {
			raw = nil
		}
	}
	var v cty.Value
	var err error
	if raw != nil {
		t := ty
		if t == cty.DynamicPseudoType {
			t, err = ctyjson.ImpliedType(raw)
		}
		if err == nil {
			v, err = ctyjson.Unmarshal(raw, t)
		}
	} else {
		err = fmt.Errorf("not JSON encodable")
	}
	if err != nil {
		return cty.NilVal, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Invalid plugin schema",
			Detail: fmt.Sprintf("Plugin %q (source %q) declares a default for attribute %q that is not a %s. This is a bug in the plugin.",
				p.Name, p.Source, a.Name, ty.FriendlyName()),
			Subject: p.configRange(),
		}}
	}
	return v, nil
}

// scrub names the instance in d and, when d is about a sensitive attribute
// (or a misspelling of one), removes everything that could show its value.
func (p *Plugin) scrub(d *hcl.Diagnostic, body hcl.Body, sensitive map[string]bool, names []string) *hcl.Diagnostic {
	c := *d
	c.Summary = fmt.Sprintf("%s in plugin %q", d.Summary, p.Name)
	if c.Subject != nil && p.touchesSensitive(*c.Subject, body, sensitive) {
		c.Expression = nil
		c.EvalContext = nil
		c.Extra = sensitiveDiag{}
	}
	return &c
}

// touchesSensitive reports whether r lies in the source of a sensitive
// attribute, or of an unknown attribute whose nearest schema name is
// sensitive (a typo of "token" holds a token).
func (p *Plugin) touchesSensitive(r hcl.Range, body hcl.Body, sensitive map[string]bool) bool {
	var sb *hclsyntax.Body
	switch b := body.(type) {
	case *hclsyntax.Body:
		sb = b
	case *missingBody:
		return false
	default:
		// Another syntax (JSON): the attribute cannot be located, so
		// assume the worst.
		return len(sensitive) > 0
	}
	var sensitiveNames []string
	for n := range sensitive {
		sensitiveNames = append(sensitiveNames, n)
	}
	for name, a := range sb.Attributes {
		if !a.SrcRange.Overlaps(r) && !a.SrcRange.ContainsOffset(r.Start.Byte) {
			continue
		}
		if sensitive[name] || suggest(name, sensitiveNames) != "" {
			return true
		}
	}
	return false
}

// sensitiveDiag marks (in hcl.Diagnostic.Extra) a diagnostic whose source
// snippet may show a secret.
type sensitiveDiag struct{}

// Fingerprint is a stable hash over everything that makes a running instance
// of p: source, path, sha256, enabled, start_timeout, env, run_as,
// untrusted_input and the evaluated config block (env() calls included, so
// a changed environment variable changes it). A reload restarts an instance whose fingerprint changed. The
// config block is evaluated without the plugin's schema; a block that does
// not evaluate hashes its problems instead, so it differs from any valid
// one. Being a hash, it shows none of the values (env and config may hold
// secrets).
//
// The host-side settings of the block — debounce, text_limit, queue_mode,
// on_error and reset — are not part of it: the host applies them without restarting
// the plugin.
func (p *Plugin) Fingerprint() string {
	type fp struct {
		Source       string            `json:"source"`
		Path         string            `json:"path"`
		SHA256       string            `json:"sha256"`
		Enabled      bool              `json:"enabled"`
		StartTimeout string            `json:"start_timeout"`
		Env          map[string]string `json:"env,omitempty"`
		RunAs        string            `json:"run_as,omitempty"`
		Untrusted    bool              `json:"untrusted_input,omitempty"`
		Config       json.RawMessage   `json:"config,omitempty"`
		ConfigError  string            `json:"config_error,omitempty"`
	}
	f := fp{
		Source:       p.Source,
		Path:         p.Path,
		SHA256:       p.SHA256,
		Enabled:      p.Enabled,
		StartTimeout: p.StartTimeout.Duration().String(),
		Env:          p.Env,
		RunAs:        p.RunAs,
		Untrusted:    p.UntrustedInput,
	}
	f.Config, f.ConfigError = p.evaluatedConfig()
	b, _ := json.Marshal(f)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// evaluatedConfig evaluates the config block generically, attribute by
// attribute, as canonical JSON (object keys sorted).
func (p *Plugin) evaluatedConfig() (json.RawMessage, string) {
	if p.ConfigBlock == nil || p.ConfigBlock.Body == nil {
		return json.RawMessage(`{}`), ""
	}
	attrs, diags := p.ConfigBlock.Body.JustAttributes()
	vals := map[string]cty.Value{}
	for name, a := range attrs {
		v, d := a.Expr.Value(p.ctx)
		diags = append(diags, d...)
		vals[name] = v
	}
	if diags.HasErrors() {
		msgs := make([]string, 0, len(diags))
		for _, d := range diags {
			msgs = append(msgs, d.Summary+": "+d.Detail)
		}
		return nil, strings.Join(msgs, "\n")
	}
	obj := cty.ObjectVal(vals)
	b, err := ctyjson.Marshal(obj, obj.Type())
	if err != nil {
		return nil, "unencodable config"
	}
	return b, ""
}
