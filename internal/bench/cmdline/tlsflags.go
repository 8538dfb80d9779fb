package cmdline

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"
)

// tlsFlags are redis-benchmark's --tls options.
type tlsFlags struct {
	enabled                bool
	sni, cacert, cacertdir string
	insecure               bool
	cert, key              string
	ciphers, ciphersuites  string
}

func (t *tlsFlags) define(fl *pflag.FlagSet) {
	fl.BoolVar(&t.enabled, "tls", false, "establish a secure TLS connection")
	fl.StringVar(&t.sni, "sni", "", "server name indication for TLS")
	fl.StringVar(&t.cacert, "cacert", "", "CA certificate file to verify with")
	fl.StringVar(&t.cacertdir, "cacertdir", "", "directory of trusted CA certificates")
	fl.BoolVar(&t.insecure, "insecure", false, "allow insecure TLS connection by skipping cert validation")
	fl.StringVar(&t.cert, "cert", "", "client certificate to authenticate with")
	fl.StringVar(&t.key, "key", "", "private key file to authenticate with")
	fl.StringVar(&t.ciphers, "tls-ciphers", "", "preferred TLS 1.2 ciphers, OpenSSL names separated by ':'")
	fl.StringVar(&t.ciphersuites, "tls-ciphersuites", "", "TLS 1.3 ciphersuites, separated by ':' (checked; Go always negotiates its own TLS 1.3 order)")
}

// config builds the tls.Config, or nil without --tls.
func (t *tlsFlags) config(addr string) (*tls.Config, error) {
	if !t.enabled {
		if t.cacert != "" || t.cert != "" || t.key != "" || t.sni != "" || t.insecure {
			return nil, fmt.Errorf("TLS options given without --tls")
		}
		return nil, nil
	}
	c := &tls.Config{InsecureSkipVerify: t.insecure, ServerName: t.sni, MinVersion: tls.VersionTLS12}
	if c.ServerName == "" {
		if host, _, err := net.SplitHostPort(addr); err == nil {
			c.ServerName = host
		}
	}
	if err := t.roots(c); err != nil {
		return nil, err
	}
	if (t.cert == "") != (t.key == "") {
		return nil, fmt.Errorf("--cert and --key go together")
	}
	if t.cert != "" {
		pair, err := loadKeyPair(t.cert, t.key)
		if err != nil {
			return nil, fmt.Errorf("load --cert/--key: %w", err)
		}
		c.Certificates = []tls.Certificate{pair}
	}
	var err error
	if c.CipherSuites, err = cipherIDs(t.ciphers); err != nil {
		return nil, err
	}
	return c, checkSuites13(t.ciphersuites)
}

func (t *tlsFlags) roots(c *tls.Config) error {
	if t.cacert == "" && t.cacertdir == "" {
		return nil // system roots
	}
	pool := x509.NewCertPool()
	files := []string{}
	if t.cacert != "" {
		files = append(files, t.cacert)
	}
	if t.cacertdir != "" {
		entries, err := os.ReadDir(t.cacertdir)
		if err != nil {
			return fmt.Errorf("--cacertdir: %w", err)
		}
		for _, e := range entries {
			if !e.IsDir() {
				files = append(files, filepath.Join(t.cacertdir, e.Name()))
			}
		}
	}
	added := 0
	for _, f := range files {
		b, err := readPEM(f)
		if err != nil {
			return fmt.Errorf("read CA certificate: %w", err)
		}
		if pool.AppendCertsFromPEM(b) {
			added++
		}
	}
	if added == 0 {
		return fmt.Errorf("no PEM certificate found in --cacert/--cacertdir")
	}
	c.RootCAs = pool
	return nil
}

func loadKeyPair(cert, key string) (tls.Certificate, error) {
	c, err := readPEM(cert)
	if err != nil {
		return tls.Certificate{}, err
	}
	k, err := readPEM(key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.X509KeyPair(c, k)
}

// maxPEM bounds a certificate or key file; real ones are a few kilobytes.
const maxPEM = 1 << 20

// readPEM reads a certificate or key file, which a scenario's workload
// line may name: a regular file of at most maxPEM bytes, opened without
// blocking, so that /dev/zero is not read until memory runs out and a
// FIFO does not hang the run.
func readPEM(path string) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (a certificate or key is a PEM file)", path)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxPEM+1))
	if err == nil && len(b) > maxPEM {
		err = fmt.Errorf("%s: larger than %d bytes, not a certificate or key file", path, maxPEM)
	}
	return b, err
}

// cipherIDs maps OpenSSL cipher names (what redis-benchmark takes) to Go's
// TLS 1.2 suites.
func cipherIDs(list string) ([]uint16, error) {
	if list == "" {
		return nil, nil
	}
	byName := map[string]uint16{}
	for _, cs := range append(tls.CipherSuites(), tls.InsecureCipherSuites()...) {
		byName[cs.Name] = cs.ID
	}
	var ids []uint16
	for _, n := range strings.Split(list, ":") {
		id, ok := byName[opensslCiphers[n]]
		if !ok {
			id, ok = byName[n]
		}
		if !ok {
			return nil, fmt.Errorf("--tls-ciphers: unknown or unsupported cipher %q (known: %s)", n, strings.Join(knownCiphers(), ":"))
		}
		ids = append(ids, id)
	}
	return ids, nil
}

var opensslCiphers = map[string]string{
	"ECDHE-ECDSA-AES128-GCM-SHA256": "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
	"ECDHE-RSA-AES128-GCM-SHA256":   "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
	"ECDHE-ECDSA-AES256-GCM-SHA384": "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
	"ECDHE-RSA-AES256-GCM-SHA384":   "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
	"ECDHE-ECDSA-CHACHA20-POLY1305": "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
	"ECDHE-RSA-CHACHA20-POLY1305":   "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
	"ECDHE-ECDSA-AES128-SHA":        "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA",
	"ECDHE-RSA-AES128-SHA":          "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
	"ECDHE-ECDSA-AES256-SHA":        "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA",
	"ECDHE-RSA-AES256-SHA":          "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
	"AES128-GCM-SHA256":             "TLS_RSA_WITH_AES_128_GCM_SHA256",
	"AES256-GCM-SHA384":             "TLS_RSA_WITH_AES_256_GCM_SHA384",
}

func knownCiphers() []string {
	var names []string
	for n := range opensslCiphers {
		names = append(names, n)
	}
	return names
}

func checkSuites13(list string) error {
	if list == "" {
		return nil
	}
	ok := map[string]bool{"TLS_AES_128_GCM_SHA256": true, "TLS_AES_256_GCM_SHA384": true, "TLS_CHACHA20_POLY1305_SHA256": true}
	for _, n := range strings.Split(list, ":") {
		if !ok[n] {
			return fmt.Errorf("--tls-ciphersuites: unknown TLS 1.3 suite %q (known: TLS_AES_128_GCM_SHA256, TLS_AES_256_GCM_SHA384, TLS_CHACHA20_POLY1305_SHA256)", n)
		}
	}
	return nil
}
