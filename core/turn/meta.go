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
// profile), so decoded metadata is kept by its JSON text.

// metaCacheMax bounds the cache: the sessions of about as many chats as the
// store's own session cache keeps. Full, it is emptied and refills.
const metaCacheMax = 1024

type decodedMeta struct {
	meta chatMeta
	ok   bool // the JSON decoded without error
}

var metaCache struct {
	mu sync.Mutex
	m  map[string]decodedMeta
}

// metaOf decodes raw, as json.Unmarshal into a zero chatMeta would (a
// malformed text leaves what was decoded before the error, and ok false).
// The result is the caller's: its slices are not shared.
func metaOf(raw []byte) (chatMeta, bool) {
	if len(raw) == 0 {
		return chatMeta{}, false // as json.Unmarshal: unexpected end of input
	}
	metaCache.mu.Lock()
	d, hit := metaCache.m[string(raw)]
	metaCache.mu.Unlock()
	if !hit {
		d.ok = json.Unmarshal(raw, &d.meta) == nil
		remember(raw, d)
	}
	return own(d.meta), d.ok
}

// encodeMeta encodes meta for the session row and remembers it, so that
// the next turn's reads of it need no decoding.
func encodeMeta(meta chatMeta) ([]byte, error) {
	b, err := json.Marshal(meta)
	if err == nil {
		remember(b, decodedMeta{meta: own(meta), ok: true})
	}
	return b, err
}

func remember(raw []byte, d decodedMeta) {
	metaCache.mu.Lock()
	defer metaCache.mu.Unlock()
	if metaCache.m == nil || len(metaCache.m) >= metaCacheMax {
		metaCache.m = make(map[string]decodedMeta, metaCacheMax)
	}
	metaCache.m[string(raw)] = d
}

// own copies the slices of m, so that neither the cache nor a caller sees
// the other's appends.
func own(m chatMeta) chatMeta {
	m.Always = slices.Clone(m.Always)
	m.Past = slices.Clone(m.Past)
	return m
}
