package testenv

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/internal/kafka"
)

// SecureKafka is a broker with the listeners a secured deployment meets
// (dev/kafka/secure.properties.tmpl): SASL_SSL with SCRAM, SSL with client
// certificates, the standard authorizer allowing nothing without an ACL.
// Its PLAINTEXT listener's principal is a super user: tests make users and
// ACLs there, each test its own.
type SecureKafka struct {
	Plain   []string // PLAINTEXT: ANONYMOUS, a super user
	SASLSSL []string // SASL_SSL: SCRAM-SHA-512 and -256
	SSL     []string // SSL: mutual TLS, the principal is User:<subject>
	CAFile  string   // the CA of the broker's certificate (PEM)

	caCert *x509.Certificate
	caKey  crypto.Signer
	admin  *kadm.Client
}

var (
	secureOnce sync.Once
	secure     *SecureKafka
	secureErr  error
)

// RequireSecureKafka returns the secured broker or fails the test. It is
// the `make up` broker when .run/env names its secured listeners
// (SLUICE_TEST_KAFKA_SECURE_*); otherwise dev/kafka/secure-stack.sh starts
// one of its own (ports 9392-9394), kept running for the next test binary.
func RequireSecureKafka(tb testing.TB) *SecureKafka {
	tb.Helper()
	s, err := FindSecureKafka()
	if err != nil {
		tb.Fatalf("secured Kafka: %v", err)
	}
	return s
}

// FindSecureKafka is RequireSecureKafka for a TestMain.
func FindSecureKafka() (*SecureKafka, error) {
	secureOnce.Do(func() { secure, secureErr = findSecureKafka() })
	return secure, secureErr
}

func findSecureKafka() (*SecureKafka, error) {
	env := map[string]string{}
	for _, k := range []string{"PLAIN", "SASL_SSL", "SSL", "TLS_DIR"} {
		env[k] = os.Getenv("SLUICE_TEST_KAFKA_SECURE_" + k)
	}
	if env["PLAIN"] == "" {
		var err error
		if env, err = startSecureStack(nil); err != nil {
			return nil, err
		}
	}
	return secureKafkaOf(env)
}

// secureKafkaOf is the broker whose listeners env names (the keys of
// .run/kafka-secure/env without their prefix).
func secureKafkaOf(env map[string]string) (*SecureKafka, error) {
	s := &SecureKafka{Plain: []string{env["PLAIN"]}, SASLSSL: []string{env["SASL_SSL"]}, SSL: []string{env["SSL"]},
		CAFile: filepath.Join(env["TLS_DIR"], "ca.pem")}
	if err := s.loadCA(filepath.Join(env["TLS_DIR"], "ca.key")); err != nil {
		return nil, err
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(s.Plain...))
	if err != nil {
		return nil, err
	}
	s.admin = kadm.NewClient(cl)
	return s, nil
}

// startSecureStack runs dev/kafka/secure-stack.sh up from the module's
// root, with env added to its environment (a stack of its own:
// SLUICE_SECURE_KAFKA_NAME, ..._PORT), and reads the listeners it wrote.
func startSecureStack(env []string) (map[string]string, error) {
	root, err := moduleRoot()
	if err != nil {
		return nil, err
	}
	if out, err := secureStack(root, env, "up"); err != nil {
		return nil, fmt.Errorf("dev/kafka/secure-stack.sh up: %w\n%s", err, out)
	}
	name := "kafka-secure"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "SLUICE_SECURE_KAFKA_NAME="); ok {
			name = v
		}
	}
	written, err := ReadEnv(filepath.Join(root, ".run", name, "env"))
	if err != nil {
		return nil, err
	}
	listeners := map[string]string{}
	for k, v := range written {
		listeners[strings.TrimPrefix(k, "SLUICE_TEST_KAFKA_SECURE_")] = v
	}
	return listeners, nil
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "dev/kafka/secure-stack.sh")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no dev/kafka/secure-stack.sh above the working directory")
		}
		dir = parent
	}
}

func (s *SecureKafka) loadCA(keyFile string) error {
	certPEM, err := os.ReadFile(s.CAFile)
	if err != nil {
		return err
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return err
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return fmt.Errorf("the broker's CA: %w", err)
	}
	s.caCert, err = x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return err
	}
	signer, ok := pair.PrivateKey.(crypto.Signer)
	if !ok {
		return errors.New("the broker's CA key cannot sign")
	}
	s.caKey = signer
	return nil
}

// Admin is a super user's admin client, on the PLAINTEXT listener.
func (s *SecureKafka) Admin() *kadm.Client { return s.admin }

// NewUser makes a SCRAM-SHA-512 user of the test's own, named after
// prefix, and deletes it when the test ends; it returns its name and
// password once the broker knows it.
func (s *SecureKafka) NewUser(tb testing.TB, prefix string) (string, string) {
	tb.Helper()
	user, password := prefix+"-"+RandomSuffix(), "pw-"+RandomSuffix()+RandomSuffix()
	tb.Cleanup(func() {
		_, _ = s.admin.AlterUserSCRAMs(context.Background(), []kadm.DeleteSCRAM{{User: user, Mechanism: kadm.ScramSha512}}, nil)
	})
	if err := s.upsertUser(context.Background(), user, password); err != nil {
		tb.Fatal(err)
	}
	return user, password
}

// SASLUser makes a SCRAM-SHA-512 user named after prefix allowed acls, for
// a TestMain (no testing.TB): its client configuration over SASL_SSL, and
// what removes the user and its ACLs.
func (s *SecureKafka) SASLUser(ctx context.Context, prefix string, acls []kafka.ACL) (kafka.Config, func(), error) {
	user, password := prefix+"-"+RandomSuffix(), "pw-"+RandomSuffix()+RandomSuffix()
	drop := func() {
		_, _ = s.admin.AlterUserSCRAMs(context.Background(), []kadm.DeleteSCRAM{{User: user, Mechanism: kadm.ScramSha512}}, nil)
		for _, b := range kafka.Builders("User:"+user, acls) {
			_, _ = s.admin.DeleteACLs(context.Background(), b)
		}
	}
	err := s.upsertUser(ctx, user, password)
	if err == nil {
		err = s.grant(ctx, "User:"+user, acls)
	}
	if err != nil {
		drop()
		return kafka.Config{}, nil, err
	}
	return s.SASL(user, password), drop, nil
}

func (s *SecureKafka) upsertUser(ctx context.Context, user, password string) error {
	res, err := s.admin.AlterUserSCRAMs(ctx, nil,
		[]kadm.UpsertSCRAM{{User: user, Mechanism: kadm.ScramSha512, Iterations: 4096, Password: password}})
	if err == nil {
		err = res.Error()
	}
	if err != nil {
		return fmt.Errorf("SCRAM user %s: %w", user, err)
	}
	// The broker learns of the user a moment later, from its metadata log.
	cl, err := kafka.NewClient(s.SASL(user, password))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	return until(ctx, func() error { return kafka.Reachable(ctx, adm) })
}

// grant creates the ACLs and returns once the broker's authorizer lists
// them all (it learns of them from the metadata log too).
func (s *SecureKafka) grant(ctx context.Context, principal string, acls []kafka.ACL) error {
	for _, b := range kafka.Builders(principal, acls) {
		res, err := s.admin.CreateACLs(ctx, b)
		if err == nil {
			for _, r := range res {
				err = errors.Join(err, r.Err)
			}
		}
		if err != nil {
			return fmt.Errorf("create ACLs for %s: %w", principal, err)
		}
	}
	return until(ctx, func() error {
		n := 0
		for _, b := range kafka.Builders(principal, acls) {
			res, err := s.admin.DescribeACLs(ctx, b)
			if err != nil {
				return err
			}
			for _, r := range res {
				n += len(r.Described)
			}
		}
		if n < len(acls) {
			return fmt.Errorf("the broker lists %d of %d ACLs of %s", n, len(acls), principal)
		}
		return nil
	})
}

// until retries f for 20 s while it fails.
func until(ctx context.Context, f func() error) error {
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := f()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// SASL is the client configuration of user over SASL_SSL.
func (s *SecureKafka) SASL(user, password string) kafka.Config {
	return kafka.Config{Brokers: s.SASLSSL, TLS: true, TLSCAFile: s.CAFile,
		SASLMechanism: "scram-sha-512", SASLUser: user, SASLPassword: password}
}

// MTLS is the client configuration of a certificate over SSL.
func (s *SecureKafka) MTLS(certFile, keyFile string) kafka.Config {
	return kafka.Config{Brokers: s.SSL, TLSCAFile: s.CAFile, CertFile: certFile, KeyFile: keyFile}
}

// Grant creates the ACLs allowing principal, returning once the broker
// applies them, and removes them when the test ends.
func (s *SecureKafka) Grant(tb testing.TB, principal string, acls ...kafka.ACL) {
	tb.Helper()
	tb.Cleanup(func() { s.Revoke(tb, principal, acls...) })
	if err := s.grant(context.Background(), principal, acls); err != nil {
		tb.Fatal(err)
	}
}

// Revoke deletes the ACLs allowing principal.
func (s *SecureKafka) Revoke(tb testing.TB, principal string, acls ...kafka.ACL) {
	tb.Helper()
	for _, b := range kafka.Builders(principal, acls) {
		res, err := s.admin.DeleteACLs(context.Background(), b)
		if err == nil {
			for _, r := range res {
				err = errors.Join(err, r.Err)
			}
		}
		if err != nil {
			tb.Errorf("delete ACLs of %s: %v", principal, err)
		}
	}
}

// IssueCert writes a client certificate for cn, signed by the broker's CA
// (or by ca when given) and valid from notBefore to notAfter, with its key,
// into the test's directory; it returns both files.
func (s *SecureKafka) IssueCert(tb testing.TB, cn string, notBefore, notAfter time.Time) (string, string) {
	tb.Helper()
	return issue(tb, s.caCert, s.caKey, cn, notBefore, notAfter, nil)
}

// CA is a certificate authority of a test's own: a CA the broker never
// heard of, or the issuer of a broker stand-in's certificate.
type CA struct {
	File string
	cert *x509.Certificate
	key  crypto.Signer
}

// NewCA makes a CA in the test's directory.
func NewCA(tb testing.TB) CA {
	tb.Helper()
	key := newKey(tb)
	tmpl := &x509.Certificate{SerialNumber: serial(tb), Subject: pkix.Name{CommonName: "test CA " + RandomSuffix()},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		tb.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	file := filepath.Join(tb.TempDir(), "ca.pem")
	writePEM(tb, file, "CERTIFICATE", der)
	return CA{File: file, cert: cert, key: key}
}

// Issue writes a certificate for cn (and the IP 127.0.0.1) signed by the CA.
func (ca CA) Issue(tb testing.TB, cn string, notBefore, notAfter time.Time) (string, string) {
	tb.Helper()
	return issue(tb, ca.cert, ca.key, cn, notBefore, notAfter, []net.IP{net.IPv4(127, 0, 0, 1)})
}

func issue(tb testing.TB, caCert *x509.Certificate, caKey crypto.Signer, cn string, notBefore, notAfter time.Time, ips []net.IP) (string, string) {
	tb.Helper()
	key := newKey(tb)
	tmpl := &x509.Certificate{SerialNumber: serial(tb), Subject: pkix.Name{CommonName: cn},
		NotBefore: notBefore, NotAfter: notAfter, IPAddresses: ips,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, key.Public(), caKey)
	if err != nil {
		tb.Fatal(err)
	}
	dir := tb.TempDir()
	certFile, keyFile := filepath.Join(dir, "client.pem"), filepath.Join(dir, "client.key")
	writePEM(tb, certFile, "CERTIFICATE", der)
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		tb.Fatal(err)
	}
	writePEM(tb, keyFile, "PRIVATE KEY", pkcs8)
	return certFile, keyFile
}

func newKey(tb testing.TB) *ecdsa.PrivateKey {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	return key
}

func serial(tb testing.TB) *big.Int {
	tb.Helper()
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

func writePEM(tb testing.TB, file, kind string, der []byte) {
	tb.Helper()
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		tb.Fatal(err)
	}
}

func secureStack(root string, env []string, verb string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(root, "dev/kafka/secure-stack.sh"), verb)
	cmd.Env = append(os.Environ(), env...)
	return cmd.CombinedOutput()
}
