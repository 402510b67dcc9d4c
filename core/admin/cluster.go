package admin

import (
	"fmt"
	"time"
)

// Cluster is what one host sees of the hosts sharing its database: the
// leases in the store at the moment of the snapshot, expired ones
// included, so that a host that stopped renewing its lease shows as such.
//
// The times are the leases' own (when a lease expires is decided by the
// store); the ages the status page and `clawhost status` show are taken
// against the viewer's clock, so a clock skew between the hosts shifts
// them by as much.
type Cluster struct {
	// HostID is this host's id (storage.host_id).
	HostID string `json:"host_id"`
	// Engine is the storage engine the hosts share ("postgres").
	Engine string `json:"engine"`
	// Error is why the leases could not be read; Hosts and Leases are
	// then empty. Empty when they were read.
	Error string `json:"error,omitempty"`
	// Hosts are the hosts that hold or held a host lease ("host/<id>"),
	// by id.
	Hosts []ClusterHost `json:"hosts"`
	// Leases are the other leases ("channel/<instance>",
	// "session/<key>"), by holder then name.
	Leases []Lease `json:"leases"`
}

// ClusterHost is one host as its host lease describes it.
type ClusterHost struct {
	// ID is the host's id.
	ID string `json:"id"`
	// This reports that it is the host that answered.
	This bool `json:"this,omitempty"`
	// Live reports that its lease had not expired at the snapshot: the
	// host runs. An expired host's work is taken over by the live ones.
	Live bool `json:"live"`
	// Admin, Version and PID are what the host wrote in its lease: its
	// admin listen address, its clawhost version and its process id;
	// empty or 0 when it did not say.
	Admin   string `json:"admin,omitempty"`
	Version string `json:"version,omitempty"`
	PID     int    `json:"pid,omitempty"`
	// Epoch counts the holders the lease had.
	Epoch int64 `json:"epoch"`
	// Sessions counts the sessions placed on the host (it runs their
	// turns; a dead host's until they move).
	Sessions int `json:"sessions"`
	// Since is when the host took its lease: up since.
	Since time.Time `json:"since"`
	// Renewed is when it last renewed it; Expires when it ends unless
	// renewed again.
	Renewed time.Time `json:"renewed"`
	Expires time.Time `json:"expires"`
}

// Lease is a lease other than a host's: what one host does for all,
// such as polling a channel ("channel/tg") or running a session.
type Lease struct {
	// Name is the lease's name, "<kind>/<what>".
	Name string `json:"name"`
	// Kind is the part of Name before the first "/" ("channel",
	// "session").
	Kind string `json:"kind"`
	// Holder is the id of the host holding it (or that held it last).
	Holder string `json:"holder"`
	// Live reports that it had not expired at the snapshot.
	Live bool `json:"live"`
	// Epoch counts the holders the lease had: a takeover increments it.
	Epoch int64 `json:"epoch"`
	// Acquired is when Holder took it, Renewed when it last extended it,
	// Expires when it ends unless renewed.
	Acquired time.Time `json:"acquired"`
	Renewed  time.Time `json:"renewed"`
	Expires  time.Time `json:"expires"`
	// Info is what the holder wrote with the lease; empty if nothing.
	Info string `json:"info,omitempty"`
}

// LiveHosts counts the hosts whose lease had not expired.
func (c *Cluster) LiveHosts() int {
	n := 0
	for _, h := range c.Hosts {
		if h.Live {
			n++
		}
	}
	return n
}

// LeaseState says how a lease stands at now, the same way on the status
// page and in `clawhost status`: "expires in 13s" while it is live,
// "expired 20s ago" once it is not.
func LeaseState(live bool, expires, now time.Time) string {
	if live {
		return "expires in " + formatDuration(expires.Sub(now))
	}
	return fmt.Sprintf("expired %s ago", formatDuration(now.Sub(expires)))
}

// Ago formats the time from t to now coarsely, as the status page does
// ("2s", "3m07s"); "—" for the zero time.
func Ago(t, now time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return formatDuration(now.Sub(t))
}
