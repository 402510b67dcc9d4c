package chaos

import (
	"context"
	"fmt"
	"github.com/clawhost/clawhost/core/e2e"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the shared journal is read through database/sql

	"github.com/clawhost/clawhost/core/store/postgres/pgtest"
)

// The multi-host mode: a scenario with hosts > 1 runs that many real
// hosts on one PostgreSQL database (a throwaway cluster), serving the one
// bot. One of them holds the channel lease and polls; the sessions are
// spread over all; replies go out through the poller. The faults strike a
// host by its role: the poller, a host that only runs turns, any host.

// clusterTTL is the hosts' lease_ttl: a dead host's work moves within it.
const clusterTTL = "2s"

// peer is one host of a multi-host scenario.
type peer struct {
	id   string
	cfg  string
	cmd  *exec.Cmd
	done chan struct{}
	pid  int
}

// setupCluster writes each host's configuration (the single host's plus
// a storage block) and starts them.
func (e *env) setupCluster() {
	e.url = pgtest.Cluster(e.t).NewDatabase(e.t)
	for i := range e.sc.hosts {
		id := fmt.Sprintf("h%d", i+1)
		dir := filepath.Join(e.dir, id)
		if err := os.MkdirAll(filepath.Join(dir, "data"), 0o700); err != nil {
			e.t.Fatal(err)
		}
		h := e.hostConfig(dir, filepath.Join(dir, "data"))
		h.Storage = e2e.Attrs{"engine": "postgres", "url": e.url, "host_id": id, "lease_ttl": clusterTTL}
		if e.sc.defaultTTL {
			delete(h.Storage, "lease_ttl")
		}
		p := &peer{id: id, cfg: h.Write(e.t)}
		e.peers = append(e.peers, p)
	}
	for _, p := range e.peers {
		e.startPeer(p)
	}
}

// startPeer execs one host, as startHost does.
func (e *env) startPeer(p *peer) {
	p.cmd, p.done = e.exec(" "+p.id, p.cfg)
	p.pid = p.cmd.Process.Pid
}

// stopPeer signals one host and waits for it, as stopHost does.
func (e *env) stopPeer(p *peer, sig syscall.Signal) {
	e.signal(" "+p.id, p.cmd, p.done, sig)
	p.cmd = nil
}

// restartPeer: the host got sig; once everything it started is gone it
// starts again (it rejoins once its old lease expired). It returns the
// moment of the signal: the others take its work over from then.
func (e *env) restartPeer(p *peer, sig syscall.Signal) time.Time {
	at := time.Now()
	e.stopPeer(p, sig)
	e.checkGone(fmt.Sprintf("after %v to %s", sig, p.id))
	e.startPeer(p)
	return at
}

// livePeer reports whether pid descends from a running host of the
// scenario.
func (e *env) livePeer(all map[int]proc, pid int) bool {
	for _, p := range e.peers {
		if p.cmd != nil && descends(all, pid, p.pid) {
			return true
		}
	}
	return false
}

// poller returns the host holding the channel lease (nil if none lives).
func (e *env) poller() *peer {
	var holder string
	var expires int64
	err := e.journal().QueryRowContext(context.Background(), `SELECT holder, expires_at FROM leases WHERE name = 'channel/tg'`).Scan(&holder, &expires)
	if err != nil || time.Now().UnixNano() >= expires {
		return nil
	}
	for _, p := range e.peers {
		if p.id == holder && p.cmd != nil {
			return p
		}
	}
	return nil
}

// pickPeer chooses the host a fault strikes: the poller, a host that
// does not poll, or any, by r.
func (e *env) pickPeer(role string, r uint64) *peer {
	var poller *peer
	e.waitUntil(10*time.Second, func() bool { poller = e.poller(); return poller != nil })
	var others []*peer
	for _, p := range e.peers {
		if p != poller && p.cmd != nil {
			others = append(others, p)
		}
	}
	switch {
	case role == "poller" && poller != nil:
		return poller
	case role == "worker" && len(others) > 0:
		return others[r%uint64(len(others))]
	}
	all := append(others, poller)
	if poller == nil {
		all = others
	}
	return all[r%uint64(len(all))]
}

// clusterFault is a fault striking a host of the given role with sig.
func clusterFault(role string, sig syscall.Signal) func(*env, uint64) time.Time {
	return func(e *env, r uint64) time.Time {
		p := e.pickPeer(role, r)
		e.faults++
		return e.restartPeer(p, sig)
	}
}
