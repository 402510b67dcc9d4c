package whatsapptest

import "go.mau.fi/libsignal/logger"

// libsignal logs through a package-level logger it creates lazily on first
// use, unsynchronised (two goroutines encrypting at once race on it under
// -race), and its default logger prints warnings and errors to stdout,
// which a go-plugin process must keep for its handshake. Installing one at
// init time, before any goroutine runs, avoids both; a process that set
// its own logger first keeps it.
func init() {
	if logger.Logger == nil {
		var l logger.Loggable = quietSignalLogger{}
		logger.Setup(&l)
	}
}

type quietSignalLogger struct{}

func (quietSignalLogger) Debug(string, string)   {}
func (quietSignalLogger) Info(string, string)    {}
func (quietSignalLogger) Warning(string, string) {}
func (quietSignalLogger) Error(string, string)   {}
func (quietSignalLogger) Configure(string)       {}
