// Package sdk is what a third party needs to write a clawhost plugin.
//
// A plugin is a separate binary that clawhost starts, supervises and stops.
// It offers one or more kinds:
//
//   - a channel (package channel): a chat platform adapter;
//   - a command handler (package command): "/name args" answered without the
//     agent;
//   - a before_agent_start hook (package hook): context prepended to every
//     agent turn;
//   - lifecycle hooks (package hook, Plugin.MessageReceived,
//     Plugin.MessageSending, Plugin.AgentEnd): an inbound message passed,
//     rewritten, annotated or dropped before the queue; a reply rewritten,
//     given media or suppressed before the outbox; a finished turn
//     observed (docs/hooks.md).
//   - tools (package tool): tools the agent calls during a turn, offered to
//     the agents the operator grants them to (examples/whoami-tool is the
//     smallest).
//
// You implement plain Go interfaces; sdk.Serve does the rest (the plugin
// side of go-plugin's protocol: gRPC and the handshake; answering only the
// host that started the plugin, and opening only the files it granted for
// a send; logging on stderr in the format the host reads, exiting when the
// host dies, SIGTERM). First-party plugins use nothing but
// this sdk.
//
// The sdk is a Go module of its own, github.com/clawhost/clawhost/sdk; it
// requires the generated protocol, github.com/clawhost/clawhost/proto, and
// gRPC and protobuf (and go-plugin, for the host side in sdk/pluginclient, which
// a plugin binary does not link), none of the daemon's dependencies. Until
// both are tagged, require them from a checkout:
//
//	require github.com/clawhost/clawhost/sdk v0.0.0
//
//	replace (
//		github.com/clawhost/clawhost/sdk => ../clawhost/sdk
//		github.com/clawhost/clawhost/proto => ../clawhost/proto
//	)
//
// Build a plugin with -tags grpcnotrace (and CGO_ENABLED=0, -ldflags='-s
// -w'), as clawhost's Makefile does: without the tag gRPC links
// golang.org/x/net/trace, whose html/template pages make the linker keep
// every exported method of every type, and the binary is ~40 % larger.
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
//		"github.com/clawhost/clawhost/sdk/status"
//	)
//
//	type config struct {
//		Every float64 `json:"every"`
//	}
//
//	// check is the plugin's own config check, shared by Validate and
//	// Configure. Diagnostics point at attributes of the user's block.
//	func check(cfg schema.Config) (config, error) {
//		var c config
//		if err := cfg.Decode(&c); err != nil {
//			return c, err
//		}
//		if c.Every <= 0 {
//			return c, schema.Diagnostics{{Attribute: "every", Summary: "must be positive"}}
//		}
//		return c, nil
//	}
//
//	type ticker struct {
//		every  time.Duration
//		status status.Reporter
//	}
//
//	func (t *ticker) Capabilities() channel.Capabilities {
//		return channel.Capabilities{MaxTextLength: 2000, LengthUnit: channel.LengthUTF16, DisplayName: "Ticker"}
//	}
//
//	// Run receives from the platform; here it invents one message per tick.
//	// It returns when ctx ends.
//	func (t *ticker) Run(ctx context.Context, inbox channel.Inbox) error {
//		t.status.Report(status.Status{State: status.Ready})
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
//		os.Exit(sdk.Serve(sdk.Plugin{
//			Name: "ticker", Version: "0.1.0",
//			Schema: schema.Schema{{Name: "every", Type: "number", Default: 60, Description: "seconds between ticks"}},
//			Validate: func(ctx context.Context, cfg schema.Config) error {
//				_, err := check(cfg)
//				return err
//			},
//			Configure: func(ctx context.Context, cfg schema.Config) error {
//				c, err := check(cfg)
//				if err != nil {
//					return err
//				}
//				t.every = time.Duration(c.Every * float64(time.Second))
//				t.status = cfg.Status
//				cfg.Logger.Info("ticking", "every", t.every)
//				return nil
//			},
//			Channel: t,
//		}))
//	}
//
// Build it as clawhost-ticker into clawhost's plugin_dir and enable it:
//
//	plugin "tick" {
//	  source = "ticker"
//	  config { every = 30 }
//	}
//
// Validate runs the plugin's own checks without side effects: `clawhost
// validate`, a start and a reload call it before anything is stopped, and
// report its schema.Diagnostics at the file:line:col of the attribute.
// Configure is called once per process; share the checks as above.
//
// Logging: schema.Config.Logger is a *slog.Logger. Its lines appear in the
// host log under the instance name with their level and attributes; debug
// and trace (a level below slog.LevelDebug) lines are written only when the
// host's log level asks for them. Never log secrets.
//
// Status: keep schema.Config.Status from Configure and report what only the
// plugin knows (package status). A plugin that never reports is ready while
// it runs. One that cannot work until a person acts says so instead of
// failing, and is not restarted:
//
//	t.status.Report(status.Status{
//		State:   status.NeedsAttention,
//		Message: "the platform rejected the token; create a new one and reload",
//	})
//
// Degraded says it is trying and failing by itself (the platform is
// unreachable); report Ready again when it recovers. Starting says a step
// on the way to ready that is not a failure (logging in after a device was
// linked): the host logs it at INFO, not as an error. With an Attention (a
// QR code, a pairing code, a link) and its Retry label, set Plugin.Retry:
// the operator's "retry" calls it.
//
// Optional capabilities are optional interfaces: implement channel.Typer,
// channel.Editor, channel.Reactor, channel.MediaDownloader or
// channel.CommandMenu (channel.ChatCommandMenu for a menu per chat) and
// the host uses them (channel.Offerer takes one
// back where the configuration leaves it unusable). Test a channel with
// sdktest.Conformance, which drives it over a real gRPC connection and
// checks the contract of channel.Channel (acks and redelivery, the text
// limit in its unit, chat_not_found, typed errors).
//
// # Markup and length
//
// The host sends the agent's markdown (SendRequest.Format FormatMarkdown)
// to a channel that declares which kind of markup it shows,
// Capabilities.Markup: MarkupNone (the default; the host renders plain
// text itself and sends FormatPlain), MarkupMarkdown, MarkupHTMLSubset,
// MarkupLightweight or MarkupMrkdwn. The host splits every reply so that each message,
// rendered in that kind and counted in LengthUnit, fits MaxTextLength; Send
// renders the one message it gets and never splits it again. The markup
// module, github.com/clawhost/clawhost/markup (a module of its own, so the
// sdk needs no markdown parser), renders each kind the way the host
// measures it:
//
//	func (t *ticker) Send(ctx context.Context, req channel.SendRequest) (channel.SendResponse, error) {
//		text := req.Text
//		if req.Format == channel.FormatMarkdown {
//			text = markup.Render(text, markup.For(t.Capabilities().Markup))
//		}
//		if channel.TextLen(text, channel.LengthUTF16) > 2000 {
//			return channel.SendResponse{}, channel.Errorf(channel.CodeMessageTooLong, "%d units", channel.TextLen(text, channel.LengthUTF16))
//		}
//		// post text
//	}
//
// For MarkupHTMLSubset the limit counts the visible text
// (markup.Visible), not the tags.
//
// # Debug mode
//
// To run a plugin under a debugger, start it yourself with EnvDebug set to
// the instance name (the label of its plugin block; "1" means the plugin's
// Name):
//
//	CLAWHOST_PLUGIN_DEBUG=tick dlv exec ./bin/clawhost-ticker
//
// It serves without a handshake, logs readable lines, and prints on stderr
// a CLAWHOST_REATTACH='{"tick":{...}}' line. Start clawhost with that
// variable in its environment: the instance attaches to your process
// instead of launching its binary (as Terraform's TF_REATTACH_PROVIDERS
// does). The host does not probe its liveness (a breakpoint is not a hang)
// and never signals it; stopping the instance closes the connection and
// the plugin exits. A plugin is configured once per process, so start both
// again for the next run.
//
// Rules: never write to stdout (the go-plugin handshake lives there); log
// through schema.Config.Logger, never log secrets; return business failures
// as *channel.Error; return from Run when its context ends.
package sdk
