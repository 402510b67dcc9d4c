package whatsapp

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/store"
	"go.mau.fi/whatsmeow/store/sqlstore"
	"go.mau.fi/whatsmeow/types"

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
	_ channel.MediaDownloader = (*Adapter)(nil)
)

// Plugin is the whatsapp plugin as sdk.Serve wants it:
//
//	func main() { os.Exit(sdk.Serve(whatsapp.Plugin())) }
func Plugin() sdk.Plugin {
	a := New()
	return sdk.Plugin{
		Name:      "whatsapp",
		Version:   Version,
		Schema:    Schema,
		Validate:  Validate,
		Configure: a.Configure,
		Probe:     Probe,
		Channel:   a,
		Retry:     a.Retry,
	}
}

// Adapter is the WhatsApp channel. Create it with New, then Configure it
// once; Run, Send and the optional capabilities may then be used
// concurrently.
type Adapter struct {
	set       settings
	instance  string
	log       *slog.Logger
	status    status.Reporter
	db        *sql.DB
	container *sqlstore.Container
	sent      *sentLog
	pace      *pacer
	recent    *recentInbound

	// now is the clock; after waits for QR rotation; sleep waits between
	// connection attempts. Tests replace them.
	now   func() time.Time
	after func(time.Duration) <-chan time.Time
	sleep func(ctx context.Context, d time.Duration) error

	retry chan struct{} // the operator asked to try again (sdk Retry)
	inbox channel.Inbox // set by Run before the first connection

	sess        atomic.Pointer[session]  // the current connection's client
	me          atomic.Pointer[identity] // who the account is
	connectedAt atomic.Int64             // unix nanoseconds of the last Connected; 0 while disconnected

	groupMu    sync.Mutex
	groupNames map[types.JID]string
}

// New returns an unconfigured Adapter.
func New() *Adapter {
	return &Adapter{
		log:        slog.New(slog.DiscardHandler),
		status:     status.Discard,
		now:        time.Now,
		after:      time.After,
		sleep:      channel.Sleep,
		retry:      make(chan struct{}, 1),
		recent:     newRecentInbound(2000),
		groupNames: map[types.JID]string{},
	}
}

// Configure decodes and validates the config {} block and opens the
// device store in the data dir. It does not touch the network: Run links
// or connects in the background.
func (a *Adapter) Configure(ctx context.Context, cfg schema.Config) error {
	s, err := decodeConfig(cfg)
	if err != nil {
		return err
	}
	a.set, a.instance = s, cfg.Instance
	if cfg.Logger != nil {
		a.log = cfg.Logger
	}
	signalLog.Store(a.log.With("component", "signal"))
	if cfg.Status != nil {
		a.status = cfg.Status
	}
	if s.server != "" {
		a.log.Warn("connecting to a test server instead of WhatsApp", "server_address", s.server)
	}
	applyGlobals(s)

	db, container, err := openStore(ctx, cfg.DataDir, newWALogger(a.log.With("component", "store")))
	if err != nil {
		return err
	}
	sent, err := loadSent(ctx, db, a.now)
	if err != nil {
		db.Close()
		return err
	}
	a.db, a.container, a.sent = db, container, sent
	a.pace = &pacer{min: s.pacingMin, max: s.pacingMax, now: a.now, rand: rand.Float64, sleep: a.sleep}
	a.log.Info("configured", "settings", s.String(), "web_version", store.GetWAVersion().String())
	return nil
}

// globalsMu guards whatsmeow's process-wide settings.
var globalsMu sync.Mutex

// applyGlobals sets what whatsmeow keeps in package variables: the device
// name shown on the phone, the web version, and (tests only) the trusted
// root key. A plugin process serves one instance, so they are its own;
// values already in place are not written again, so that instances in one
// test process do not race with each other's connections.
func applyGlobals(s settings) {
	globalsMu.Lock()
	defer globalsMu.Unlock()
	if s.server != "" && whatsmeow.WACertPubKey != s.rootKey {
		trustTestRoot(s.rootKey)
	}
	if !s.webVersion.IsZero() && store.GetWAVersion() != s.webVersion {
		setWebVersion(s.webVersion)
	}
	if store.DeviceProps.GetOs() != s.deviceName {
		store.SetOSInfo(s.deviceName, [3]uint32{0, 1, 0})
	}
}

// setWebVersion announces v instead of the built-in WhatsApp Web version.
// store.SetWAVersion changes the hash sent at registration, but the
// version in the client payload's user agent was copied when the package
// was initialized, so it is replaced as well.
func setWebVersion(v store.WAVersionContainer) {
	store.SetWAVersion(v)
	store.BaseClientPayload.UserAgent.AppVersion = v.ProtoAppVersion()
}

// Capabilities implements channel.Channel.
func (a *Adapter) Capabilities() channel.Capabilities {
	return channel.Capabilities{
		MaxTextLength: MaxTextLength,
		LengthUnit:    channel.LengthUTF16,
		Markup:        channel.MarkupLightweight,
		DisplayName:   "WhatsApp",
		Groups:        true,
		MaxFileBytes:  maxUploadBytes,
		// The "composing" presence: phones drop it after about 25 s
		// without another; 10 s leaves room for a slow phone.
		VoiceNoteFormat: channel.VoiceNoteOggOpus,
		TypingLifetime:  10 * time.Second,
		MediaIn: []channel.MediaKind{channel.MediaImage, channel.MediaDocument, channel.MediaVoice,
			channel.MediaAudio, channel.MediaVideo, channel.MediaSticker},
		MediaOut: []channel.MediaKind{channel.MediaImage, channel.MediaDocument, channel.MediaAudio,
			channel.MediaVoice, channel.MediaVideo},
		IDForms: IDForms,
		// A person's chat id is their number.
		DirectToSender: true,
	}
}

// Retry is sdk.Plugin.Retry: after linking timed out or a terminal event
// (needs_attention), connect again — with a new device and QR code when
// the account logged this one out.
func (a *Adapter) Retry(context.Context) error {
	select {
	case a.retry <- struct{}{}:
	default:
	}
	return nil
}

// Run implements channel.Channel: it links or connects and keeps the
// connection until ctx ends; whatsmeow reconnects by itself after a
// dropped connection. What only a person can fix (a QR code nobody
// scanned, a device logged out, another session, a ban, an outdated
// client) is reported as needs_attention; Run then waits for Retry or
// the end instead of connecting again by itself.
func (a *Adapter) Run(ctx context.Context, inbox channel.Inbox) error {
	if a.container == nil {
		return errors.New("whatsapp: run before configure")
	}
	a.inbox = inbox
	defer a.db.Close()
	failures := 0
	for {
		end := a.runSession(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if end.kind == endConnectError {
			failures++
			d := connectBackoff(failures)
			a.log.Warn("cannot connect to WhatsApp; trying again", "error", end.err, "in", d)
			a.status.Report(status.Status{State: status.Degraded, Message: "Cannot connect to WhatsApp (" + end.err.Error() + "); trying again by itself."})
			if a.sleep(ctx, d) != nil {
				return nil
			}
			continue
		}
		failures = 0
		a.reportEnd(end)
		select {
		case <-ctx.Done():
			return nil
		case <-a.retry:
			a.log.Info("the operator asked to try again")
		}
	}
}

// connectBackoff is the pause after the n-th failed connection in a row:
// 2 s doubling to at most 2 minutes.
func connectBackoff(n int) time.Duration {
	d := 2 * time.Second
	for i := 1; i < n && d < 2*time.Minute; i++ {
		d *= 2
	}
	return min(d, 2*time.Minute)
}

// cutoff is the time before which messages are a backlog: the last
// connection (or now, while connecting) minus backlog_margin.
func (a *Adapter) cutoff() time.Time {
	at := a.now()
	if c := a.connectedAt.Load(); c != 0 {
		at = time.Unix(0, c)
	}
	return at.Add(-a.set.backlogMargin)
}

// recentInbound remembers who wrote the latest inbound messages and what,
// so that a reply can quote its trigger as WhatsApp shows quotes.
type recentInbound struct {
	mu    sync.Mutex
	max   int
	order []string
	byID  map[string]quoted
}

type quoted struct {
	chat, sender types.JID
	text         string
}

func newRecentInbound(max int) *recentInbound {
	return &recentInbound{max: max, byID: map[string]quoted{}}
}

func (r *recentInbound) put(id string, q quoted) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.byID[id]; !ok {
		r.order = append(r.order, id)
	}
	r.byID[id] = q
	for len(r.order) > r.max {
		delete(r.byID, r.order[0])
		r.order = r.order[1:]
	}
}

func (r *recentInbound) get(id string) (quoted, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	q, ok := r.byID[id]
	return q, ok
}
