// Package vectors serves OpenClaw's recorded input→output cases
// (openclaw-vectors.json, produced by running OpenClaw's own functions) to
// the table tests of the core's pipeline packages. It is used by tests only.
package vectors

import (
	_ "embed"
	"encoding/json"
	"sync"
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

// TB is the part of testing.TB the helpers need (production code does not
// import testing).
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

// Unmarshal decodes raw into v, failing t on error.
func Unmarshal(t TB, raw json.RawMessage, v any) {
	t.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
}
