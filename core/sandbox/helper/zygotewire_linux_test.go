//go:build linux

package helper

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/clawhost/clawhost/core/internal/confine"
)

func TestZygoteWireRoundTrip(t *testing.T) {
	for _, r := range []Request{
		{},
		{Signal: 15},
		{Argv: []string{"/usr/bin/claude", "-p", ""}, Env: []string{"HOME=/h", "A=é\x00b"}, Dir: "/w",
			Mounts: []Mount{{Path: "/tmp", Op: OpHide, Dir: true}, {Path: "/w/x", Src: "/d/chats/1", Op: OpBind, Dir: true}, {Path: "/w/sock", Op: OpReadOnly}}},
		{Argv: []string{"claude"}, User: &User{UID: 4294967295, GID: 1000}},
		{Argv: []string{"claude"}, User: &User{UID: 1, GID: 2, Groups: []uint32{3, 4}}},
	} {
		got, err := decodeZygoteRequest(AppendRequest(nil, &r))
		if err != nil {
			t.Fatalf("%+v: %v", r, err)
		}
		if !reflect.DeepEqual(got, r) {
			t.Errorf("round trip:\n got %+v\nwant %+v", got, r)
		}
	}
}

// Every request cut short, or with a byte more, or with a list claiming more items than
// bytes are left, is refused, never a panic or a huge allocation.
func TestZygoteWireRefusesMalformed(t *testing.T) {
	r := Request{Argv: []string{"claude", "-p"}, Env: []string{"HOME=/h"}, Dir: "/w",
		Mounts: []Mount{{Path: "/w/x", Src: "/s", Op: OpBind, Dir: true}}, User: &User{UID: 1, GID: 2, Groups: []uint32{3}}}
	b := AppendRequest(nil, &r)
	for i := range b {
		if _, err := decodeZygoteRequest(b[:i]); err == nil {
			t.Errorf("cut at %d of %d: decoded", i, len(b))
		}
	}
	if _, err := decodeZygoteRequest(append(b, 0)); err == nil {
		t.Error("a trailing byte: decoded")
	}
	if _, err := decodeZygoteRequest([]byte{0xff, 0xff, 0xff, 0xff, 0x0f}); err == nil {
		t.Error("a list of 4 billion items in 5 bytes: decoded")
	}
	bad := AppendRequest(nil, &Request{Mounts: []Mount{{Path: "/p", Dir: true}}})
	bad[len(bad)-3] = 2 // the mount's Dir byte
	if _, err := decodeZygoteRequest(bad); err == nil {
		t.Error("a bool byte of 2: decoded")
	}
}

// BenchmarkZygoteWire: a start request's encoding and decoding, host and helper.
func BenchmarkZygoteWire(b *testing.B) {
	r := Request{Argv: make([]string, 20), Env: make([]string, 40), Dir: "/tmp/x/workspace", Mounts: make([]Mount, 13)}
	for i := range r.Env {
		r.Env[i] = "CLAWHOST_SOMETHING_LONG=/a/path/that/is/long/enough"
	}
	for i := range r.Mounts {
		r.Mounts[i] = Mount{Path: "/tmp/BenchmarkZZProf3836890336/003/round2/workspace", Op: OpBind, Dir: true}
	}
	b.Run("wire", func(b *testing.B) {
		for b.Loop() {
			if _, err := decodeZygoteRequest(AppendRequest(nil, &r)); err != nil {
				b.Fatal(err)
			}
		}
	})
	// What the request cost as JSON, its form until 2026-11-26.
	b.Run("json", func(b *testing.B) {
		for b.Loop() {
			j, _ := json.Marshal(r)
			var back Request
			if err := json.Unmarshal(j, &back); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// A prepared start's order goes through its wire form whole, and one cut short or with
// a byte more is refused.
func TestPreparedOrderWire(t *testing.T) {
	for _, o := range []preparedOrder{
		{},
		{Spec: confine.Spec{ReadOnly: []string{"/proc", "/usr"}, Writable: []string{"/dev", "/w"}, Files: []string{"/usr/x"}, Weaken: []string{"cloexec"}},
			Path: "/usr/bin/claude", Argv: []string{"claude", "-p", ""}, Env: []string{"HOME=/h", "A=é\x00b"}, Dir: "/w"},
	} {
		b := appendOrder(nil, &o)
		got, err := decodeOrder(b)
		if err != nil {
			t.Fatalf("%+v: %v", o, err)
		}
		if !reflect.DeepEqual(got, o) {
			t.Errorf("round trip:\n got %+v\nwant %+v", got, o)
		}
		for i := range b {
			if _, err := decodeOrder(b[:i]); err == nil {
				t.Errorf("cut at %d of %d: decoded", i, len(b))
			}
		}
		if _, err := decodeOrder(append(b, 0)); err == nil {
			t.Error("a trailing byte: decoded")
		}
	}
}
