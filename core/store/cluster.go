package store

import (
	"context"
	"encoding/json"
	"time"
)

// Cluster is what hosts sharing one database need beyond the [Store]:
// which host runs a session (placement), journal entries handed from the
// host that received them to the host that runs their session, and
// channel calls relayed to the host that holds the channel. The PostgreSQL
// engine implements it. A SQLite database has exactly one host (its
// directory lock), so there is nothing to place, hand or relay and the
// SQLite engine does not implement it.
//
// Placement is a session lease whose liveness is its host's: a session
// stays on the host it was placed on while that host's lease
// (HostLeasePrefix + host) is live, and only then may it move. So a host
// renews one lease however many sessions it runs, and two live hosts never
// both run one session.
type Cluster interface {
	Store
	// PlaceSession returns the host that runs the session key: its
	// current host while that host's lease is live, else want, which
	// becomes its host (atomically: of concurrent calls one placement
	// wins and every call returns it).
	PlaceSession(ctx context.Context, key, want string) (string, error)
	// PlacementCounts returns how many sessions are placed on each host
	// (a dead host's stay counted until they move).
	PlacementCounts(ctx context.Context) (map[string]int, error)
	// Handoff gives open accepted or queued entries this host owns to the
	// host to (their owner becomes to) and marks them handed, so that to
	// takes them ([Cluster.TakeHanded]); other entries are left alone.
	// It wakes to ([Cluster.Listen]).
	Handoff(ctx context.Context, to string, ids ...int64) error
	// OlderOpen reports whether an entry of the same chat (instance, chat
	// and thread) as entry id, and older, is still open (accepted, queued
	// or processing) out of this host's hands: owned by another host, or
	// handed to this one and not yet taken ([Cluster.TakeHanded]). After a
	// host died, its session's older messages reach the session's new
	// host through an adoption and a handoff; a newer message waits for
	// them, so that a chat's messages run in order.
	OlderOpen(ctx context.Context, id int64) (bool, error)
	// TakeHanded returns the entries handed to this host that are still
	// accepted or queued and clears every mark, oldest first: each handed
	// entry is taken once (one this host's lane ran meanwhile is not
	// returned).
	// [Journal.Recover] clears the mark of the entries it takes.
	TakeHanded(ctx context.Context) ([]Entry, error)

	// Relay stores a channel call for the host that holds r.Instance and
	// wakes it; it returns the call's id. Calls that want no answer
	// (NoReply) are deleted once done.
	Relay(ctx context.Context, r RelayCall) (int64, error)
	// ClaimRelays claims up to limit new calls for the instances given
	// (those this host holds), oldest first: each call is claimed once.
	ClaimRelays(ctx context.Context, instances []string, limit int) ([]RelayCall, error)
	// AbandonClaims finishes, as uncertain, the calls this host's id
	// claimed and never finished: a host calls it as it starts, when they
	// can only be a previous incarnation's (killed mid-call). Their
	// origins would otherwise wait for them while the id's lease is live
	// again.
	AbandonClaims(ctx context.Context) (int, error)
	// FinishRelay stores a claimed call's outcome and wakes its origin.
	FinishRelay(ctx context.Context, id int64, res RelayResult) error
	// TakeRelay returns a call's state and, once it is done, its outcome,
	// deleting the finished call. ErrNotFound: no such call.
	TakeRelay(ctx context.Context, id int64) (RelayStatus, error)
	// CancelRelay withdraws a call nobody claimed yet: true when it was
	// withdrawn (it will never run), false when a host claimed it already.
	CancelRelay(ctx context.Context, id int64) (bool, error)

	// Listen calls fn with the wake-ups for this host (handed entries,
	// relayed calls and their outcomes) until ctx ends, reconnecting when
	// the connection breaks. A wake-up may be lost with the connection:
	// callers poll as well, less often.
	Listen(ctx context.Context, fn func(Wake)) error
}

// Wake is a wake-up sent between hosts.
type Wake struct {
	// Kind is WakeHanded (entries handed to Host), WakeRelay (a call for
	// Instance) or WakeRelayDone (an outcome for Host).
	Kind     string
	Host     string
	Instance string
}

// Wake kinds.
const (
	WakeHanded    = "handed"
	WakeRelay     = "relay"
	WakeRelayDone = "done"
)

// RelayCall is a channel call relayed to the host that holds the channel.
type RelayCall struct {
	ID int64
	// Instance is the channel instance; Origin the host that asked.
	Instance string
	Origin   string
	// Op names the call ("send", "edit", "typing", "download"); Request is
	// its JSON.
	Op      string
	Request json.RawMessage
	// NoReply: the origin does not wait for the outcome.
	NoReply bool
	// Created is when it was stored.
	Created time.Time
}

// RelayState is where a relayed call is.
type RelayState string

// Relay states.
const (
	RelayNew     RelayState = "new"
	RelayClaimed RelayState = "claimed"
	RelayDone    RelayState = "done"
)

// RelayStatus is what [Cluster.TakeRelay] returns.
type RelayStatus struct {
	State RelayState
	// ClaimedBy is the host that claimed the call.
	ClaimedBy string
	// Result is the outcome once State is RelayDone.
	Result RelayResult
}

// RelayResult is a relayed call's outcome.
type RelayResult struct {
	// Response is the call's JSON answer on success.
	Response json.RawMessage `json:"response,omitempty"`
	// Error is the failure, empty on success; Code is the channel's error
	// code (channel.Code), RetryAfter its wait.
	Error      string        `json:"error,omitempty"`
	Code       string        `json:"code,omitempty"`
	RetryAfter time.Duration `json:"retry_after,omitempty"`
	// NotSent: the holder never handed the call to its plugin (it was not
	// ready, or it stopped): safe to ask again.
	NotSent bool `json:"not_sent,omitempty"`
}
