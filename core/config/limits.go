package config

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// MaxFileSize is the size of the largest configuration file Load accepts:
// 1 MiB. A real configuration is a few kilobytes; the limit keeps a wrong or
// hostile file (a log, a binary, generated text) from costing the host its
// memory and time, during a SIGHUP reload too. Load reads no more than one
// byte past it.
const MaxFileSize = 1 << 20

// MaxNesting is the deepest nesting Load accepts: 64 levels. A level is a
// block body, an object, a list, a parenthesis, a quoted string or heredoc,
// a template interpolation or directive, or an operator (unary, binary or
// the conditional's "?") within one expression: what the HCL parser
// descends into by recursion, and the evaluator after it. Deeper nesting is
// refused before the parser sees the file, because a Go stack overflow is
// fatal — it cannot be recovered and would kill the running host on a
// SIGHUP. A real configuration nests 3 or 4 levels deep.
const MaxNesting = 64

// limitDiag marks (in hcl.Diagnostic.Extra) a diagnostic about a file over
// MaxFileSize or MaxNesting: its source line could be megabytes long, so it
// is printed without a snippet.
type limitDiag struct{}

// readLimited reads the file at path, at most MaxFileSize+1 bytes of it: a
// result longer than MaxFileSize means the file is too large.
func readLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, MaxFileSize+1))
}

// checkLimits returns a diagnostic when src is larger than MaxFileSize or
// nests deeper than MaxNesting, else nil. It does not parse: the nesting is
// counted over the lexer's tokens, which know strings, comments and
// heredocs, and the lexer keeps its own stacks on the heap.
func checkLimits(src []byte, filename string) hcl.Diagnostics {
	if len(src) > MaxFileSize {
		at := posAt(src, MaxFileSize, filename)
		return hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Configuration file too large",
			Detail: fmt.Sprintf("The file is larger than %d bytes (1 MiB), the most clawhost reads; it goes on past line %d. A configuration is a few kilobytes: is this the right file?",
				MaxFileSize, at.Line),
			Subject: &hcl.Range{Filename: filename, Start: at, End: at},
			Extra:   limitDiag{},
		}}
	}
	if r, ok := tooDeep(src, filename); ok {
		return hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Configuration nested too deeply",
			Detail: fmt.Sprintf("This opens level %d of nesting; clawhost reads at most %d, counting blocks, objects, lists, parentheses, strings and templates, and each operator of one expression. Flatten the structure, or split the expression.",
				MaxNesting+1, MaxNesting),
			Subject: &r,
			Extra:   limitDiag{},
		}}
	}
	return nil
}

// posAt is the position of byte offset in src (columns count characters).
func posAt(src []byte, offset int, filename string) hcl.Pos {
	before := src[:offset]
	lineStart := bytes.LastIndexByte(before, '\n') + 1
	return hcl.Pos{
		Line:   bytes.Count(before, []byte{'\n'}) + 1,
		Column: utf8.RuneCount(before[lineStart:]) + 1,
		Byte:   offset,
	}
}

// tooDeep returns the range of the first token that opens level
// MaxNesting+1, and whether there is one.
//
// Each open bracket, string or template is a level; operators count as
// levels of the bracket they are in until a separator (",", "=", or a
// newline where newlines end items: at the top and in braces) starts a new
// expression. Unbalanced closers are ignored: the parser reports them.
func tooDeep(src []byte, filename string) (hcl.Range, bool) {
	tokens, _ := hclsyntax.LexConfig(src, filename, hcl.InitialPos)
	type level struct {
		ops      int  // operators since the last separator
		newlines bool // a newline separates items
	}
	levels := []level{{newlines: true}} // the file's top level
	depth := 0                          // open levels plus every level's ops
	for _, t := range tokens {
		top := &levels[len(levels)-1]
		switch t.Type {
		case hclsyntax.TokenOBrace, hclsyntax.TokenOBrack, hclsyntax.TokenOParen,
			hclsyntax.TokenOQuote, hclsyntax.TokenOHeredoc,
			hclsyntax.TokenTemplateInterp, hclsyntax.TokenTemplateControl:
			levels = append(levels, level{newlines: t.Type == hclsyntax.TokenOBrace})
			depth++
		case hclsyntax.TokenCBrace, hclsyntax.TokenCBrack, hclsyntax.TokenCParen,
			hclsyntax.TokenCQuote, hclsyntax.TokenCHeredoc, hclsyntax.TokenTemplateSeqEnd:
			if len(levels) > 1 {
				depth -= 1 + top.ops
				levels = levels[:len(levels)-1]
			}
			continue
		case hclsyntax.TokenComma, hclsyntax.TokenEqual:
			depth -= top.ops
			top.ops = 0
			continue
		case hclsyntax.TokenNewline, hclsyntax.TokenComment:
			// A "#" or "//" comment ends with the line's newline.
			if top.newlines && (t.Type == hclsyntax.TokenNewline || bytes.HasSuffix(t.Bytes, []byte{'\n'})) {
				depth -= top.ops
				top.ops = 0
			}
			continue
		case hclsyntax.TokenPlus, hclsyntax.TokenMinus, hclsyntax.TokenStar, hclsyntax.TokenSlash,
			hclsyntax.TokenPercent, hclsyntax.TokenBang, hclsyntax.TokenAnd, hclsyntax.TokenOr,
			hclsyntax.TokenEqualOp, hclsyntax.TokenNotEqual, hclsyntax.TokenLessThan,
			hclsyntax.TokenLessThanEq, hclsyntax.TokenGreaterThan, hclsyntax.TokenGreaterThanEq,
			hclsyntax.TokenQuestion:
			top.ops++
			depth++
		default:
			continue
		}
		if depth > MaxNesting {
			return t.Range, true
		}
	}
	return hcl.Range{}, false
}
