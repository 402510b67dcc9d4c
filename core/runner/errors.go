package runner

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// ErrorKind is a stable machine code for why a turn failed. Callers branch on it; the
// strings are safe to store and to put in metrics.
type ErrorKind string

// The error kinds. A turn is a success when Result.Err is nil, which follows claude's
// is_error (never its subtype).
const (
	// KindOverloaded: the API answered 529 overloaded_error (after claude's retries).
	KindOverloaded ErrorKind = "overloaded"
	// KindRateLimited: the API answered 429 rate_limit_error, without a
	// reset time (an organization's rate limit, a 429 with retry-after).
	KindRateLimited ErrorKind = "rate_limited"
	// KindUsageLimit: a subscription's usage limit refused the request;
	// Error.ResetAt is when it resets (claude's rate_limit_event).
	KindUsageLimit ErrorKind = "usage_limit"
	// KindAuth: no credentials ("Not logged in") or rejected ones ("Invalid API key", 401/403).
	KindAuth ErrorKind = "auth"
	// KindPromptTooLong: the conversation no longer fits the context window. The caller
	// should start a new session (new uuid) and tell the user.
	KindPromptTooLong ErrorKind = "prompt_too_long"
	// KindMaxTurns: the turn hit Config.MaxTurns (subtype error_max_turns).
	KindMaxTurns ErrorKind = "max_turns"
	// KindMaxBudget: the turn hit --max-budget-usd (subtype error_max_budget_usd).
	KindMaxBudget ErrorKind = "max_budget"
	// KindAPI: any other API failure (500, connection refused, ...).
	KindAPI ErrorKind = "api_error"
	// KindCLINotFound: Config.Command could not be executed.
	KindCLINotFound ErrorKind = "cli_not_found"
	// KindUsage: claude rejected its arguments (exit 1, message on stderr, empty stdout) —
	// a configuration problem.
	KindUsage ErrorKind = "usage"
	// KindCrash: the process ended without a result object (including exit 0 with no
	// result, and a signal from outside).
	KindCrash ErrorKind = "crash"
	// KindTimeout: Config.Timeout expired; the run was killed.
	KindTimeout ErrorKind = "timeout"
	// KindAborted: Abort was called or the caller's context ended; the run was killed.
	KindAborted ErrorKind = "aborted"
	// KindSessionMissing: claude could not find the transcript to resume. Run handles it
	// by starting a fresh session (Result.SessionReset); it only surfaces if that fails too.
	KindSessionMissing ErrorKind = "session_missing"
)

// Error is a classified turn failure.
type Error struct {
	// Kind is the stable code.
	Kind ErrorKind
	// Notice is a short text safe to show the chat user.
	Notice string
	// Detail is the full text for the log: claude's message, stderr tail, exit status.
	// It may contain paths; it never contains the prompt.
	Detail string
	// Status is the API's HTTP status when known (api_error_status), else 0.
	Status int
	// ResetAt is when the usage limit resets (KindUsageLimit).
	ResetAt time.Time
}

// Error returns "claude <kind>: <detail>".
func (e *Error) Error() string {
	if e.Detail == "" {
		return "claude " + string(e.Kind)
	}
	return "claude " + string(e.Kind) + ": " + e.Detail
}

// notices are the user-visible texts per kind.
var notices = map[ErrorKind]string{
	KindOverloaded:     "Claude is overloaded right now. Please try again in a moment.",
	KindRateLimited:    "Claude's rate limit was reached. Please try again later.",
	KindUsageLimit:     "Claude's usage limit was reached.",
	KindAuth:           "The assistant cannot log in to Claude. The operator needs to check its credentials.",
	KindPromptTooLong:  "This conversation got too long for the model, so a new session is starting. Earlier messages are no longer in context.",
	KindMaxTurns:       "The assistant stopped after reaching its limit of steps for one message.",
	KindMaxBudget:      "The assistant stopped after reaching its spending limit.",
	KindAPI:            "Claude returned an error. Please try again.",
	KindCLINotFound:    "The assistant is not available: Claude Code is not installed on the host.",
	KindUsage:          "The assistant is misconfigured. The operator has been told.",
	KindCrash:          "The assistant stopped unexpectedly. Please try again.",
	KindTimeout:        "The reply took too long and was stopped.",
	KindAborted:        "Stopped.",
	KindSessionMissing: "The previous conversation could not be found, so a new one was started.",
}

func newError(kind ErrorKind, detail string) *Error {
	return &Error{Kind: kind, Notice: notices[kind], Detail: detail}
}

// errNotFound builds the cli_not_found error naming the setting and how to install.
func errNotFound(command string, err error) *Error {
	return newError(KindCLINotFound, fmt.Sprintf(
		"agent.command %q: %v; install the Claude Code CLI with `npm install -g @anthropic-ai/claude-code` "+
			"(or the Makefile target that installs it under .cache/claude-cli) and set agent.command to its path", command, err))
}

// classifyResult maps a result object with is_error true, with the last
// rate_limit_event's info (nil: none). It returns nil for success.
func classifyResult(r *wireResult, limit *wireRateLimit) *Error {
	if !r.IsError {
		return nil
	}
	text := r.text()
	detail := strings.TrimSpace(fmt.Sprintf("subtype=%s terminal_reason=%s api_error_status=%d api_error_type=%s: %s",
		r.Subtype, r.TerminalReason, r.status(), r.APIErrorType, text))
	mk := func(k ErrorKind) *Error {
		e := newError(k, detail)
		e.Status = r.status()
		return e
	}
	lower := strings.ToLower(text)
	switch {
	case r.Subtype == "error_max_turns" || r.TerminalReason == "max_turns":
		return mk(KindMaxTurns)
	case r.Subtype == "error_max_budget_usd" || r.TerminalReason == "budget_exhausted":
		return mk(KindMaxBudget)
	case r.TerminalReason == "prompt_too_long" || strings.Contains(lower, "prompt is too long"):
		return mk(KindPromptTooLong)
	case r.TerminalReason == "aborted_streaming":
		return mk(KindAborted)
	case r.status() == 529 || r.APIErrorType == "overloaded_error":
		return mk(KindOverloaded)
	case r.status() == 429 || r.APIErrorType == "rate_limit_error":
		if limit != nil && limit.Status == "rejected" && limit.ResetsAt > 0 {
			e := mk(KindUsageLimit)
			e.ResetAt = time.Unix(limit.ResetsAt, 0)
			return e
		}
		if r.APIError == "usage_limit_reached" {
			return mk(KindUsageLimit) // no reset known: the host backs off
		}
		return mk(KindRateLimited)
	case r.status() == 401 || r.status() == 403 || r.APIErrorType == "authentication_error" ||
		r.APIErrorType == "permission_error" || strings.HasPrefix(text, "Not logged in") ||
		strings.HasPrefix(text, "Invalid API key"):
		return mk(KindAuth)
	case strings.Contains(text, "No conversation found with session ID"):
		return mk(KindSessionMissing)
	default:
		return mk(KindAPI)
	}
}

// classifyExit maps a process that ended without a result object.
func classifyExit(exitCode int, stdoutEmpty bool, stderr string) *Error {
	stderr = strings.TrimSpace(stderr)
	detail := fmt.Sprintf("exit status %d", exitCode)
	if stderr != "" {
		detail += "; stderr: " + stderr
	}
	switch {
	case strings.Contains(stderr, "No conversation found with session ID"):
		return newError(KindSessionMissing, detail)
	case exitCode == 1 && stdoutEmpty && stderr != "":
		return newError(KindUsage, detail)
	default:
		if exitCode == 0 {
			detail = "exit status 0 without a result object" + strings.TrimPrefix(detail, "exit status 0")
		}
		return newError(KindCrash, detail)
	}
}

// loginHint completes a "Not logged in" error with where claude looked for
// its login and the two ways to give it one: an API key in agent.env, or a
// login done once with the bot's config directory.
func (c Config) loginHint(e *Error, host []string) {
	if e == nil || e.Kind != KindAuth || !strings.Contains(e.Detail, "Not logged in") {
		return
	}
	env := c.env(host, "")
	dir := lookupEnv(env, "CLAUDE_CONFIG_DIR")
	where := dir
	if dir == "" {
		where = "~/.claude"
		if home := lookupEnv(env, "HOME"); home != "" {
			where = filepath.Join(home, ".claude")
		}
	}
	e.Detail += fmt.Sprintf("; claude is not logged in: %s has no credentials and no ANTHROPIC_API_KEY is configured. "+
		"Set ANTHROPIC_API_KEY in agent.env, or log the bot in once: run `CLAUDE_CONFIG_DIR=%s claude` and type /login", where, where)
	if dir == "" {
		e.Detail = strings.Replace(e.Detail, "`CLAUDE_CONFIG_DIR="+where+" claude`", "`claude`", 1)
	}
}
