package slack

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// threads remembers the threads the bot posted in, so a reply there needs
// no mention (a thread the bot answered in is a conversation with it).
// It keeps the newest maxThreads. With a data directory it survives a
// restart or a crash of the plugin: each new thread is appended to
// threadsFile as one line "<channel> <thread ts>", and the file is
// rewritten with only the kept threads when it holds twice as many lines
// (and when it is read). Not fsynced: a power cut may forget the last
// threads, whose replies then need a mention again.
type threads struct {
	mu    sync.Mutex
	m     map[string]struct{}
	order []string // oldest first
	// path is the file in the data directory ("" keeps them in memory);
	// lines is how many lines it holds.
	path  string
	lines int
}

const (
	maxThreads  = 4096
	threadsFile = "threads"
)

// open reads the threads kept in dir ("" for none) and keeps the file
// there from now on. A file it cannot read is reported and the threads
// start empty; a torn last line is skipped.
func (t *threads) open(dir string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.m, t.order, t.path, t.lines = map[string]struct{}{}, nil, "", 0
	if dir == "" {
		return nil
	}
	t.path = filepath.Join(dir, threadsFile)
	b, err := os.ReadFile(t.path)
	if err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("read slack threads: %w", err)
	}
	torn := false
	if i := bytes.LastIndexByte(b, '\n'); i+1 < len(b) {
		b, torn = b[:i+1], true // a write cut short
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		t.lines++
		if chat, ts, ok := strings.Cut(sc.Text(), " "); ok && chat != "" && ts != "" {
			t.addLocked(chat + ":" + ts)
		}
	}
	if torn || t.lines > len(t.order) {
		return t.rewriteLocked()
	}
	return nil
}

// note remembers the thread threadTS of chatID; a new one is written to
// the file.
func (t *threads) note(chatID, threadTS string) error {
	if threadTS == "" {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[string]struct{}{}
	}
	if !t.addLocked(chatID + ":" + threadTS) {
		return nil
	}
	if t.path == "" {
		return nil
	}
	if t.lines+1 > 2*maxThreads {
		return t.rewriteLocked()
	}
	f, err := os.OpenFile(t.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("keep slack thread: %w", err)
	}
	_, err = fmt.Fprintf(f, "%s %s\n", chatID, threadTS)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("keep slack thread: %w", err)
	}
	t.lines++
	return nil
}

// has reports whether the bot posted in thread threadTS of chatID.
func (t *threads) has(chatID, threadTS string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, ok := t.m[chatID+":"+threadTS]
	return ok
}

// addLocked adds k, dropping the oldest beyond maxThreads; false when it
// was there.
func (t *threads) addLocked(k string) bool {
	if _, ok := t.m[k]; ok {
		return false
	}
	t.m[k] = struct{}{}
	t.order = append(t.order, k)
	if len(t.order) > maxThreads {
		delete(t.m, t.order[0])
		t.order = t.order[1:]
	}
	return true
}

// rewriteLocked replaces the file with the kept threads.
func (t *threads) rewriteLocked() error {
	var b bytes.Buffer
	for _, k := range t.order {
		chat, ts, _ := strings.Cut(k, ":")
		fmt.Fprintf(&b, "%s %s\n", chat, ts)
	}
	tmp := t.path + ".tmp"
	if err := os.WriteFile(tmp, b.Bytes(), 0o600); err != nil {
		return fmt.Errorf("keep slack threads: %w", err)
	}
	if err := os.Rename(tmp, t.path); err != nil {
		return fmt.Errorf("keep slack threads: %w", err)
	}
	t.lines = len(t.order)
	return nil
}

// noteThread remembers that the bot posted in threadTS of chatID; a
// failure to keep it is logged (the thread is still remembered until the
// plugin stops).
func (a *Adapter) noteThread(chatID, threadTS string) {
	if err := a.threads.note(chatID, threadTS); err != nil {
		a.log.Warn("a thread the bot answered in is not kept across restarts", "err", err)
	}
}

// inThread reports whether the bot posted in threadTS of chatID.
func (a *Adapter) inThread(chatID, threadTS string) bool { return a.threads.has(chatID, threadTS) }
