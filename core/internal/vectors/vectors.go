// Package vectors serves OpenClaw's recorded input→output cases
// (openclaw-vectors.json, produced by running OpenClaw's own functions) to
// the table tests of the core's pipeline packages. It is used by tests only
// (a test harness: it may import testing).
package vectors

import (
	_ "embed"
	"encoding/json"
	"sync"
	"testing"
)

//go:embed openclaw-vectors.json
var raw []byte

// Case is one expected result recorded by running OpenClaw.
type Case struct {
	Name     string          `json:"name"`
	Input    json.RawMessage `json:"input"`
	Params   json.RawMessage `json:"params"`
	Expected json.RawMessage `json:"expected"`
}

// TB is the part of testing.TB Load and Decode need.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
}

// Load returns the cases of a group; it fails t when the group is missing or
// empty.
func Load(t TB, group string) []Case {
	t.Helper()
	all, err := groups()
	if err != nil {
		t.Fatalf("decode vectors: %v", err)
	}
	var cases []Case
	if err := json.Unmarshal(all[group], &cases); err != nil {
		t.Fatalf("decode group %s: %v", group, err)
	}
	if len(cases) == 0 {
		t.Fatalf("group %s has no cases", group)
	}
	return cases
}

// groups decodes the file into its groups once per test process.
var groups = sync.OnceValues(func() (map[string]json.RawMessage, error) {
	var all map[string]json.RawMessage
	err := json.Unmarshal(raw, &all)
	return all, err
})

// Each runs check as a parallel subtest of t, named after the case, for
// every case of group.
func Each(t *testing.T, group string, check func(t *testing.T, tc Case)) {
	t.Helper()
	for _, tc := range Load(t, group) {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			check(t, tc)
		})
	}
}

// Func checks fn against every case of group as parallel subtests of t
// named group/case: the case's input decoded as In, its expected result
// as Out.
func Func[In any, Out comparable](t *testing.T, group string, fn func(In) Out) {
	t.Helper()
	t.Run(group, func(t *testing.T) {
		Each(t, group, func(t *testing.T, tc Case) {
			var in In
			var want Out
			tc.Decode(t, &in, nil, &want)
			if got := fn(in); got != want {
				t.Errorf("%#v: got %#v, want %#v", in, got, want)
			}
		})
	})
}

// Decode decodes the case's input, params and expected result into in, p
// and want, failing t on error; a nil target leaves its part out.
func (c Case) Decode(t TB, in, p, want any) {
	t.Helper()
	for _, part := range []struct {
		raw json.RawMessage
		v   any
	}{{c.Input, in}, {c.Params, p}, {c.Expected, want}} {
		if part.v == nil {
			continue
		}
		if err := json.Unmarshal(part.raw, part.v); err != nil {
			t.Fatalf("decode %s: %v", part.raw, err)
		}
	}
}
