package admin

import (
	"fmt"
	"strings"
	"time"
)

// WarmPool is the runner's warm pool (runner.Pool).
type WarmPool struct {
	// MaxWarm is agent.max_warm, 0 for no cap by count; WarmMemory is
	// agent.warm_memory in bytes, 0 for none.
	MaxWarm    int   `json:"max_warm"`
	WarmMemory int64 `json:"warm_memory_bytes"`
	// Memory is what the warm processes hold, in bytes: the sum of each
	// one's process tree measured after its last turn (Pss), one not yet
	// measured counted at the mean of the others.
	Memory int64 `json:"memory_bytes"`
	// Warm and Measured count the warm processes and those measured.
	Warm     int `json:"warm"`
	Measured int `json:"measured"`
	// FirstAnswerWarm and FirstAnswerCold are the time from a returning
	// chat's turn reaching the runner to claude's first text: on the chat's
	// warm process, and where claude had to be started (its process was
	// stopped to make room, idle, or the host restarted).
	FirstAnswerWarm FirstAnswer `json:"first_answer_warm"`
	FirstAnswerCold FirstAnswer `json:"first_answer_cold"`
	// Spares is how many of Warm are agents' spare claudes started ahead for a
	// new session (agent.spare); SparesAdopted how many new sessions adopted one
	// since the start.
	Spares        int `json:"spares"`
	SparesAdopted int `json:"spares_adopted"`
	// SpareError is why the latest spare could not be started or adopted, "" once
	// one started since: new sessions start their own claude meanwhile (slower).
	SpareError string `json:"spare_error,omitempty"`
}

// SpareAction is what the operator does about SpareError.
const SpareAction = "new sessions start their own claude meanwhile (about a second slower); clawhost's log says more (\"spare claude\"): check agent.sandbox and agent.run_as can reach <data_dir>/runner/spares, or set agent.spare = false"

// FirstAnswer is a time to first answer over the latest turns (up to 256).
type FirstAnswer struct {
	// Turns counts the turns since the start; 0: none, no percentiles.
	Turns int `json:"turns"`
	// P50 and P90 are the median and the 90th percentile.
	P50 time.Duration `json:"p50_ns"`
	P90 time.Duration `json:"p90_ns"`
}

// String is "0.4 s median, 0.9 s p90 (120 turns)", or "none yet".
func (f FirstAnswer) String() string {
	if f.Turns == 0 {
		return "none yet"
	}
	return fmt.Sprintf("%s median, %s p90 (%d turns)", secs(f.P50), secs(f.P90), f.Turns)
}

// secs is d as "1.2 s", or "40 ms" below a tenth of a second.
func secs(d time.Duration) string {
	if d < 100*time.Millisecond {
		return fmt.Sprintf("%d ms", d.Milliseconds())
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}

// Limits is the pool's limits in words: "2048 MB (warm_memory)", with
// ", at most 4 (max_warm)" when max_warm is set.
func (w WarmPool) Limits() string {
	var parts []string
	if w.WarmMemory > 0 {
		parts = append(parts, MB(w.WarmMemory)+" (warm_memory)")
	}
	if w.MaxWarm > 0 {
		parts = append(parts, fmt.Sprintf("at most %d (max_warm)", w.MaxWarm))
	}
	if len(parts) == 0 {
		return "no limit"
	}
	return strings.Join(parts, ", ")
}
