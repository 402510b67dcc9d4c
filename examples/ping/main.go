// Command clawhost-ping is the smallest command plugin: /ping answers
// "pong", plus whatever follows the command. Its /report shows the rest of
// a reply's contract: markdown the host renders for each channel, several
// replies (one message each) and a file sent with a reply.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/clawhost/clawhost/sdk"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/command"
)

type ping struct{}

func (ping) Commands() []command.Spec {
	return []command.Spec{
		{Name: "ping", Description: "check that clawhost answers", Usage: "/ping [text]"},
		{Name: "report", Description: "a short report with a file", Usage: "/report"},
	}
}

func (ping) Execute(ctx context.Context, req command.Request) (command.Response, error) {
	if req.Command == "report" {
		return report(time.Now())
	}
	text := "pong"
	if req.Args != "" {
		text += " " + req.Args
	}
	return command.Response{Replies: []command.Reply{{Text: text}}}, nil
}

// reportDir is the plugin's own directory for the files it sends: one per
// process, made at the first /report.
var reportDir = sync.OnceValues(func() (string, error) { return os.MkdirTemp("", "clawhost-ping-") })

// report answers /report: a markdown summary, a second message, and the
// report as a file (the host sends it from the plugin's directory).
func report(now time.Time) (command.Response, error) {
	dir, err := reportDir()
	if err != nil {
		return command.Response{}, fmt.Errorf("report: %w", err)
	}
	// A new file, then renamed: a report being sent is never rewritten.
	f, err := os.CreateTemp(dir, "report-*.txt")
	if err != nil {
		return command.Response{}, fmt.Errorf("report: %w", err)
	}
	body := "checks: 10 passed, 0 failed\nat: " + now.UTC().Format(time.RFC3339) + "\n"
	_, err = f.WriteString(body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	path := filepath.Join(dir, "report.txt")
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		return command.Response{}, fmt.Errorf("report: %w", err)
	}
	return command.Response{Replies: []command.Reply{
		{Text: "Checks passed: **10**", Format: channel.FormatMarkdown},
		{Text: "The details are in the file.",
			Media: []channel.OutboundMedia{{Path: path, Kind: channel.MediaDocument, MIME: "text/plain"}}},
	}}, nil
}

func plugin() sdk.Plugin {
	return sdk.Plugin{Name: "ping", Version: "0.1.0", Command: ping{}}
}

func main() { os.Exit(sdk.Serve(plugin())) }
