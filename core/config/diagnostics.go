package config

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// FormatDiagnostics writes every diagnostic in hcl's text format — severity,
// summary, the source lines with the problem underlined, the detail — each
// followed by a "  -> file:line:col" line, then a count ("2 errors, 1
// warning"). The diagnostics are sorted by position first, those without one
// last. files supplies the sources for the snippets (Config.Files); a file
// missing from it is read from disk (up to MaxFileSize), and one that cannot
// be read is shown without a snippet. Diagnostics about sensitive plugin
// attributes, and those about a file's size or nesting, are always shown
// without a snippet. Nothing is written for no diagnostics.
//
// The time is linear in the number of diagnostics plus the size of the
// files: each file is indexed once (line starts, top-level blocks), where
// hcl's own text writer scans the file from its first byte for every
// diagnostic.
func FormatDiagnostics(w io.Writer, diags hcl.Diagnostics, files map[string]*hcl.File) error {
	if len(diags) == 0 {
		return nil
	}
	files = withSources(diags, files)
	bw := bufio.NewWriter(w)
	indexes := map[string]*sourceIndex{}
	// write never fails: bw keeps its error for Flush.
	_ = writeEach(bw, diags, func(d *hcl.Diagnostic) error {
		var ix *sourceIndex
		if d.Subject != nil {
			name := d.Subject.Filename
			if ix = indexes[name]; ix == nil {
				ix = newSourceIndex(files[name])
				indexes[name] = ix
			}
		}
		writeDiagnostic(bw, d, ix)
		return nil
	})
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write diagnostics: %w", err)
	}
	return nil
}

// writeEach writes diags sorted by position (a copy), each by write but
// for those shown without a snippet (sensitive, over a limit), each
// followed by its "  -> file:line:col" line and a blank line, then the
// count; it stops at write's first error.
func writeEach(w io.Writer, diags hcl.Diagnostics, write func(*hcl.Diagnostic) error) error {
	diags = append(hcl.Diagnostics(nil), diags...)
	sortDiagnostics(diags)
	var errs, warns int
	for _, d := range diags {
		if d.Severity == hcl.DiagError {
			errs++
		} else {
			warns++
		}
		switch d.Extra.(type) {
		case sensitiveDiag:
			writeHidden(w, d, "it may contain a sensitive value")
		case limitDiag:
			writeHidden(w, d, "the file is over a limit")
		default:
			if err := write(d); err != nil {
				return err
			}
		}
		if d.Subject != nil && d.Subject.Filename != "" {
			fmt.Fprintf(w, "  -> %s:%d:%d\n", d.Subject.Filename, d.Subject.Start.Line, d.Subject.Start.Column)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, countLine(errs, warns))
	return nil
}

// writeDiagnostic writes d as hcl.NewDiagnosticTextWriter does (no colour,
// no wrapping), with the snippet taken from ix (nil: no source). It leaves
// out hcl's "with NAME as VALUE" lines: the file's expressions have no
// variables to show, and a value could be a secret.
func writeDiagnostic(w io.Writer, d *hcl.Diagnostic, ix *sourceIndex) {
	fmt.Fprintf(w, "%s: %s\n\n", severityWord(d.Severity), d.Summary)
	if d.Subject != nil {
		snip, highlight := *d.Subject, *d.Subject
		if d.Context != nil {
			// Show both the subject and its context, which overlap in
			// all reasonable situations.
			snip = hcl.RangeOver(snip, *d.Context)
		}
		// An empty range overlaps no line: make it one character, as
		// hcl does.
		if snip.Empty() {
			snip.End.Byte++
			snip.End.Column++
		}
		if highlight.Empty() {
			highlight.End.Byte++
			highlight.End.Column++
		}
		if ix == nil {
			fmt.Fprintf(w, "  on %s line %d:\n  (source code not available)\n\n", d.Subject.Filename, d.Subject.Start.Line)
		} else {
			where := ix.context(d.Subject.Start.Byte)
			if where != "" {
				where = ", in " + where
			}
			fmt.Fprintf(w, "  on %s line %d%s:\n", d.Subject.Filename, d.Subject.Start.Line, where)
			ix.writeSnippet(w, d.Subject.Filename, snip, highlight)
			fmt.Fprintln(w)
		}
	}
	if d.Detail != "" {
		fmt.Fprintf(w, "%s\n\n", d.Detail)
	}
}

func severityWord(s hcl.DiagnosticSeverity) string {
	switch s {
	case hcl.DiagError:
		return "Error"
	case hcl.DiagWarning:
		return "Warning"
	}
	return "???????"
}

// writeHidden writes d like hcl's text writer, with a note saying why in
// place of the source snippet, which could show a sensitive value or be
// megabytes long.
func writeHidden(w io.Writer, d *hcl.Diagnostic, why string) {
	fmt.Fprintf(w, "%s: %s\n\n", severityWord(d.Severity), d.Summary)
	if d.Subject != nil {
		fmt.Fprintf(w, "  on %s line %d:\n  (source not shown: %s)\n\n", d.Subject.Filename, d.Subject.Start.Line, why)
	}
	if d.Detail != "" {
		fmt.Fprintf(w, "%s\n\n", d.Detail)
	}
}

// sourceIndex is what FormatDiagnostics needs of one file, computed once:
// where each line starts, and the top-level blocks for the "in agent" part.
type sourceIndex struct {
	src    []byte
	starts []int // byte offset of the first byte of each line
	// blocks are the file's top-level blocks when their ranges are in
	// file order and disjoint (always, unless the file has syntax
	// errors), so the one around an offset is found by binary search.
	blocks []*hclsyntax.Block
	nav    any // the file's navigation, used when blocks is nil
}

// newSourceIndex indexes f; nil when f has no source.
func newSourceIndex(f *hcl.File) *sourceIndex {
	if f == nil || f.Bytes == nil {
		return nil
	}
	ix := &sourceIndex{src: f.Bytes, starts: []int{0}, nav: f.Nav}
	for i, c := range f.Bytes {
		if c == '\n' && i+1 < len(f.Bytes) {
			ix.starts = append(ix.starts, i+1)
		}
	}
	if body, ok := f.Body.(*hclsyntax.Body); ok && ordered(body.Blocks) {
		ix.blocks = body.Blocks
	}
	return ix
}

// ordered reports whether the blocks' ranges are disjoint and in file order.
func ordered(blocks []*hclsyntax.Block) bool {
	prevEnd := 0
	for _, b := range blocks {
		r := b.Range()
		if r.Start.Byte < prevEnd || r.End.Byte < r.Start.Byte {
			return false
		}
		prevEnd = r.End.Byte
	}
	return true
}

// context names the top-level block around offset (`plugin "tg"`), the
// way hcl's text writer does, or "".
func (ix *sourceIndex) context(offset int) string {
	if ix.blocks == nil {
		if n, ok := ix.nav.(interface{ ContextString(int) string }); ok {
			return n.ContextString(offset)
		}
		return ""
	}
	// The last block starting at or before offset is the only candidate.
	i := sort.Search(len(ix.blocks), func(i int) bool { return ix.blocks[i].Range().Start.Byte > offset }) - 1
	if i < 0 || !ix.blocks[i].Range().ContainsOffset(offset) {
		return ""
	}
	b := ix.blocks[i]
	var sb strings.Builder
	sb.WriteString(b.Type)
	for _, l := range b.Labels {
		fmt.Fprintf(&sb, " %q", l)
	}
	return sb.String()
}

// writeSnippet writes the lines overlapping snip ("%4d: text") as hcl does
// without colour: the part of a line in highlight is not marked then, but
// hcl still writes a line as the parts before, in and after it. Only those
// lines are visited.
func (ix *sourceIndex) writeSnippet(w io.Writer, filename string, snip, highlight hcl.Range) {
	lo, hi := snip.Start.Byte, snip.End.Byte
	if hi < lo {
		lo, hi = hi, lo
	}
	first := sort.Search(len(ix.starts), func(i int) bool { return ix.starts[i] > lo }) - 1
	if first < 0 {
		first = 0
	}
	for i := first; i < len(ix.starts) && ix.starts[i] <= hi; i++ {
		line := ix.line(i, filename)
		if !line.Overlaps(snip) {
			continue
		}
		before, in, after := line.PartitionAround(highlight)
		if in.Empty() {
			fmt.Fprintf(w, "%4d: %s\n", line.Start.Line, line.SliceBytes(ix.src))
			continue
		}
		fmt.Fprintf(w, "%4d: %s%s%s\n", line.Start.Line,
			before.SliceBytes(ix.src), in.SliceBytes(ix.src), after.SliceBytes(ix.src))
	}
}

// line returns the range of line i (0-based) without its line break, as
// bufio.ScanLines cuts it.
func (ix *sourceIndex) line(i int, filename string) hcl.Range {
	start := ix.starts[i]
	end := len(ix.src)
	if i+1 < len(ix.starts) {
		end = ix.starts[i+1] - 1
	} else if end > start && ix.src[end-1] == '\n' {
		end--
	}
	if end > start && ix.src[end-1] == '\r' {
		end--
	}
	return hcl.Range{
		Filename: filename,
		Start:    hcl.Pos{Line: i + 1, Column: 1, Byte: start},
		End:      hcl.Pos{Line: i + 1, Column: 1 + end - start, Byte: end},
	}
}

// withSources returns files plus, read from disk, every file a diagnostic
// names that files lacks. The caller's map is not modified. A file is read
// once, and not at all when it is larger than MaxFileSize.
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
		src, err := readLimited(name)
		if err != nil || len(src) > MaxFileSize {
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

// tidyDecodeDiagnostics rewrites decodeBody's diagnostics about the file's own
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
	for _, b := range blocksAround(sb.Blocks, r) {
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

// blocksAround returns the blocks whose bodies overlap r. Blocks are in file
// order and disjoint, so a binary search finds the one candidate; only
// blocks out of order (a file with syntax errors) are searched one by one.
func blocksAround(blocks []*hclsyntax.Block, r hcl.Range) []*hclsyntax.Block {
	i := sort.Search(len(blocks), func(i int) bool { return blocks[i].Range().Start.Byte > r.Start.Byte }) - 1
	if i >= 0 && blocks[i].Body.Range().Overlaps(r) {
		return blocks[i : i+1]
	}
	var out []*hclsyntax.Block
	if !ordered(blocks) {
		for _, b := range blocks {
			if b.Body.Range().Overlaps(r) {
				out = append(out, b)
			}
		}
	}
	return out
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
