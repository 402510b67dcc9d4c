// Package sessionkey builds and parses clawhost session keys: the stable
// name of a conversation's session, which decides which chats share one
// Claude Code session.
//
// # Key format (clawhost's own)
//
//	<instance>:direct:<peer>            one DM peer on one channel instance
//	direct:<peer>                       one DM peer across instances (per-peer)
//	<mainKey>                           every DM shares one session (main)
//	<instance>:group:<id>               a group chat
//	<instance>:channel:<id>             a server/broadcast channel
//	<base>:thread:<threadId>            a thread inside any of the above
//
// Instance is the configured channel plugin instance (for example "tg" or
// "discord-work"); it already identifies both the platform and the account,
// so it is one segment and never contains ':'. Peer, group and thread ids are
// lower-cased and kept otherwise verbatim; they may contain ':'.
//
// # Mapping to OpenClaw
//
// OpenClaw (openclaw@2026.9.6) prefixes every key with "agent:<agentId>:"
// and names the platform rather than an instance: "agent:main:telegram:
// direct:123". [OpenClawKey] maps a clawhost key to that form, so OpenClaw's
// vectors are checked as OpenClawKey(agent, Build(...)) with the instance set
// to the channel name. OpenClaw's per-account-channel-peer scope has no
// clawhost counterpart: an instance is already one account, so
// per-channel-peer covers it.
//
// # Deliberate differences from OpenClaw
//
//   - The default DM scope is [PerChannelPeer], not main: two people writing
//     to the bot never share a session unless configured to.
//   - There is no agent id in the key: a clawhost gateway runs one agent.
//
// All functions are pure.
package sessionkey

import (
	"strings"
)

// DMScope decides how direct-message sessions are shared.
type DMScope string

const (
	// PerChannelPeer gives each peer on each instance its own session. It is
	// clawhost's default.
	PerChannelPeer DMScope = "per-channel-peer"
	// PerPeer gives each peer one session across all instances (identity
	// links can merge peers from different platforms).
	PerPeer DMScope = "per-peer"
	// Main shares one session among all direct messages.
	Main DMScope = "main"
)

// Kind is the kind of conversation.
type Kind string

const (
	// Direct is a one-to-one chat (the default).
	Direct Kind = "direct"
	// Group is a multi-party chat.
	Group Kind = "group"
	// Channel is a server or broadcast channel.
	Channel Kind = "channel"
)

// DefaultMainKey is the key all DMs share under [Main].
const DefaultMainKey = "main"

// ThreadMarker separates a base key from its thread id.
const ThreadMarker = ":thread:"

// Params are the inputs of [Build].
type Params struct {
	// Instance is the channel plugin instance name.
	Instance string
	// Kind defaults to Direct.
	Kind Kind
	// PeerID is the DM peer, group or channel id.
	PeerID string
	// DMScope defaults to PerChannelPeer.
	DMScope DMScope
	// MainKey defaults to DefaultMainKey.
	MainKey string
	// GroupsShareMain collapses group and channel chats into the main key
	// (OpenClaw's groupScope: main).
	GroupsShareMain bool
	// IdentityLinks maps a canonical person name to "<instance>:<peer>"
	// entries; a linked DM peer is replaced by the canonical name.
	IdentityLinks map[string][]string
}

// Build returns the session key for a conversation (OpenClaw's
// buildAgentPeerSessionKey, without the agent prefix). A DM with an empty
// peer falls back to the main key; a group with an empty id uses "unknown".
func Build(p Params) string {
	mainKey := strings.ToLower(strings.TrimSpace(p.MainKey))
	if mainKey == "" {
		mainKey = DefaultMainKey
	}
	instance := strings.ToLower(strings.TrimSpace(p.Instance))
	peer := strings.ToLower(strings.TrimSpace(p.PeerID))
	switch p.Kind {
	case Group, Channel:
		if p.GroupsShareMain {
			return mainKey
		}
		if peer == "" {
			peer = "unknown"
		}
		return instance + ":" + string(p.Kind) + ":" + peer
	}
	scope := p.DMScope
	if scope == "" {
		scope = PerChannelPeer
	}
	if scope == Main || peer == "" {
		return mainKey
	}
	if linked := linkedPeer(p.IdentityLinks, instance, peer); linked != "" {
		peer = linked
	}
	if scope == PerPeer {
		return "direct:" + peer
	}
	return instance + ":direct:" + peer
}

func linkedPeer(links map[string][]string, instance, peer string) string {
	want := instance + ":" + peer
	for canonical, ids := range links {
		for _, id := range ids {
			if strings.ToLower(strings.TrimSpace(id)) == want {
				return strings.ToLower(strings.TrimSpace(canonical))
			}
		}
	}
	return ""
}

// WithThread appends ":thread:<threadID>" (lower-cased) to base; a blank
// thread id returns base unchanged.
func WithThread(base, threadID string) string {
	t := strings.ToLower(strings.TrimSpace(threadID))
	if t == "" {
		return base
	}
	return base + ThreadMarker + t
}

// Key is a parsed session key.
type Key struct {
	// Instance is empty for the main key and for per-peer keys.
	Instance string
	// Kind is empty for the main key.
	Kind Kind
	// ID is the peer, group or channel id, or the main key.
	ID string
	// Thread is the thread id, if any.
	Thread string
}

// Parse splits a clawhost key. It accepts every form [Build] and
// [WithThread] produce; ok is false for an empty key.
func Parse(key string) (Key, bool) {
	if key == "" {
		return Key{}, false
	}
	var k Key
	base := key
	if i := strings.LastIndex(key, ThreadMarker); i >= 0 {
		base, k.Thread = key[:i], key[i+len(ThreadMarker):]
	}
	if rest, ok := strings.CutPrefix(base, "direct:"); ok {
		k.Kind, k.ID = Direct, rest
		return k, true
	}
	inst, rest, ok := strings.Cut(base, ":")
	if !ok {
		k.ID = base
		return k, true
	}
	kind, id, ok := strings.Cut(rest, ":")
	switch Kind(kind) {
	case Direct, Group, Channel:
		if ok {
			k.Instance, k.Kind, k.ID = inst, Kind(kind), id
			return k, true
		}
	}
	k.ID = base
	return k, true
}

// HistoryKey names the pending group-history buffer of a group or channel:
// "<instance>:<kind>:<id>", i.e. the group's session key without a thread.
// It corresponds to OpenClaw's "<channel>:<account>:<kind>:<peer>".
func HistoryKey(instance string, kind Kind, peerID string) string {
	return Build(Params{Instance: instance, Kind: kind, PeerID: peerID})
}

// OpenClawKey maps a clawhost key to OpenClaw's "agent:<agentId>:<key>" form.
// The agent id is normalized like OpenClaw's: lower-cased, runs of
// characters other than a-z, 0-9, '_' and '-' become '-', edge dashes
// trimmed, empty means "main".
func OpenClawKey(agentID, key string) string {
	return "agent:" + NormalizeAgentID(agentID) + ":" + key
}

// NormalizeAgentID normalizes an OpenClaw agent id ("My Agent!" becomes
// "my-agent").
func NormalizeAgentID(id string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(strings.TrimSpace(id)) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '_' || r == '-' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			continue
		}
		dash = true
	}
	if out := strings.Trim(b.String(), "-"); out != "" {
		return out
	}
	return "main"
}

// ParseOpenClawKey splits an OpenClaw key "agent:<id>:<rest>"
// (case-insensitive, both parts lower-cased); ok is false when the key has
// fewer than three parts or another prefix.
func ParseOpenClawKey(key string) (agentID, rest string, ok bool) {
	parts := strings.SplitN(strings.ToLower(strings.TrimSpace(key)), ":", 3)
	if len(parts) < 3 || parts[0] != "agent" || parts[1] == "" || parts[2] == "" {
		return "", "", false
	}
	return parts[1], parts[2], true
}
