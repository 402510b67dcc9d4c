package runner

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// CanSteer reports whether Steer is available: true unless Config.OneShot.
func (r *Runner) CanSteer() bool { return !r.cfg.OneShot }

// Steer writes text as another user message to the process running key's turn, while
// the turn is in flight. It reports whether a turn took it; false means no turn is
// running (run text as a normal turn instead).
//
// Observed with claude 2.1.330: when the turn is in a tool loop the message is injected
// into it (the model sees "The user sent a new message while you were working: ..." after
// the tool result) and the turn ends with one result; otherwise claude answers it as a
// separate turn right after. Either way the running Turn absorbs it: its events include
// the reply and its Result is the last one, with usage summed (Result.Steered counts the
// messages).
func (r *Runner) Steer(key, text string) (bool, error) {
	if r.cfg.OneShot {
		return false, nil
	}
	r.mu.Lock()
	t := r.active[key]
	r.mu.Unlock()
	if t == nil {
		return false, nil
	}
	return t.steer(text)
}

func (t *Turn) steer(text string) (bool, error) {
	t.steerMu.Lock()
	defer t.steerMu.Unlock()
	if !t.steerOpen || t.steerProc == nil {
		return false, nil
	}
	id := newUUID()
	b, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": text}, "uuid": id})
	if _, err := t.steerProc.stdin.Write(append(b, '\n')); err != nil {
		return false, fmt.Errorf("steer: write to claude: %w", err)
	}
	if t.steers == nil {
		t.steers = map[string]bool{}
	}
	t.steers[id] = false
	return true, nil
}

// closeSteer ends steering; more reports whether a steered message has not started yet
// (so another result will follow).
func (t *Turn) closeSteer(final bool) (more bool) {
	t.steerMu.Lock()
	defer t.steerMu.Unlock()
	for _, started := range t.steers {
		if !started {
			more = true
		}
	}
	if final || !more {
		t.steerOpen = false
	}
	return more
}

func (t *Turn) steerStarted(id string) {
	t.steerMu.Lock()
	defer t.steerMu.Unlock()
	if _, ok := t.steers[id]; ok {
		t.steers[id] = true
	}
}

func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
