package core

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/gateway"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/store/postgres"
	"github.com/clawhost/clawhost/core/store/postgres/pgtest"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/host"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

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

// relayWorld is two hosts on one database: A runs sessions, B holds the
// channel "tg" and makes the calls relayed to it with a recording port.
type relayWorld struct {
	a, b   *relay
	port   *recPort
	alive  map[string]bool
	mu     sync.Mutex
	cancel context.CancelFunc
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
	w := &relayWorld{port: &recPort{block: make(chan struct{})}, alive: map[string]bool{"A": true, "B": true}}
	alive := func(h string) bool { w.mu.Lock(); defer w.mu.Unlock(); return w.alive[h] }
	ga := &gate{held: map[string]*hold{}, channels: map[string]bool{"tg": true}, leases: map[string]store.Lease{}}
	gb := &gate{held: map[string]*hold{"tg": {}}, channels: map[string]bool{"tg": true}, leases: map[string]store.Lease{}}
	log := hclog.NewNullLogger()
	w.a = newRelay(open("A"), ga, nil, log, "A", alive)
	w.b = newRelay(open("B"), gb, w.port, log, "B", alive)
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
	blocked bool
	block   chan struct{}
}

func (p *recPort) Send(ctx context.Context, instance string, req channel.SendRequest) (channel.SendResponse, error) {
	p.mu.Lock()
	blocked := p.blocked
	p.sent = append(p.sent, req.Text)
	n := len(p.sent)
	p.mu.Unlock()
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

func (p *recPort) Ready(string) (host.Description, bool) {
	return host.Description{Channel: true}, true
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

	// Nobody holds "wa": withdrawn after the caller's deadline.
	cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	err = w.a.call(cctx, "wa", "send", sendCall{Request: channel.SendRequest{ChatID: "1", Text: "lost?"}}, &resp)
	cancel()
	if !errors.Is(err, host.ErrNotSent) {
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
	for len(w.port.sends()) < 3 {
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
