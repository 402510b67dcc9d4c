package turn

import (
	"strings"
	"testing"
)

func TestMemoryFlush(t *testing.T) {
	t.Parallel()
	zero, one := 0, 1
	m := MemoryFlush{ContextWindow: 100_000, ReserveTokens: 5_000, SoftThresholdTokens: 4_000}
	if got := m.Threshold(0); got != 91_000 {
		t.Fatalf("threshold %d, want 91000 (seed 001 §7 example)", got)
	}
	for _, tc := range []struct {
		name string
		m    MemoryFlush
		s    FlushState
		want bool
	}{
		{"below", m, FlushState{PromptTokens: 90_999}, false},
		{"at threshold", m, FlushState{PromptTokens: 91_000}, true},
		{"already flushed this cycle", m, FlushState{PromptTokens: 95_000, CompactionCount: 0, FlushedAtCompaction: &zero}, false},
		{"flushed in an earlier cycle", m, FlushState{PromptTokens: 95_000, CompactionCount: 1, FlushedAtCompaction: &zero}, true},
		{"flushed this cycle 1", m, FlushState{PromptTokens: 95_000, CompactionCount: 1, FlushedAtCompaction: &one}, false},
		// 1,000,000 - 23,000 (claude compacts at ~977k) - 50,000 (a twentieth).
		{"reported window", MemoryFlush{}, FlushState{PromptTokens: 927_000, ReportedContextWindow: 1_000_000}, true},
		{"reported window below", MemoryFlush{}, FlushState{PromptTokens: 926_999, ReportedContextWindow: 1_000_000}, false},
		// 200,000 - 23,000 - 10,000.
		{"default window", MemoryFlush{}, FlushState{PromptTokens: 167_000}, true},
		{"default window below", MemoryFlush{}, FlushState{PromptTokens: 166_999}, false},
		{"small window: the margin is at least 4,000", MemoryFlush{ContextWindow: 50_000}, FlushState{PromptTokens: 23_000}, true},
		{"disabled", MemoryFlush{Disabled: true}, FlushState{PromptTokens: 999_999}, false},
	} {
		if got := tc.m.Due(tc.s); got != tc.want {
			t.Errorf("%s: Due = %v, want %v", tc.name, got, tc.want)
		}
	}
	p, sp := MemoryFlush{}.Texts()
	if !strings.Contains(p, "NO_REPLY") || !strings.Contains(sp, "memory flush") {
		t.Fatalf("texts %q %q", p, sp)
	}
}

// TestUsageLimitReset: claude 2.1.330 logged in with a subscription (an
// OAuth token) and answered 429 with anthropic-ratelimit-unified-status
// rejected writes a rate_limit_event with the reset, then an error result
// (lines verbatim, abridged to the fields read): a usage limit with its
// reset time. A 429 whose event has no reset (retry-after, no unified
// headers: "not your usage limit") stays rate_limited.
