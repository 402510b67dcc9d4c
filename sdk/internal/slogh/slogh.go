// Package slogh is a log/slog handler that writes through an hclog.Logger.
//
// A plugin logs with *slog.Logger (the sdk's API has no hclog type), while
// its process writes hclog's JSON lines on stderr: go-plugin on the host
// parses exactly that format (@level, @message, @timestamp, @module, the
// other keys as fields) and re-logs each line under the plugin's name. Going
// through hclog keeps the format byte for byte what go-plugin expects.
package slogh

import (
	"context"
	"log/slog"

	"github.com/hashicorp/go-hclog"
)

// LevelTrace is the slog level the handler maps to hclog's trace level
// (slog has none of its own): any level below slog.LevelDebug.
const LevelTrace = slog.LevelDebug - 4

// New returns a slog.Logger that writes through log.
func New(log hclog.Logger) *slog.Logger {
	return slog.New(&Handler{log: log})
}

// Handler is a slog.Handler over an hclog.Logger. Groups become dotted key
// prefixes ("http.status"); durations are written as "1.5s" rather than
// nanoseconds.
type Handler struct {
	log    hclog.Logger
	prefix string // open groups, each followed by "."
}

// Level maps a slog level to hclog's.
func Level(l slog.Level) hclog.Level {
	switch {
	case l < slog.LevelDebug:
		return hclog.Trace
	case l < slog.LevelInfo:
		return hclog.Debug
	case l < slog.LevelWarn:
		return hclog.Info
	case l < slog.LevelError:
		return hclog.Warn
	}
	return hclog.Error
}

// Enabled implements slog.Handler.
func (h *Handler) Enabled(_ context.Context, l slog.Level) bool {
	lvl := Level(l)
	cur := h.log.GetLevel()
	return cur != hclog.Off && lvl >= cur
}

// Handle implements slog.Handler.
func (h *Handler) Handle(_ context.Context, r slog.Record) error {
	args := make([]any, 0, 2*r.NumAttrs())
	r.Attrs(func(a slog.Attr) bool {
		args = appendAttr(args, h.prefix, a)
		return true
	})
	h.log.Log(Level(r.Level), r.Message, args...)
	return nil
}

// WithAttrs implements slog.Handler.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	var args []any
	for _, a := range attrs {
		args = appendAttr(args, h.prefix, a)
	}
	return &Handler{log: h.log.With(args...), prefix: h.prefix}
}

// WithGroup implements slog.Handler.
func (h *Handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return &Handler{log: h.log, prefix: h.prefix + name + "."}
}

// appendAttr appends a's key and value (flattened, for a group) to args.
func appendAttr(args []any, prefix string, a slog.Attr) []any {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return args
	}
	switch a.Value.Kind() {
	case slog.KindGroup:
		p := prefix
		if a.Key != "" {
			p += a.Key + "."
		}
		for _, g := range a.Value.Group() {
			args = appendAttr(args, p, g)
		}
		return args
	case slog.KindDuration:
		return append(args, prefix+a.Key, a.Value.Duration().String())
	}
	return append(args, prefix+a.Key, a.Value.Any())
}
