// Package sessionreset decides when a conversation starts a fresh Claude
// session: the reset policy (none, daily at an hour, or after idle minutes),
// overridable per chat type and per channel instance; the freshness check of
// an existing session against that policy; and the /new and /reset triggers.
//
// It reproduces OpenClaw's resolveSessionResetPolicy,
// evaluateSessionFreshness, resolveSessionResetType and the reset-trigger
// matching of session-reset-command.ts (openclaw@2026.9.6), checked against
// the vectors produced by running OpenClaw. The default mode is [ModeNone]:
// sessions never expire unless a policy is configured.
//
// Times are time.Time; the zero time means "unset". The daily boundary is
// computed in an injected *time.Location, so tests do not depend on the host
// time zone. Everything is pure.
package sessionreset

import (
	"math"
	"strings"
	"time"
)

// Mode is a reset mode.
type Mode string

const (
	// ModeNone never expires a session by time (the default).
	ModeNone Mode = "none"
	// ModeDaily expires sessions started before the most recent AtHour.
	ModeDaily Mode = "daily"
	// ModeIdle expires sessions idle for more than IdleMinutes.
	ModeIdle Mode = "idle"
)

// DefaultAtHour is the daily reset hour when none is configured.
const DefaultAtHour = 4

// Type is the chat type a policy can be refined for.
type Type string

const (
	// TypeDirect is a direct-message session.
	TypeDirect Type = "direct"
	// TypeGroup is a group or channel session.
	TypeGroup Type = "group"
	// TypeThread is a thread session.
	TypeThread Type = "thread"
)

// TypeOf classifies a session key (clawhost's or OpenClaw's): thread when
// the key has a ":thread:" part or isThread, group when isGroup or the key
// has ":group:" or ":channel:", otherwise direct.
func TypeOf(key string, isGroup, isThread bool) Type {
	switch {
	case isThread || strings.Contains(key, ":thread:"):
		return TypeThread
	case isGroup || strings.Contains(key, ":group:") || strings.Contains(key, ":channel:"):
		return TypeGroup
	default:
		return TypeDirect
	}
}

// Rule is one configured reset rule; nil fields are unset and inherit.
type Rule struct {
	// Mode; unset means inherit, or daily when nothing sets it.
	Mode Mode
	// AtHour is the local hour of the daily reset, 0..23 (clamped).
	AtHour *float64
	// IdleMinutes is the idle timeout; it also applies in daily mode.
	IdleMinutes *float64
}

// Config is the reset configuration of a gateway.
type Config struct {
	// Default applies to every session.
	Default *Rule
	// ByType refines Default per chat type.
	ByType map[Type]*Rule
	// ByInstance replaces Default (and ByType) for one channel instance
	// (OpenClaw's per-channel resetByChannel).
	ByInstance map[string]*Rule
}

// Policy is a resolved reset policy.
type Policy struct {
	Mode   Mode
	AtHour int
	// IdleMinutes > 0 enables the idle check.
	IdleMinutes int
	// Configured is true when any rule applied.
	Configured bool
}

// Resolve returns the policy for a session of type t on instance: the
// instance rule if present (type rules are then ignored), else the default
// rule refined by the type rule. Mode: the most specific set mode, else
// daily when any rule exists, else none. AtHour defaults to 4 and is
// floored and clamped to 0..23; IdleMinutes is floored and at least 0.
func Resolve(cfg Config, instance string, t Type) Policy {
	base, typed := cfg.Default, cfg.ByType[t]
	if r, ok := cfg.ByInstance[instance]; ok && r != nil {
		base, typed = r, nil
	}
	p := Policy{Mode: ModeNone, AtHour: DefaultAtHour, Configured: base != nil || typed != nil}
	if !p.Configured {
		return p
	}
	p.Mode = ModeDaily
	var atHour, idle *float64
	for _, r := range []*Rule{base, typed} {
		if r == nil {
			continue
		}
		if r.Mode != "" {
			p.Mode = r.Mode
		}
		if r.AtHour != nil {
			atHour = r.AtHour
		}
		if r.IdleMinutes != nil {
			idle = r.IdleMinutes
		}
	}
	if atHour != nil {
		p.AtHour = clampHour(*atHour)
	}
	if idle != nil && !math.IsNaN(*idle) {
		p.IdleMinutes = max(0, int(math.Floor(*idle)))
	}
	return p
}

func clampHour(h float64) int {
	if math.IsNaN(h) {
		return DefaultAtHour
	}
	return min(23, max(0, int(math.Floor(h))))
}

// Times are a session's timestamps.
type Times struct {
	// UpdatedAt is the last write of the session entry; zero means stale.
	UpdatedAt time.Time
	// StartedAt is when the session began; zero means UpdatedAt.
	StartedAt time.Time
	// LastInteractionAt is the last user interaction; zero means StartedAt.
	LastInteractionAt time.Time
}

// Stale reasons.
const (
	ReasonDaily = "daily"
	ReasonIdle  = "idle"
)

// Freshness is the result of [Evaluate].
type Freshness struct {
	Fresh bool
	// DailyResetAt is the boundary checked in daily mode (zero otherwise).
	DailyResetAt time.Time
	// IdleExpiresAt is when idleness expires the session (zero when no idle
	// check applies).
	IdleExpiresAt time.Time
	// StaleReason is ReasonDaily or ReasonIdle when not fresh because of a
	// policy; the earlier of the two instants wins when both apply.
	StaleReason string
}

// Evaluate checks a session against a policy at now (OpenClaw's
// evaluateSessionFreshness). A zero UpdatedAt is stale; ModeNone is fresh.
// Timestamps after now or before the epoch count as the epoch. Daily: stale
// when StartedAt is before today's AtHour:00 in loc (yesterday's when now is
// earlier); a start exactly at the boundary is fresh. Idle: stale when now
// is strictly after LastInteractionAt + IdleMinutes.
func Evaluate(p Policy, s Times, now time.Time, loc *time.Location) Freshness {
	if s.UpdatedAt.IsZero() || s.UpdatedAt.UnixMilli() == 0 {
		return Freshness{}
	}
	if p.Mode == ModeNone || p.Mode == "" {
		return Freshness{Fresh: true}
	}
	if loc == nil {
		loc = time.Local
	}
	nowMs := now.UnixMilli()
	clean := func(t time.Time) int64 {
		ms := t.UnixMilli()
		if ms > nowMs || ms < 0 {
			return 0
		}
		return ms
	}
	updated := clean(s.UpdatedAt)
	started := updated
	if !s.StartedAt.IsZero() {
		started = clean(s.StartedAt)
	}
	last := started
	if !s.LastInteractionAt.IsZero() {
		last = clean(s.LastInteractionAt)
	}
	var f Freshness
	dailyStale, idleStale := false, false
	var dailyAt, idleAt int64
	if p.Mode == ModeDaily {
		ln := now.In(loc)
		b := time.Date(ln.Year(), ln.Month(), ln.Day(), clampHour(float64(p.AtHour)), 0, 0, 0, loc)
		if now.Before(b) {
			b = time.Date(ln.Year(), ln.Month(), ln.Day()-1, clampHour(float64(p.AtHour)), 0, 0, 0, loc)
		}
		dailyAt = b.UnixMilli()
		f.DailyResetAt = time.UnixMilli(dailyAt)
		dailyStale = started < dailyAt
	}
	if p.IdleMinutes > 0 {
		idleAt = last + int64(p.IdleMinutes)*60000
		f.IdleExpiresAt = time.UnixMilli(idleAt)
		idleStale = nowMs > idleAt
	}
	switch {
	case dailyStale && idleStale:
		f.StaleReason = ReasonDaily
		if idleAt < dailyAt {
			f.StaleReason = ReasonIdle
		}
	case dailyStale:
		f.StaleReason = ReasonDaily
	case idleStale:
		f.StaleReason = ReasonIdle
	default:
		f.Fresh = true
	}
	return f
}
