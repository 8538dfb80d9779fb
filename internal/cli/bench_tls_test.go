package cli

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"redline/internal/redisserver"
	"redline/internal/redistest"
)

// writeTestPKI writes a CA and a server certificate for 127.0.0.1 into dir.
func writeTestPKI(t *testing.T, dir string) (ca, cert, key string) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "redline test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	srvKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	srvTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		KeyUsage: x509.KeyUsageDigitalSignature}
	caCert, _ := x509.ParseCertificate(caDER)
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, caCert, &srvKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(srvKey)
	// Readable by the unprivileged user a root test's redis-server runs
	// as: a throwaway test key.
	os.Chmod(dir, 0o755)
	os.Chmod(filepath.Dir(dir), 0o755)
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	return write("ca.pem", "CERTIFICATE", caDER), write("server.pem", "CERTIFICATE", srvDER), write("server.key", "EC PRIVATE KEY", keyDER)
}

func TestBenchTLS(t *testing.T) {
	dir := t.TempDir()
	ca, cert, key := writeTestPKI(t, dir)
	tlsPort, _ := redisserver.FreePort("127.0.0.1")
	s := redistest.StartWith(t, redisserver.Options{Config: []string{
		"tls-port " + strconv.Itoa(tlsPort), "tls-cert-file " + cert, "tls-key-file " + key,
		"tls-ca-cert-file " + ca, "tls-auth-clients no",
	}})
	redistest.Do(t, redistest.Client(t, s), "CONFIG", "RESETSTAT")
	_, errOut, code := runCLI(t, context.Background(), nil, "bench", "-p", strconv.Itoa(tlsPort), "--tls", "--cacert", ca,
		"-t", "set", "-n", "1000", "-c", "4", "-P", "3", "--dbnum", "1", "-q", "--progress", "none")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if got := commandCalls(t, s)["set"]; got != 1000 {
		t.Errorf("%d SETs over TLS, want 1000", got)
	}
	// Without the CA the certificate must be refused, not trusted.
	_, errOut, code = runCLI(t, context.Background(), nil, "bench", "-p", strconv.Itoa(tlsPort), "--tls", "-t", "set", "-n", "10")
	if code != 1 || errOut == "" {
		t.Errorf("untrusted certificate accepted: exit %d %s", code, errOut)
	}
}
