package config

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// FormatDiagnostics writes every diagnostic in hcl's text format — severity,
// summary, the source lines with the problem underlined, the detail — each
// followed by a "  -> file:line:col" line, then a count ("2 errors, 1
// warning"). files supplies the sources for the snippets (Config.Files); a
// file missing from it is read from disk, and one that cannot be read is
// shown without a snippet. Diagnostics about sensitive plugin attributes are
// always shown without a snippet. Nothing is written for no diagnostics.
func FormatDiagnostics(w io.Writer, diags hcl.Diagnostics, files map[string]*hcl.File) error {
	if len(diags) == 0 {
		return nil
	}
	files = withSources(diags, files)
	diags = append(hcl.Diagnostics(nil), diags...)
	sortDiagnostics(diags)
	bw := bufio.NewWriter(w)
	snippets := hcl.NewDiagnosticTextWriter(bw, files, 0, false)
	var errs, warns int
	for _, d := range diags {
		if d.Severity == hcl.DiagError {
			errs++
		} else {
			warns++
		}
		if _, secret := d.Extra.(sensitiveDiag); secret {
			writeHidden(bw, d)
		} else if err := snippets.WriteDiagnostic(d); err != nil {
			return fmt.Errorf("write diagnostics: %w", err)
		}
		if d.Subject != nil && d.Subject.Filename != "" {
			fmt.Fprintf(bw, "  -> %s:%d:%d\n", d.Subject.Filename, d.Subject.Start.Line, d.Subject.Start.Column)
		}
		fmt.Fprintln(bw)
	}
	fmt.Fprintln(bw, countLine(errs, warns))
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write diagnostics: %w", err)
	}
	return nil
}

// writeHidden writes d like hcl's text writer, with a note in place of the
// source snippet, which could show a sensitive value.
func writeHidden(w io.Writer, d *hcl.Diagnostic) {
	sev := "Error"
	if d.Severity == hcl.DiagWarning {
		sev = "Warning"
	}
	fmt.Fprintf(w, "%s: %s\n\n", sev, d.Summary)
	if d.Subject != nil {
		fmt.Fprintf(w, "  on %s line %d:\n  (source not shown: it may contain a sensitive value)\n\n", d.Subject.Filename, d.Subject.Start.Line)
	}
	if d.Detail != "" {
		fmt.Fprintf(w, "%s\n\n", d.Detail)
	}
}

// hideEnvSources marks the diagnostics about the env attribute of the agent
// block or of a plugin block as sensitive — no source snippet, no
// expression values — since environment values are often secrets (API keys,
// tokens).
func hideEnvSources(diags hcl.Diagnostics, body hcl.Body) {
	sb, ok := body.(*hclsyntax.Body)
	if !ok {
		return
	}
	var ranges []hcl.Range
	for _, b := range sb.Blocks {
		if b.Type != "agent" && b.Type != "plugin" {
			continue
		}
		if a := b.Body.Attributes["env"]; a != nil {
			ranges = append(ranges, a.SrcRange)
		}
	}
	for _, d := range diags {
		if d.Subject == nil {
			continue
		}
		for _, r := range ranges {
			if r.Overlaps(*d.Subject) || r.ContainsOffset(d.Subject.Start.Byte) {
				d.Expression, d.EvalContext, d.Extra = nil, nil, sensitiveDiag{}
				break
			}
		}
	}
}

// withSources returns files plus, read from disk, every file a diagnostic
// names that files lacks. The caller's map is not modified.
func withSources(diags hcl.Diagnostics, files map[string]*hcl.File) map[string]*hcl.File {
	out := make(map[string]*hcl.File, len(files))
	for k, v := range files {
		out[k] = v
	}
	for _, d := range diags {
		if d.Subject == nil || d.Subject.Filename == "" {
			continue
		}
		name := d.Subject.Filename
		if _, ok := out[name]; ok {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			out[name] = nil
			continue
		}
		out[name] = &hcl.File{Bytes: src}
	}
	for k, v := range out {
		if v == nil {
			delete(out, k)
		}
	}
	return out
}

func countLine(errs, warns int) string {
	plural := func(n int, word string) string {
		if n == 1 {
			return fmt.Sprintf("%d %s", n, word)
		}
		return fmt.Sprintf("%d %ss", n, word)
	}
	switch {
	case warns == 0:
		return plural(errs, "error")
	case errs == 0:
		return plural(warns, "warning")
	}
	return plural(errs, "error") + ", " + plural(warns, "warning")
}

// pos formats the start of r as file:line:col.
func pos(r hcl.Range) string {
	return fmt.Sprintf("%s:%d:%d", r.Filename, r.Start.Line, r.Start.Column)
}

// sortDiagnostics orders diags by position (file, then offset), those without
// a position last, keeping the order of equal ones: decoders walk maps, and
// the output must not depend on it.
func sortDiagnostics(diags hcl.Diagnostics) {
	sort.SliceStable(diags, func(i, j int) bool {
		a, b := diags[i].Subject, diags[j].Subject
		switch {
		case a == nil || b == nil:
			return a != nil && b == nil
		case a.Filename != b.Filename:
			return a.Filename < b.Filename
		}
		return a.Start.Byte < b.Start.Byte
	})
}

// tidyDecodeDiagnostics rewrites gohcl's diagnostics about the file's own
// settings: a type mismatch names the attribute ("Unsuitable value: a number
// is required" becomes "Inappropriate value for agent.max_warm: a number is
// required."), and the follow-on "value must be known" after a
// failed function call is dropped, the call's own error having said it.
func tidyDecodeDiagnostics(diags hcl.Diagnostics, body hcl.Body) hcl.Diagnostics {
	out := diags[:0:0]
	for _, d := range diags {
		if d.Summary != "Unsuitable value type" || d.Subject == nil {
			out = append(out, d)
			continue
		}
		detail := strings.TrimPrefix(d.Detail, "Unsuitable value: ")
		if detail == "value must be known" {
			continue
		}
		name := attrNameAt(body, *d.Subject, "")
		if name == "" {
			out = append(out, d)
			continue
		}
		c := *d
		c.Summary = "Incorrect attribute value type"
		c.Detail = fmt.Sprintf("Inappropriate value for %s: %s.", name, detail)
		out = append(out, &c)
	}
	return out
}

// attrNameAt finds the attribute whose value is at r and returns its
// qualified name ("agent.max_warm", `enabled in plugin "tg"`), or "".
func attrNameAt(body hcl.Body, r hcl.Range, where string) string {
	sb, ok := body.(*hclsyntax.Body)
	if !ok {
		return ""
	}
	for name, a := range sb.Attributes {
		if a.Expr.Range().Overlaps(r) || a.Expr.Range() == r {
			return qualify(where, name)
		}
	}
	for _, b := range sb.Blocks {
		if !b.Body.Range().Overlaps(r) {
			continue
		}
		w := b.Type
		if where != "" && !strings.Contains(where, " ") {
			w = where + "." + w
		}
		for _, l := range b.Labels {
			w += fmt.Sprintf(" %q", l)
		}
		if n := attrNameAt(b.Body, r, w); n != "" {
			return n
		}
	}
	return ""
}
