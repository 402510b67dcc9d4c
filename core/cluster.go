package core

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/store"
)

// HostID is this host's id among the hosts sharing a database:
// storage.host_id, else the machine's host name.
func HostID(cfg *config.Config) string {
	if cfg.Storage.HostID != "" {
		return cfg.Storage.HostID
	}
	if n, err := os.Hostname(); err == nil && n != "" {
		return n
	}
	return "clawhost"
}

// membership keeps this host's lease "host/<id>" (the proof to the other
// hosts that it lives and owns its journal entries) and adopts what dead
// hosts left, every third of the lease's TTL. Only with a shared
// (PostgreSQL) database: a SQLite database has one host, which its
// directory lock guarantees.
type membership struct {
	h      *Host
	id     string
	ttl    time.Duration
	tag    string // this process's incarnation, kept in the lease's info
	cancel context.CancelFunc
	done   chan struct{}
}

func newMembership(h *Host) *membership {
	b := make([]byte, 6)
	rand.Read(b)
	return &membership{h: h, id: HostID(h.cfg), ttl: h.cfg.Storage.LeaseTTL.Duration(), tag: hex.EncodeToString(b)}
}

// request asks for this host's lease; its info tells the other hosts
// about this one.
func (m *membership) request() store.LeaseRequest {
	info := fmt.Sprintf("pid=%d incarnation=%s admin=%s version=%s", os.Getpid(), m.tag, m.h.cfg.Admin.Listen, m.h.opts.Version)
	return store.LeaseRequest{Name: store.HostLeasePrefix + m.id, Holder: m.id, TTL: m.ttl, Info: info}
}

// join takes the host lease before the journal is recovered. A live
// lease of another process under the same id (a previous incarnation
// killed less than a TTL ago, or another host configured with this id)
// is waited out, up to one TTL: recovering while it may still run its
// turns could run one twice.
func (m *membership) join(ctx context.Context) error {
	req := m.request()
	ls, err := m.h.db.ListLeases(ctx, req.Name)
	if err != nil {
		return fmt.Errorf("read the host leases: %w", err)
	}
	for _, l := range ls {
		if l.Name != req.Name || !l.Live(time.Now()) {
			continue
		}
		wait := time.Until(l.Expires)
		m.h.log.Warn("another process holds this host's lease: waiting for it to expire before taking over its journal entries; if another running host uses this host_id, give each host its own (storage { host_id })",
			"host_id", m.id, "holder", l.Info, "wait", wait.Round(time.Millisecond))
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	// The lease may still be live for a moment (clocks): retry until the
	// holder's expiry passed on the database's clock.
	deadline := time.Now().Add(m.ttl + 5*time.Second)
	for {
		_, err := m.h.db.AcquireLease(ctx, req)
		if err == nil {
			return nil
		}
		if !errors.Is(err, store.ErrLeaseHeld) || time.Now().After(deadline) {
			return fmt.Errorf("take the host lease %s: %w", req.Name, err)
		}
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// run renews the lease and adopts orphans until stop.
func (m *membership) run() {
	ctx, cancel := context.WithCancel(context.Background())
	m.cancel, m.done = cancel, make(chan struct{})
	go func() {
		defer close(m.done)
		t := time.NewTicker(m.ttl / 3)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			m.tick(ctx)
		}
	}()
}

func (m *membership) tick(ctx context.Context) {
	if _, err := m.h.db.AcquireLease(ctx, m.request()); err != nil {
		m.h.log.Error("renewing the host lease failed: other hosts take this host's work over once it expires", "error", err)
		return
	}
	if _, err := m.h.gw.Adopt(ctx); err != nil && ctx.Err() == nil {
		m.h.log.Error("adopting the work of dead hosts failed", "error", err)
	}
}

// leave stops renewing and hands the lease back (a graceful stop: the
// other hosts need not wait for it to expire).
func (m *membership) leave() {
	if m.cancel != nil {
		m.cancel()
		<-m.done
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := m.h.db.ReleaseLease(ctx, store.HostLeasePrefix+m.id, m.id); err != nil {
		m.h.log.Warn("releasing the host lease", "error", err)
	}
}
