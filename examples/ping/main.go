// Command clawhost-ping is the smallest command plugin: /ping answers
// "pong", plus whatever follows the command.
package main

import (
	"context"
	"os"

	"github.com/clawhost/clawhost/sdk"
	"github.com/clawhost/clawhost/sdk/command"
)

type ping struct{}

func (ping) Commands() []command.Spec {
	return []command.Spec{{Name: "ping", Description: "check that clawhost answers", Usage: "/ping [text]"}}
}

func (ping) Execute(ctx context.Context, req command.Request) (command.Response, error) {
	text := "pong"
	if req.Args != "" {
		text += " " + req.Args
	}
	return command.Response{Replies: []command.Reply{{Text: text}}}, nil
}

func plugin() sdk.Plugin {
	return sdk.Plugin{Name: "ping", Version: "0.1.0", Command: ping{}}
}

func main() { os.Exit(sdk.Serve(plugin())) }
