package recent

import "testing"

func TestBound(t *testing.T) {
	m := New[int, string](3)
	for i := range 10 {
		m.Put(i, "v")
		if got, ok := m.Get(i); !ok || got != "v" {
			t.Fatalf("just put %d: %q %v", i, got, ok)
		}
	}
	if n := m.Len(); n != 3 {
		t.Fatalf("len %d, bound 3", n)
	}
	m.Put(9, "w") // present: nothing evicted
	if got, _ := m.Get(9); got != "w" || m.Len() != 3 {
		t.Fatalf("replace: %q, len %d", got, m.Len())
	}
}
