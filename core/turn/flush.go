package turn

// Memory-flush defaults (OpenClaw's values; seed 001 §7).
const (
	// DefaultFlushContextWindow is used when neither the config nor claude's report gives a
	// context window.
	DefaultFlushContextWindow = 200_000
	// DefaultFlushReserveTokens is how far below the context window claude compacts by
	// itself: claude 2.1.330 with a 1,000,000-token window compacts once the last prompt
	// reaches about 977,000 tokens (measured against the fake API: no compaction after a
	// 976,956-token prompt, compaction after 977,051). OpenClaw's 20,000 put the flush
	// after that point, so it only ever saw the summary.
	DefaultFlushReserveTokens = 23_000
	// DefaultFlushSoftThreshold is the least margin before that point at which the flush
	// runs; by default the margin is a twentieth of the window (50,000 of 1,000,000,
	// 10,000 of 200,000), enough for the turn that crosses it to finish and the flush
	// turn to run before claude compacts.
	DefaultFlushSoftThreshold = 4_000
	// DefaultFlushPrompt is the user message of a flush turn.
	DefaultFlushPrompt = "Pre-compaction memory flush. Store durable memories now (use memory/YYYY-MM-DD.md; create memory/ if needed). If nothing to store, reply with NO_REPLY."
	// DefaultFlushSystemPrompt is the extra system prompt of a flush turn.
	DefaultFlushSystemPrompt = "Pre-compaction memory flush turn. The session is near auto-compaction; capture durable memories to disk. You may reply, but usually NO_REPLY is correct."
)

// MemoryFlush decides when a session should run a memory-flush turn: a turn that asks the
// agent to write durable notes to the workspace before claude compacts (forgets) older
// context. Turns runs it as an ordinary turn (runner.TurnRequest{Prompt: Prompt,
// ExtraSystemPrompt: SystemPrompt}), suppresses a NO_REPLY answer, and records the
// compaction count it ran at, so it runs once per compaction cycle.
type MemoryFlush struct {
	// Disabled turns memory flushes off.
	Disabled bool
	// ContextWindow is the model's context window in tokens. 0 means: use the window claude
	// reports for the session's model (runner.Result.ContextWindow), else
	// DefaultFlushContextWindow.
	ContextWindow int
	// ReserveTokens is how far below the window claude compacts by itself. Default
	// 23,000 (measured, see DefaultFlushReserveTokens).
	ReserveTokens int
	// SoftThresholdTokens is the margin before that point at which the flush runs.
	// 0 means the larger of a twentieth of the window and 4,000.
	SoftThresholdTokens int
	// Prompt and SystemPrompt are the flush turn's texts (defaults above).
	Prompt       string
	SystemPrompt string
}

func (m MemoryFlush) withDefaults() MemoryFlush {
	if m.ReserveTokens == 0 {
		m.ReserveTokens = DefaultFlushReserveTokens
	}
	if m.Prompt == "" {
		m.Prompt = DefaultFlushPrompt
	}
	if m.SystemPrompt == "" {
		m.SystemPrompt = DefaultFlushSystemPrompt
	}
	return m
}

// FlushState is what the session keeps for the decision (session.Meta).
type FlushState struct {
	// PromptTokens is the last turn's runner.Usage.PromptTokens().
	PromptTokens int
	// ReportedContextWindow is the last turn's runner.Result.ContextWindow (0 if unknown).
	ReportedContextWindow int
	// CompactionCount counts compactions of the session (runner.Result.Compacted turns).
	CompactionCount int
	// FlushedAtCompaction is CompactionCount when the last flush ran; nil if never.
	FlushedAtCompaction *int
}

// Threshold is the prompt size at which a flush is due: contextWindow - ReserveTokens -
// SoftThresholdTokens (the margin's default depends on the window; never below 0).
func (m MemoryFlush) Threshold(reportedWindow int) int {
	m = m.withDefaults()
	w := m.ContextWindow
	if w <= 0 {
		w = reportedWindow
	}
	if w <= 0 {
		w = DefaultFlushContextWindow
	}
	soft := m.SoftThresholdTokens
	if soft <= 0 {
		soft = max(w/20, DefaultFlushSoftThreshold)
	}
	return max(w-m.ReserveTokens-soft, 0)
}

// Due reports whether a flush turn should run before the next turn: enabled, the prompt has
// reached Threshold, and no flush ran yet in the current compaction cycle.
func (m MemoryFlush) Due(s FlushState) bool {
	if m.Disabled || s.PromptTokens <= 0 {
		return false
	}
	if s.FlushedAtCompaction != nil && *s.FlushedAtCompaction == s.CompactionCount {
		return false
	}
	return s.PromptTokens >= m.Threshold(s.ReportedContextWindow)
}

// Texts returns the flush turn's prompt and extra system prompt (defaults applied).
func (m MemoryFlush) Texts() (prompt, systemPrompt string) {
	m = m.withDefaults()
	return m.Prompt, m.SystemPrompt
}
