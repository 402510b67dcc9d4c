package slack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slack-go/slack"

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
	_ channel.Editor          = (*Adapter)(nil)
	_ channel.Reactor         = (*Adapter)(nil)
	_ channel.MediaDownloader = (*Adapter)(nil)
)

// Timeouts.
const (
	// callTimeout bounds one Web API call.
	callTimeout = 30 * time.Second
	// uploadTimeout bounds a message with files.
	uploadTimeout = 5 * time.Minute
	// ackDeadline is how long an interaction or a slash command waits for
	// the host to store it before it is acknowledged anyway: Slack wants
	// the acknowledgement within 3 s.
	ackDeadline = 2500 * time.Millisecond
	// backoffMin and backoffMax bound the wait between connection
	// attempts after the Socket Mode client gave up.
	backoffMin = time.Second
	backoffMax = 2 * time.Minute
)

// Plugin is the slack plugin as sdk.Serve wants it:
//
//	func main() { os.Exit(sdk.Serve(slack.Plugin())) }
func Plugin() sdk.Plugin {
	a := New()
	return sdk.Plugin{
		Name:      "slack",
		Setup:     Setup,
		Version:   Version,
		Schema:    Schema,
		Validate:  Validate,
		Configure: a.Configure,
		Channel:   a,
		Retry:     a.Retry,
		Probe:     Probe,
	}
}

// Adapter is the Slack channel. Create it with New, then Configure it
// once; Run, Send and the optional capabilities may then be used
// concurrently.
type Adapter struct {
	cfg    Config
	log    *slog.Logger
	status status.Reporter
	api    *slack.Client
	http   *http.Client

	// sleep waits d or until ctx ends; tests replace it.
	sleep func(ctx context.Context, d time.Duration) error
	// ackWait is ackDeadline (tests shorten it).
	ackWait time.Duration
	retry   chan struct{} // the operator asked to reconnect after a fatal error

	me      atomic.Pointer[identity]
	threads threads // threads the bot posted in (threads.go)
	// threadCtx are the threads whose context was attached
	// (threadcontext.go), so that a thread costs one conversations.replies
	// per plugin process. After a restart a thread's next message carries
	// it again, which the host ignores when the session has turns.
	threadCtx channel.FirstSeen
	users     nameCache // user id → display name
	chans     nameCache // channel id → name

	mu sync.Mutex
	// dm maps a user id a Send addressed to the DM channel Slack posted in,
	// so an Edit or React addressed by the user id finds the message.
	dm map[string]string
	// reacted is the reaction the bot last set per message (channel/ts),
	// so a Remove without an emoji takes it off.
	reacted map[string]string
	// scopeless are the calls Slack refused for a missing scope, with the
	// scope (noteScope).
	scopeless map[string]string
}

// identity is who the bot is, from auth.test.
type identity struct {
	UserID string
	BotID  string
	Name   string
	TeamID string
	Team   string
	URL    string
}

// New returns an unconfigured Adapter.
func New() *Adapter {
	return &Adapter{
		log:     slog.New(slog.DiscardHandler),
		status:  status.Discard,
		sleep:   channel.Sleep,
		ackWait: ackDeadline,
		retry:   make(chan struct{}, 1),
		dm:      map[string]string{},
		reacted: map[string]string{},

		scopeless: map[string]string{},
	}
}

// Configure decodes and validates the config {} block. It does not touch
// the network: a bot that is offline at startup still starts, and Run
// connects in the background.
func (a *Adapter) Configure(_ context.Context, cfg schema.Config) error {
	c, err := decodeConfig(cfg)
	if err != nil {
		return err
	}
	a.cfg = c
	a.log, a.status = cfg.Log(), cfg.Reporter()
	a.http = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	a.api = newClient(c, a.http)
	if err := a.threads.open(cfg.DataDir); err != nil {
		a.log.Warn("the threads the bot answered in before this start are forgotten: their replies need a mention", "err", err)
	}
	return nil
}

// newClient is the Web API client of c: the bot token for methods, the
// app-level token for apps.connections.open. slack-go neither retries nor
// sleeps on a 429 by default: a rate limit is the host's to schedule.
func newClient(c Config, hc *http.Client) *slack.Client {
	return slack.New(c.BotToken,
		slack.OptionAPIURL(c.APIEndpoint+"/api/"),
		slack.OptionHTTPClient(hc),
		slack.OptionAppLevelToken(c.AppToken))
}

// Capabilities implements channel.Channel.
func (a *Adapter) Capabilities() channel.Capabilities {
	return channel.Capabilities{
		MaxTextLength: MaxTextLength,
		LengthUnit:    channel.LengthUTF16,
		MaxFileBytes:  MaxFileBytes,
		Markup:        channel.MarkupMrkdwn,
		DisplayName:   "Slack",
		Buttons:       true,
		Threads:       true,
		Groups:        true,
		MediaIn: []channel.MediaKind{channel.MediaImage, channel.MediaDocument, channel.MediaAudio,
			channel.MediaVideo, channel.MediaVoice},
		MediaOut: []channel.MediaKind{channel.MediaImage, channel.MediaDocument, channel.MediaAudio,
			channel.MediaVideo, channel.MediaVoice},
		IDForms: IDForms,
		// chat.postMessage to a member id posts in the bot's DM with them.
		DirectToSender: true,
	}
}

// Run implements channel.Channel: it keeps the connection (Socket Mode, or
// the Events API server) up until ctx ends and hands messages to the host.
// Slack failures never end Run: a rejected token or a missing scope is
// reported as needs_attention and Run waits for Retry (or a restart)
// instead of hammering Slack; other failures are retried with backoff.
func (a *Adapter) Run(ctx context.Context, inbox channel.Inbox) error {
	if a.api == nil {
		return errors.New("slack: run before configure")
	}
	if a.cfg.Mode == ModeEvents {
		return a.serveEvents(ctx, inbox)
	}
	return a.runSocket(ctx, inbox)
}

// Retry is sdk.Plugin.Retry: after a fatal error (needs_attention), try to
// connect again (e.g. once the token is replaced or the scope granted).
func (a *Adapter) Retry(context.Context) error {
	select {
	case a.retry <- struct{}{}:
	default:
	}
	return nil
}

// whoami asks auth.test who the bot is, once per connection; the answer
// names the bot user that mentions address.
func (a *Adapter) whoami(ctx context.Context) (*identity, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	r, err := a.api.AuthTestContext(ctx)
	if err != nil {
		return nil, err
	}
	me := &identity{UserID: r.UserID, BotID: r.BotID, Name: r.User, TeamID: r.TeamID, Team: r.Team, URL: r.URL}
	a.me.Store(me)
	return me, nil
}

// fatal is a Slack error only a person can fix, with what to do; "" for
// others.
func fatal(err error) string {
	var se slack.SlackErrorResponse
	if !errors.As(err, &se) {
		switch err.Error() {
		case "invalid_auth", "not_authed", "account_inactive", "token_revoked", "token_expired":
			se.Err = err.Error()
		default:
			return ""
		}
	}
	switch se.Err {
	case "invalid_auth", "not_authed", "account_inactive", "token_revoked", "token_expired":
		return "Slack rejected a token (" + se.Err + "): copy the bot token (xoxb-…, OAuth & Permissions) and the app-level token (xapp-…, Basic Information → App-Level Tokens) into bot_token and app_token, then reload"
	case "missing_scope":
		scope := se.Needed
		if scope == "" {
			scope = "a scope the app lacks"
		}
		return fmt.Sprintf("the Slack app lacks the scope %s (missing_scope): add it under OAuth & Permissions (or paste the manifest of docs/slack.md), reinstall the app, then press Retry", scope)
	case "not_allowed_token_type":
		return "a token of the wrong type (not_allowed_token_type): bot_token takes the xoxb- bot token, app_token the xapp- app-level token"
	}
	return ""
}

// attention reports msg as needs_attention and waits for Retry or ctx.
func (a *Adapter) attention(ctx context.Context, msg string) bool {
	a.log.Error("slack refused the connection; not reconnecting until the problem is fixed", "problem", msg)
	a.status.Report(status.Status{State: status.NeedsAttention, Message: msg,
		Attention: &status.Attention{Kind: status.Link, Data: "https://api.slack.com/apps", Retry: "Reconnect"}})
	select {
	case <-ctx.Done():
		return false
	case <-a.retry:
		a.log.Info("reconnecting on the operator's request")
		return true
	}
}

// nameCache holds names looked up once (users.info, conversations.info).
type nameCache struct {
	mu sync.Mutex
	m  map[string]string
}

func (c *nameCache) get(id string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, ok := c.m[id]
	return n, ok
}

func (c *nameCache) put(id, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]string{}
	}
	c.m[id] = name
}

// userName is a user's display name (users.info, cached); "" when it
// cannot be looked up (the users:read scope missing).
func (a *Adapter) userName(ctx context.Context, id string) string {
	if n, ok := a.users.get(id); ok {
		return n
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	u, err := a.api.GetUserInfoContext(ctx, id)
	if err != nil {
		a.log.Debug("could not look the user up", "user", id, "error", err)
		return ""
	}
	n := u.Profile.DisplayName
	if n == "" {
		n = u.RealName
	}
	if n == "" {
		n = u.Name
	}
	a.users.put(id, n)
	return n
}

// channelName is a channel's name (conversations.info, cached); "" when it
// cannot be looked up.
func (a *Adapter) channelName(ctx context.Context, id string) string {
	if n, ok := a.chans.get(id); ok {
		return n
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	ch, err := a.api.GetConversationInfoContext(ctx, &slack.GetConversationInfoInput{ChannelID: id})
	if err != nil {
		a.log.Debug("could not look the channel up", "channel", id, "error", err)
		return ""
	}
	n := ch.Name
	if n != "" && !strings.HasPrefix(n, "#") {
		n = "#" + n
	}
	a.chans.put(id, n)
	return n
}
