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
	// ignored) and adds its sender to the approved senders, stamped now
	// and with req.By (an approval of a sender approved before replaces
	// it). ErrNotFound for an unknown code, ErrExpired for an expired one,
	// which is deleted all the same. An unknown code counts as a wrong
	// guess, which is kept (a documented exception to all-or-none); see
	// [MaxWrongPairingGuesses] for what too many of them do, and
	// ErrTooManyAttempts. Errors never contain the code.
	ApprovePairing(ctx context.Context, req ApproveRequest) (ApprovedSender, error)
	// PendingPairings lists unexpired codes, oldest first; instance ""
	// means all instances.
	PendingPairings(ctx context.Context, instance string) ([]PairingCode, error)
	// IsApproved reports whether the sender was approved, and, when ttl is
	// positive, no longer than ttl ago by the engine's clock (an older
	// approval is kept, and listed, but does not count). ttl ≤ 0: any
	// approval counts.
	IsApproved(ctx context.Context, instance, senderID string, ttl time.Duration) (bool, error)
	// ApprovedSenders lists the approved senders, oldest approval first;
	// instance "" means all instances.
	ApprovedSenders(ctx context.Context, instance string) ([]ApprovedSender, error)
	// RevokeApproval removes a sender's approval; found is false when the
	// sender was not approved (not an error). The sender's pending code,
	// if any, is removed too, so revoking starts pairing from scratch.
	RevokeApproval(ctx context.Context, instance, senderID string) (found bool, err error)
}

// ApproveRequest approves a pairing code.
type ApproveRequest struct {
	// Code is the code the sender was given.
	Code string
	// By says who approved it, for the record: an owner's
	// "<instance>:<id>" (/approve) or "cli" / "admin" (the machine).
	// Optional.
	By string
}

// PairingRequest asks for a pairing code for a sender.
type PairingRequest struct {
	// Instance is the plugin instance the sender wrote to.
	Instance string
	// SenderID is the platform id of the sender.
	SenderID string
	// SenderName and SenderUsername are the sender's display name and
	// @username as the platform gave them (either may be empty), kept with
	// the code so that an owner sees who asks. A sender who asks again
	// while the code is pending gets it back with the names it was made
	// with.
	SenderName, SenderUsername string
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
	// SenderName and SenderUsername are the request's, "" when the
	// platform gave none (or the code predates them).
	SenderName, SenderUsername string
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
	// ApprovedBy is the approval's ApproveRequest.By; empty for approvals
	// stored before it was recorded.
	ApprovedBy string
}

// Entry returns the allowlist form "<instance>:<sender id>".
func (a ApprovedSender) Entry() string { return a.Instance + ":" + a.SenderID }
