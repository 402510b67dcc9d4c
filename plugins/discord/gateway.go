package discord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/status"
)

// The plugin runs its own gateway client rather than discordgo's: it must
// keep the session id and sequence number in its data dir (discordgo keeps
// them unexported), advance the sequence only once a message is saved for
// the host, see close codes (discordgo retries a rejected token forever
// without saying why) and control when it identifies. discordgo serves the
// REST calls and the event types.

// Gateway intents (Discord's bits).
const (
	intentGuilds         = 1 << 0
	intentGuildMessages  = 1 << 9
	intentDirectMessages = 1 << 12
	intentMessageContent = 1 << 15
)

// Backoff of reconnects after failed attempts; the first reconnect after
// a healthy session is immediate.
const (
	backoffMin = time.Second
	backoffMax = 2 * time.Minute
	// dialTimeout bounds the websocket handshake and the HELLO.
	dialTimeout = 20 * time.Second
	// backfillTimeout bounds reading channels back after a lost session.
	backfillTimeout = 30 * time.Second
)

// gatewayVersion is the gateway and REST API version.
const gatewayVersion = "9"

// fatalClose are the close codes only a person can fix, with what to do.
var fatalClose = map[int]string{
	4004: "Discord rejected the bot token (4004 Authentication failed): copy the token from the Developer Portal (Bot → Reset Token) into the token setting, then reload",
	4010: "Discord refused the shard (4010 Invalid shard); this should not happen with one connection",
	4011: "the bot is in too many servers for one connection (4011 Sharding required); clawhost does not shard",
	4012: "Discord refused the gateway version (4012 Invalid API version): update clawhost",
	4013: "Discord refused the intents (4013 Invalid intent(s)): update clawhost",
	4014: "the Message Content intent is not enabled for this bot (4014 Disallowed intent(s)): enable it in the Developer Portal (Bot → Privileged Gateway Intents → Message Content Intent), or set message_content = false for mention-only mode",
}

// closeErr is how a connection ended.
type closeErr struct {
	// code is the websocket close code, 0 for none (a network error).
	code int
	// resume: the session survives; reconnect with RESUME.
	resume bool
	// healthy: the connection had been READY or RESUMED, so the next
	// attempt is immediate.
	healthy bool
	err     error
}

func (e *closeErr) Error() string { return e.err.Error() }

// intents returns the intents the plugin identifies with.
func (a *Adapter) intents() int {
	i := intentGuilds | intentGuildMessages | intentDirectMessages
	if *a.cfg.MessageContent {
		i |= intentMessageContent
	}
	return i
}

// connectLoop keeps a gateway connection until ctx ends.
func (a *Adapter) connectLoop(ctx context.Context) {
	backoff := time.Duration(0)
	var lastIdentify time.Time
	failures := 0
	for ctx.Err() == nil {
		ce := a.connect(ctx, &lastIdentify)
		if ctx.Err() != nil {
			return
		}
		if msg, fatal := fatalClose[ce.code]; fatal {
			a.log.Error("gateway closed the connection; not reconnecting until the problem is fixed", "code", ce.code)
			att := &status.Attention{Kind: status.Link, Data: a.portalURL()}
			if ce.code == 4014 || ce.code == 4013 {
				att.Retry = "Reconnect"
			}
			a.status.Report(status.Status{State: status.NeedsAttention, Message: msg, Attention: att})
			select {
			case <-ctx.Done():
				return
			case <-a.retry:
				a.log.Info("reconnecting on the operator's request")
				backoff, failures = 0, 0
				continue
			}
		}
		if !ce.resume {
			if err := a.state.clearSession(); err != nil {
				a.log.Error("could not save the state", "error", err)
			}
		}
		switch {
		case ce.healthy:
			backoff, failures = 0, 0
		case backoff == 0:
			backoff = backoffMin
		default:
			backoff = min(backoff*2, backoffMax)
		}
		if !ce.healthy {
			failures++
		}
		if failures >= 3 {
			a.status.Report(status.Status{State: status.Degraded, Message: "cannot connect to the Discord gateway; retrying: " + ce.Error()})
		}
		// Jitter spreads reconnects; the first one after a healthy
		// session is immediate.
		d := backoff
		if d > 0 {
			d += rand.N(d / 4)
		}
		a.log.Info("gateway connection ended; reconnecting", "error", ce.err, "code", ce.code, "resume", ce.resume, "in", d)
		if a.sleep(ctx, d) != nil {
			return
		}
	}
}

// portalURL is the bot's page in the Developer Portal.
func (a *Adapter) portalURL() string {
	if me := a.me.Load(); me != nil && me.AppID != "" {
		return "https://discord.com/developers/applications/" + me.AppID + "/bot"
	}
	return "https://discord.com/developers/applications"
}

type gwPayload struct {
	Op int             `json:"op"`
	D  json.RawMessage `json:"d"`
	S  int64           `json:"s"`
	T  string          `json:"t"`
}

// conn is one gateway connection.
type conn struct {
	ws  *websocket.Conn
	wmu sync.Mutex // one writer per websocket
	seq atomic.Int64
	ack atomic.Bool
}

func (c *conn) send(v any) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_ = c.ws.SetWriteDeadline(time.Now().Add(10 * time.Second))
	return c.ws.WriteJSON(v)
}

// closeResumable closes without ending the session on Discord's side
// (1000 and 1001 would end it).
func (c *conn) closeResumable() {
	c.wmu.Lock()
	_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(4000, "reconnecting"), time.Now().Add(time.Second))
	c.wmu.Unlock()
	_ = c.ws.Close()
}

// gatewayURL returns where to connect: the session's resume URL, else the
// URL Discord names in /gateway/bot.
func (a *Adapter) gatewayURL(ctx context.Context, resumeURL string) (string, error) {
	if resumeURL != "" {
		return resumeURL, nil
	}
	opt, cancel := a.call(ctx, callTimeout)
	defer cancel()
	g, err := a.rest.GatewayBot(opt)
	if err != nil {
		return "", fmt.Errorf("discover the gateway: %w", mapErr(err))
	}
	return g.URL, nil
}

// connect runs one connection: HELLO, IDENTIFY or RESUME, then dispatches
// until it ends.
func (a *Adapter) connect(ctx context.Context, lastIdentify *time.Time) *closeErr {
	sessionID, resumeURL, seq := a.state.session()
	resuming := sessionID != ""
	u, err := a.gatewayURL(ctx, resumeURL)
	if err != nil {
		// A rejected token already fails discovery (401).
		if channel.CodeOf(err) == channel.CodeUnauthorized {
			return &closeErr{code: 4004, err: err}
		}
		return &closeErr{resume: resuming, err: err}
	}
	dialer := websocket.Dialer{HandshakeTimeout: dialTimeout, Proxy: http.ProxyFromEnvironment}
	dctx, cancel := context.WithTimeout(ctx, dialTimeout)
	ws, _, err := dialer.DialContext(dctx, strings.TrimRight(u, "/")+"/?v="+gatewayVersion+"&encoding=json", nil)
	cancel()
	if err != nil {
		return &closeErr{resume: resuming, err: fmt.Errorf("dial the gateway: %w", err)}
	}
	c := &conn{ws: ws}
	c.seq.Store(seq)
	defer ws.Close()
	// ctx ending closes the socket, which ends the read loop.
	stop := context.AfterFunc(ctx, func() { c.closeResumable() })
	defer stop()

	interval, err := readHello(ws)
	if err != nil {
		return a.ended(err, resuming, false)
	}
	if cerr := a.introduce(ctx, c, sessionID, seq, lastIdentify); cerr != nil {
		return cerr
	}
	hbCtx, hbStop := context.WithCancel(ctx)
	defer hbStop()
	c.ack.Store(true)
	go a.heartbeat(hbCtx, c, interval)
	return a.serveConn(ctx, c)
}

// readHello reads the gateway's HELLO within dialTimeout and returns its
// heartbeat interval.
func readHello(ws *websocket.Conn) (time.Duration, error) {
	_ = ws.SetReadDeadline(time.Now().Add(dialTimeout))
	var hello struct {
		HeartbeatInterval int64 `json:"heartbeat_interval"`
	}
	p, err := readPayload(ws)
	if err == nil && p.Op != 10 {
		err = fmt.Errorf("gateway sent op %d before HELLO", p.Op)
	}
	if err == nil {
		err = json.Unmarshal(p.D, &hello)
	}
	if err == nil && hello.HeartbeatInterval <= 0 {
		err = fmt.Errorf("gateway sent a HELLO without a heartbeat interval")
	}
	if err != nil {
		return 0, err
	}
	_ = ws.SetReadDeadline(time.Time{})
	return time.Duration(hello.HeartbeatInterval) * time.Millisecond, nil
}

// introduce sends RESUME for a known session, else IDENTIFY, keeping
// identifyGap between two IDENTIFYs.
func (a *Adapter) introduce(ctx context.Context, c *conn, sessionID string, seq int64, lastIdentify *time.Time) *closeErr {
	resuming := sessionID != ""
	var err error
	if resuming {
		a.log.Debug("resuming the gateway session", "seq", seq)
		err = c.send(map[string]any{"op": 6, "d": map[string]any{"token": a.cfg.Token, "session_id": sessionID, "seq": seq}})
	} else {
		if wait := a.identifyGap - a.now().Sub(*lastIdentify); wait > 0 {
			if a.sleep(ctx, wait) != nil {
				return &closeErr{err: ctx.Err()}
			}
		}
		*lastIdentify = a.now()
		err = c.send(map[string]any{"op": 2, "d": map[string]any{
			"token":      a.cfg.Token,
			"intents":    a.intents(),
			"properties": map[string]string{"os": "linux", "browser": "clawhost", "device": "clawhost"},
		}})
	}
	if err != nil {
		return a.ended(err, resuming, false)
	}
	return nil
}

// serveConn dispatches the gateway's payloads until the connection ends.
func (a *Adapter) serveConn(ctx context.Context, c *conn) *closeErr {
	healthy := false
	for {
		p, err := readPayload(c.ws)
		if err != nil {
			return a.ended(err, true, healthy)
		}
		switch p.Op {
		case 0:
			ready, err := a.dispatch(ctx, c, p)
			if err != nil {
				a.log.Error("could not save the state", "error", err)
			}
			healthy = healthy || ready
		case 1:
			_ = c.send(map[string]any{"op": 1, "d": seqOrNull(c.seq.Load())})
		case 7:
			a.log.Info("gateway asked to reconnect (op 7)")
			c.closeResumable()
			return &closeErr{resume: true, healthy: true, err: errors.New("op 7 reconnect")}
		case 9:
			var resumable bool
			_ = json.Unmarshal(p.D, &resumable)
			a.log.Info("gateway invalidated the session (op 9)", "resumable", resumable)
			c.closeResumable()
			if !resumable {
				// Discord asks for a pause of 1–5 s before identifying.
				if a.sleep(ctx, a.invalidPause()) != nil {
					return &closeErr{err: ctx.Err()}
				}
			}
			return &closeErr{resume: resumable, healthy: true, err: errors.New("op 9 invalid session")}
		case 11:
			c.ack.Store(true)
		}
	}
}

// ended classifies a read error.
func (a *Adapter) ended(err error, resume, healthy bool) *closeErr {
	if err == nil {
		err = errors.New("gateway handshake failed")
	}
	var ce *websocket.CloseError
	if errors.As(err, &ce) {
		switch ce.Code {
		case 4007, 4009: // invalid seq, session timed out: identify anew
			return &closeErr{code: ce.Code, healthy: healthy, err: err}
		}
		return &closeErr{code: ce.Code, resume: resume, healthy: healthy, err: err}
	}
	return &closeErr{resume: resume, healthy: healthy, err: err}
}

func readPayload(ws *websocket.Conn) (gwPayload, error) {
	var p gwPayload
	_, b, err := ws.ReadMessage()
	if err != nil {
		return p, err
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return p, fmt.Errorf("decode gateway payload: %w", err)
	}
	return p, nil
}

// heartbeat beats every interval (the first after a random fraction of
// it, as Discord asks) and closes a connection whose last beat was not
// acknowledged: a zombie that would otherwise miss messages silently.
func (a *Adapter) heartbeat(ctx context.Context, c *conn, interval time.Duration) {
	// The server's interval paces this, not the injected sleep (which tests
	// use to make backoff instant).
	first := time.Duration(rand.Int64N(int64(interval)))
	if channel.Sleep(ctx, first) != nil {
		return
	}
	for {
		if !c.ack.Swap(false) {
			a.log.Warn("no heartbeat acknowledgement; reconnecting")
			c.closeResumable()
			return
		}
		if err := c.send(map[string]any{"op": 1, "d": seqOrNull(c.seq.Load())}); err != nil {
			return
		}
		if channel.Sleep(ctx, interval) != nil {
			return
		}
	}
}

// seqOrNull is a heartbeat's d: the last sequence, null before the first.
func seqOrNull(s int64) any {
	if s == 0 {
		return nil
	}
	return s
}
