package admin

import "time"

// Attached is a chat a terminal claude is attached to (`clawhost
// channel`, core/attach): its turns go to that terminal.
type Attached struct {
	// Chat is the chat ("telegram:123"); Session its session key;
	// TerminalSession the terminal claude's session ("" unknown).
	Chat            string `json:"chat"`
	Session         string `json:"session"`
	TerminalSession string `json:"terminal_session,omitempty"`
	// Since is when it attached; Answered how many chat messages it
	// answered since.
	Since    time.Time `json:"since"`
	Answered int       `json:"answered"`
	// Waiting: the host restarted while it was attached, and the chat's
	// messages wait for it to reconnect (a short grace, then the chat's
	// own claude answers, resuming the terminal's session).
	Waiting bool `json:"waiting,omitempty"`
}
