package pluginclient

import "github.com/hashicorp/go-hclog"

// pluginLines is the logger go-plugin re-logs a plugin's stderr through.
// go-plugin parses each JSON log line of the plugin and logs it again with
// the line's fields, to which it adds two the host's line already has: the
// plugin's logger name as "@module" (the line is logged under the host's
// name for the instance and the binary) and the plugin's own time as a
// trailing "timestamp" (the host's line starts with its time). Both are
// dropped so that every field of a plugin's line is said once. go-plugin's
// own lines (process started, exited) pass through unchanged.
type pluginLines struct{ hclog.Logger }

// withoutDuplicates returns args without the "@module" pair and without
// go-plugin's trailing "timestamp" pair.
func withoutDuplicates(args []any) []any {
	n := len(args)
	if n >= 2 && n%2 == 0 && args[n-2] == "timestamp" {
		args = args[:n-2]
	}
	out := args[:0:0]
	for i := 0; i+1 < len(args); i += 2 {
		if args[i] == "@module" {
			continue
		}
		out = append(out, args[i], args[i+1])
	}
	if len(args)%2 == 1 {
		out = append(out, args[len(args)-1])
	}
	return out
}

// Log logs msg without the duplicated fields.
func (l pluginLines) Log(level hclog.Level, msg string, args ...any) {
	l.Logger.Log(level, msg, withoutDuplicates(args)...)
}

// Trace logs msg without the duplicated fields.
func (l pluginLines) Trace(msg string, args ...any) {
	l.Logger.Trace(msg, withoutDuplicates(args)...)
}

// Debug logs msg without the duplicated fields.
func (l pluginLines) Debug(msg string, args ...any) {
	l.Logger.Debug(msg, withoutDuplicates(args)...)
}

// Info logs msg without the duplicated fields.
func (l pluginLines) Info(msg string, args ...any) {
	l.Logger.Info(msg, withoutDuplicates(args)...)
}

// Warn logs msg without the duplicated fields.
func (l pluginLines) Warn(msg string, args ...any) {
	l.Logger.Warn(msg, withoutDuplicates(args)...)
}

// Error logs msg without the duplicated fields.
func (l pluginLines) Error(msg string, args ...any) {
	l.Logger.Error(msg, withoutDuplicates(args)...)
}

// With keeps the filtering on the narrowed logger.
func (l pluginLines) With(args ...any) hclog.Logger { return pluginLines{l.Logger.With(args...)} }

// Named keeps the filtering on the named logger (go-plugin names the
// logger of a plugin's stderr after its binary).
func (l pluginLines) Named(name string) hclog.Logger { return pluginLines{l.Logger.Named(name)} }

// ResetNamed keeps the filtering on the renamed logger.
func (l pluginLines) ResetNamed(name string) hclog.Logger {
	return pluginLines{l.Logger.ResetNamed(name)}
}
