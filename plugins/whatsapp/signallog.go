package whatsapp

import (
	"log/slog"
	"sync/atomic"

	"go.mau.fi/libsignal/logger"
)

// libsignal (whatsmeow's Signal implementation) logs through a
// package-level logger that it creates lazily on first use, without a
// lock, and whose default prints warnings and errors to stdout — the
// stream a go-plugin process keeps for its handshake and that nothing
// else may write to. The plugin installs its own logger at init, before
// any goroutine runs: warnings and errors go to the plugin's log (stderr,
// as every other line), debug and info lines are dropped (libsignal logs
// every key operation).
func init() {
	var l logger.Loggable = signalLogger{}
	logger.Setup(&l)
}

// signalLog is the logger libsignal's lines go to; Configure sets it.
var signalLog atomic.Pointer[slog.Logger]

type signalLogger struct{}

func (signalLogger) Debug(string, string) {}
func (signalLogger) Info(string, string)  {}
func (signalLogger) Warning(caller, msg string) {
	if l := signalLog.Load(); l != nil {
		l.Warn(msg, "caller", caller)
	}
}
func (signalLogger) Error(caller, msg string) {
	if l := signalLog.Load(); l != nil {
		l.Error(msg, "caller", caller)
	}
}
func (signalLogger) Configure(string) {}
