package chunk

import (
	"strings"
	"testing"
)

// markdownMiB builds about 1 MiB of chat-style markdown: prose with
// parentheses, fenced code, lists, CRLF lines and emoji.
func markdownMiB() string {
	block := "## Section\n\nSome prose with a (parenthetical remark) and a [link](https://example.com/a/b) " +
		"that keeps going for a while so that lines are long enough to need wrapping 😀.\r\n" +
		"- item one\n- item two with `code`\n\n```go\nfunc main() {\n\tfmt.Println(\"hi\")\n}\n```\n\n" +
		strings.Repeat("word ", 60) + "\n\n"
	var b strings.Builder
	for b.Len() < 1<<20 {
		b.WriteString(block)
	}
	return b.String()
}

func BenchmarkChunkMarkdown1MiB(b *testing.B) {
	text := markdownMiB()
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		Markdown(text, DefaultLimit)
	}
}

func BenchmarkChunkMarkdown1MiBLimit2000(b *testing.B) {
	text := markdownMiB()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		Markdown(text, 2000)
	}
}

func BenchmarkLines1MiB2000x17(b *testing.B) {
	text := markdownMiB()
	chunks := Markdown(text, 2000)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		Lines(chunks, 2000, 17)
	}
}
