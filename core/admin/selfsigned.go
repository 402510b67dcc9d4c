package admin

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/clawhost/clawhost/core/internal/atomicfile"
)

// ensureCertificate makes a self-signed certificate and its key at certPath and keyPath
// (0600, their directory 0700) when neither file exists — a container's status page
// beyond loopback on the first start, with no certificate to bring — and returns the
// certificate's SHA-256 fingerprint then ("" when both files were there). One file
// without the other is an error: a half-written pair is never replaced silently.
// The certificate names localhost, the loopback addresses, the machine's host name and
// every IP it has, and is valid for ten years; `clawhost status` trusts it because it
// reads the configured file (the CLI's adminBase).
func ensureCertificate(certPath, keyPath string, now time.Time) (string, error) {
	_, cerr := os.Stat(certPath)
	_, kerr := os.Stat(keyPath)
	certMissing, keyMissing := errors.Is(cerr, fs.ErrNotExist), errors.Is(kerr, fs.ErrNotExist)
	switch {
	case !certMissing && !keyMissing:
		return "", nil
	case certMissing != keyMissing:
		return "", fmt.Errorf("TLS: one of %s and %s exists and the other does not; remove it to have a self-signed pair made, or supply both", certPath, keyPath)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return "", err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "clawhost admin endpoint"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	if name, err := os.Hostname(); err == nil && name != "" {
		tmpl.DNSNames = append(tmpl.DNSNames, name)
	}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok && !ipn.IP.IsLoopback() {
				tmpl.IPAddresses = append(tmpl.IPAddresses, ipn.IP)
			}
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return "", err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return "", err
	}
	for _, f := range []struct {
		path  string
		block *pem.Block
	}{{keyPath, &pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}}, {certPath, &pem.Block{Type: "CERTIFICATE", Bytes: der}}} {
		if err := os.MkdirAll(filepath.Dir(f.path), 0o700); err != nil {
			return "", err
		}
		if err := atomicfile.Write(f.path, pem.EncodeToMemory(f.block)); err != nil {
			return "", err
		}
	}
	sum := sha256.Sum256(der)
	return hex.EncodeToString(sum[:]), nil
}
