// Package status lets a plugin tell the operator how it is doing.
//
// The host keeps a state per plugin instance and shows it on its status
// page, in /status.json, /healthz, /metrics and `clawhost status`. Most of
// the states are the host's own (starting, degraded after a crash,
// misconfigured, missing, unresponsive); a running plugin adds what only it
// can know through a Reporter:
//
//   - Ready: it works.
//   - NeedsAttention: it cannot work until a person acts — a token the
//     platform rejected, a device to link (with a QR code), an intent to
//     enable. The plugin stays up, the host does not restart it, and the
//     message says what to do. An Attention carries what the operator needs
//     (a QR payload, a pairing code, a link) and, with Retry set, offers a
//     button and `clawhost retry <instance>` that call the plugin's Retry.
//   - Degraded: it is trying and failing by itself (the platform cannot be
//     reached); the message says why.
//   - Starting: it is on its way to ready by itself, a step that is
//     progress and not an error (a device just linked, logging in); the
//     message says which step. The host shows it as starting, logs it at
//     INFO and holds calls until the plugin reports Ready. A host older
//     than this state shows it as it shows any state it does not know:
//     degraded, with the message.
//
// A plugin that never reports is Ready while it runs.
//
// A Ready report may carry an Attention of kind Link: the address at which
// the plugin serves people, e.g. the web chat's page with its access
// token. The host prints it on the operator's terminal at start and shows
// it on its status page and in `clawhost status` (both need the admin
// token); it never writes Attention data to its log.
package status

import "time"

// State is what a plugin says about itself.
type State string

// States a plugin reports.
const (
	Ready          State = "ready"
	NeedsAttention State = "needs_attention"
	Degraded       State = "degraded"
	Starting       State = "starting"
)

// AttentionKind is what Attention.Data holds.
type AttentionKind string

// Attention kinds.
const (
	// QR: Data is text to encode as a QR code; the host renders it as an
	// image on the status page and as a terminal QR in `clawhost status`.
	QR AttentionKind = "qr"
	// Code: Data is a code the operator types on a device.
	Code AttentionKind = "code"
	// Link: Data is a URL the operator opens.
	Link AttentionKind = "link"
)

// Attention is what the operator needs to act.
type Attention struct {
	Kind AttentionKind
	Data string
	// ExpiresAt is when Data stops being valid; zero when unknown. Report a
	// new Status with new Data when it rotates.
	ExpiresAt time.Time
	// Retry, when not empty, labels an operator action ("Show a new QR
	// code") that calls the plugin's Retry.
	Retry string
}

// Status is one report.
type Status struct {
	State State
	// Message is one or two sentences for the operator: what is wrong and
	// what to do. Never a secret.
	Message string
	// Attention is set with NeedsAttention when the operator needs a code,
	// a QR or a link, or with Ready as the Link people open (see the
	// package doc); nil otherwise.
	Attention *Attention
}

// Reporter publishes a plugin's status to the host.
type Reporter interface {
	// Report replaces the plugin's status. It never blocks; the host sees
	// the latest report (intermediate ones may be skipped). Safe for
	// concurrent use.
	Report(Status)
}

// Discard is a Reporter that drops every report (tests, Validate).
var Discard Reporter = discard{}

type discard struct{}

func (discard) Report(Status) {}
