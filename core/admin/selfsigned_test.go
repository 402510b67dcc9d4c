package admin

import (
	"crypto/tls"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A missing pair is made once (0600, a usable key pair); an existing pair is kept; half a
// pair is refused, never replaced.
func TestEnsureCertificate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "tls", "a.crt"), filepath.Join(dir, "tls", "a.key")
	fp, err := ensureCertificate(cert, key, time.Now())
	if err != nil || len(fp) != 64 {
		t.Fatalf("first call: %q %v", fp, err)
	}
	for _, p := range []string{cert, key} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v %v", p, fi, err)
		}
	}
	if _, err := tls.LoadX509KeyPair(cert, key); err != nil {
		t.Fatalf("the pair made does not load: %v", err)
	}
	before, _ := os.ReadFile(cert)
	if fp, err := ensureCertificate(cert, key, time.Now()); err != nil || fp != "" {
		t.Fatalf("second call: %q %v", fp, err)
	}
	if after, _ := os.ReadFile(cert); string(after) != string(before) {
		t.Fatal("an existing certificate was replaced")
	}
	if err := os.Remove(key); err != nil {
		t.Fatal(err)
	}
	if _, err := ensureCertificate(cert, key, time.Now()); err == nil || !strings.Contains(err.Error(), "exists and the other does not") {
		t.Fatalf("half a pair: %v", err)
	}
}
