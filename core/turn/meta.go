package turn

import (
	"encoding/json"
	"slices"
	"sync"
)

// A turn reads its session's chat metadata (a JSON object in the session
// row) several times: the "+elapsed" of the envelope, the overrides, the
// always-allowed tools, the token counts; and the JSON changes only when a
// turn ends, with a value this package has just encoded. Decoding it each
// time was ~9 % of the in-process pipeline's CPU (BenchmarkPipeline, CPU
// profile), so each session's decoded metadata is kept with the JSON text
// it was decoded from (or encoded to), and used while the session's row
// still holds that text.

// metaCacheMax bounds the cache: the sessions of about as many chats as the
// store's own session cache keeps. Full, an arbitrary entry makes room.
const metaCacheMax = 1024

type decodedMeta struct {
	raw  string
	meta chatMeta
	ok   bool // raw decoded without error
}

var metaCache struct {
	mu sync.Mutex
	m  map[string]decodedMeta // by session key
}

// metaOf decodes session key's metadata raw, as json.Unmarshal into a zero
// chatMeta would (a malformed text leaves what was decoded before the
// error, and ok false). The result is the caller's: its slices are not
// shared. key "" is not cached.
func metaOf(key string, raw []byte) (chatMeta, bool) {
	if len(raw) == 0 {
		return chatMeta{}, false // as json.Unmarshal: unexpected end of input
	}
	metaCache.mu.Lock()
	d, hit := metaCache.m[key]
	metaCache.mu.Unlock()
	if !hit || d.raw != string(raw) { // key "" is never remembered
		d = decodedMeta{raw: string(raw)}
		d.ok = json.Unmarshal(raw, &d.meta) == nil
		remember(key, d)
	}
	return own(d.meta), d.ok
}

// encodeMeta encodes meta for session key's row and remembers it, so that
// the next turn's reads of it need no decoding.
func encodeMeta(key string, meta chatMeta) ([]byte, error) {
	b, err := json.Marshal(meta)
	if err == nil {
		remember(key, decodedMeta{raw: string(b), meta: own(meta), ok: true})
	}
	return b, err
}

func remember(key string, d decodedMeta) {
	if key == "" {
		return
	}
	metaCache.mu.Lock()
	defer metaCache.mu.Unlock()
	if metaCache.m == nil {
		metaCache.m = make(map[string]decodedMeta, metaCacheMax)
	}
	if _, ok := metaCache.m[key]; !ok && len(metaCache.m) >= metaCacheMax {
		for k := range metaCache.m { // an arbitrary one
			delete(metaCache.m, k)
			break
		}
	}
	metaCache.m[key] = d
}

// own copies the slices of m, so that neither the cache nor a caller sees
// the other's appends.
func own(m chatMeta) chatMeta {
	m.Always = slices.Clone(m.Always)
	m.Past = slices.Clone(m.Past)
	return m
}
