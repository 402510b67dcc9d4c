package chunk

import (
	"github.com/clawhost/clawhost/core/internal/vectors"
	"math"
	"reflect"
	"testing"
)

type chunkParams struct {
	Limit float64 `json:"limit"`
	Mode  Mode    `json:"mode"`
}

// TestVectorsChunk runs OpenClaw's markdown chunking cases. Its plain-text
// groups (chunkText, chunkTextWithMode, chunkByNewline) and
// resolveTextChunkLimit do not apply: every clawhost reply goes through the
// markdown chunker, and the limit comes from the channel's capability
// capped by messages.text_limit (CapLimit), not from OpenClaw's per-account
// table — those functions had no caller and were removed.
func TestVectorsChunk(t *testing.T) {
	t.Parallel()
	groups := map[string]func(text string, p chunkParams) []string{
		"chunkMarkdownText": func(s string, p chunkParams) []string { return Markdown(s, floorLimit(p.Limit)) },
		"chunkMarkdownTextWithMode": func(s string, p chunkParams) []string {
			return MarkdownWithMode(s, floorLimit(p.Limit), p.Mode)
		},
	}
	for group, fn := range groups {
		for _, tc := range vectors.Load(t, group) {
			t.Run(group+"/"+tc.Name, func(t *testing.T) {
				t.Parallel()
				var in string
				var p chunkParams
				var want []string
				tc.Decode(t, &in, &p, &want)
				got := fn(in, p)
				if !reflect.DeepEqual(got, want) {
					t.Errorf("input %q limit %v\n got %q\nwant %q", in, p.Limit, got, want)
				}
			})
		}
	}
}

// floorLimit converts a JSON limit the way OpenClaw normalizes fractional
// limits (3.7 acts as 3).
func floorLimit(f float64) int { return int(math.Floor(f)) }
