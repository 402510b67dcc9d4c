// Package sdk is what a third party needs to write a clawhost plugin.
//
// A plugin is a separate binary that clawhost starts, supervises and stops.
// It offers one or more kinds:
//
//   - a channel (package channel): a chat platform adapter;
//   - a command handler (package command): "/name args" answered without the
//     agent;
//   - a before_agent_start hook (package hook): context prepended to every
//     agent turn.
//
// You implement plain Go interfaces; sdk.Serve does the rest (go-plugin,
// gRPC, the handshake, JSON logging on stderr, exiting when the host dies,
// SIGTERM). First-party plugins use nothing but this sdk.
//
// # Quick start: a channel plugin in one file
//
//	package main
//
//	import (
//		"context"
//		"fmt"
//		"time"
//
//		"github.com/clawhost/clawhost/sdk"
//		"github.com/clawhost/clawhost/sdk/channel"
//		"github.com/clawhost/clawhost/sdk/schema"
//	)
//
//	type ticker struct{ every time.Duration }
//
//	func (t *ticker) Capabilities() channel.Capabilities {
//		return channel.Capabilities{MaxTextLength: 2000}
//	}
//
//	// Run receives from the platform; here it invents one message per tick.
//	func (t *ticker) Run(ctx context.Context, inbox channel.Inbox) error {
//		for i := 0; ; i++ {
//			select {
//			case <-ctx.Done():
//				return nil
//			case <-time.After(t.every):
//			}
//			msg := channel.InboundMessage{
//				ChatType: channel.ChatDirect, ChatID: "me", MessageID: fmt.Sprint(i),
//				Sender: channel.Sender{ID: "me", Name: "Me"}, Text: "tick", Timestamp: time.Now(),
//			}
//			// Deliver returns once the host stored the message durably: only
//			// now may a real adapter advance its platform offset.
//			if err := inbox.Deliver(ctx, msg); err != nil {
//				return nil
//			}
//		}
//	}
//
//	// Send posts a reply; failures are *channel.Error with a stable code.
//	func (t *ticker) Send(ctx context.Context, req channel.SendRequest) (channel.SendResponse, error) {
//		if req.ChatID != "me" {
//			return channel.SendResponse{}, channel.Errorf(channel.CodeChatNotFound, "no chat %q", req.ChatID)
//		}
//		return channel.SendResponse{MessageIDs: []string{"r1"}}, nil
//	}
//
//	func main() {
//		t := &ticker{}
//		sdk.Serve(sdk.Plugin{
//			Name: "ticker", Version: "0.1.0",
//			Schema: schema.Schema{{Name: "every", Type: "number", Default: 60, Description: "seconds between ticks"}},
//			Configure: func(ctx context.Context, cfg schema.Config) error {
//				var c struct{ Every float64 `json:"every"` }
//				if err := cfg.Decode(&c); err != nil {
//					return err
//				}
//				if c.Every <= 0 {
//					return schema.Diagnostics{{Attribute: "every", Summary: "must be positive"}}
//				}
//				t.every = time.Duration(c.Every * float64(time.Second))
//				return nil
//			},
//			Channel: t,
//		})
//	}
//
// Build it as clawhost-ticker into clawhost's plugin_dir and enable it:
//
//	plugin "tick" {
//	  source = "ticker"
//	  config { every = 30 }
//	}
//
// Optional capabilities are optional interfaces: implement channel.Typer,
// channel.Editor, channel.Reactor, channel.MediaDownloader or
// channel.CommandMenu and the host uses them. Test a channel with
// sdktest.Conformance, which drives it over a real gRPC connection.
//
// Rules: never write to stdout (the go-plugin handshake lives there); log
// through schema.Config.Logger (a *slog.Logger), never log secrets; return business failures
// as *channel.Error.
package sdk
