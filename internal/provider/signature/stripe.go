package signature

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"
)

// Stripe verifies `Stripe-Signature: t=<unix>,v1=<hex>[,v1=<hex>...]`, an
// HMAC-SHA256 over "t.body" keyed by the whsec_ secret string as-is. Several
// v1 values arrive while a secret is rolled; any one matching any active
// secret is enough.
type Stripe struct {
	Tolerance time.Duration // default DefaultTolerance
	macs      *keyedMACs    // NewStripe's; a zero Stripe keys every MAC anew
}

// NewStripe is a Stripe verifier that keeps its secrets' keyed HMAC states
// from one delivery to the next: open one per source.
func NewStripe(tolerance time.Duration) Stripe {
	return Stripe{Tolerance: tolerance, macs: newKeyedMACs(sha256.New)}
}

// StripeHeader is the header Stripe signs with.
const StripeHeader = "Stripe-Signature"

func (s Stripe) Verify(d Delivery, secrets [][]byte) (Verified, error) {
	header := d.Header.Get(StripeHeader)
	if header == "" {
		return Verified{}, ErrMissing
	}
	var ts string
	var sigs [][]byte
	for _, part := range strings.Split(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			continue
		}
		switch k {
		case "t":
			ts = v
		case "v1":
			if len(sigs) == MaxSignatures {
				continue
			}
			if sig, err := hex.DecodeString(v); err == nil && len(sig) == sha256.Size {
				sigs = append(sigs, sig)
			}
		}
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(sigs) == 0 {
		return Verified{}, ErrMissing
	}
	signedAt := time.Unix(unix, 0)

	// Check the signature before the clock, so a stale but genuine request
	// and a forged one are told apart in metrics, never in the answer.
	if !anyMatch(s.macs, sha256.New, secrets, sigs, []byte(ts), []byte{'.'}, d.Body) {
		return Verified{}, ErrMismatch
	}
	if !withinTolerance(signedAt, d.Now, s.Tolerance) {
		return Verified{}, ErrStale
	}
	return Verified{SignedAt: signedAt}, nil
}

// SignStripe produces a Stripe-Signature header value for body, as Stripe
// would: for demos, load generators and tests of our own callers. Tests of
// the verifier use Stripe's library instead.
func SignStripe(secret string, body []byte, at time.Time) string {
	ts := strconv.FormatInt(at.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac.Sum(nil))
}
