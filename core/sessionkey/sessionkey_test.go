package sessionkey

import (
	"github.com/clawhost/clawhost/core/internal/vectors"
	"strings"
	"testing"
)

// notApplicable lists OpenClaw vectors with no clawhost counterpart.
var notApplicable = map[string]string{
	"direct per-account-channel-peer":    "a clawhost instance is one account; per-channel-peer covers it",
	"direct per-account default account": "a clawhost instance is one account; per-channel-peer covers it",
}

func TestVectorsBuildAgentPeerSessionKey(t *testing.T) {
	t.Parallel()
	for _, tc := range vectors.Load(t, "sessionKey.buildAgentPeerSessionKey") {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			if why, ok := notApplicable[tc.Name]; ok {
				t.Skip("not applicable: " + why)
			}
			var p struct {
				AgentID       string              `json:"agentId"`
				MainKey       string              `json:"mainKey"`
				Channel       string              `json:"channel"`
				PeerKind      Kind                `json:"peerKind"`
				PeerID        string              `json:"peerId"`
				DMScope       DMScope             `json:"dmScope"`
				GroupScope    string              `json:"groupScope"`
				IdentityLinks map[string][]string `json:"identityLinks"`
			}
			var want string
			vectors.Unmarshal(t, tc.Params, &p)
			vectors.Unmarshal(t, tc.Expected, &want)
			scope := p.DMScope
			if scope == "" {
				scope = Main // OpenClaw's default; clawhost's is PerChannelPeer
			}
			key := Build(Params{
				Instance: p.Channel, Kind: p.PeerKind, PeerID: p.PeerID, DMScope: scope,
				MainKey: p.MainKey, GroupsShareMain: p.GroupScope == "main", IdentityLinks: p.IdentityLinks,
			})
			if got := OpenClawKey(p.AgentID, key); got != want {
				t.Errorf("got %q (clawhost %q), want %q", got, key, want)
			}
		})
	}
}

func TestVectorsBuildAgentMainSessionKey(t *testing.T) {
	t.Parallel()
	for _, tc := range vectors.Load(t, "sessionKey.buildAgentMainSessionKey") {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			var p struct {
				AgentID string `json:"agentId"`
				MainKey string `json:"mainKey"`
			}
			var want string
			vectors.Unmarshal(t, tc.Params, &p)
			vectors.Unmarshal(t, tc.Expected, &want)
			key := Build(Params{DMScope: Main, MainKey: p.MainKey, PeerID: "x"})
			if got := OpenClawKey(p.AgentID, key); got != want {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}

func TestVectorsResolveThreadSessionKeys(t *testing.T) {
	t.Parallel()
	for _, tc := range vectors.Load(t, "sessionKey.resolveThreadSessionKeys") {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			var p struct {
				Base      string `json:"baseSessionKey"`
				ThreadID  string `json:"threadId"`
				UseSuffix *bool  `json:"useSuffix"`
			}
			var want struct {
				SessionKey string `json:"sessionKey"`
			}
			vectors.Unmarshal(t, tc.Params, &p)
			vectors.Unmarshal(t, tc.Expected, &want)
			got := p.Base
			if p.UseSuffix == nil || *p.UseSuffix {
				got = WithThread(p.Base, p.ThreadID)
			}
			if got != want.SessionKey {
				t.Errorf("got %q, want %q", got, want.SessionKey)
			}
		})
	}
}

func TestVectorsParseAgentSessionKey(t *testing.T) {
	t.Parallel()
	for _, tc := range vectors.Load(t, "sessionKey.parseAgentSessionKey") {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			var in string
			var want *struct {
				AgentID string `json:"agentId"`
				Rest    string `json:"rest"`
			}
			vectors.Unmarshal(t, tc.Input, &in)
			vectors.Unmarshal(t, tc.Expected, &want)
			agent, rest, ok := ParseOpenClawKey(in)
			if ok != (want != nil) || (ok && (agent != want.AgentID || rest != want.Rest)) {
				t.Errorf("got %q %q %v, want %+v", agent, rest, ok, want)
			}
		})
	}
}

// OpenClaw's history key is "<channel>:<account>:<kind>:<peer>"; clawhost's
// instance stands for "<channel>:<account>", so the parts after it must match.
func TestVectorsBuildGroupHistoryKey(t *testing.T) {
	t.Parallel()
	for _, tc := range vectors.Load(t, "sessionKey.buildGroupHistoryKey") {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			var p struct {
				Channel  string `json:"channel"`
				PeerKind Kind   `json:"peerKind"`
				PeerID   string `json:"peerId"`
			}
			var want string
			vectors.Unmarshal(t, tc.Params, &p)
			vectors.Unmarshal(t, tc.Expected, &want)
			got := HistoryKey("inst", p.PeerKind, p.PeerID)
			wantParts := strings.SplitN(want, ":", 3)
			if got != "inst:"+wantParts[2] || wantParts[0] != strings.ToLower(p.Channel) {
				t.Errorf("got %q, want inst:%s (from %q)", got, wantParts[2], want)
			}
		})
	}
}

func TestBuildParseRoundTrip(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		p    Params
		key  string
		want Key
	}{
		{"default dm scope", Params{Instance: "TG", PeerID: "User1"}, "tg:direct:user1", Key{Instance: "tg", Kind: Direct, ID: "user1"}},
		{"per peer", Params{Instance: "tg", PeerID: "1", DMScope: PerPeer}, "direct:1", Key{Kind: Direct, ID: "1"}},
		{"main", Params{Instance: "tg", PeerID: "1", DMScope: Main}, "main", Key{ID: "main"}},
		{"group colon id", Params{Instance: "wa", Kind: Group, PeerID: "a:b@g.us"}, "wa:group:a:b@g.us", Key{Instance: "wa", Kind: Group, ID: "a:b@g.us"}},
		{"linked", Params{Instance: "tg", PeerID: "111", IdentityLinks: map[string][]string{"Alice": {"tg:111"}}}, "tg:direct:alice", Key{Instance: "tg", Kind: Direct, ID: "alice"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			key := Build(tc.p)
			if key != tc.key {
				t.Fatalf("Build = %q, want %q", key, tc.key)
			}
			got, ok := Parse(WithThread(key, "T9"))
			want := tc.want
			want.Thread = "t9"
			if !ok || got != want {
				t.Errorf("Parse = %+v %v, want %+v", got, ok, want)
			}
		})
	}
}
