// Package sessionkey builds clawhost session keys: the stable
// name of a conversation's session, which decides which chats share one
// Claude Code session.
//
// # Key format (clawhost's own)
//
//	<instance>:direct:<peer>            one DM peer on one channel instance
//	direct:<source>:<peer>              one DM peer across the instances of one
//	                                    plugin source (per-peer)
//	direct:<person>                     a person identity_links joins (per-peer)
//	<mainKey>                           every DM shares one session (main)
//	<instance>:group:<id>               a group chat
//	<instance>:channel:<id>             a server/broadcast channel
//	<base>:thread:<threadId>            a thread inside any of the above
//
// and a session's name is a [Key]: the agent that serves it and that
// conversation key, stored in the seeds' form "agent:<agentId>:<key>".
//
// Instance is the configured channel plugin instance (for example "tg" or
// "discord-work"); it already identifies both the platform and the account,
// so it is one segment and never contains ':'. Peer, group and thread ids are
// lower-cased and kept otherwise verbatim; they may contain ':'.
//
// # Mapping to OpenClaw
//
// OpenClaw (openclaw@2026.9.6) prefixes every key with "agent:<agentId>:",
// as [Key.String] does, and names the platform rather than an instance:
// "agent:main:telegram:direct:123". The tests map a clawhost key to that
// form, so OpenClaw's vectors are checked as Key{agentId, Build(...)}.String()
// with the instance set to the channel name. OpenClaw's per-account-channel-peer scope has no
// clawhost counterpart: an instance is already one account, so
// per-channel-peer covers it.
//
// # Deliberate differences from OpenClaw
//
//   - The default DM scope is [PerChannelPeer], not main: two people writing
//     to the bot never share a session unless configured to.
//   - A per-peer key keeps the plugin source ("direct:telegram:5", OpenClaw:
//     "direct:5"): an id is only unique on its platform, so Telegram user 5
//     and WhatsApp contact 5 are two people and never share a session (and
//     its history) unless identity_links say they are one. Instances of one
//     source (two Telegram bots) do share it: the platform's user ids are
//     the same across bots.
//
// All functions are pure.
package sessionkey

import (
	"errors"
	"fmt"
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
	// Source is the instance's plugin source ("telegram"); a per-peer key
	// carries it. Empty: Instance stands in.
	Source string
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
	linked := linkedPeer(p.IdentityLinks, instance, peer)
	if linked != "" {
		peer = linked
	}
	if scope == PerPeer {
		if linked != "" {
			return "direct:" + peer
		}
		source := strings.ToLower(strings.TrimSpace(p.Source))
		if source == "" {
			source = instance
		}
		return "direct:" + source + ":" + peer
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

// HistoryKey names the pending group-history buffer of a group or channel:
// "<instance>:<kind>:<id>", i.e. the group's session key without a thread.
// It corresponds to OpenClaw's "<channel>:<account>:<kind>:<peer>".
func HistoryKey(instance string, kind Kind, peerID string) string {
	return Build(Params{Instance: instance, Kind: kind, PeerID: peerID})
}

// DefaultAgent is the id of the default agent (config's unlabelled agent
// block), which serves every chat no agent binds.
const DefaultAgent = "main"

// agentPrefix starts every session key's string form.
const agentPrefix = "agent:"

// Key names a session: the agent that serves it and the chat's
// conversation key ([Build], [WithThread]). Two agents serving one chat (a
// chat that switched with /agent) thus keep two sessions, each with its
// own claude conversation. Key is comparable and the zero Key names no
// session.
//
// The string form, "agent:<Agent>:<Chat>" ([Key.String], [Parse]), is
// used only where a key leaves the process's types: the store's rows, the
// journal and the queue's lanes, logs, and the plugins' wire
// (Conversation.SessionKey). It is the seeds' form, and the one every
// database written since keys carried the agent holds.
type Key struct {
	// Agent is the id of the agent serving the session (config's agent
	// ids; [DefaultAgent] for the unlabelled block). It never contains ':'.
	Agent string
	// Chat is the conversation's key, without the agent.
	Chat string
}

// String is the key's stored form, "agent:<Agent>:<Chat>"; "" for the
// zero Key.
func (k Key) String() string {
	if k == (Key{}) {
		return ""
	}
	return agentPrefix + k.Agent + ":" + k.Chat
}

// Dir is the name of the session's own directory ([Dir] of its chat).
func (k Key) Dir() string { return Dir(k.Chat) }

// ErrMalformed is Parse's error for a string that is not a key's stored
// form.
var ErrMalformed = errors.New("malformed session key")

// Parse reads a key's stored form ([Key.String]): "agent:", a non-empty
// agent id without ':', ':' and a non-empty chat key (which may contain
// ':'). Anything else is ErrMalformed; Parse(k.String()) is k for every
// key with a non-empty agent without ':' and a non-empty chat.
func Parse(s string) (Key, error) {
	rest, ok := strings.CutPrefix(s, agentPrefix)
	if !ok {
		return Key{}, fmt.Errorf("%w %q: no agent", ErrMalformed, s)
	}
	agent, chat, ok := strings.Cut(rest, ":")
	if !ok || agent == "" || chat == "" {
		return Key{}, fmt.Errorf("%w %q", ErrMalformed, s)
	}
	return Key{Agent: agent, Chat: chat}, nil
}
