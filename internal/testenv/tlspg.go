package testenv

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"time"
)

// TLSPostgres is a PostgreSQL 15 of a test binary's own, started from the
// local binaries (initdb, pg_ctl: SLUICE_PG_BINDIR, default Debian's
// /usr/lib/postgresql/15/bin) in a temporary directory, with wal_level
// logical and ssl=on under a throwaway CA. Its pg_hba.conf accepts only
// TLS (hostssl, trust): a process that reached it at all, its replication
// connection included, spoke TLS. The shared Postgres of `make up` is
// never restarted or reconfigured for this: other sessions use it.
type TLSPostgres struct {
	Port   int
	CAFile string // the CA that signed the server's certificate (PEM)
	dir    string
	stop   func()
}

// TLSOptions vary the server's certificate.
type TLSOptions struct {
	// Expired gives the server a certificate that expired an hour ago,
	// signed by the same CA.
	Expired bool
}

// StartTLSPostgres initializes and starts one; Stop removes it.
func StartTLSPostgres(opts TLSOptions) (*TLSPostgres, error) {
	bindir := os.Getenv("SLUICE_PG_BINDIR")
	if bindir == "" {
		bindir = "/usr/lib/postgresql/15/bin"
	}
	if _, err := os.Stat(filepath.Join(bindir, "initdb")); err != nil {
		return nil, fmt.Errorf("a Postgres of the test's own needs PostgreSQL 15's binaries in %s (apt-get install postgresql-15, or set SLUICE_PG_BINDIR): %w", bindir, err)
	}
	dir, err := os.MkdirTemp("", "sluice-tlspg-")
	if err != nil {
		return nil, err
	}
	// The server may run as another user (postgres, when tests run as
	// root): it must reach its directory.
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err
	}
	p := &TLSPostgres{dir: dir, CAFile: filepath.Join(dir, "ca.crt")}
	p.stop = func() { _ = os.RemoveAll(dir) }
	if err := p.start(bindir, opts); err != nil {
		p.Stop()
		return nil, err
	}
	return p, nil
}

func (p *TLSPostgres) start(bindir string, opts TLSOptions) error {
	data := filepath.Join(p.dir, "data")
	as, err := serverUser()
	if err != nil {
		return err
	}
	if os.Geteuid() == 0 {
		u, _ := user.Lookup("postgres") // serverUser found it
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(p.dir, uid, gid); err != nil {
			return err
		}
	}
	if out, err := as(exec.Command(filepath.Join(bindir, "initdb"), "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C")).CombinedOutput(); err != nil {
		return fmt.Errorf("initdb: %w\n%s", err, out)
	}
	ca, caKey, err := newCA("sluice test CA")
	if err != nil {
		return err
	}
	notAfter := time.Now().Add(24 * time.Hour)
	if opts.Expired {
		notAfter = time.Now().Add(-time.Hour)
	}
	certPEM, keyPEM, err := serverCert(ca, caKey, notAfter)
	if err != nil {
		return err
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	p.Port = port
	conf := fmt.Sprintf(`listen_addresses = '127.0.0.1'
port = %d
unix_socket_directories = '%s'
wal_level = logical
max_replication_slots = 16
max_wal_senders = 16
max_connections = 200
fsync = off
ssl = on
ssl_cert_file = 'server.crt'
ssl_key_file = 'server.key'
`, port, p.dir)
	hba := "local all all trust\nhostssl all all 127.0.0.1/32 trust\nhostssl replication all 127.0.0.1/32 trust\n"
	files := map[string][]byte{
		filepath.Join(data, "sluice.conf"): []byte(conf), filepath.Join(data, "pg_hba.conf"): []byte(hba),
		filepath.Join(data, "server.crt"): certPEM, filepath.Join(data, "server.key"): keyPEM,
	}
	for path, b := range files {
		if err := writeAs(as, path, b); err != nil {
			return err
		}
	}
	if err := appendInclude(as, filepath.Join(data, "postgresql.conf")); err != nil {
		return err
	}
	if err := os.WriteFile(p.CAFile, pemBlock("CERTIFICATE", ca.Raw), 0o644); err != nil {
		return err
	}
	pgctl := filepath.Join(bindir, "pg_ctl")
	if out, err := as(exec.Command(pgctl, "-D", data, "-l", filepath.Join(p.dir, "postgres.log"), "-w", "-t", "60", "start")).CombinedOutput(); err != nil {
		log, _ := os.ReadFile(filepath.Join(p.dir, "postgres.log"))
		return fmt.Errorf("pg_ctl start: %w\n%s\n%s", err, out, log)
	}
	remove := p.stop
	p.stop = func() {
		_ = as(exec.Command(pgctl, "-D", data, "-m", "immediate", "-w", "stop")).Run()
		remove()
	}
	return nil
}

// Stop stops the server and removes its files.
func (p *TLSPostgres) Stop() { p.stop() }

// URL is a connection to database db as user over verify-full TLS
// against caFile (the server's own CA when empty).
func (p *TLSPostgres) URL(user, db, caFile string) string {
	if caFile == "" {
		caFile = p.CAFile
	}
	q := url.Values{"sslmode": {"verify-full"}, "sslrootcert": {caFile}}
	u := url.URL{Scheme: "postgres", User: url.User(user), Host: net.JoinHostPort("localhost", strconv.Itoa(p.Port)), Path: "/" + db, RawQuery: q.Encode()}
	return u.String()
}

// serverUser runs commands as the user the server must run as: initdb and
// postgres refuse root, so as root that is the postgres system user.
func serverUser() (func(*exec.Cmd) *exec.Cmd, error) {
	if os.Geteuid() != 0 {
		return func(c *exec.Cmd) *exec.Cmd { return c }, nil
	}
	if _, err := user.Lookup("postgres"); err != nil {
		return nil, fmt.Errorf("running as root, a Postgres of the test's own runs as the postgres system user, which is missing: %w", err)
	}
	return func(c *exec.Cmd) *exec.Cmd {
		run := exec.Command("runuser", append([]string{"-u", "postgres", "--", c.Path}, c.Args[1:]...)...)
		run.Dir = "/"
		return run
	}, nil
}

// writeAs writes a file the server's user owns (its key must be 0600 and
// its own).
func writeAs(as func(*exec.Cmd) *exec.Cmd, path string, b []byte) error {
	cmd := as(exec.Command("sh", "-c", `umask 077 && cat > "$0"`, path))
	cmd.Stdin = bytes.NewReader(b)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("write %s: %w\n%s", path, err, out)
	}
	return nil
}

func appendInclude(as func(*exec.Cmd) *exec.Cmd, conf string) error {
	cmd := as(exec.Command("sh", "-c", `echo "include 'sluice.conf'" >> "$0"`, conf))
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("include sluice.conf: %w\n%s", err, out)
	}
	return nil
}

// NewCAFile writes a CA certificate of its own to dir: the wrong CA for a
// server it did not sign.
func NewCAFile(dir string) (string, error) {
	ca, _, err := newCA("another CA")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "other-ca.crt")
	return path, os.WriteFile(path, pemBlock("CERTIFICATE", ca.Raw), 0o644)
}

func newCA(name string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(48 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	return cert, key, err
}

// serverCert is a certificate for localhost and 127.0.0.1, valid until
// notAfter (in the past for an expired one), signed by ca.
func serverCert(ca *x509.Certificate, caKey *ecdsa.PrivateKey, notAfter time.Time) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano() + 1), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: notAfter.Add(-48 * time.Hour), NotAfter: notAfter,
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pemBlock("CERTIFICATE", der), pemBlock("EC PRIVATE KEY", keyDER), nil
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

// adminContext bounds what the helpers below ask of the server.
func adminContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), time.Minute)
}
