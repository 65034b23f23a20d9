package ingest_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/internal/ingest"
	"github.com/sluicehq/sluice/internal/keyring"
	"github.com/sluicehq/sluice/internal/listen"
	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/provider/kinds"
	"github.com/sluicehq/sluice/internal/store/tenancy"
	"github.com/sluicehq/sluice/internal/testenv"
	"github.com/sluicehq/sluice/schemas"
)

// selfSigned writes a certificate for 127.0.0.1 and its key as PEM files.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "sluice test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// Ingest served over HTTPS by the process's own listener (--tls-cert,
// --tls-key) accepts a signed webhook.
func TestIngestServesHTTPS(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pool, err := pg.Connect(ctx, dbURL, 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	key, _ := keyring.Generate()
	ring, _ := keyring.Parse(key)
	catalogue, err := schemas.Load()
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	reg := prometheus.NewRegistry()
	svc := ingest.New(ingest.Config{Providers: kinds.Builtin()}, log, pool, ring, catalogue, reg)
	testenv.Run(t, svc.Run)
	certFile, keyFile, roots := selfSigned(t)
	srv := listen.NewPublic("127.0.0.1:0", log, nil, true)
	srv.UseTLS(certFile, keyFile)
	svc.Register(srv.Engine)
	ln, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln, 5*time.Second) }()

	store := tenancy.Store{Pool: pool, Ring: ring, Providers: kinds.Builtin()}
	tenant, err := store.CreateTenant(ctx, t.Name())
	if err != nil {
		t.Fatal(err)
	}
	secret := "whsec_tls"
	source, err := store.CreateSource(ctx, tenancy.NewSource{TenantID: tenant, Kind: "stripe", Account: "acct_tls_" + tenant, Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	body := paid("evt_tls", "in_tls")
	req, _ := http.NewRequest(http.MethodPost, "https://"+ln.Addr().String()+"/v1/ingest/"+source, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Stripe-Signature", stripeHeader(secret, body, time.Now()).Get("Stripe-Signature"))
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted || resp.TLS == nil {
		t.Fatalf("status %d over TLS %v, want 202 over TLS", resp.StatusCode, resp.TLS != nil)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
