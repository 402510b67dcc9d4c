package runner

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
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
	return t.steering.send(text)
}

// steering is a Turn's door for steered messages. It is open while the turn reads from a
// warm process and has not accepted its final result; ids maps each steered message's uuid
// to whether claude has started it (a command_lifecycle line).
type steering struct {
	mu   sync.Mutex
	open bool
	proc *proc
	ids  map[string]bool
}

// begin opens steering into p's stdin (the exchange calls it before writing the prompt).
func (s *steering) begin(p *proc) {
	s.mu.Lock()
	s.open, s.proc = true, p
	s.mu.Unlock()
}

// send writes text as a user message with a fresh uuid; false when steering is closed.
func (s *steering) send(text string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.open || s.proc == nil {
		return false, nil
	}
	id := newUUID()
	b, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": s.proc.shown(text)}, "uuid": id})
	if err := s.proc.write(append(b, '\n')); err != nil {
		return false, fmt.Errorf("steer: write to claude: %w", err)
	}
	if s.ids == nil {
		s.ids = map[string]bool{}
	}
	s.ids[id] = false
	return true, nil
}

// end is called at each result line (final false) and when the exchange returns (final
// true). more reports whether a steered message has not started yet, so another result
// will follow; steering stays open for it unless final.
func (s *steering) end(final bool) (more bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, started := range s.ids {
		if !started {
			more = true
		}
	}
	if final || !more {
		s.open = false
	}
	return more
}

// started records that claude started the steered message id; other ids are ignored.
func (s *steering) started(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.ids[id]; ok {
		s.ids[id] = true
	}
}

// count is the number of messages steered into the turn.
func (s *steering) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.ids)
}

func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
