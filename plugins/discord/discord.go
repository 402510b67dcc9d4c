package discord

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/clawhost/clawhost/sdk"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/schema"
	"github.com/clawhost/clawhost/sdk/status"
)

// Version is the plugin's version.
const Version = "0.1.0"

// Compile-time checks of the optional capabilities.
var (
	_ channel.Channel         = (*Adapter)(nil)
	_ channel.Typer           = (*Adapter)(nil)
	_ channel.Editor          = (*Adapter)(nil)
	_ channel.Reactor         = (*Adapter)(nil)
	_ channel.MediaDownloader = (*Adapter)(nil)
	_ channel.CommandMenu     = (*Adapter)(nil)
)

// Timeouts.
const (
	// callTimeout bounds one REST call.
	callTimeout = 30 * time.Second
	// uploadTimeout bounds a message with files.
	uploadTimeout = 5 * time.Minute
)

// Plugin is the discord plugin as sdk.Serve wants it:
//
//	func main() { os.Exit(sdk.Serve(discord.Plugin())) }
func Plugin() sdk.Plugin {
	a := New()
	return sdk.Plugin{
		Name:      "discord",
		Version:   Version,
		Schema:    Schema,
		Validate:  Validate,
		Configure: a.Configure,
		Probe:     Probe,
		Channel:   a,
		Retry:     a.Retry,
	}
}

// Adapter is the Discord channel. Create it with New, then Configure it
// once; Run, Send and the optional capabilities may then be used
// concurrently.
type Adapter struct {
	cfg    Config
	log    *slog.Logger
	status status.Reporter
	rest   *discordgo.Session
	http   *http.Client // attachment downloads (no bot token sent)
	state  *store

	// sleep waits d or until ctx ends; now is the clock. Tests replace
	// them.
	sleep func(ctx context.Context, d time.Duration) error
	now   func() time.Time
	// identifyGap is the least time between two IDENTIFYs (Discord allows
	// one per 5 s; each counts against 1000 a day).
	identifyGap time.Duration
	// invalidPause is the wait before identifying after a non-resumable
	// op 9 (Discord asks for 1–5 s).
	invalidPause func() time.Duration
	// ackWait is how long a button press waits for the host before it is
	// acknowledged anyway (ackDeadline; tests shorten it).
	ackWait time.Duration
	acks    acks

	me    atomic.Pointer[identity]
	chans channelCache
	retry chan struct{} // the operator asked to reconnect after a fatal close

	// threadCtx are the threads whose context was attached
	// (threadcontext.go), so that a thread costs two REST calls per plugin
	// process.
	threadCtx channel.FirstSeen

	mu       sync.Mutex
	menu     []channel.MenuEntry // the host's commands, registered once the app id is known
	menuDone bool
}

// identity is who the bot is, learned from READY and GUILD_CREATE.
type identity struct {
	UserID   string `json:"user_id"`
	Username string `json:"username"`
	AppID    string `json:"app_id"`
	// Roles is the bot's managed role per guild.
	Roles map[string]string `json:"roles,omitempty"`
}

// New returns an unconfigured Adapter.
func New() *Adapter {
	return &Adapter{
		log:         slog.New(slog.DiscardHandler),
		status:      status.Discard,
		sleep:       channel.Sleep,
		now:         time.Now,
		identifyGap: 5 * time.Second,
		ackWait:     ackDeadline,
		invalidPause: func() time.Duration {
			return time.Second + rand.N(4*time.Second)
		},
		retry: make(chan struct{}, 1),
	}
}

// Configure decodes and validates the config {} block and opens the state
// in the data dir. It does not touch the network: a bot that is offline at
// startup still starts, and Run connects in the background.
func (a *Adapter) Configure(_ context.Context, cfg schema.Config) error {
	c, err := decodeConfig(cfg)
	if err != nil {
		return err
	}
	a.cfg = c
	a.log, a.status = cfg.Log(), cfg.Reporter()
	st, err := openStore(cfg.DataDir)
	if err != nil {
		return err
	}
	a.state = st
	if me := st.identity(); me != nil {
		a.me.Store(me)
	}
	base, _ := url.Parse(c.APIEndpoint)
	transport := http.DefaultTransport.(*http.Transport).Clone()
	a.http = &http.Client{Transport: transport}
	s, _ := discordgo.New("Bot " + c.Token) // New fails only for odd arguments
	s.Client = &http.Client{Transport: rewrite{base: base, next: transport}}
	s.ShouldRetryOnRateLimit = false // a 429 is the host's to schedule
	s.MaxRestRetries = 0
	s.UserAgent = "DiscordBot (https://github.com/clawhost/clawhost, " + Version + ")"
	a.rest = s
	return nil
}

// rewrite sends requests for discord.com to api_endpoint: discordgo's
// endpoints are fixed at init, its http.Client is not.
type rewrite struct {
	base *url.URL
	next http.RoundTripper
}

func (r rewrite) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host == "discord.com" && (r.base.Host != "discord.com" || r.base.Scheme != "https" || r.base.Path != "") {
		u := *req.URL
		u.Scheme, u.Host = r.base.Scheme, r.base.Host
		u.Path = r.base.Path + u.Path
		req = req.Clone(req.Context())
		req.URL = &u
		req.Host = u.Host
	}
	return r.next.RoundTrip(req)
}

// Capabilities implements channel.Channel.
//
// Discord counts the 2000 characters of a message in Unicode code points
// (its API is written in Python); the limit is declared in UTF-16 units,
// which are never fewer, so no chunk the host cuts can be refused, at the
// price of splitting emoji-heavy replies a little early.
func (a *Adapter) Capabilities() channel.Capabilities {
	return channel.Capabilities{
		MaxTextLength: MaxTextLength,
		LengthUnit:    channel.LengthUTF16,
		MaxLines:      MaxLines,
		MaxFileBytes:  MaxFileBytes,
		// A typing trigger lasts 10 s (or until a message).
		TypingLifetime: 10 * time.Second,
		TypingLapses:   true, // the typing trigger has no "off"
		Markup:         channel.MarkupMarkdown,
		DisplayName:    "Discord",
		Buttons:        true,
		Threads:        true,
		Groups:         true,
		MediaIn: []channel.MediaKind{channel.MediaImage, channel.MediaDocument, channel.MediaVoice,
			channel.MediaAudio, channel.MediaVideo},
		MediaOut: []channel.MediaKind{channel.MediaImage, channel.MediaDocument, channel.MediaAudio,
			channel.MediaVoice, channel.MediaVideo},
		IDForms: IDForms,
		// A direct message goes to a DM channel with an id of its own,
		// not to the user's id: DirectToSender stays false.
	}
}

// Run implements channel.Channel: it keeps a gateway connection up until
// ctx ends and hands messages to the host. Discord failures never end Run:
// the connection is resumed (or re-identified) with backoff, and a close
// code only a person can fix (a rejected token, a privileged intent not
// enabled) is reported as needs_attention; Run then waits for Retry or a
// restart instead of hammering the gateway.
func (a *Adapter) Run(ctx context.Context, inbox channel.Inbox) error {
	if a.rest == nil {
		return errors.New("discord: run before configure")
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		a.deliverLoop(ctx, inbox)
	}()
	a.connectLoop(ctx)
	wg.Wait()
	a.closeAcks(ctx)
	if err := a.state.flush(); err != nil {
		a.log.Warn("could not save the gateway state", "error", err)
	}
	return nil
}

// Retry is sdk.Plugin.Retry: after a fatal close (needs_attention), try
// to connect again (e.g. once the intent is enabled in the Developer
// Portal).
func (a *Adapter) Retry(context.Context) error {
	select {
	case a.retry <- struct{}{}:
	default:
	}
	return nil
}

// deliverLoop hands pending messages to the host, oldest first, and drops
// them from the state once the host stored them, acknowledging the button
// presses among them. A message stays in the state file until then, so a
// plugin restart delivers it again.
func (a *Adapter) deliverLoop(ctx context.Context, inbox channel.Inbox) {
	for {
		msgs, more := a.state.pending()
		if len(msgs) == 0 {
			select {
			case <-ctx.Done():
				return
			case <-more:
				continue
			}
		}
		if err := inbox.Deliver(ctx, msgs...); err != nil {
			if ctx.Err() != nil {
				return
			}
			a.log.Warn("host did not take the messages; trying again", "error", err)
			if a.sleep(ctx, time.Second) != nil {
				return
			}
			continue
		}
		a.ackDelivered(ctx, msgs)
		if err := a.state.delivered(msgs); err != nil {
			a.log.Error("could not save the state", "error", err)
		}
	}
}

// call bounds one REST call with ctx and callTimeout.
func (a *Adapter) call(ctx context.Context, d time.Duration) (discordgo.RequestOption, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(ctx, d)
	return discordgo.WithContext(ctx), cancel
}
