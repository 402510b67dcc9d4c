package store

import (
	"context"
	"time"
)

// Pairing keeps pairing codes of unknown senders and the senders an owner
// approved (additions to the configured allowlist).
type Pairing interface {
	// RequestPairing returns the sender's pending unexpired code, or
	// creates one (Created true). It fails with ErrTooManyPending when the
	// instance has the maximum of pending codes (DefaultMaxPendingPairings
	// unless the engine was configured otherwise). Expired codes are
	// deleted first, so they never count. Codes are unique among the
	// pending codes of all instances. Instance and SenderID are required.
	RequestPairing(ctx context.Context, req PairingRequest) (PairingResponse, error)
	// ApprovePairing consumes a code (case-insensitive, surrounding spaces
	// ignored) and adds its sender to the approved senders, stamped now.
	// ErrNotFound for an unknown code, ErrExpired for an expired one, which
	// is deleted all the same. An unknown code counts as a wrong guess,
	// which is kept (a documented exception to all-or-none); see
	// [MaxWrongPairingGuesses] for what too many of them do, and
	// ErrTooManyAttempts.
	ApprovePairing(ctx context.Context, code string) (ApprovedSender, error)
	// PendingPairings lists unexpired codes, oldest first; instance ""
	// means all instances.
	PendingPairings(ctx context.Context, instance string) ([]PairingCode, error)
	// IsApproved reports whether the sender was approved. Approvals do not
	// expire.
	IsApproved(ctx context.Context, instance, senderID string) (bool, error)
}

// PairingRequest asks for a pairing code for a sender.
type PairingRequest struct {
	// Instance is the plugin instance the sender wrote to.
	Instance string
	// SenderID is the platform id of the sender.
	SenderID string
	// TTL is the code's lifetime; ≤ 0 means one hour.
	TTL time.Duration
	// Code is used as given if not empty (trimmed, upper-cased; an error
	// if another sender holds it); otherwise a random 8-character code of
	// capital letters and digits, without the easily misread 0, O, 1 and
	// I, is generated.
	Code string
}

// PairingResponse carries the sender's code.
type PairingResponse struct {
	// Code is the sender's pending code.
	Code PairingCode
	// Created is false when an existing pending code was returned.
	Created bool
}

// PairingCode is a pending pairing request.
type PairingCode struct {
	// Instance and SenderID are the sender's, as requested.
	Instance string
	SenderID string
	// Code is what the owner approves.
	Code string
	// CreatedAt is when the code was created.
	CreatedAt time.Time
	// ExpiresAt is CreatedAt plus the request's TTL; from then on the code
	// is expired.
	ExpiresAt time.Time
}

// ApprovedSender is a sender an owner approved.
type ApprovedSender struct {
	// Instance and SenderID are the approved code's.
	Instance string
	SenderID string
	// ApprovedAt is when the code was approved.
	ApprovedAt time.Time
}

// Entry returns the allowlist form "<instance>:<sender id>".
func (a ApprovedSender) Entry() string { return a.Instance + ":" + a.SenderID }
