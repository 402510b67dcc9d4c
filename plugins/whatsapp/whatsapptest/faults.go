package whatsapptest

import (
	"errors"
	"time"

	waBinary "go.mau.fi/whatsmeow/binary"
)

// Login failure reasons (<failure reason=…>), as whatsmeow's
// events.ConnectFailureReason numbers them.
const (
	// FailureLoggedOut: the device was unlinked (events.LoggedOut; the
	// client deletes its store).
	FailureLoggedOut = 401
	// FailureTempBanned: temporary ban (events.TemporaryBan with Code and
	// Expire).
	FailureTempBanned = 402
	// FailureClientOutdated: the client version is refused
	// (events.ClientOutdated).
	FailureClientOutdated = 405
)

// Failure is the answer to logins while it is set (see SetFailure).
type Failure struct {
	// Reason is the failure reason, e.g. FailureLoggedOut.
	Reason int
	// Code is the ban code of a FailureTempBanned (events.TempBanReason).
	Code int
	// Expire is how long a temporary ban lasts.
	Expire time.Duration
}

// SetFailure makes every following login attempt of the linked device be
// answered with f instead of <success>, until ClearFailure. It does not
// touch a connection already logged in: combine it with DropConnection or
// StreamError to make the client log in again.
func (s *Server) SetFailure(f Failure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failure = &f
}

// ClearFailure lets logins succeed again.
func (s *Server) ClearFailure() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failure = nil
}

func (s *Server) loggedInConn() (*conn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.current == nil {
		return nil, errors.New("whatsapptest: no logged-in connection")
	}
	return s.current, nil
}

// StreamError sends <stream:error code=…> to the logged-in connection.
// "515" asks the client to reconnect at once (whatsmeow does); "503" is a
// server restart (the connection is then closed, the client reconnects
// with its usual backoff).
func (s *Server) StreamError(code string) error {
	c, err := s.loggedInConn()
	if err != nil {
		return err
	}
	if err := c.send(waBinary.Node{Tag: "stream:error", Attrs: waBinary.Attrs{"code": code}}); err != nil {
		return err
	}
	if code != "515" {
		c.closeLater()
	}
	return nil
}

// StreamReplaced sends <stream:error><conflict type=replaced/> as when
// another client logged in with the same credentials, and closes the
// connection (events.StreamReplaced; whatsmeow does not reconnect).
func (s *Server) StreamReplaced() error {
	c, err := s.loggedInConn()
	if err != nil {
		return err
	}
	err = c.send(waBinary.Node{Tag: "stream:error", Content: []waBinary.Node{{Tag: "conflict", Attrs: waBinary.Attrs{"type": "replaced"}}}})
	c.closeLater()
	return err
}

// RemoveDevice unlinks the device as the phone's "log out" does: the
// server forgets it, sends <stream:error code=401><conflict
// type=device_removed/> to a logged-in connection (events.LoggedOut with
// OnConnect false) and answers later logins with 401.
func (s *Server) RemoveDevice() {
	s.mu.Lock()
	c := s.current
	s.device = nil
	s.inbound = nil
	s.mu.Unlock()
	if c != nil {
		_ = c.send(waBinary.Node{Tag: "stream:error", Attrs: waBinary.Attrs{"code": "401"}, Content: []waBinary.Node{{Tag: "conflict", Attrs: waBinary.Attrs{"type": "device_removed"}}}})
		c.closeLater()
	}
}

// DropConnection closes the logged-in connection abruptly, as a network
// failure would; whatsmeow emits events.Disconnected and reconnects.
func (s *Server) DropConnection() error {
	c, err := s.loggedInConn()
	if err != nil {
		return err
	}
	c.closeNow()
	return nil
}
