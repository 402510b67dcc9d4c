package markup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/sdk/channel"
)

// reply is a long agent reply: the golden documents repeated to ~n bytes.
func reply(b *testing.B, n int) string {
	b.Helper()
	var s strings.Builder
	for _, name := range []string{"blocks.md", "split.md", "reply.md"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			b.Fatal(err)
		}
		s.Write(data)
		s.WriteString("\n\n")
	}
	one := s.String()
	return strings.Repeat(one, max(1, n/len(one)))
}

// BenchmarkSplit: a ~12 KB reply split at Telegram's 4096 visible units
// (what the host does with every long reply).
func BenchmarkSplit(b *testing.B) {
	src := reply(b, 12_000)
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if len(Split(src, HTMLSubset, 4096, channel.LengthUTF16)) < 2 {
			b.Fatal("not split")
		}
	}
}

// BenchmarkLenFits: the measure of a 2 KB reply that fits (every reply
// pays this once).
func BenchmarkLenFits(b *testing.B) {
	src := reply(b, 2_000)
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		Len(src, HTMLSubset, channel.LengthUTF16)
	}
}
