package store

import (
	"crypto/rand"
	"encoding/json"
	"time"
)

// UnixNano is how the engines store a time: Unix nanoseconds, 0 for the
// zero time (see "Time" in the package documentation).
func UnixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// FromUnixNano is the inverse of UnixNano.
func FromUnixNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

// EncodeIDs is how the engines store platform message ids: a JSON array,
// "" for none.
func EncodeIDs(ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	b, _ := json.Marshal(ids) // strings always encode
	return string(b)
}

// DecodeIDs is the inverse of EncodeIDs; it also reads "null", which
// earlier versions stored for none.
func DecodeIDs(s string) ([]string, error) {
	if s == "" {
		return nil, nil
	}
	var ids []string
	err := json.Unmarshal([]byte(s), &ids)
	return ids, err
}

// codeAlphabet leaves out 0, O, 1 and I, which people misread.
const codeAlphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"

// NewPairingCode returns a random pairing code as [PairingRequest.Code]
// describes: 8 capital letters and digits, without 0, O, 1 and I.
func NewPairingCode() string {
	b := make([]byte, 8)
	rand.Read(b) // never fails (crypto/rand panics instead)
	for i := range b {
		b[i] = codeAlphabet[int(b[i])%len(codeAlphabet)] // 256 % 32 == 0: unbiased
	}
	return string(b)
}
