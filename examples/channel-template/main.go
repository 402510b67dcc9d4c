// Command clawhost-channel-template is a channel plugin to copy: the
// smallest complete channel, which passes `clawhost plugin test` as it is.
// Its "platform" is a spool directory, so it runs anywhere without an
// account: every file put into <dir>/inbox is a message from the user
// "local" in the chat "local", and every reply is written to
// <dir>/outbox. Replace the three places marked PLATFORM with your
// platform's API (a long poll or a webhook, a send call) and keep the rest.
//
// Try it:
//
//	clawhost plugin test \
//	  -inject 'printf %s "$CLAWHOST_TEST_TEXT" > spool/$$.tmp && mv spool/$$.tmp spool/inbox/$(date +%s%N).txt' \
//	  bin/clawhost-channel-template
//
// (a message is written under another name and renamed into the inbox, so
// the plugin never reads half of one).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/clawhost/clawhost/sdk"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/schema"
	"github.com/clawhost/clawhost/sdk/status"
)

// maxText is the longest text one Send takes, in UTF-16 units (declare
// your platform's real limit and unit: the host splits replies to it).
const maxText = 4096

// chat is the template's one chat and its one user.
const chat = "local"

// config is the plugin's config {} block.
type config struct {
	Dir  string  `json:"dir"`
	Poll float64 `json:"poll"`
}

// check decodes and checks the block: Validate and Configure share it.
// Validate must not touch the network or files, and a diagnostic names the
// attribute it is about (never a secret's value).
func check(cfg schema.Config) (config, error) {
	var c config
	if err := cfg.Decode(&c); err != nil {
		return c, err
	}
	var d schema.Diagnostics
	if strings.TrimSpace(c.Dir) == "" {
		d.Add("dir", "must not be empty", "")
	}
	if c.Poll <= 0 || c.Poll > 60 {
		d.Add("poll", "must be between 0 and 60 seconds", "")
	}
	if len(d) > 0 {
		return c, d
	}
	return c, nil
}

// spool is the channel.
type spool struct {
	dir    string // the spool directory, absolute
	poll   time.Duration
	status status.Reporter
	sent   atomic.Int64
}

var _ channel.Channel = (*spool)(nil)

// configure is called once per process, before Run.
func (s *spool) configure(ctx context.Context, cfg schema.Config) error {
	c, err := check(cfg)
	if err != nil {
		return err
	}
	s.dir = c.Dir
	if !filepath.IsAbs(s.dir) {
		s.dir = filepath.Join(cfg.DataDir, s.dir)
	}
	s.poll = time.Duration(c.Poll * float64(time.Second))
	s.status = cfg.Status
	for _, sub := range []string{"inbox", "outbox"} {
		if err := os.MkdirAll(filepath.Join(s.dir, sub), 0o700); err != nil {
			return fmt.Errorf("configure: %w", err)
		}
	}
	cfg.Logger.Info("spool ready", "dir", s.dir)
	return nil
}

// Capabilities says what the host may ask of the platform.
func (s *spool) Capabilities() channel.Capabilities {
	return channel.Capabilities{MaxTextLength: maxText, LengthUnit: channel.LengthUTF16, DisplayName: "Spool"}
}

// Run receives from the platform until ctx ends.
func (s *spool) Run(ctx context.Context, inbox channel.Inbox) error {
	s.status.Report(status.Status{State: status.Ready})
	for {
		// PLATFORM: receive (a long poll, a webhook handler, a socket).
		msgs, files, err := s.receive()
		if err != nil {
			s.status.Report(status.Status{State: status.Degraded, Message: "the inbox cannot be read: " + err.Error()})
		}
		if len(msgs) > 0 {
			// Deliver returns once the host stored the messages: only then
			// may the platform's offset move (here: the files go).
			if err := inbox.Deliver(ctx, msgs...); err != nil {
				return nil // the plugin is stopping
			}
			for _, f := range files {
				_ = os.Remove(f)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(s.poll):
		}
	}
}

// receive reads the inbox: one message per file, oldest name first.
func (s *spool) receive() ([]channel.InboundMessage, []string, error) {
	dir := filepath.Join(s.dir, "inbox")
	names, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil {
		return nil, nil, err
	}
	sort.Strings(names)
	var msgs []channel.InboundMessage
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			return msgs, nil, err
		}
		fi, err := os.Stat(name)
		if err != nil {
			return msgs, nil, err
		}
		msgs = append(msgs, channel.InboundMessage{
			ChatType: channel.ChatDirect, ChatID: chat, MessageID: strings.TrimSuffix(filepath.Base(name), ".txt"),
			Sender: channel.Sender{ID: chat, Name: "Local user"}, Text: string(b), Timestamp: fi.ModTime(),
		})
	}
	return msgs, names, nil
}

// Send posts one message; failures are *channel.Error with a stable code.
func (s *spool) Send(ctx context.Context, req channel.SendRequest) (channel.SendResponse, error) {
	if req.ChatID != chat {
		return channel.SendResponse{}, channel.Errorf(channel.CodeChatNotFound, "no chat %q", req.ChatID)
	}
	if n := channel.TextLen(req.Text, channel.LengthUTF16); n > maxText {
		return channel.SendResponse{}, channel.Errorf(channel.CodeMessageTooLong, "text of %d UTF-16 units exceeds %d", n, maxText)
	}
	id := strconv.FormatInt(s.sent.Add(1), 10)
	// PLATFORM: send. The host renders markdown to plain text for a channel
	// that declares no markup (the default); one that declares a kind
	// (Capabilities.Markup) gets each markdown text with the host's rendering
	// for it: send req.Rendered.Of(kind) when ok, else req.Text as it is.
	path := filepath.Join(s.dir, "outbox", fmt.Sprintf("%d-%s.txt", time.Now().UnixNano(), id))
	if err := os.WriteFile(path, []byte(req.Text), 0o600); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return channel.SendResponse{}, channel.Errorf(channel.CodeUnavailable, "the outbox is gone")
		}
		return channel.SendResponse{}, fmt.Errorf("send: %w", err)
	}
	return channel.SendResponse{MessageIDs: []string{id}}, nil
}

func plugin() sdk.Plugin {
	s := &spool{}
	return sdk.Plugin{
		Name:    "channel-template",
		Version: "0.1.0",
		Schema: schema.Schema{
			{Name: "dir", Type: "string", Default: "spool", Description: "the spool directory (inbox/ and outbox/), relative to the plugin's data directory"},
			{Name: "poll", Type: "number", Default: 0.2, Description: "seconds between looks at the inbox"},
		},
		Validate: func(ctx context.Context, cfg schema.Config) error {
			_, err := check(cfg)
			return err
		},
		Configure: s.configure,
		// PLATFORM: a real channel keeps its token in the config block
		// (an attribute with Sensitive: true) and checks it in Configure.
		Channel: s,
	}
}

func main() { os.Exit(sdk.Serve(plugin())) }
