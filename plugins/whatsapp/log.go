package whatsapp

import (
	"context"
	"fmt"
	"log/slog"

	waLog "go.mau.fi/whatsmeow/util/log"
)

// levelTrace is the sdk's trace level (below debug): whatsmeow's debug
// lines, which include every XML node sent and received, go there.
const levelTrace = slog.LevelDebug - 4

// waLogger writes whatsmeow's log through the plugin's slog logger:
// errors and warnings as such, info as info, debug as trace.
type waLogger struct {
	log    *slog.Logger
	module string
}

var _ waLog.Logger = waLogger{}

func newWALogger(log *slog.Logger) waLogger { return waLogger{log: log, module: "whatsmeow"} }

func (w waLogger) emit(level slog.Level, msg string, args []any) {
	if !w.log.Enabled(context.Background(), level) {
		return
	}
	w.log.Log(context.Background(), level, fmt.Sprintf(msg, args...), "module", w.module)
}

func (w waLogger) Errorf(msg string, args ...any) { w.emit(slog.LevelError, msg, args) }
func (w waLogger) Warnf(msg string, args ...any)  { w.emit(slog.LevelWarn, msg, args) }
func (w waLogger) Infof(msg string, args ...any)  { w.emit(slog.LevelInfo, msg, args) }
func (w waLogger) Debugf(msg string, args ...any) { w.emit(levelTrace, msg, args) }
func (w waLogger) Sub(module string) waLog.Logger {
	return waLogger{log: w.log, module: w.module + "/" + module}
}
