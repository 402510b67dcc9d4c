package sessionkey

import (
	"errors"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/core/internal/vectors"
)

// notApplicable lists OpenClaw vectors with no clawhost counterpart.
var notApplicable = map[string]string{
	"direct per-account-channel-peer":    "a clawhost instance is one account; per-channel-peer covers it",
	"direct per-account default account": "a clawhost instance is one account; per-channel-peer covers it",
	"direct per-peer":                    "a clawhost per-peer key keeps the plugin source (see the package doc); TestPerPeerKeepsTheSource",
}

func TestVectorsBuildAgentPeerSessionKey(t *testing.T) {
	t.Parallel()
	vectors.Each(t, "sessionKey.buildAgentPeerSessionKey", func(t *testing.T, tc vectors.Case) {
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
		tc.Decode(t, nil, &p, &want)
		scope := p.DMScope
		if scope == "" {
			scope = Main // OpenClaw's default; clawhost's is PerChannelPeer
		}
		key := Build(Params{
			Instance: p.Channel, Kind: p.PeerKind, PeerID: p.PeerID, DMScope: scope,
			MainKey: p.MainKey, GroupsShareMain: p.GroupScope == "main", IdentityLinks: p.IdentityLinks,
		})
		if got := openClawKey(p.AgentID, key); got != want {
			t.Errorf("got %q (clawhost %q), want %q", got, key, want)
		}
	})
}

func TestVectorsBuildAgentMainSessionKey(t *testing.T) {
	t.Parallel()
	vectors.Each(t, "sessionKey.buildAgentMainSessionKey", func(t *testing.T, tc vectors.Case) {
		var p struct {
			AgentID string `json:"agentId"`
			MainKey string `json:"mainKey"`
		}
		var want string
		tc.Decode(t, nil, &p, &want)
		key := Build(Params{DMScope: Main, MainKey: p.MainKey, PeerID: "x"})
		if got := openClawKey(p.AgentID, key); got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	})
}

func TestVectorsResolveThreadSessionKeys(t *testing.T) {
	t.Parallel()
	vectors.Each(t, "sessionKey.resolveThreadSessionKeys", func(t *testing.T, tc vectors.Case) {
		var p struct {
			Base      string `json:"baseSessionKey"`
			ThreadID  string `json:"threadId"`
			UseSuffix *bool  `json:"useSuffix"`
		}
		var want struct {
			SessionKey string `json:"sessionKey"`
		}
		tc.Decode(t, nil, &p, &want)
		got := p.Base
		if p.UseSuffix == nil || *p.UseSuffix {
			got = WithThread(p.Base, p.ThreadID)
		}
		if got != want.SessionKey {
			t.Errorf("got %q, want %q", got, want.SessionKey)
		}
	})
}

// OpenClaw's history key is "<channel>:<account>:<kind>:<peer>"; clawhost's
// instance stands for "<channel>:<account>", so the parts after it must match.
func TestVectorsBuildGroupHistoryKey(t *testing.T) {
	t.Parallel()
	vectors.Each(t, "sessionKey.buildGroupHistoryKey", func(t *testing.T, tc vectors.Case) {
		var p struct {
			Channel  string `json:"channel"`
			PeerKind Kind   `json:"peerKind"`
			PeerID   string `json:"peerId"`
		}
		var want string
		tc.Decode(t, nil, &p, &want)
		got := HistoryKey("inst", p.PeerKind, p.PeerID)
		wantParts := strings.SplitN(want, ":", 3)
		if got != "inst:"+wantParts[2] || wantParts[0] != strings.ToLower(p.Channel) {
			t.Errorf("got %q, want inst:%s (from %q)", got, wantParts[2], want)
		}
	})
}

func TestBuild(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		p    Params
		key  string
	}{
		{"default dm scope", Params{Instance: "TG", PeerID: "User1"}, "tg:direct:user1"},
		{"per peer", Params{Instance: "tg", Source: "Telegram", PeerID: "1", DMScope: PerPeer}, "direct:telegram:1"},
		{"per peer, no source", Params{Instance: "tg", PeerID: "1", DMScope: PerPeer}, "direct:tg:1"},
		{"per peer linked", Params{Instance: "tg", Source: "telegram", PeerID: "1", DMScope: PerPeer, IdentityLinks: map[string][]string{"Bob": {"tg:1"}}}, "direct:bob"},
		{"main", Params{Instance: "tg", PeerID: "1", DMScope: Main}, "main"},
		{"group colon id", Params{Instance: "wa", Kind: Group, PeerID: "a:b@g.us"}, "wa:group:a:b@g.us"},
		{"linked", Params{Instance: "tg", PeerID: "111", IdentityLinks: map[string][]string{"Alice": {"tg:111"}}}, "tg:direct:alice"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			key := Build(tc.p)
			if key != tc.key {
				t.Fatalf("Build = %q, want %q", key, tc.key)
			}
			if got, want := WithThread(key, "T9"), tc.key+":thread:t9"; got != want {
				t.Errorf("WithThread = %q, want %q", got, want)
			}
		})
	}
}

// openClawKey maps a clawhost key to OpenClaw's "agent:<agentId>:<key>" form.
// The agent id is normalized like OpenClaw's: lower-cased, runs of
// characters other than a-z, 0-9, '_' and '-' become '-', edge dashes
// trimmed, empty means "main".
func openClawKey(agentID, key string) string {
	return Key{Agent: normalizeAgentID(agentID), Chat: key}.String()
}

// normalizeAgentID normalizes an OpenClaw agent id ("My Agent!" becomes
// "my-agent").
func normalizeAgentID(id string) string {
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

// TestPerPeerKeepsTheSource: under per-peer, two senders with equal ids on
// instances of two sources get two sessions; two instances of one source
// (the same platform user) share one; identity_links still join people
// across sources.
func TestPerPeerKeepsTheSource(t *testing.T) {
	t.Parallel()
	key := func(instance, source, peer string, links map[string][]string) string {
		return Build(Params{Instance: instance, Source: source, PeerID: peer, DMScope: PerPeer, IdentityLinks: links})
	}
	if tg, wa := key("tg", "telegram", "5", nil), key("wa", "whatsapp", "5", nil); tg == wa {
		t.Errorf("tg:5 and wa:5 share %q", tg)
	}
	if a, b := key("tg", "telegram", "5", nil), key("tg2", "telegram", "5", nil); a != b {
		t.Errorf("one Telegram user on two bots: %q, %q", a, b)
	}
	links := map[string][]string{"ann": {"tg:5", "wa:+15550005"}}
	if tg, wa := key("tg", "telegram", "5", links), key("wa", "whatsapp", "+15550005", links); tg != wa || tg != "direct:ann" {
		t.Errorf("linked: %q, %q", tg, wa)
	}
	if other := key("wa", "whatsapp", "5", links); other == key("tg", "telegram", "5", links) {
		t.Errorf("wa:5 joined tg:5's linked session")
	}
}

func TestKey(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		k    Key
		want string
	}{
		{Key{"main", "tg:direct:42"}, "agent:main:tg:direct:42"},
		{Key{"ops", "tg:group:-1001:thread:7"}, "agent:ops:tg:group:-1001:thread:7"},
		{Key{"main", "main"}, "agent:main:main"},
		{Key{"docs", "agent:direct:5"}, "agent:docs:agent:direct:5"}, // an instance named "agent"
	} {
		if got := c.k.String(); got != c.want {
			t.Errorf("%#v.String() = %q, want %q", c.k, got, c.want)
		}
		if back, err := Parse(c.want); err != nil || back != c.k {
			t.Errorf("Parse(%q) = %#v, %v; want %#v", c.want, back, err, c.k)
		}
		if other := (Key{"other", c.k.Chat}); c.k.Dir() != other.Dir() {
			t.Errorf("%#v.Dir() = %q, %#v.Dir() = %q: the agent must not change the media directory", c.k, c.k.Dir(), other, other.Dir())
		}
	}
	if d := (Key{"main", "tg:direct:42"}).Dir(); d != "tg_direct_42" {
		t.Errorf("media directories made before keys carried the agent are renamed: %q", d)
	}
	if (Key{}).String() != "" {
		t.Error("the zero Key")
	}
}

func TestParseRefuses(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"", "tg:direct:42", "main", "agent:", "agent:main", "agent:main:", "agent::tg:direct:42",
		"Agent:main:tg:direct:42", " agent:main:x", "agentmain:x",
	} {
		if k, err := Parse(s); !errors.Is(err, ErrMalformed) {
			t.Errorf("Parse(%q) = %#v, %v; want ErrMalformed", s, k, err)
		}
	}
}

// TestParseStoredKeys: keys as the stores hold them since keys carried the
// agent (sqlite step 10 and postgres step 6 prefixed every older key with
// the default agent; at 10adb9c the agents' keys were written as
// "agent:<id>:<key>") parse to what the code of that time meant by them.
// No migration: the stored form is Key.String's.
func TestParseStoredKeys(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		stored string
		want   Key
	}{
		{"agent:main:tg:direct:42", Key{"main", "tg:direct:42"}},
		{"agent:main:main", Key{"main", "main"}},
		{"agent:main:direct:telegram:5", Key{"main", "direct:telegram:5"}},
		{"agent:main:direct:ann", Key{"main", "direct:ann"}},
		{"agent:ops:tg:group:-1001234:thread:7", Key{"ops", "tg:group:-1001234:thread:7"}},
		{"agent:main:wa:direct:15550001@s.whatsapp.net", Key{"main", "wa:direct:15550001@s.whatsapp.net"}},
		{"agent:public_2:web:direct:a/b", Key{"public_2", "web:direct:a/b"}},
		{"agent:main:agent:direct:5", Key{"main", "agent:direct:5"}},
	} {
		k, err := Parse(c.stored)
		if err != nil || k != c.want {
			t.Errorf("Parse(%q) = %#v, %v; want %#v", c.stored, k, err, c.want)
		}
		if k.String() != c.stored {
			t.Errorf("%#v.String() = %q, stored %q", k, k.String(), c.stored)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"agent:main:tg:direct:42", "agent:ops:x", "agent::x", "agent:a:", "tg:direct:1", "", "agent:"} {
		f.Add(s, "main", "tg:direct:42")
	}
	f.Fuzz(func(t *testing.T, s, agent, chat string) {
		if k, err := Parse(s); err == nil {
			if k.Agent == "" || k.Chat == "" || strings.Contains(k.Agent, ":") {
				t.Fatalf("Parse(%q) = %#v", s, k)
			}
			if k.String() != s {
				t.Fatalf("Parse(%q).String() = %q", s, k.String())
			}
		} else if !errors.Is(err, ErrMalformed) {
			t.Fatalf("Parse(%q): %v", s, err)
		}
		k := Key{Agent: agent, Chat: chat}
		back, err := Parse(k.String())
		valid := agent != "" && chat != "" && !strings.Contains(agent, ":")
		if valid && (err != nil || back != k) {
			t.Fatalf("Parse(%q) = %#v, %v; want %#v", k.String(), back, err, k)
		}
		if !valid && err == nil && back == k {
			t.Fatalf("Parse(%q) = %#v from the invalid %#v", k.String(), back, k)
		}
	})
}
