package access

import (
	"fmt"
	"testing"
	"time"
)

func TestUnlisted(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_800_000_000, 0)
	u := NewUnlisted(func() time.Time { return now })
	if !u.Seen("tg:-100", "") {
		t.Error("a new group is first")
	}
	now = now.Add(time.Minute)
	if u.Seen("tg:-100", "Family") {
		t.Error("a known group is not first")
	}
	now = now.Add(time.Minute)
	u.Seen("dc:7", "")
	l := u.List()
	if len(l) != 2 || l[0].ID != "dc:7" || l[1].ID != "tg:-100" || l[1].Messages != 2 || l[1].Title != "Family" || !l[1].LastSeen.After(l[1].FirstSeen) {
		t.Fatalf("list %+v", l)
	}
	u.Forget(func(id string) bool { return id == "dc:7" })
	if l := u.List(); len(l) != 1 || l[0].ID != "tg:-100" {
		t.Errorf("after forget %+v", l)
	}
	// Bounded: the least recently seen goes first.
	for i := range maxUnlisted + 5 {
		now = now.Add(time.Second)
		u.Seen(fmt.Sprintf("tg:%d", i), "")
	}
	l = u.List()
	if len(l) != maxUnlisted || l[len(l)-1].ID != "tg:5" {
		t.Errorf("%d groups, oldest %s", len(l), l[len(l)-1].ID)
	}
}
