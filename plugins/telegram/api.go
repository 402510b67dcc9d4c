package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/clawhost/clawhost/sdk/channel"
)

// client calls the Bot API through tgbotapi's MakeRequest and UploadFiles.
// tgbotapi has no context support, so every call builds a throwaway BotAPI
// whose HTTP client attaches the call's context (cheap: no getMe, no
// goroutines).
type client struct {
	token        string
	apiEndpoint  string
	fileEndpoint string
	http         *http.Client
}

// apiError is a failed Bot API call. Its text never contains the token.
type apiError struct {
	Method string
	// Code is Telegram's error_code (or the HTTP status when the body was
	// not a Bot API answer); 0 for network errors.
	Code        int
	Description string
	RetryAfter  time.Duration
	// Network is set for transport failures (already redacted).
	Network string
	// Uncertain: the request was written but its answer was lost or
	// unreadable, so Telegram may have carried it out.
	Uncertain bool
}

func (e *apiError) Error() string {
	switch {
	case e.Network != "":
		return fmt.Sprintf("telegram %s: %s", e.Method, e.Network)
	case e.Code != 0:
		return fmt.Sprintf("telegram %s: %d %s", e.Method, e.Code, e.Description)
	default:
		return fmt.Sprintf("telegram %s: %s", e.Method, e.Description)
	}
}

// is reports whether the description contains s, case-insensitively.
func (e *apiError) is(s string) bool {
	return strings.Contains(strings.ToLower(e.Description), strings.ToLower(s))
}

// ctxDoer is the tgbotapi.HTTPClient of one call. It records whether the
// request was written to the connection: a failure after that point has
// an unknown outcome.
type ctxDoer struct {
	ctx    context.Context
	c      *http.Client
	status int
	wrote  atomic.Bool
}

func (d *ctxDoer) Do(r *http.Request) (*http.Response, error) {
	trace := &httptrace.ClientTrace{WroteRequest: func(i httptrace.WroteRequestInfo) {
		if i.Err == nil {
			d.wrote.Store(true)
		}
	}}
	resp, err := d.c.Do(r.WithContext(httptrace.WithClientTrace(d.ctx, trace)))
	if resp != nil {
		d.status = resp.StatusCode
	}
	return resp, err
}

func (c *client) bot(ctx context.Context) (*tgbotapi.BotAPI, *ctxDoer) {
	d := &ctxDoer{ctx: ctx, c: c.http}
	b := &tgbotapi.BotAPI{Token: c.token, Client: d}
	b.SetAPIEndpoint(c.apiEndpoint)
	return b, d
}

// call performs method with form parameters and returns the result JSON.
func (c *client) call(ctx context.Context, method string, params tgbotapi.Params) (json.RawMessage, error) {
	b, d := c.bot(ctx)
	resp, err := b.MakeRequest(method, params)
	return c.result(ctx, method, resp, d, err)
}

// upload performs method as a multipart request with files.
func (c *client) upload(ctx context.Context, method string, params tgbotapi.Params, files []tgbotapi.RequestFile) (json.RawMessage, error) {
	b, d := c.bot(ctx)
	resp, err := b.UploadFiles(method, params, files)
	return c.result(ctx, method, resp, d, err)
}

func (c *client) result(ctx context.Context, method string, resp *tgbotapi.APIResponse, d *ctxDoer, err error) (json.RawMessage, error) {
	status := d.status
	if err == nil && resp != nil && resp.Ok {
		return resp.Result, nil
	}
	e := &apiError{Method: method}
	if ctx.Err() != nil {
		if d.wrote.Load() {
			// Sent, then no answer within the deadline.
			e.Network, e.Uncertain = "no answer: "+ctx.Err().Error(), true
			return nil, e
		}
		return nil, fmt.Errorf("telegram %s: %w", method, ctx.Err())
	}
	// UploadFiles leaves tgbotapi.Error.Code empty: read the response itself.
	if resp != nil && !resp.Ok && (resp.ErrorCode != 0 || resp.Description != "") {
		e.Code, e.Description = resp.ErrorCode, c.redact(resp.Description)
		if resp.Parameters != nil && resp.Parameters.RetryAfter > 0 {
			e.RetryAfter = time.Duration(resp.Parameters.RetryAfter) * time.Second
		}
		if e.Code == 0 {
			e.Code = status
		}
		return nil, e
	}
	if status != 0 {
		// An answer that is not a Bot API response (a proxy's HTML page).
		e.Code, e.Description = status, http.StatusText(status)
		if status < 300 {
			// Telegram answered 200 but the body is unreadable: it most
			// likely did what was asked.
			e.Description = "malformed response: " + c.redact(fmt.Sprint(err))
			e.Uncertain = true
		}
		return nil, e
	}
	e.Network = c.redact(fmt.Sprint(err))
	e.Uncertain = d.wrote.Load()
	return nil, e
}

// redact removes the token from s (URLs of failed requests contain it).
func (c *client) redact(s string) string {
	if c.token == "" {
		return s
	}
	for _, t := range []string{c.token, url.PathEscape(c.token), url.QueryEscape(c.token)} {
		s = strings.ReplaceAll(s, t, "<token>")
	}
	return s
}

// download GETs the file at filePath (from getFile).
func (c *client) download(ctx context.Context, filePath string) (*http.Response, error) {
	u := fmt.Sprintf(c.fileEndpoint, c.token, filePath)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, &apiError{Method: "download", Network: c.redact(err.Error())}
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("telegram download: %w", ctx.Err())
		}
		return nil, &apiError{Method: "download", Network: c.redact(err.Error())}
	}
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		return nil, &apiError{Method: "download", Code: resp.StatusCode, Description: http.StatusText(resp.StatusCode)}
	}
	return resp, nil
}

// toChannelError maps a Bot API failure to the sdk's stable codes. It is
// the one place where Telegram's answers become *channel.Error.
func toChannelError(op string, err error) error {
	if err == nil {
		return nil
	}
	var e *apiError
	if !errors.As(err, &e) {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return &channel.Error{Code: channel.CodeUnavailable, Message: op + ": " + err.Error()}
		}
		var ce *channel.Error
		if errors.As(err, &ce) {
			return err
		}
		return &channel.Error{Code: channel.CodeInternal, Message: op + ": " + err.Error()}
	}
	msg := op + ": " + e.Error()
	code := channel.CodeInternal
	switch {
	case e.Uncertain:
		code = channel.CodeUncertain
	case e.Network != "":
		code = channel.CodeUnavailable
	case e.Code == http.StatusTooManyRequests:
		return &channel.Error{Code: channel.CodeRateLimited, Message: msg, RetryAfter: e.RetryAfter}
	case e.Code == http.StatusBadRequest:
		switch {
		case e.is("can't parse entities"):
			code = channel.CodeFormattingRejected
		case e.is("message is too long"), e.is("message_too_long"), e.is("caption is too long"), e.is("file is too big"):
			code = channel.CodeMessageTooLong
		case e.is("chat not found"), e.is("message thread not found"), e.is("group chat was upgraded"):
			code = channel.CodeChatNotFound
		case e.is("not enough rights"), e.is("have no rights"), e.is("chat_write_forbidden"):
			code = channel.CodeForbidden
		default:
			code = channel.CodeInvalidRequest
		}
	case e.Code == http.StatusUnauthorized:
		code = channel.CodeUnauthorized
	case e.Code == http.StatusForbidden:
		code = channel.CodeForbidden
	case e.Code == http.StatusNotFound:
		// The Bot API answers 404 for a malformed token or an unknown method.
		code = channel.CodeInvalidRequest
	case e.Code == http.StatusConflict, e.Code >= 500:
		code = channel.CodeUnavailable
	}
	return &channel.Error{Code: code, Message: msg, RetryAfter: e.RetryAfter}
}
