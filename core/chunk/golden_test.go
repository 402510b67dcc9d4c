package chunk

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/core/internal/golden"
)

const goldenInput = "# Release notes\n\nThis release (finally) fixes the chunker so long replies stay readable 😀.\r\n" +
	"- item one\n- item two with a [link](https://example.com/a/very/long/path/that/keeps/going)\n\n" +
	"```go\nfunc main() {\n\tfor i := 0; i < 10; i++ {\n\t\tfmt.Println(\"hello, world\", i)\n\t}\n}\n```\n\n" +
	"Family: 👨‍👩‍👧‍👦 flags: 🇺🇸🇩🇪 accents: e\u0301e\u0301e\u0301.\n"

// goldenLong is a reply as Discord would get it: prose, a list and a
// code block longer than 17 lines.
var goldenLong = "Here is the fix.\n\n" +
	"1. Parse the config.\n2. Validate it.\n3. Start the plugins.\n\n" +
	"```go\n" + func() string {
	var b strings.Builder
	for i := range 30 {
		fmt.Fprintf(&b, "\tstep%d() // line %d\n", i, i)
	}
	return b.String()
}() + "```\n\nThat is all: run `make check` after it.\nThen commit.\n"

func TestGolden(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		run  func() []string
	}{
		{"markdown-40", func() []string { return Markdown(goldenInput, 40) }},
		{"markdown-newline-120", func() []string { return MarkdownWithMode(goldenInput, 120, ModeNewline) }},
		{"lines-200x6", func() []string { return Lines(Markdown(goldenInput, 200), 200, 6) }},
		{"lines-discord-2000x17", func() []string { return Lines(MarkdownWithMode(goldenLong, 2000, ModeLength), 2000, 17) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var b strings.Builder
			for i, c := range tc.run() {
				fmt.Fprintf(&b, "--- chunk %d (%d units)\n%s\n", i, Len(c), c)
			}
			golden.Check(t, filepath.Join("testdata", "golden", tc.name+".txt"), []byte(b.String()))
		})
	}
}
