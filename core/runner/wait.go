package runner

import (
	"fmt"
	"strings"
	"time"
)

// Wait is how a turn got to claude: how long it waited, behind what, and whether a claude
// process had to be started for it (Result.Wait). String says it in a sentence for /status.
type Wait struct {
	// Previous is how long the turn waited for the earlier turns of its conversation key.
	Previous time.Duration
	// Slot is how long it then waited for one of Slots (Config.MaxConcurrent) slots;
	// Running turns were running and Ahead were waiting when it began to wait.
	Slot           time.Duration
	Running, Ahead int
	Slots          int
	// Start is how claude got the turn: a warm process, or why one was started.
	Start Start
	// Warm and WarmBusy are the warm processes, and those of them running a turn, when
	// this turn's process was started (MaxWarm is Config.MaxWarm); Evicted is the key
	// whose idle process was stopped to make room for it, "" when none was.
	Warm, WarmBusy, MaxWarm int
	Evicted                 string
	// Memory is what those warm processes held (measured, or estimated for one not
	// measured yet) and WarmMemory the budget (Config.WarmMemory; 0 none), in bytes.
	Memory, WarmMemory int64
	// Startup is how long the started process took to write its first line (0 when the
	// turn ran warm, or the process wrote nothing).
	Startup time.Duration
}

// Start is how a turn's claude process came to be.
type Start string

// The ways a turn gets its process.
const (
	// StartWarm: the conversation's warm process ran the turn.
	StartWarm Start = "warm"
	// StartCold: no warm process for the conversation (its first turn since the host
	// started, or its process was stopped: idle, evicted to make room, /new).
	StartCold Start = "cold"
	// StartChanged: the warm process was started with other settings (model, effort,
	// permission mode, system prompt, tools) and was replaced, resuming the session.
	StartChanged Start = "changed"
	// StartDied: the warm process had exited; a new one resumed the session.
	StartDied Start = "died"
	// StartOneShot: Config.OneShot starts a process for every turn.
	StartOneShot Start = "one-shot"
	// StartSpare: a new session adopted the agent's spare, started ahead (spare.go).
	StartSpare Start = "spare"
)

// String is the wait in a sentence, e.g. "waited 1.2 s for a free slot (4 of 4 running,
// 2 ahead), started claude in 0.9 s (no warm process; stopped the idle one of tg:dm:7 to
// make room, 4 of 4 warm)". The zero Wait (no turn) is "".
func (w Wait) String() string {
	if w.Start == "" {
		return ""
	}
	var parts []string
	if w.Previous >= 100*time.Millisecond {
		parts = append(parts, "waited "+seconds(w.Previous)+" for the previous turn of this chat")
	}
	if w.Slot >= 100*time.Millisecond {
		s := fmt.Sprintf("waited %s for a free slot (%d of %d running", seconds(w.Slot), w.Running, w.Slots)
		if w.Ahead > 0 {
			s += fmt.Sprintf(", %d ahead", w.Ahead)
		}
		parts = append(parts, s+")")
	}
	if len(parts) == 0 {
		parts = append(parts, "no wait")
	}
	switch w.Start {
	case StartWarm:
		return strings.Join(append(parts, "warm claude process"), ", ")
	case StartSpare:
		return strings.Join(append(parts, "the agent's spare claude process, started ahead"), ", ")
	}
	started := "started claude"
	if w.Startup > 0 {
		started += " in " + seconds(w.Startup)
	}
	var why string
	switch w.Start {
	case StartCold:
		why = "no warm process"
		switch {
		case w.Evicted != "" && w.MaxWarm > 0 && w.Warm >= w.MaxWarm:
			why += fmt.Sprintf("; stopped the idle one of %s to make room, %d of %d warm", w.Evicted, w.Warm, w.MaxWarm)
		case w.Evicted != "":
			why += fmt.Sprintf("; stopped the idle one of %s to make room, %d warm holding %s of %s", w.Evicted, w.Warm, megabytes(w.Memory), megabytes(w.WarmMemory))
		case w.MaxWarm > 0 && w.Warm >= w.MaxWarm:
			why += fmt.Sprintf(": %d of %d warm, %d in use", w.Warm, w.MaxWarm, w.WarmBusy)
		}
	case StartChanged:
		why = "settings changed"
	case StartDied:
		why = "the warm process had exited"
	case StartOneShot:
		why = "one-shot mode"
	}
	return strings.Join(append(parts, started+" ("+why+")"), ", ")
}

// megabytes is n bytes as "420 MB".
func megabytes(n int64) string { return fmt.Sprintf("%d MB", n>>20) }

// seconds is d as "1.2 s", or "40 ms" below a tenth of a second.
func seconds(d time.Duration) string {
	if d < 100*time.Millisecond {
		return fmt.Sprintf("%d ms", d.Milliseconds())
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}
