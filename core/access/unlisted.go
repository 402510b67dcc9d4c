package access

import (
	"slices"
	"sync"
	"time"
)

// UnlistedGroup is a group chat that wrote while access.groups does not
// list it: the operator sees it, with the entry to add, rather than only
// silence.
type UnlistedGroup struct {
	// ID is the entry access.groups takes, "<instance>:<chat id>".
	ID string
	// Title is the chat's title, when the platform gave one.
	Title string
	// Messages counts the messages seen since the host started.
	Messages int
	// FirstSeen and LastSeen bound them.
	FirstSeen, LastSeen time.Time
}

// maxUnlisted bounds the groups remembered; the one seen least recently is
// forgotten first.
const maxUnlisted = 50

// Unlisted remembers the groups refused because they are not listed. The
// zero value is not usable; call NewUnlisted.
type Unlisted struct {
	now func() time.Time

	mu     sync.Mutex
	groups map[string]*UnlistedGroup
}

// NewUnlisted returns an empty record; now is the clock (nil: time.Now).
func NewUnlisted(now func() time.Time) *Unlisted {
	if now == nil {
		now = time.Now
	}
	return &Unlisted{now: now, groups: map[string]*UnlistedGroup{}}
}

// Seen records a message of group id (title may be empty) and reports
// whether the group is new to the record (the caller logs it once).
func (u *Unlisted) Seen(id, title string) (first bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	now := u.now()
	g, ok := u.groups[id]
	if !ok {
		if len(u.groups) >= maxUnlisted {
			var oldest *UnlistedGroup
			for _, o := range u.groups {
				if oldest == nil || o.LastSeen.Before(oldest.LastSeen) {
					oldest = o
				}
			}
			delete(u.groups, oldest.ID)
		}
		g = &UnlistedGroup{ID: id, FirstSeen: now}
		u.groups[id] = g
	}
	g.Messages++
	g.LastSeen = now
	if title != "" {
		g.Title = title
	}
	return !ok
}

// Forget drops groups the configuration now lists (after a reload).
func (u *Unlisted) Forget(listed func(id string) bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for id := range u.groups {
		if listed(id) {
			delete(u.groups, id)
		}
	}
}

// List returns the groups, the most recently seen first.
func (u *Unlisted) List() []UnlistedGroup {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := make([]UnlistedGroup, 0, len(u.groups))
	for _, g := range u.groups {
		out = append(out, *g)
	}
	slices.SortFunc(out, func(a, b UnlistedGroup) int { return b.LastSeen.Compare(a.LastSeen) })
	return out
}
