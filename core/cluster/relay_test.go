package cluster

import (
	"context"
	"errors"
	"fmt"
	"github.com/clawhost/clawhost/core/internal/tstime"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/gateway"
	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/store/postgres"
	"github.com/clawhost/clawhost/core/store/postgres/pgtest"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/pluginclient"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// TestPlacementSpreadsSessions: new sessions spread evenly over the live
// hosts (the rendezvous hash), a host's sessions stay with it, and only a
// dead host's sessions move when the live set changes.
func TestPlacementSpreadsSessions(t *testing.T) {
	hosts := map[string]bool{"h1": true, "h2": true, "h3": true}
	count := map[string]int{}
	first := map[string]string{}
	for i := range 3000 {
		k := fmt.Sprintf("tg:direct:%d", 5000+i)
		h := pickHost(k, hosts, "h1")
		count[h]++
		first[k] = h
	}
	for h, n := range count {
		if n < 800 || n > 1200 {
			t.Errorf("host %s got %d of 3000 sessions; want about 1000 each: %v", h, n, count)
		}
	}
	delete(hosts, "h3")
	for k, h := range first {
		if got := pickHost(k, hosts, "h1"); h != "h3" && got != h {
			t.Fatalf("session %s moved from live %s to %s when h3 left", k, h, got)
		}
	}
}

// TestPlacementCacheFollowsRestarts: a host caches where a session runs
// only while the same incarnation of that host lives. h1 is stopped and
// restarted between two of h2's reads of the leases; meanwhile a third
// host moved h1's session to h2. h2 must ask the store again (its cache
// said h1, the restarted h1 asks the store and says h2: the two handed
// the session's messages to each other without end in `make chaos`).
// Entries resumed here forget the cache too (Forget).
func TestPlacementCacheFollowsRestarts(t *testing.T) {
	db := &placeDB{rows: map[string]string{"s": "h1", "t": "h1"}}
	t0 := time.Unix(100, 0)
	p := &placement{db: db, id: "h2", live: map[string]time.Time{"h1": t0, "h2": t0}, cache: map[string]placed{}}
	ctx := context.Background()
	for _, k := range []string{"s", "t"} {
		if h, here, err := p.Place(ctx, k); err != nil || h != "h1" || here {
			t.Fatalf("Place(%s) = %s, %v, %v; want h1 elsewhere", k, h, here, err)
		}
	}
	reads := db.reads
	if h, _, _ := p.Place(ctx, "s"); h != "h1" || db.reads != reads {
		t.Fatalf("a second Place read the store (%d reads) or moved (%s)", db.reads-reads, h)
	}
	db.set("s", "h2") // h1 stopped; another host moved its session to h2
	db.set("t", "h2")
	p.setLive(map[string]time.Time{"h1": t0.Add(time.Second), "h2": t0}) // h1 is back under a new lease
	if h, here, err := p.Place(ctx, "s"); err != nil || h != "h2" || !here {
		t.Fatalf("after h1 restarted: Place(s) = %s, %v, %v; want h2 here (the store's answer, not the cache)", h, here, err)
	}
	// Entries handed here, e.g. by a host whose cache said so: Forget
	// asks the store for a session cached elsewhere, and keeps a cached
	// "here" (a session leaves a host only with its lease).
	db.set("u", "h1")
	if h, _, _ := p.Place(ctx, "u"); h != "h1" {
		t.Fatalf("Place(u) = %s; want h1 from the store", h)
	}
	db.set("u", "h2")
	if h, _, _ := p.Place(ctx, "u"); h != "h1" {
		t.Fatalf("Place(u) = %s; want h1 from the cache", h)
	}
	p.Forget("u")
	if h, here, _ := p.Place(ctx, "u"); h != "h2" || !here {
		t.Fatalf("after Forget: Place(u) = %s, here %v; want h2 here from the store", h, here)
	}
	reads = db.reads
	p.Forget("s")
	if h, here, _ := p.Place(ctx, "s"); h != "h2" || !here || db.reads != reads {
		t.Fatalf("Place(s) after Forget = %s (here %v, %d reads); want h2 here from the cache", h, here, db.reads-reads)
	}
}

// TestRemoteBeforeTheGate: just after a start, the turns recovered from
// the journal run before this host's channel plugin reached the gate;
// a channel whose live lease another host holds is remote already, so
// its calls (a before_agent_start hook, a send) go to that host instead
// of waiting for the local plugin, which stays in standby.
func TestRemoteBeforeTheGate(t *testing.T) {
	now := time.Now()
	g := &gate{clock: tstime.Std{}, id: "A", held: map[string]*hold{}, channels: map[string]bool{}, leases: map[string]store.Lease{}}
	if g.remote("tg") {
		t.Fatal("a channel nobody holds is remote")
	}
	g.setLeases([]store.Lease{{Name: channelLeasePrefix + "tg", Holder: "B", Expires: now.Add(time.Minute)},
		{Name: channelLeasePrefix + "old", Holder: "B", Expires: now.Add(-time.Second)},
		{Name: channelLeasePrefix + "mine", Holder: "A", Expires: now.Add(time.Minute)}})
	if !g.remote("tg") {
		t.Error("a channel B holds is not remote before this host's plugin reached the gate")
	}
	if g.remote("old") || g.remote("mine") {
		t.Error("an expired lease, or one under this host's own id (a previous run), made a channel remote")
	}
	g.held["tg"] = &hold{}
	if g.remote("tg") {
		t.Error("a channel this host holds is remote")
	}
}

// placeDB is a store.Cluster whose PlaceSession answers from rows.
type placeDB struct {
	store.Cluster
	mu    sync.Mutex
	rows  map[string]string
	reads int
}

func (d *placeDB) set(key, host string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.rows[key] = host
}

func (d *placeDB) PlaceSession(_ context.Context, key, want string) (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.reads++
	if h, ok := d.rows[key]; ok {
		return h, nil
	}
	d.rows[key] = want
	return want, nil
}

// relayWorld is two hosts on one database: A runs sessions, B holds the
// channel "tg" and makes the calls relayed to it with a recording port.
type relayWorld struct {
	a, b   *relay
	port   *recPort
	alive  map[string]bool
	mu     sync.Mutex
	cancel context.CancelFunc
	// logB is the holder's log.
	logB *sdktest.Log
}

func newRelayWorld(t *testing.T) *relayWorld {
	url := pgtest.Cluster(t).NewDatabase(t)
	open := func(id string) store.Cluster {
		d, err := postgres.Open(context.Background(), url, postgres.Options{Host: id})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		return d
	}
	w := &relayWorld{port: &recPort{block: make(chan struct{})}, alive: map[string]bool{"A": true, "B": true}, logB: &sdktest.Log{}}
	alive := func(h string) bool { w.mu.Lock(); defer w.mu.Unlock(); return w.alive[h] }
	ga := &gate{clock: tstime.Std{}, held: map[string]*hold{}, channels: map[string]bool{"tg": true}, leases: map[string]store.Lease{}}
	gb := &gate{clock: tstime.Std{}, held: map[string]*hold{"tg": {}}, channels: map[string]bool{"tg": true}, leases: map[string]store.Lease{}}
	log := hclog.NewNullLogger()
	w.a = newRelay(nil, open("A"), ga, nil, log, "A", alive)
	w.b = newRelay(nil, open("B"), gb, w.port, hclog.New(&hclog.LoggerOptions{Output: w.logB}), "B", alive)
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	t.Cleanup(cancel)
	go w.b.serve(ctx)
	return w
}

// recPort is the holder's plugin: it records sends; with block set a
// send waits until the test closes it.
type recPort struct {
	gateway.Ports
	mu      sync.Mutex
	sent    []string
	files   []string // the content of each file a send attached
	fetched []string // the refs downloaded
	blocked bool
	block   chan struct{}
	// started, when set, gets the text of every send as it begins.
	started chan string
}

func (p *recPort) Send(ctx context.Context, instance string, req channel.SendRequest) (channel.SendResponse, error) {
	p.mu.Lock()
	blocked := p.blocked
	for _, m := range req.Media {
		b, err := os.ReadFile(m.Path)
		if err != nil {
			p.mu.Unlock()
			return channel.SendResponse{}, err
		}
		p.files = append(p.files, string(b))
	}
	p.sent = append(p.sent, req.Text)
	n := len(p.sent)
	started := p.started
	p.mu.Unlock()
	if started != nil {
		started <- req.Text
	}
	if blocked {
		select {
		case <-p.block:
		case <-ctx.Done():
			return channel.SendResponse{}, ctx.Err()
		}
	}
	if req.Text == "refused" {
		return channel.SendResponse{}, &channel.Error{Code: channel.CodeForbidden, Message: "bot blocked"}
	}
	return channel.SendResponse{MessageIDs: []string{fmt.Sprint(n)}}, nil
}

func (p *recPort) Download(_ context.Context, _ string, _ int64, ref string, _ int64, w io.Writer) (channel.MediaInfo, error) {
	p.mu.Lock()
	p.fetched = append(p.fetched, ref)
	p.mu.Unlock()
	_, err := io.WriteString(w, "bytes of "+ref)
	return channel.MediaInfo{MIME: "image/png"}, err
}

func (p *recPort) React(_ context.Context, _ string, req channel.ReactRequest) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sent = append(p.sent, "react "+req.MessageID+" "+req.Emoji)
	return nil
}

func (p *recPort) Ready(string) (pluginclient.Description, bool) {
	return pluginclient.Description{Channel: true}, true
}

func (p *recPort) sends() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.sent...)
}

// TestRelayedCalls: a send relayed to the channel's holder is made once
// and answers with its ids; a channel's own error keeps its code; a call
// no host claims is withdrawn when the caller gives up (certainly not
// sent: safe to retry); a call whose holder dies after claiming it is
// uncertain (never repeated).
func TestRelayedCalls(t *testing.T) {
	w := newRelayWorld(t)
	ctx := context.Background()
	var resp channel.SendResponse
	if err := w.a.call(ctx, "tg", "send", sendCall{Request: channel.SendRequest{ChatID: "1", Text: "hello"}}, &resp); err != nil || len(resp.MessageIDs) != 1 {
		t.Fatalf("relayed send: %+v, %v", resp, err)
	}
	err := w.a.call(ctx, "tg", "send", sendCall{Request: channel.SendRequest{ChatID: "1", Text: "refused"}}, &resp)
	if channel.CodeOf(err) != channel.CodeForbidden {
		t.Fatalf("a refused send came back as %v", err)
	}
	if got := w.port.sends(); len(got) != 2 {
		t.Fatalf("the holder made %v", got)
	}
	// A reaction (the seen 👀) is set by the holder.
	if err := w.a.call(ctx, "tg", "react", channel.ReactRequest{ChatID: "1", MessageID: "9", Emoji: "👀"}, nil); err != nil {
		t.Fatalf("relayed react: %v", err)
	}
	if got := w.port.sends(); len(got) != 3 || got[2] != "react 9 👀" {
		t.Fatalf("the holder made %v", got)
	}

	// Nobody holds "wa": withdrawn after the caller's deadline.
	cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	err = w.a.call(cctx, "wa", "send", sendCall{Request: channel.SendRequest{ChatID: "1", Text: "lost?"}}, &resp)
	cancel()
	if !errors.Is(err, pluginclient.ErrNotSent) {
		t.Fatalf("an unclaimed call: %v; want not sent", err)
	}

	// The holder claims, starts the send and dies.
	w.port.mu.Lock()
	w.port.blocked = true
	w.port.mu.Unlock()
	done := make(chan error, 1)
	go func() {
		done <- w.a.call(ctx, "tg", "send", sendCall{Request: channel.SendRequest{ChatID: "1", Text: "in flight"}}, &resp)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for len(w.port.sends()) < 4 {
		if time.Now().After(deadline) {
			t.Fatal("the holder never made the third send")
		}
		time.Sleep(5 * time.Millisecond)
	}
	w.mu.Lock()
	w.alive["B"] = false // its lease expired
	w.mu.Unlock()
	select {
	case err := <-done:
		if channel.CodeOf(err) != channel.CodeUncertain {
			t.Fatalf("a call whose holder died: %v; want uncertain", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the caller still waits for a dead holder")
	}
	close(w.port.block)
}

// TestRelayedCallsOnlyWhatTheChannelProduced: the holder of a channel
// uploads only the bytes a relayed send carries, never a file of its own
// a row names (a forged row naming /etc/passwd or another chat's
// attachment fails, logged), and downloads only a ref the journal entry
// named in the call received on that channel carries (a forged row
// naming any URL fails, logged).
func TestRelayedCallsOnlyWhatTheChannelProduced(t *testing.T) {
	w := newRelayWorld(t)
	ctx := context.Background()
	var resp channel.SendResponse

	// A send carrying its file: the plugin gets those bytes.
	ok := sendCall{Request: channel.SendRequest{ChatID: "1", Media: []channel.OutboundMedia{{Path: "/origin/ws/chart.png", Kind: channel.MediaImage}}},
		Files: [][]byte{[]byte("PNG chart")}}
	if err := w.a.call(ctx, "tg", "send", ok, &resp); err != nil {
		t.Fatalf("a send with its file: %v", err)
	}
	// Forged rows: a file named, not carried.
	secret := filepath.Join(t.TempDir(), "media", "tg_direct_2", "photo.jpg")
	if err := os.MkdirAll(filepath.Dir(secret), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secret, []byte("another chat's photo"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/etc/passwd", secret} {
		forged := sendCall{Request: channel.SendRequest{ChatID: "1", Text: "forged", Media: []channel.OutboundMedia{{Path: path, Kind: channel.MediaDocument}}}}
		if err := w.a.call(ctx, "tg", "send", forged, &resp); channel.CodeOf(err) != channel.CodeInvalidRequest {
			t.Errorf("a forged send naming %s: %v; want invalid_request", path, err)
		}
	}
	// One carried file, two named: refused whole.
	short := sendCall{Request: channel.SendRequest{ChatID: "1", Text: "forged", Media: []channel.OutboundMedia{{Path: "a.png"}, {Path: secret}}}, Files: [][]byte{[]byte("a")}}
	if err := w.a.call(ctx, "tg", "send", short, &resp); channel.CodeOf(err) != channel.CodeInvalidRequest {
		t.Errorf("a send carrying fewer files than it names: %v", err)
	}
	w.port.mu.Lock()
	files, sent := slices.Clone(w.port.files), slices.Clone(w.port.sent)
	w.port.mu.Unlock()
	if len(files) != 1 || files[0] != "PNG chart" || slices.Contains(sent, "forged") {
		t.Errorf("the holder uploaded %q (sends %q); want only the carried chart", files, sent)
	}
	if n := strings.Count(w.logB.String(), "relayed send refused"); n != 3 {
		t.Errorf("%d refusals logged, want 3:\n%s", n, w.logB.String())
	}

	// Downloads: only a ref of the named entry, received on that channel.
	accept := func(instance, msgID string, refs ...string) int64 {
		m := &message.Message{Instance: instance, ChatID: "1", MessageID: msgID}
		for _, r := range refs {
			m.Media = append(m.Media, message.Media{Kind: channel.MediaImage, Ref: r})
		}
		res, err := w.a.db.Accept(ctx, store.Inbound{Instance: instance, ChatID: "1", MessageID: msgID, Message: message.Encode(m)})
		if err != nil {
			t.Fatal(err)
		}
		return res.ID
	}
	photo := "https://cdn.discordapp.com/attachments/1/2/photo.png"
	tgEntry := accept("tg", "m1", photo)
	waEntry := accept("wa", "m2", "https://cdn.discordapp.com/attachments/1/3/other.png")
	var out downloaded
	if err := w.a.call(ctx, "tg", "download", downloadCall{Entry: tgEntry, Ref: photo, MaxBytes: 100}, &out); err != nil || string(out.Data) != "bytes of "+photo {
		t.Fatalf("a download of the entry's own attachment: %q, %v", out.Data, err)
	}
	for name, c := range map[string]downloadCall{
		"any url":               {Entry: tgEntry, Ref: "http://169.254.169.254/latest/meta-data/"},
		"another channel's ref": {Entry: waEntry, Ref: "https://cdn.discordapp.com/attachments/1/3/other.png"},
		"no such entry":         {Entry: 999999, Ref: photo},
	} {
		if err := w.a.call(ctx, "tg", "download", c, &out); channel.CodeOf(err) != channel.CodeInvalidRequest {
			t.Errorf("%s: %v; want invalid_request", name, err)
		}
	}
	w.port.mu.Lock()
	fetched := slices.Clone(w.port.fetched)
	w.port.mu.Unlock()
	if len(fetched) != 1 || fetched[0] != photo {
		t.Errorf("the holder fetched %q; want only the entry's photo", fetched)
	}
	if n := strings.Count(w.logB.String(), "relayed download refused"); n != 3 {
		t.Errorf("%d download refusals logged, want 3", n)
	}
}
