// Package signature authenticates webhook deliveries over the exact bytes
// received, before anything parses them. Each provider scheme is a Verifier;
// all comparisons are constant-time, the work one request can cause is
// bounded (at most MaxSignatures candidate signatures per request), and every
// failure is one of the errors below so the HTTP layer can answer 401
// without saying more than it should.
package signature

import (
	"crypto/hmac"
	"hash"
	"net/http"
	"time"

	"github.com/sluicehq/sluice/internal/refusal"
)

var (
	// ErrMissing: the signature header is absent or unreadable.
	ErrMissing = refusal.Sub(refusal.Unauthenticated, "signature_missing", "signature: missing or malformed signature header")
	// ErrMismatch: no signature matched any active secret.
	ErrMismatch = refusal.Sub(refusal.Unauthenticated, "signature_mismatch", "signature: no signature matches")
	// ErrStale: the signed timestamp is outside the tolerance window.
	ErrStale = refusal.Sub(refusal.Unauthenticated, "signature_stale", "signature: timestamp outside tolerance")
)

// Delivery is what a verifier sees of a request.
type Delivery struct {
	Header http.Header
	Body   []byte
	Now    time.Time
}

// Verified is what a verifier vouches for.
type Verified struct {
	// SignedAt is the timestamp covered by the signature, when the scheme
	// signs one.
	SignedAt time.Time
}

// Verifier checks one scheme. secrets are the source's active secrets, in
// the form the provider hands them out (e.g. "whsec_...").
type Verifier interface {
	Verify(d Delivery, secrets [][]byte) (Verified, error)
}

// DefaultTolerance is how far a signed timestamp may be from now, in either
// direction, unless a source says otherwise.
const DefaultTolerance = 5 * time.Minute

// MaxSignatures bounds the candidate signatures read from one request, so a
// header listing thousands of them costs no more than a normal one.
const MaxSignatures = 8

// candidates decodes the signatures of a header's parts, at most
// MaxSignatures of them; decode says which parts are signatures of the
// scheme, and a signature of another size than size is not one.
func candidates(parts []string, size int, decode func(part string) ([]byte, bool)) [][]byte {
	var sigs [][]byte
	for _, part := range parts {
		if len(sigs) == MaxSignatures {
			break
		}
		if sig, ok := decode(part); ok && len(sig) == size {
			sigs = append(sigs, sig)
		}
	}
	return sigs
}

func withinTolerance(signed, now time.Time, tolerance time.Duration) bool {
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	d := now.Sub(signed)
	return d <= tolerance && d >= -tolerance
}

// anyMatch computes the MAC of the signed parts under every secret and
// compares it, in constant time, with every candidate. It never stops early,
// so timing does not reveal which secret or candidate matched. macs holds
// the verifier's keyed states (nil: none), newHash is the scheme's hash.
func anyMatch(macs *keyedMACs, newHash func() hash.Hash, secrets [][]byte, candidates [][]byte, parts ...[]byte) bool {
	matched := false
	var sum [64]byte // SHA-512's size, the largest of the schemes'
	for _, secret := range secrets {
		mac, kept := macs.mac(newHash, secret)
		for _, p := range parts {
			mac.Write(p)
		}
		expected := mac.Sum(sum[:0])
		for _, c := range candidates {
			if hmac.Equal(expected, c) {
				matched = true
			}
		}
		kept.release(mac)
	}
	return matched
}
