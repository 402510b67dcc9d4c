package debounce

import (
	"github.com/clawhost/clawhost/core/internal/tstime"
	"github.com/clawhost/clawhost/core/internal/vectors"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock fires timers only when the test advances it, synchronously
// and in time order (tstime.Std stands in for what the debouncer does not
// use).
type fakeClock struct {
	tstime.Std
	mu     sync.Mutex
	now    time.Time
	seq    int
	timers []*fakeTimer
}

type fakeTimer struct {
	c       *fakeClock
	at      time.Time
	seq     int
	f       func()
	stopped bool
}

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := !t.stopped
	t.stopped = true
	return was
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Reset is not used by the debouncer.
func (t *fakeTimer) Reset(time.Duration) bool { panic("fakeTimer.Reset") }

func (c *fakeClock) AfterFunc(d time.Duration, f func()) tstime.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	t := &fakeTimer{c: c, at: c.now.Add(d), seq: c.seq, f: f}
	c.timers = append(c.timers, t)
	return t
}

// AdvanceTo fires due timers in time order, moving the clock to each.
func (c *fakeClock) AdvanceTo(target time.Time) {
	for {
		c.mu.Lock()
		sort.Slice(c.timers, func(i, j int) bool {
			if !c.timers[i].at.Equal(c.timers[j].at) {
				return c.timers[i].at.Before(c.timers[j].at)
			}
			return c.timers[i].seq < c.timers[j].seq
		})
		var next *fakeTimer
		for len(c.timers) > 0 && c.timers[0].stopped {
			c.timers = c.timers[1:]
		}
		if len(c.timers) > 0 && !c.timers[0].at.After(target) {
			next, c.timers = c.timers[0], c.timers[1:]
			c.now = next.at
			next.stopped = true
		}
		if next == nil {
			c.now = target
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		next.f()
	}
}

type flushed struct {
	Items []string `json:"items"`
	AtMs  int64    `json:"approxAtMs"`
}

type msg struct {
	key, text string
}

func TestVectorsDebounce(t *testing.T) {
	t.Parallel()
	vectors.Each(t, "debounce", func(t *testing.T, tc vectors.Case) {
		var in []struct {
			At   int64  `json:"at"`
			Key  string `json:"key"`
			Text string `json:"text"`
		}
		var p struct {
			DebounceMs int64 `json:"debounceMs"`
			Settle     int64 `json:"settle"`
		}
		var want []flushed
		tc.Decode(t, &in, &p, &want)
		start := time.UnixMilli(1_000_000)
		clock := &fakeClock{now: start}
		var got []flushed
		d := New(Config[msg]{
			Delay:          time.Duration(p.DebounceMs) * time.Millisecond,
			Key:            func(m msg) string { return m.key },
			ShouldDebounce: func(m msg) bool { return !strings.HasPrefix(m.text, "/") },
			Clock:          clock,
			Flush: func(_ string, items []msg) {
				f := flushed{AtMs: clock.Now().Sub(start).Milliseconds()}
				for _, m := range items {
					f.Items = append(f.Items, m.text)
				}
				got = append(got, f)
			},
		})
		for _, m := range in {
			clock.AdvanceTo(start.Add(time.Duration(m.At) * time.Millisecond))
			d.Enqueue(msg{key: m.Key, text: m.Text})
		}
		settle := max(p.Settle, 2000)
		clock.AdvanceTo(clock.Now().Add(time.Duration(settle) * time.Millisecond))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("got %+v\nwant %+v", got, want)
		}
	})
}

func TestVectorsResolveInboundDebounceMs(t *testing.T) {
	t.Parallel()
	vectors.Each(t, "debounce.resolveInboundDebounceMs", func(t *testing.T, tc vectors.Case) {
		var p struct {
			Cfg struct {
				Messages struct {
					Inbound struct {
						DebounceMs *int64           `json:"debounceMs"`
						ByChannel  map[string]int64 `json:"byChannel"`
					} `json:"inbound"`
				} `json:"messages"`
			} `json:"cfg"`
			Channel    string `json:"channel"`
			OverrideMs *int64 `json:"overrideMs"`
		}
		var want int64
		tc.Decode(t, nil, &p, &want)
		ms := func(v int64) time.Duration { return time.Duration(v) * time.Millisecond }
		var s Settings
		if g := p.Cfg.Messages.Inbound.DebounceMs; g != nil {
			d := ms(*g)
			s.Global = &d
		}
		s.ByInstance = map[string]time.Duration{}
		for k, v := range p.Cfg.Messages.Inbound.ByChannel {
			s.ByInstance[k] = ms(v)
		}
		var override *time.Duration
		if p.OverrideMs != nil {
			d := ms(*p.OverrideMs)
			override = &d
		}
		if got := Resolve(override, s, p.Channel); got != ms(want) {
			t.Errorf("got %v, want %v", got, ms(want))
		}
	})
}

func TestMaxTrackedKeysAndClose(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{now: time.UnixMilli(0)}
	var got []string
	d := New(Config[msg]{
		Delay: time.Second, MaxTrackedKeys: 1, Clock: clock,
		Key: func(m msg) string { return m.key },
		Flush: func(key string, items []msg) {
			for _, m := range items {
				got = append(got, key+":"+m.text)
			}
		},
	})
	d.Enqueue(msg{"a", "1"}) // buffered
	d.Enqueue(msg{"b", "2"}) // over the key cap: delivered at once
	d.Enqueue(msg{"", "3"})  // no key: delivered at once
	d.Close()                // flushes a
	d.Enqueue(msg{"a", "4"}) // closed: delivered at once
	want := []string{"b:2", ":3", "a:1", "a:4"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestConcurrentOrder checks per-key ordering and serialization under the
// real clock with concurrent enqueuers (run with -race).
func TestConcurrentOrder(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	seen := map[string][]int{}
	busy := map[string]bool{}
	d := New(Config[[2]int]{
		Delay: time.Millisecond,
		Key:   func(v [2]int) string { return string(rune('a' + v[0])) },
		Flush: func(key string, items [][2]int) {
			mu.Lock()
			if busy[key] {
				t.Errorf("overlapping flush for %s", key)
			}
			busy[key] = true
			for _, it := range items {
				seen[key] = append(seen[key], it[1])
			}
			busy[key] = false
			mu.Unlock()
		},
	})
	var wg sync.WaitGroup
	for k := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				d.Enqueue([2]int{k, i})
			}
		}()
	}
	wg.Wait()
	d.Close()
	for key, vals := range seen {
		if len(vals) != 200 || !sort.IntsAreSorted(vals) {
			t.Errorf("key %s: %d items, sorted=%v", key, len(vals), sort.IntsAreSorted(vals))
		}
	}
}
