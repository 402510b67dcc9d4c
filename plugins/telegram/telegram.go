package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

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
	_ channel.MediaDownloader = (*Adapter)(nil)
	_ channel.CommandMenu     = (*Adapter)(nil)
	_ channel.ChatCommandMenu = (*Adapter)(nil)
	_ channel.Reactor         = (*Adapter)(nil)
)

// Timeouts of single Bot API calls (long polls get poll_timeout on top).
// A call the Bot API carried out but never answered (a half-open
// connection, a stuck proxy) is only noticed when its timeout ends, so
// these bound how long a silent API holds a chat's reply or the receive
// loop: the Bot API answers a text call in well under a second, and
// python-telegram-bot gives a read 5 s. 20 s keeps a slow link working
// while a silence costs a chat 20 s, not a minute; uploads keep their own.
const (
	callTimeout   = 20 * time.Second
	uploadTimeout = 5 * time.Minute
	// answerTimeout bounds answerCallbackQuery: the answer only stops the
	// spinner of the pressed button, not worth holding the receive loop.
	answerTimeout = 10 * time.Second
	pollSlack     = 10 * time.Second
	// shortPollPause separates getUpdates calls that found nothing when
	// poll_timeout is 0.
	shortPollPause = time.Second
)

// maxIdleConns is how many idle connections to the Bot API are kept. The
// host sends to different chats at once, and every call goes to the same
// host: with the default of 2, each call beyond the second closed its
// connection when done and the next one dialled again (a TCP and TLS
// handshake per message under load).
const maxIdleConns = 32

// Retry policies of the receive loop. Backoff doubles from min to max and
// resets after a successful call.
var (
	// network errors, 5xx, malformed answers
	netPolicy = policy{min: time.Second, max: 30 * time.Second}
	// 409: another poller, or a webhook is set
	conflictPolicy = policy{min: 5 * time.Second, max: time.Minute}
	// 401/404: the token is rejected; only a config change helps, so grow to
	// a long cap instead of hammering the API
	authPolicy = policy{min: 10 * time.Second, max: 10 * time.Minute}
	// the host did not store a delivery
	deliverPolicy = policy{min: 500 * time.Millisecond, max: 10 * time.Second}
)

// Plugin is the telegram plugin as sdk.Serve wants it:
//
//	func main() { os.Exit(sdk.Serve(telegram.Plugin())) }
func Plugin() sdk.Plugin {
	a := New()
	return sdk.Plugin{
		Name:      "telegram",
		Version:   Version,
		Schema:    Schema,
		Validate:  Validate,
		Configure: a.Configure,
		Probe:     Probe,
		Channel:   a,
	}
}

// Adapter is the Telegram channel. Create it with New, then Configure it
// once; Run, Send and the optional capabilities may then be used
// concurrently.
type Adapter struct {
	cfg Config
	api *client
	log *slog.Logger

	// sleep waits d or until ctx ends; tests replace it to observe backoff
	// without waiting.
	sleep func(ctx context.Context, d time.Duration) error
	// now is the clock that stamps button presses (Telegram gives them no
	// time of their own).
	now func() time.Time

	me atomic.Pointer[self]

	// status reports the receive loop's health to the host (status.go);
	// status.Discard until Configure.
	status status.Reporter

	mu          sync.Mutex
	webhookAddr string        // bound address in webhook mode
	listening   chan struct{} // closed once webhookAddr is set
}

// New returns an unconfigured Adapter.
func New() *Adapter {
	return &Adapter{
		log:       slog.New(slog.DiscardHandler),
		sleep:     channel.Sleep,
		now:       time.Now,
		status:    status.Discard,
		listening: make(chan struct{}),
	}
}

// Configure decodes and validates the config {} block (the checks of
// Validate). It does not touch the network: a bot that is offline at
// startup still starts, and Run finds out who it is (getMe) in the
// background.
func (a *Adapter) Configure(_ context.Context, cfg schema.Config) error {
	c, err := decodeConfig(cfg)
	if err != nil {
		return err
	}
	a.cfg = c
	a.log, a.status = cfg.Log(), cfg.Reporter()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = maxIdleConns
	a.api = &client{
		token:        c.Token,
		apiEndpoint:  c.APIEndpoint,
		fileEndpoint: c.FileEndpoint,
		http:         &http.Client{Transport: tr},
	}
	return nil
}

// Capabilities implements channel.Channel.
func (a *Adapter) Capabilities() channel.Capabilities {
	limit := MaxTextLength
	if a.cfg.TextLimit > 0 {
		limit = int(a.cfg.TextLimit)
	}
	return channel.Capabilities{
		MaxTextLength: limit,
		LengthUnit:    channel.LengthUTF16,
		Markup:        channel.MarkupHTMLSubset,
		Threads:       true,
		Groups:        true,
		MediaIn: []channel.MediaKind{channel.MediaImage, channel.MediaDocument, channel.MediaVoice,
			channel.MediaAudio, channel.MediaVideo, channel.MediaSticker},
		// Images go out as photos, OGG voice notes as voice messages,
		// everything else as documents.
		MediaOut: []channel.MediaKind{channel.MediaImage, channel.MediaDocument, channel.MediaAudio,
			channel.MediaVoice, channel.MediaVideo},
		// Inline keyboards out, callback queries in.
		Buttons: true,
		// The cloud Bot API's upload limit (a document; photos 10 MB).
		MaxFileBytes: maxDocumentBytes,
		// sendChatAction shows "typing" for 5 s (or until a message).
		VoiceNoteFormat: channel.VoiceNoteOggOpus,
		TypingLifetime:  5 * time.Second,
		TypingLapses:    true, // sendChatAction has no "off"
		IDForms:         IDForms,
		// A private chat's id is its user's id.
		DirectToSender: true,
	}
}

// Run implements channel.Channel. It first learns the bot's identity
// (getMe, retried with backoff while the network or the token fails), then
// receives by long polling, or by webhook when webhook_listen is set.
//
// What each failure means for the operator is reported to the host as the
// plugin's status (status.go): a rejected token as needs_attention, an
// unreachable API as degraded, success as ready.
//
// Failures of the Bot API never end Run: network errors and 5xx are retried
// with a backoff capped at 30s, 409 Conflict (a second poller or a webhook)
// at 1m, and 401 Unauthorized — a rejected token, which only a config change
// (and thus a plugin restart) can fix — at 10m, each time logged as an
// error. Returning instead would make the host restart the plugin in a loop
// that hammers the API with the same bad token. Run returns nil when ctx
// ends, and an error only when the webhook listener cannot be opened.
func (a *Adapter) Run(ctx context.Context, inbox channel.Inbox) error {
	if a.api == nil {
		return errors.New("telegram: run before configure")
	}
	if err := a.identify(ctx); err != nil {
		return nil // ctx ended
	}
	if a.cfg.WebhookListen != "" {
		return a.runWebhook(ctx, inbox)
	}
	return a.poll(ctx, inbox)
}

// identify calls getMe until it succeeds or ctx ends.
func (a *Adapter) identify(ctx context.Context) error {
	r := newRetrier(a)
	for {
		raw, err := a.callTimeout(ctx, "getMe", nil, callTimeout)
		if err == nil {
			var u struct {
				ID       int64  `json:"id"`
				Username string `json:"username"`
			}
			if err = json.Unmarshal(raw, &u); err == nil && u.ID != 0 {
				a.me.Store(&self{ID: u.ID, Username: u.Username})
				a.log.Info("connected to telegram", "bot", "@"+u.Username, "bot_id", u.ID)
				a.reportReady()
				return nil
			}
			err = &apiError{Method: "getMe", Description: "malformed answer"}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err := r.wait(ctx, err); err != nil {
			return err
		}
	}
}

// poll is the getUpdates loop. The offset advances past a batch only after
// the host stored it (channel.Offer returned nil): until then Telegram
// keeps the updates and sends them again, so a crash of the plugin or the
// host loses nothing. A host that cannot store them refuses at once, and
// the batch is fetched again after the host's delay.
func (a *Adapter) poll(ctx context.Context, inbox channel.Inbox) error {
	timeout := int(a.cfg.PollTimeout)
	r := newRetrier(a)
	offset := 0
	for ctx.Err() == nil {
		params := map[string]string{
			"timeout":         strconv.Itoa(timeout),
			"allowed_updates": allowedUpdates,
		}
		if offset != 0 {
			params["offset"] = strconv.Itoa(offset)
		}
		raw, err := a.callTimeout(ctx, "getUpdates", params, time.Duration(timeout)*time.Second+pollSlack)
		var items []json.RawMessage
		if err == nil {
			if jerr := json.Unmarshal(raw, &items); jerr != nil {
				err = &apiError{Method: "getUpdates", Description: "malformed answer"}
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if r.wait(ctx, err) != nil {
				return nil
			}
			continue
		}
		r.reset()
		a.reportReady()
		msgs, presses, next := a.mapBatch(items)
		if next <= offset {
			if timeout == 0 {
				// Short polling (poll_timeout = 0) answers at once: pause
				// instead of spinning against the API.
				if a.sleep(ctx, shortPollPause) != nil {
					return nil
				}
			}
			continue
		}
		if len(msgs) > 0 {
			if err := channel.Offer(ctx, inbox, msgs...); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				d := r.deliver.next()
				var ce *channel.Error
				if errors.As(err, &ce) && ce.RetryAfter > d {
					d = ce.RetryAfter // the host's delay: its store keeps failing
				}
				a.log.Warn("host did not store the messages; fetching them again", "error", err, "retry_in", d)
				if a.sleep(ctx, d) != nil {
					return nil
				}
				continue // offset unchanged: getUpdates returns the batch again
			}
			r.deliver.reset()
			a.answerPresses(ctx, presses)
		}
		offset = next
	}
	return nil
}

// mapBatch maps a getUpdates result. It returns the messages for the host,
// the ids of the button presses among them (to answer once the host stored
// them) and the offset that confirms the batch.
func (a *Adapter) mapBatch(items []json.RawMessage) (msgs []channel.InboundMessage, presses []string, next int) {
	me := *a.me.Load()
	for _, raw := range items {
		u, err := decodeUpdate(raw)
		if u.UpdateID >= next {
			next = u.UpdateID + 1
		}
		if err != nil {
			a.log.Warn("skipping an update that does not decode", "update_id", u.UpdateID, "error", err)
			continue
		}
		m, press, ok := a.inbound(u, me, raw)
		if !ok {
			continue
		}
		msgs = append(msgs, m)
		if press != "" {
			presses = append(presses, press)
		}
	}
	return msgs, presses, next
}

// inbound maps one update for the host: a message, or a button press,
// whose callback query id it returns as press. ok is false, with a debug
// line, for updates that carry nothing for the host.
func (a *Adapter) inbound(u update, me self, raw json.RawMessage) (in channel.InboundMessage, press string, ok bool) {
	if q := u.CallbackQuery; q != nil {
		if in, ok = pressOf(q, a.now()); ok {
			return in, q.ID, true
		}
		a.log.Debug("ignoring a callback query that is not a press under a message of the bot (inline mode or a game)",
			"update_id", u.UpdateID, "has_message", q.Message != nil, "has_data", q.Data != "")
		return in, "", false
	}
	if in, ok = toInbound(u, me); !ok {
		a.log.Debug("ignoring an update with nothing for the agent", "update_id", u.UpdateID, "kinds", updateKinds(raw))
	}
	return in, "", ok
}

// answerPresses answers the callback queries of presses the host stored,
// which stops the spinner on the pressed buttons. A failure only costs the
// user a spinner until Telegram's timeout: it is logged, not retried.
func (a *Adapter) answerPresses(ctx context.Context, ids []string) {
	for _, id := range ids {
		if ctx.Err() != nil {
			return
		}
		_, err := a.callTimeout(ctx, "answerCallbackQuery", map[string]string{"callback_query_id": id}, answerTimeout)
		if err != nil && ctx.Err() == nil {
			a.log.Warn("could not answer a button press; its spinner runs until Telegram gives up", "callback_query_id", id, "error", err)
		}
	}
}

func (a *Adapter) callTimeout(ctx context.Context, method string, params map[string]string, d time.Duration) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return a.api.call(ctx, method, params)
}

// policy is an exponential backoff without jitter (one bot, one poller:
// there is no herd to spread).
type policy struct {
	min, max time.Duration
	cur      time.Duration
}

func (p *policy) next() time.Duration {
	switch {
	case p.cur == 0:
		p.cur = p.min
	case p.cur*2 > p.max:
		p.cur = p.max
	default:
		p.cur *= 2
	}
	return p.cur
}

func (p *policy) reset() { p.cur = 0 }

// retrier classifies receive-loop failures, logs them and waits.
type retrier struct {
	a                            *Adapter
	net, conflict, auth, deliver policy
}

func newRetrier(a *Adapter) *retrier {
	return &retrier{a: a, net: netPolicy, conflict: conflictPolicy, auth: authPolicy, deliver: deliverPolicy}
}

func (r *retrier) reset() {
	r.net.reset()
	r.conflict.reset()
	r.auth.reset()
}

// wait logs err, reports what it means to the host, and sleeps for the
// delay its class calls for.
func (r *retrier) wait(ctx context.Context, err error) error {
	r.a.reportFailure(err)
	d := r.delay(err)
	return r.a.sleep(ctx, d)
}

func (r *retrier) delay(err error) time.Duration {
	log := r.a.log
	var e *apiError
	if !errors.As(err, &e) {
		d := r.net.next()
		log.Warn("telegram call failed", "error", err, "retry_in", d)
		return d
	}
	switch {
	case e.Code == http.StatusUnauthorized:
		d := r.auth.next()
		log.Error("telegram rejected the bot token (401 Unauthorized): check the token in the config", "method", e.Method, "retry_in", d)
		return d
	case e.Code == http.StatusNotFound:
		d := r.auth.next()
		log.Error("telegram answered 404 Not Found: the token is malformed or api_endpoint is wrong", "method", e.Method, "retry_in", d)
		return d
	case e.Code == http.StatusConflict:
		d := r.conflict.next()
		log.Error("telegram refused getUpdates (409 Conflict): another instance polls with this token, or a webhook is set (deleteWebhook, or use webhook_listen)",
			"detail", e.Description, "retry_in", d)
		return d
	case e.Code == http.StatusTooManyRequests && e.RetryAfter > 0:
		log.Warn("telegram rate limit", "method", e.Method, "retry_in", e.RetryAfter)
		return e.RetryAfter
	default:
		d := r.net.next()
		log.Warn("telegram call failed", "error", e.Error(), "retry_in", d)
		return d
	}
}
