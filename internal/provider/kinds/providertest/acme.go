// Package providertest holds a made-up provider kind, acme, written the way
// a shipped one is (internal/provider/kinds/<kind>): this folder, beside the
// shipped kinds, and one registry line are all it takes (see ingest's
// TestAMadeUpKindNeedsOnlyItsFolderAndARegistryLine). Acme signs
// the body with HMAC-SHA256 in Acme-Signature (hex), names each delivery in
// Acme-Delivery, and writes its type, object and time in the body.
package providertest

import (
	"crypto/hmac"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"time"

	"github.com/sluicehq/sluice/internal/provider"
	"github.com/sluicehq/sluice/internal/provider/jsonptr"
	"github.com/sluicehq/sluice/internal/provider/signature"
)

// Kind is the made-up kind.
const Kind provider.Kind = "acme"

// Acme's headers.
const (
	SignatureHeader = "Acme-Signature"
	DeliveryHeader  = "Acme-Delivery"
)

//go:embed schemas
var schemaFiles embed.FS

// Schemas are acme's event types, for schemas.Load.
func Schemas() fs.FS {
	sub, _ := fs.Sub(schemaFiles, "schemas")
	return sub
}

// Acme is the made-up kind.
type Acme struct{}

func (Acme) Kind() provider.Kind { return Kind }

func (Acme) Open(settings []byte, _ time.Duration) (provider.Scheme, error) {
	if err := provider.NoSettings(Kind, settings); err != nil {
		return provider.Scheme{}, err
	}
	return provider.Scheme{Verifier: verifier{}, Read: read, MaxBody: 64 << 10}, nil
}

func (Acme) CheckSecret(string) error { return nil }

type verifier struct{}

func (verifier) Verify(d signature.Delivery, secrets [][]byte) (signature.Verified, error) {
	sig, err := hex.DecodeString(d.Header.Get(SignatureHeader))
	if err != nil || len(sig) != sha256.Size {
		return signature.Verified{}, signature.ErrMissing
	}
	matched := false
	for _, secret := range secrets {
		matched = hmac.Equal(mac(secret, d.Body), sig) || matched
	}
	if !matched {
		return signature.Verified{}, signature.ErrMismatch
	}
	return signature.Verified{}, nil
}

func read(h http.Header, doc any) provider.Event {
	ev := provider.Event{ID: h.Get(DeliveryHeader), ObjectIDPointer: "/thing/id", TimePointer: "/at", TimeFormat: "rfc3339"}
	ev.Type, _ = jsonptr.String(doc, "/event")
	return ev
}

// Sign returns the headers acme would send with body.
func Sign(secret, delivery string, body []byte) http.Header {
	return http.Header{SignatureHeader: {hex.EncodeToString(mac([]byte(secret), body))}, DeliveryHeader: {delivery}}
}

func mac(secret, body []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return m.Sum(nil)
}
