// Package matrix is clawhost's Matrix channel plugin, on
// maunium.net/go/mautrix: a bot account on any homeserver, its rooms and
// DMs as chats, threads (m.thread) as topics, replies as HTML, encrypted
// rooms with mautrix's pure-Go crypto (build with -tags goolm).
package matrix

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/id"

	"github.com/clawhost/clawhost/sdk"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/schema"
	"github.com/clawhost/clawhost/sdk/status"
)

// Version is the plugin's version.
const Version = "0.1.0"

// Compile-time checks of the optional capabilities.
var (
	_ channel.Channel = (*Adapter)(nil)
	_ channel.Typer   = (*Adapter)(nil)
	_ channel.Editor  = (*Adapter)(nil)
	_ channel.Reactor = (*Adapter)(nil)
)

// Timeouts.
const (
	// pollTimeout is the long poll of /sync, in milliseconds.
	pollTimeout = 30000
	// callTimeout bounds one request (a sync: the poll and this).
	callTimeout = 60 * time.Second
	// typingLifetime is how long a typing notification is asked to last.
	typingLifetime = 30 * time.Second
	backoffMin     = time.Second
	backoffMax     = 2 * time.Minute
	// maxRateWaits is how many M_LIMIT_EXCEEDED answers one call waits
	// out before it fails.
	maxRateWaits = 5
)

// IDForms: user ids (@alice:example.org) and room ids (!abc:example.org)
// as the homeserver reports them.
var IDForms = []channel.IDForm{
	{Pattern: `@[a-z0-9._=/+-]+:[A-Za-z0-9.-]+(?::[0-9]+)?`, Hint: "a Matrix user id such as @alice:example.org"},
	{Pattern: `![A-Za-z0-9._~-]+:[A-Za-z0-9.-]+(?::[0-9]+)?`, Hint: "a Matrix room id such as !abcdef:example.org (room settings → Advanced)"},
}

// Setup is what `clawhost init` shows before it asks for the settings.
const Setup = `Matrix: make an account for the bot on your homeserver (Element: Create account),
then give clawhost its Matrix id and either its access token (Element, logged in as
the bot: Settings → Help & About → Access Token) or its password: with a password the
plugin logs in once and keeps its device in its state directory.
Encryption: the bot's device is cross-signed from a recovery key. For an account without
cross-signing leave recovery_key empty: on its first start the plugin makes the keys and
writes their recovery key to matrix-recovery-key.txt (0600) in its state directory (most
homeservers want the password for that, also beside an access token). For an account
that has cross-signing already, give its recovery key (Element: the Security Key).
Invite the bot to a room or a DM: the access block decides (owners and allow_from
are joined; a stranger's DM under dm_policy "pairing" is joined and gets a code).`

// Plugin is the matrix plugin as sdk.Serve wants it.
func Plugin() sdk.Plugin {
	a := New()
	return sdk.Plugin{
		Name:      "matrix",
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

// Adapter is the Matrix channel.
type Adapter struct {
	cfg    Config
	log    *slog.Logger
	status status.Reporter
	st     *store
	http   *http.Client
	sleep  func(ctx context.Context, d time.Duration) error
	retry  chan struct{}

	// loginMu makes one login at a time (Run's and a Send's before it).
	loginMu sync.Mutex
	mu      sync.Mutex
	cli     *mautrix.Client // set once logged in (sync.go)
	// e2ee is the device's encryption (crypto.go); nil without a state
	// directory.
	e2ee *e2ee
	// noCrypto says why encryption is off ("" when it is on).
	noCrypto string
	// noTrust says why the device is not cross-signed ("" when it is),
	// trustFailed whether that is a failure (degraded) rather than a
	// setting (crosssign.go).
	noTrust     string
	trustFailed bool
	// keyFile is the file of the recovery key the device was
	// cross-signed with when recovery_key is not set (told in the status).
	keyFile string
	// backupErr is why the last key backup failed ("" when it worked).
	backupErr string
	// name is the bot's display name (mentions by name).
	name string
	// maxUpload is the homeserver's upload limit once asked (mediarepo.go).
	maxUpload int64
	// rooms caches what is known of a room (members count, name).
	rooms map[id.RoomID]*roomInfo
	// reacted is the bot's own reaction event per message and emoji, so a
	// Remove redacts it.
	reacted map[string]id.EventID
	// own are event ids the bot sent (send.go).
	own map[id.EventID]bool
	// questions are the messages with buttons (buttons.go), lastQ each
	// room's latest.
	questions map[id.EventID]*question
	lastQ     map[id.RoomID]id.EventID
}

type roomInfo struct {
	members int
	name    string
}

// New returns an unconfigured Adapter.
func New() *Adapter {
	return &Adapter{
		log:     slog.New(slog.DiscardHandler),
		status:  status.Discard,
		sleep:   channel.Sleep,
		retry:   make(chan struct{}, 1),
		rooms:   map[id.RoomID]*roomInfo{},
		reacted: map[string]id.EventID{},
		lastQ:   map[id.RoomID]id.EventID{},
	}
}

// Configure decodes the config {} block and opens the state; it does not
// touch the network.
func (a *Adapter) Configure(_ context.Context, cfg schema.Config) error {
	c, err := decodeConfig(cfg)
	if err != nil {
		return err
	}
	a.cfg = c
	if cfg.Logger != nil {
		a.log = cfg.Logger
	}
	if cfg.Status != nil {
		a.status = cfg.Status
	}
	st, err := openStore(cfg.DataDir)
	if err != nil {
		return err
	}
	a.st = st
	if err := st.begin(c.UserID, time.Now()); err != nil {
		return err
	}
	a.http = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	return nil
}

// Capabilities implements channel.Channel.
func (a *Adapter) Capabilities() channel.Capabilities {
	return channel.Capabilities{
		MaxTextLength:  MaxTextLength,
		LengthUnit:     channel.LengthBytes,
		MaxFileBytes:   MaxFileBytes,
		Markup:         channel.MarkupRichHTML,
		DisplayName:    "Matrix",
		Threads:        true,
		Buttons:        true,
		Groups:         true,
		MediaIn:        []channel.MediaKind{channel.MediaImage, channel.MediaDocument, channel.MediaAudio, channel.MediaVideo},
		MediaOut:       []channel.MediaKind{channel.MediaImage, channel.MediaDocument, channel.MediaAudio, channel.MediaVideo},
		TypingLifetime: typingLifetime,
		IDForms:        IDForms,
	}
}

// Retry is sdk.Plugin.Retry: after a refused token, try again.
func (a *Adapter) Retry(context.Context) error {
	select {
	case a.retry <- struct{}{}:
	default:
	}
	return nil
}

// client is the logged-in client; nil before Run logged in.
func (a *Adapter) client() *mautrix.Client {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.cli
}

// attention reports msg as needs_attention and waits for Retry or ctx.
func (a *Adapter) attention(ctx context.Context, msg string) bool {
	a.log.Error("the homeserver refused the bot; not retrying until the problem is fixed", "problem", msg)
	a.status.Report(status.Status{State: status.NeedsAttention, Message: msg,
		Attention: &status.Attention{Kind: status.Link, Data: a.cfg.Homeserver, Retry: "Reconnect"}})
	select {
	case <-ctx.Done():
		return false
	case <-a.retry:
		return true
	}
}

// refused is what the operator must do when err is the homeserver
// refusing the bot's credentials; "" for other errors.
func refused(err error) string {
	switch {
	case errors.Is(err, mautrix.MUnknownToken), errors.Is(err, mautrix.MMissingToken):
		return "the homeserver refused the bot's access token (M_UNKNOWN_TOKEN): set a fresh access_token (Element, logged in as the bot: Settings → Help & About → Access Token) or password, then reload"
	case errors.Is(err, mautrix.MForbidden):
		return "the homeserver refused the bot's login (M_FORBIDDEN): check user_id and password, then reload"
	case errors.Is(err, mautrix.MUserDeactivated):
		return "the bot's account is deactivated (M_USER_DEACTIVATED): use another account"
	}
	return ""
}

// rateWait is how long the homeserver asked to wait when err is
// M_LIMIT_EXCEEDED (retry_after_ms, else 1 s); ok false for other errors.
func rateWait(err error) (time.Duration, bool) {
	var re mautrix.HTTPError
	if !errors.As(err, &re) || re.RespError == nil || re.RespError.ErrCode != mautrix.MLimitExceeded.ErrCode {
		return 0, false
	}
	if ms, ok := re.RespError.ExtraData["retry_after_ms"].(float64); ok && ms > 0 {
		return min(time.Duration(ms)*time.Millisecond, backoffMax), true
	}
	return time.Second, true
}

// call runs f, waiting out the homeserver's rate limit up to maxRateWaits
// times.
func (a *Adapter) call(ctx context.Context, f func(ctx context.Context) error) error {
	for i := 0; ; i++ {
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		err := f(cctx)
		cancel()
		d, limited := rateWait(err)
		if !limited || i >= maxRateWaits {
			return err
		}
		a.log.Info("the homeserver asked to slow down; waiting", "wait", d)
		if err := a.sleep(ctx, d); err != nil {
			return err
		}
	}
}
