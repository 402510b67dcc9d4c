package store

import "sync/atomic"

// PendingSession is a session update being prepared while other work goes
// on — a turn's bookkeeping, folded while its reply is shaped — and
// written once: by the one that takes it to write it with a write of its
// own (a reply's record: [Reply.Session]), else by its maker. Its methods
// are safe on a nil PendingSession (there is nothing to write).
type PendingSession struct {
	ready chan struct{}
	u     *SessionUpdate
	taken atomic.Bool
}

// NewPendingSession returns a PendingSession that Set makes ready.
func NewPendingSession() *PendingSession {
	return &PendingSession{ready: make(chan struct{})}
}

// Set makes p ready with update u (nil: nothing to write). Called once.
func (p *PendingSession) Set(u *SessionUpdate) {
	p.u = u
	close(p.ready)
}

// Take waits until p is ready and hands over its update: the caller
// writes it. It returns nil when there is none or it was taken already.
func (p *PendingSession) Take() *SessionUpdate {
	if p == nil {
		return nil
	}
	<-p.ready
	if p.u == nil || p.taken.Swap(true) {
		return nil
	}
	return p.u
}

// Give hands a taken update back unwritten (the write that was to carry
// it was refused): the next Take gets it.
func (p *PendingSession) Give() {
	if p != nil {
		p.taken.Store(false)
	}
}
