package telegramtest

import (
	"fmt"
	"strings"
	"time"
)

// Failure is a scripted error answer.
type Failure struct {
	// Code is the HTTP status and error_code (e.g. 429, 409, 401, 502).
	Code int
	// Description is Telegram's text, e.g. "Too Many Requests: retry after 3".
	Description string
	// RetryAfter becomes parameters.retry_after when > 0.
	RetryAfter int
	// Fault, when set, replaces the error answer: the call is carried out
	// (a message is sent) and then its answer is lost in the given way;
	// Code and Description are ignored.
	Fault Fault
	// Delay, when > 0, holds the call this long before anything else
	// happens: a long silence of the server. It then answers as the other
	// fields say, or normally when they are all zero (see Slow). A client
	// that gives up meanwhile finds the call not carried out.
	Delay time.Duration
}

// Fault is how the answer to a call that was carried out gets lost.
type Fault string

// Faults.
const (
	// FaultDrop closes the connection without an answer.
	FaultDrop Fault = "drop"
	// FaultMalformed answers 200 with a body that is not JSON.
	FaultMalformed Fault = "malformed"
	// FaultSilence answers nothing until the client gives up.
	FaultSilence Fault = "silence"
)

// AcceptedThenDropped carries the call out, then drops the connection.
func AcceptedThenDropped() Failure { return Failure{Fault: FaultDrop} }

// AcceptedMalformed carries the call out, then answers 200 with garbage.
func AcceptedMalformed() Failure { return Failure{Fault: FaultMalformed} }

// AcceptedSilence carries the call out, then answers nothing until the
// client gives up.
func AcceptedSilence() Failure { return Failure{Fault: FaultSilence} }

// Slow answers normally after a silence of d.
func Slow(d time.Duration) Failure { return Failure{Delay: d} }

// ServerError is a 5xx answer (502 Bad Gateway, 500, 503…) of Telegram or
// a proxy in front of it; the call was not carried out.
func ServerError(code int) Failure {
	return Failure{Code: code, Description: fmt.Sprintf("%d %s", code, "Server Error")}
}

// TooManyRequests is Telegram's 429 answer.
func TooManyRequests(retryAfter int) Failure {
	return Failure{Code: 429, Description: fmt.Sprintf("Too Many Requests: retry after %d", retryAfter), RetryAfter: retryAfter}
}

// Conflict is Telegram's 409 answer to a second poller.
func Conflict() Failure {
	return Failure{Code: 409, Description: "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"}
}

// Unauthorized is Telegram's answer to a rejected token.
func Unauthorized() Failure { return Failure{Code: 401, Description: "Unauthorized"} }

type failureScript struct {
	f     Failure
	times int // < 0: forever
}

// Fail makes the next times calls of method (e.g. "sendMessage") answer f;
// times < 0 means until ClearFailures.
func (s *Server) Fail(method string, times int, f Failure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := strings.ToLower(method)
	s.failures[k] = append(s.failures[k], failureScript{f: f, times: times})
}

// ClearFailures removes all scripted failures.
func (s *Server) ClearFailures() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures = map[string][]failureScript{}
}

func (s *Server) takeFailure(method string) *Failure {
	list := s.failures[method]
	if len(list) == 0 {
		return nil
	}
	f := list[0].f
	if list[0].times > 0 {
		list[0].times--
		if list[0].times == 0 {
			list = list[1:]
		}
	}
	s.failures[method] = list
	return &f
}
