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
	Opts  *struct {
		SplitLongLines *bool `json:"splitLongLines"`
		TrimLines      *bool `json:"trimLines"`
	} `json:"opts"`
}

func TestVectorsChunk(t *testing.T) {
	t.Parallel()
	groups := map[string]func(text string, p chunkParams) []string{
		"chunkText":         func(s string, p chunkParams) []string { return Text(s, floorLimit(p.Limit)) },
		"chunkMarkdownText": func(s string, p chunkParams) []string { return Markdown(s, floorLimit(p.Limit)) },
		"chunkTextWithMode": func(s string, p chunkParams) []string { return TextWithMode(s, floorLimit(p.Limit), p.Mode) },
		"chunkMarkdownTextWithMode": func(s string, p chunkParams) []string {
			return MarkdownWithMode(s, floorLimit(p.Limit), p.Mode)
		},
		"chunkByNewline": func(s string, p chunkParams) []string {
			var o NewlineOptions
			if p.Opts != nil {
				o.KeepLongLines = p.Opts.SplitLongLines != nil && !*p.Opts.SplitLongLines
				o.KeepLineWhitespace = p.Opts.TrimLines != nil && !*p.Opts.TrimLines
			}
			return ByNewline(s, floorLimit(p.Limit), o)
		},
	}
	for group, fn := range groups {
		for _, tc := range vectors.Load(t, group) {
			t.Run(group+"/"+tc.Name, func(t *testing.T) {
				t.Parallel()
				var in string
				var p chunkParams
				var want []string
				vectors.Unmarshal(t, tc.Input, &in)
				vectors.Unmarshal(t, tc.Params, &p)
				vectors.Unmarshal(t, tc.Expected, &want)
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

func TestVectorsResolveTextChunkLimit(t *testing.T) {
	t.Parallel()
	type account struct {
		TextChunkLimit int `json:"textChunkLimit"`
	}
	type channel struct {
		TextChunkLimit int                `json:"textChunkLimit"`
		Accounts       map[string]account `json:"accounts"`
	}
	for _, tc := range vectors.Load(t, "resolveTextChunkLimit") {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			var p struct {
				Cfg *struct {
					Channels map[string]channel `json:"channels"`
				} `json:"cfg"`
				Provider  *string `json:"provider"`
				AccountID *string `json:"accountId"`
				Opts      *struct {
					FallbackLimit int `json:"fallbackLimit"`
				} `json:"opts"`
			}
			var want int
			vectors.Unmarshal(t, tc.Params, &p)
			vectors.Unmarshal(t, tc.Expected, &want)
			var cfg *ChannelLimits
			if p.Cfg != nil && p.Provider != nil && *p.Provider != "webchat" {
				if ch, ok := p.Cfg.Channels[*p.Provider]; ok {
					cfg = &ChannelLimits{TextChunkLimit: ch.TextChunkLimit, Accounts: map[string]int{}}
					for id, a := range ch.Accounts {
						cfg.Accounts[id] = a.TextChunkLimit
					}
				}
			}
			acct, fallback := "", 0
			if p.AccountID != nil {
				acct = *p.AccountID
			}
			if p.Opts != nil {
				fallback = p.Opts.FallbackLimit
			}
			if got := ResolveLimit(cfg, acct, fallback); got != want {
				t.Errorf("got %d, want %d", got, want)
			}
		})
	}
}
