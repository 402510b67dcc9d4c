package turn

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

func TestMetaOfIsUnmarshal(t *testing.T) {
	for _, raw := range []string{
		``,
		`{}`,
		`{"model":"opus","always_allow":["Bash"],"past":[{"id":"a","turns":2}],"last_message":"2026-11-23T10:00:00Z"}`,
		`{"model":"opus","prompt_tokens":"many"}`, // decoded up to the error
		`{"model":`,
		`not json`,
	} {
		var want chatMeta
		wantOK := json.Unmarshal([]byte(raw), &want) == nil
		for range 2 { // a miss, then a hit
			got, ok := metaOf("s1", []byte(raw))
			if ok != wantOK || !reflect.DeepEqual(got, want) {
				t.Errorf("metaOf(%q) = %+v, %v; json.Unmarshal: %+v, %v", raw, got, ok, want, wantOK)
			}
		}
	}
}

// TestMetaOfCopies checks that a caller's changes (an append to the
// always-allowed tools, as allowAlways makes) never reach the cache.
func TestMetaOfCopies(t *testing.T) {
	raw, err := encodeMeta("s1", chatMeta{Always: make([]string, 1, 8), Past: []PastSession{{ID: "p"}}})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := metaOf("s1", raw)
	m.Always = append(m.Always, "Write")
	m.Past[0].ID = "changed"
	again, _ := metaOf("s1", raw)
	if len(again.Always) != 1 || again.Past[0].ID != "p" {
		t.Fatalf("the cache was changed through a caller's copy: %+v", again)
	}
}

func TestMetaCacheIsBounded(t *testing.T) {
	for i := range 3 * metaCacheMax {
		if _, err := encodeMeta(fmt.Sprint("k", i), chatMeta{PromptTokens: i + 1}); err != nil {
			t.Fatal(err)
		}
	}
	metaCache.mu.Lock()
	n := len(metaCache.m)
	metaCache.mu.Unlock()
	if n > metaCacheMax {
		t.Fatalf("%d entries cached, at most %d", n, metaCacheMax)
	}
}

// TestMetaOfFollowsTheRow checks that a session's cached metadata is used
// only while the row holds the text it came from: another text of the same
// session (the row changed by a writer that did not encode here, or an
// encode that was not stored) is decoded.
func TestMetaOfFollowsTheRow(t *testing.T) {
	if _, err := encodeMeta("s2", chatMeta{PromptTokens: 5}); err != nil {
		t.Fatal(err)
	}
	if m, ok := metaOf("s2", []byte(`{"prompt_tokens":7}`)); !ok || m.PromptTokens != 7 {
		t.Fatalf("another text of the session: %+v, %v", m, ok)
	}
	if m, _ := metaOf("", []byte(`{"prompt_tokens":9}`)); m.PromptTokens != 9 {
		t.Fatalf("uncached: %+v", m)
	}
}
