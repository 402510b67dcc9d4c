package store

import (
	"crypto/rand"
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
