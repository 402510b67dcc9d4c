// Package ownerclaim makes the first owner in one step: `clawhost init`
// writes a one-time owner code's salted hash, with its expiry, to
// data_dir/owner-claim.json ([Create]); the host makes the sender of
// "/owner CODE" an owner when the code matches before it expires
// ([Claims.Claim]): the sender's "<instance>:<id>" is added to
// data_dir/owners.json, which the host adds to access.owners at every
// start and reload ([Owners]), and the claim file is deleted.
//
// The code is 8 characters from a 32-letter alphabet (40 bits); the claim
// is burned after [MaxAttempts] wrong codes, so guessing it is hopeless.
// Both files are 0600. The files live in one host's data_dir: with several
// hosts sharing a database, the owner is claimed on the host that reads the
// message and listed there only (put it in access.owners for all).
package ownerclaim

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/clawhost/clawhost/core/internal/atomicfile"
)

const (
	// ClaimFile is the pending claim in data_dir: the code's salted hash
	// and its expiry, never the code.
	ClaimFile = "owner-claim.json"
	// OwnersFile lists the owners made by a claim, in data_dir.
	OwnersFile = "owners.json"
	// MaxAttempts wrong codes burn the claim (init makes a new one).
	MaxAttempts = 5
	// CodeLength is the length of an owner code.
	CodeLength = 8
	// DefaultTTL is how long a claim made by init is valid.
	DefaultTTL = 24 * time.Hour
)

// alphabet has no 0/O or 1/I, so a code read off a screen is typed right;
// 32 letters, so a random byte picks one without bias.
const alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"

// claim is the stored form of a pending claim.
type claim struct {
	Salt      string    `json:"salt"`
	Hash      string    `json:"hash"`
	ExpiresAt time.Time `json:"expires_at"`
	Attempts  int       `json:"attempts"`
}

// Owner is one owner made by a claim.
type Owner struct {
	// Entry is "<instance>:<sender id>", as access.owners holds it.
	Entry     string    `json:"entry"`
	ClaimedAt time.Time `json:"claimed_at"`
}

type ownersFile struct {
	Owners []Owner `json:"owners"`
}

// Create writes a new claim to dir (made 0700 if missing), replacing any
// pending one, valid for ttl from now, and returns its code: shown to the
// user once, never stored.
func Create(dir string, ttl time.Duration, now time.Time) (string, error) {
	raw := make([]byte, CodeLength+16)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("create owner code: %w", err)
	}
	code := make([]byte, CodeLength)
	for i := range code {
		code[i] = alphabet[int(raw[i])%len(alphabet)]
	}
	salt := hex.EncodeToString(raw[CodeLength:])
	c := claim{Salt: salt, Hash: digest(salt, string(code)), ExpiresAt: now.Add(ttl).UTC()}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("create owner code: %w", err)
	}
	if err := writeJSON(filepath.Join(dir, ClaimFile), c); err != nil {
		return "", fmt.Errorf("create owner code: %w", err)
	}
	return string(code), nil
}

// Pending reports whether dir holds a claim that can still be used at now (not expired,
// not burned).
func Pending(dir string, now time.Time) (bool, error) {
	var cl claim
	if err := readJSON(filepath.Join(dir, ClaimFile), &cl); errors.Is(err, fs.ErrNotExist) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("owner claim: %w", err)
	}
	return now.Before(cl.ExpiresAt) && cl.Attempts < MaxAttempts, nil
}

func digest(salt, code string) string {
	sum := sha256.Sum256([]byte(salt + ":" + normalize(code)))
	return hex.EncodeToString(sum[:])
}

// normalize makes a typed code comparable: case and surrounding space do
// not matter.
func normalize(code string) string { return strings.ToUpper(strings.TrimSpace(code)) }

// Outcome is what a claim attempt came to.
type Outcome int

// Outcomes of [Claims.Claim].
const (
	// NoClaim: no claim is pending (none made, used, expired or burned).
	NoClaim Outcome = iota
	// WrongCode: a claim is pending and the code is not its code.
	WrongCode
	// Claimed: the code matched; the sender is an owner now.
	Claimed
)

// Claims checks owner codes against the claim in one data_dir. Safe for
// concurrent use.
type Claims struct {
	dir string
	now func() time.Time
	mu  sync.Mutex
}

// New returns the claims of data_dir dir; now is the clock (nil:
// time.Now).
func New(dir string, now func() time.Time) *Claims {
	if now == nil {
		now = time.Now
	}
	return &Claims{dir: dir, now: now}
}

// Claim checks code for sender entry ("<instance>:<id>"). On a match the
// entry is added to the owners file first, then the claim deleted: a crash
// between the two leaves an owner and a claim that a second use would only
// repeat. A wrong code counts an attempt; the MaxAttempts-th burns the
// claim. An expired claim is deleted.
func (c *Claims) Claim(entry, code string) (Outcome, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	path := filepath.Join(c.dir, ClaimFile)
	var cl claim
	if err := readJSON(path, &cl); errors.Is(err, fs.ErrNotExist) {
		return NoClaim, nil
	} else if err != nil {
		return NoClaim, fmt.Errorf("owner claim: %w", err)
	}
	now := c.now()
	if !now.Before(cl.ExpiresAt) || cl.Attempts >= MaxAttempts {
		return NoClaim, remove(path)
	}
	if subtle.ConstantTimeCompare([]byte(digest(cl.Salt, code)), []byte(cl.Hash)) != 1 {
		cl.Attempts++
		if cl.Attempts >= MaxAttempts {
			return WrongCode, remove(path)
		}
		if err := writeJSON(path, cl); err != nil {
			return WrongCode, fmt.Errorf("owner claim: count the attempt: %w", err)
		}
		return WrongCode, nil
	}
	if err := c.addOwner(entry, now); err != nil {
		return NoClaim, fmt.Errorf("owner claim: %w", err)
	}
	return Claimed, remove(path)
}

func (c *Claims) addOwner(entry string, now time.Time) error {
	path := filepath.Join(c.dir, OwnersFile)
	var f ownersFile
	if err := readJSON(path, &f); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if !slices.ContainsFunc(f.Owners, func(o Owner) bool { return o.Entry == entry }) {
		f.Owners = append(f.Owners, Owner{Entry: entry, ClaimedAt: now.UTC()})
	}
	return writeJSON(path, f)
}

// Owners returns the entries of the owners made by claims in data_dir dir;
// none when the file does not exist.
func Owners(dir string) ([]string, error) {
	var f ownersFile
	err := readJSON(filepath.Join(dir, OwnersFile), &f)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read claimed owners: %w", err)
	}
	out := make([]string, 0, len(f.Owners))
	for _, o := range f.Owners {
		out = append(out, o.Entry)
	}
	return out, nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(path, append(b, '\n'))
}

func remove(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("owner claim: delete %s: %w", filepath.Base(path), err)
	}
	return nil
}
