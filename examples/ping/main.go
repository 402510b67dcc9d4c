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
	"time"

	"github.com/clawhost/clawhost/sdk"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/command"
	"github.com/clawhost/clawhost/sdk/schema"
)

// ping keeps the report it sends in its instance's data directory, which
// the host gives Configure (private and persistent: one report.txt, written
// again at each /report, and nothing left in the temp dir by a process
// that stops).
type ping struct{ dir string }

func (*ping) Commands() []command.Spec {
	return []command.Spec{
		{Name: "ping", Description: "check that clawhost answers", Usage: "/ping [text]"},
		{Name: "report", Description: "a short report with a file", Usage: "/report"},
	}
}

func (p *ping) Execute(ctx context.Context, req command.Request) (command.Response, error) {
	if req.Command == "report" {
		return report(p.dir, time.Now())
	}
	text := "pong"
	if req.Args != "" {
		text += " " + req.Args
	}
	return command.Response{Replies: []command.Reply{{Text: text}}}, nil
}

// report answers /report: a markdown summary, a second message, and the
// report as a file in dir (the host sends it from the plugin's directory).
func report(dir string, now time.Time) (command.Response, error) {
	if dir == "" {
		return command.Response{}, fmt.Errorf("report: the plugin was not configured with a data directory")
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
	p := &ping{}
	return sdk.Plugin{Name: "ping", Version: "0.1.0", Command: p,
		Configure: func(_ context.Context, cfg schema.Config) error {
			p.dir = cfg.DataDir
			return nil
		}}
}

func main() { os.Exit(sdk.Serve(plugin())) }
