package channel

import (
	"errors"
	"fmt"
	"time"
)

// Code is a stable, machine-readable error code. The host decides retries by
// code, never by message text.
type Code string

// Error codes a plugin returns in an *Error.
const (
	// CodeRateLimited: the platform asked to slow down; RetryAfter says how long.
	CodeRateLimited Code = "rate_limited"
	// CodeMessageTooLong: the text exceeded the platform limit.
	CodeMessageTooLong Code = "message_too_long"
	// CodeChatNotFound: the chat does not exist or the bot is not in it.
	CodeChatNotFound Code = "chat_not_found"
	// CodeFormattingRejected: the platform refused the markup; the host
	// retries the same text as plain.
	CodeFormattingRejected Code = "formatting_rejected"
	// CodeForbidden: the bot may not write there (blocked, kicked).
	CodeForbidden Code = "forbidden"
	// CodeUnauthorized: the platform rejected the plugin's credentials.
	CodeUnauthorized Code = "unauthorized"
	// CodeUnavailable: a temporary failure (network, 5xx); retryable.
	CodeUnavailable Code = "unavailable"
	// CodeInvalidRequest: the request itself is wrong; not retryable.
	CodeInvalidRequest Code = "invalid_request"
	// CodeUnsupported: the operation is not supported by this channel.
	CodeUnsupported Code = "unsupported"
	// CodeInternal: anything else.
	CodeInternal Code = "internal"
	// CodeMediaNotGranted: a send named a file without the host's grant
	// for that send (the sdk refuses it before the channel's Send runs);
	// not retryable. See proto/PROTOCOL.md, "Media grants".
	CodeMediaNotGranted Code = "media_not_granted"
	// CodeUncertain: the request reached the platform but its answer was
	// lost (the connection broke after the request was written, no answer
	// within the deadline, or an answer that could not be read): the
	// platform may have carried it out. Not retried, so a message is never
	// posted twice; the host tells the user a part may be missing.
	CodeUncertain Code = "uncertain"
)

// Retryable reports whether an operation failing with this code may succeed
// when repeated unchanged.
func (c Code) Retryable() bool {
	return c == CodeRateLimited || c == CodeUnavailable
}

// Error is a business error of a plugin operation: it travels to the host
// inside the response, with its code intact.
type Error struct {
	Code    Code
	Message string
	// RetryAfter is how long to wait before retrying; zero when unknown.
	RetryAfter time.Duration
}

// Error implements error.
func (e *Error) Error() string {
	if e.RetryAfter > 0 {
		return fmt.Sprintf("%s: %s (retry after %s)", e.Code, e.Message, e.RetryAfter)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Errorf returns an *Error with the given code and formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// CodeOf returns the code of err if it is or wraps an *Error, else
// CodeInternal. CodeOf(nil) is "".
func CodeOf(err error) Code {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}
