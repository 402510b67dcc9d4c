package mcpchannel

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/clawhost/clawhost/sdk"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/schema"
	"github.com/clawhost/clawhost/sdk/status"
)

// Version is the plugin's version.
const Version = "0.1.0"

// Restart backoff of a server that exited: from minBackoff, doubling to
// maxBackoff; a server that ran for stableAfter starts the count again.
const (
	minBackoff  = time.Second
	maxBackoff  = 30 * time.Second
	stableAfter = time.Minute
)

// readyWait is how long a Send waits for a restarting server before it
// fails with channel.CodeUnavailable (not sent: the host retries it).
const readyWait = 10 * time.Second

// eventBuffer is how many notifications wait for the host: a fuller
// buffer holds the server's next message back.
const eventBuffer = 256

// Plugin returns the plugin served by cmd/clawhost-mcp-channel.
func Plugin() sdk.Plugin {
	a := New()
	return sdk.Plugin{
		Name:      "mcp-channel",
		Version:   Version,
		Schema:    Schema,
		Validate:  Validate,
		Probe:     Probe,
		Configure: a.Configure,
		Channel:   a,
	}
}

// Adapter is the bridge to one channel server. Create it with New, then
// Configure it once; Run, Send and the optional capabilities may then be
// used concurrently.
type Adapter struct {
	cfg      Config
	launch   launch
	dir      string
	instance string
	log      *slog.Logger
	status   status.Reporter

	// events carries every server's notifications to Run, in order.
	events chan notification
	// sleep waits d or until ctx ends; tests replace it.
	sleep func(ctx context.Context, d time.Duration) error

	mu  sync.Mutex
	cur *server       // the running server; nil while it restarts
	up  chan struct{} // closed while cur is set
	// first is the server Configure started: Capabilities describes it.
	first *server
	// relay holds the prompts put to the server (relay.go).
	relay relay
}

var (
	_ channel.Channel         = (*Adapter)(nil)
	_ channel.Editor          = (*Adapter)(nil)
	_ channel.Reactor         = (*Adapter)(nil)
	_ channel.MediaDownloader = (*Adapter)(nil)
	_ channel.Offerer         = (*Adapter)(nil)
)

// New returns an unconfigured adapter.
func New() *Adapter {
	return &Adapter{
		log:    slog.New(slog.DiscardHandler),
		status: status.Discard,
		events: make(chan notification, eventBuffer),
		up:     make(chan struct{}),
		sleep:  channel.Sleep,
	}
}

// Configure decodes the block and starts the channel server, bounded by
// start_timeout: the server's tools decide the capabilities, so a server
// that does not start fails the configuration (the host restarts the
// plugin with backoff and shows the error).
func (a *Adapter) Configure(ctx context.Context, cfg schema.Config) error {
	c, l, err := decodeConfig(cfg)
	if err != nil {
		return err
	}
	a.cfg, a.launch, a.instance = c, l, cfg.Instance
	a.dir = cfg.DataDir
	a.log, a.status = cfg.Log(), cfg.Reporter()
	s, err := a.start(ctx)
	if err != nil {
		return err
	}
	a.first = s
	a.setCurrent(s)
	a.log.Info("channel server started", "tools", s.toolNames(), "permission_relay", s.permission)
	if c.PermissionRelayFrom != "" && !s.permission {
		a.log.Warn("permission_relay_from is set, but the server does not declare " + capPermission + ": approvals are asked as text only")
	}
	return nil
}

// start starts a server, bounded by ctx and start_timeout.
func (a *Adapter) start(ctx context.Context) (*server, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Duration(a.cfg.StartTimeout*float64(time.Second)))
	defer cancel()
	s, err := startServer(ctx, a.launch, a.dir, a.log, a.notified)
	if err != nil {
		return nil, fmt.Errorf("start the channel server %q: %w", a.launch.argv[0], err)
	}
	return s, nil
}

// notified queues a server's notification for Run.
func (a *Adapter) notified(n notification) { a.events <- n }

// setCurrent makes s the running server (nil: none).
func (a *Adapter) setCurrent(s *server) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.cur = s
	if s != nil {
		select {
		case <-a.up:
		default:
			close(a.up)
		}
	} else {
		select {
		case <-a.up:
			a.up = make(chan struct{})
		default:
		}
	}
}

// current returns the running server, waiting up to readyWait (or ctx)
// for one: a dead one is cleared by the supervisor (gone), which then sets
// the next (up).
func (a *Adapter) current(ctx context.Context) (*server, error) {
	ctx, cancel := context.WithTimeout(ctx, readyWait)
	defer cancel()
	for {
		a.mu.Lock()
		s, change := a.cur, a.up
		a.mu.Unlock()
		if s != nil {
			if s.alive() {
				return s, nil
			}
			change = s.gone
		}
		select {
		case <-change:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Capabilities implements channel.Channel: limits from the block, media
// from the server Configure started (files out when its reply tool takes
// files).
func (a *Adapter) Capabilities() channel.Capabilities {
	c := channel.Capabilities{
		MaxTextLength: a.textLimit(),
		LengthUnit:    channel.LengthUTF16,
		Markup:        channel.Markup(a.cfg.Markup),
		Groups:        true,
		MediaIn:       []channel.MediaKind{channel.MediaImage, channel.MediaDocument},
		MaxFileBytes:  DefaultMaxDownloadBytes,
		IDForms:       IDForms,
		Buttons:       a.relaying(),
	}
	if s := a.first; s != nil {
		if declares(s.tools[toolReply], "files") {
			c.MediaOut = []channel.MediaKind{channel.MediaImage, channel.MediaDocument}
		}
		if res := s.session.InitializeResult(); res != nil && res.ServerInfo != nil {
			c.DisplayName = res.ServerInfo.Title
			if c.DisplayName == "" {
				c.DisplayName = res.ServerInfo.Name
			}
		}
	}
	return c
}

// Offered implements channel.Offerer: edits where the server Configure
// started has edit_message (else the host sends no live drafts and no
// turn card, whose edits would fail), reactions where it has react.
func (a *Adapter) Offered() channel.Offered {
	s := a.first
	if s == nil {
		return channel.Offered{}
	}
	return channel.Offered{Edit: s.tools[toolEdit] != nil, Reactions: s.tools[toolReact] != nil}
}

// labelRoom is the part of text_limit kept for the buttons' labels Send
// writes under a text while the permission relay declares buttons.
const labelRoom = 200

// textLimit is the longest text the host may hand Send: text_limit, less
// labelRoom while buttons are declared.
func (a *Adapter) textLimit() int {
	n := int(a.cfg.TextLimit)
	if a.relaying() && n > 2*labelRoom {
		n -= labelRoom
	}
	return n
}

// Run implements channel.Channel: it hands the servers' messages to the
// host and restarts a server that exits, with backoff, until ctx ends.
func (a *Adapter) Run(ctx context.Context, inbox channel.Inbox) error {
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.supervise(ctx)
	}()
	defer func() { <-done }()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case n := <-a.events:
			if err := a.handle(ctx, inbox, n); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return err
			}
		}
	}
}

// supervise restarts the server whenever it exits, until ctx ends; then it
// stops the running one.
func (a *Adapter) supervise(ctx context.Context) {
	a.mu.Lock()
	s := a.cur
	a.mu.Unlock()
	started := time.Now()
	backoff := minBackoff
	for {
		if s != nil {
			select {
			case <-ctx.Done():
				s.stop()
				a.setCurrent(nil)
				close(s.gone)
				return
			case <-s.exited:
			}
			a.setCurrent(nil)
			close(s.gone)
			a.log.Warn("channel server exited; restarting", "error", s.waitErr, "in", backoff)
			a.status.Report(status.Status{State: status.Degraded, Message: fmt.Sprintf("The channel server exited (%v); restarting it.", s.waitErr)})
			if time.Since(started) >= stableAfter {
				backoff = minBackoff
			}
		}
		if a.sleep(ctx, backoff) != nil {
			return
		}
		backoff = min(backoff*2, maxBackoff)
		next, err := a.start(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			a.log.Error("channel server did not start", "error", err, "retry_in", backoff)
			a.status.Report(status.Status{State: status.Degraded, Message: "The channel server does not start: " + err.Error()})
			s = nil
			continue
		}
		s, started = next, time.Now()
		a.setCurrent(s)
		a.log.Info("channel server restarted", "tools", s.toolNames())
		a.status.Report(status.Status{State: status.Ready, Message: "The channel server runs again."})
	}
}

// errNotSent: the call was not written to any server.
var errNotSent = errors.New("the channel server is not running")
