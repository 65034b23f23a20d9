package signature

import (
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/internal/standardwebhooks"
)

// StandardWebhooks verifies the Standard Webhooks scheme: `webhook-id`,
// `webhook-timestamp` (unix seconds) and `webhook-signature: v1,<base64>
// [v1,<base64> ...]`, an HMAC-SHA256 over "id.timestamp.body" keyed by the
// base64-decoded part of the "whsec_..." secret. Several signatures arrive
// while a secret is rotated; any one matching any active secret is enough.
// Other versions (v1a is ed25519) are ignored, so a request carrying only
// those is refused.
type StandardWebhooks struct {
	Tolerance time.Duration // default DefaultTolerance, both directions
}

// Standard Webhooks headers.
const (
	StandardIDHeader        = standardwebhooks.IDHeader
	StandardTimestampHeader = standardwebhooks.TimestampHeader
	StandardSignatureHeader = standardwebhooks.SignatureHeader
)

func (s StandardWebhooks) Verify(d Delivery, secrets [][]byte) (Verified, error) {
	id, ts, header := d.Header.Get(StandardIDHeader), d.Header.Get(StandardTimestampHeader), d.Header.Get(StandardSignatureHeader)
	if id == "" || ts == "" || header == "" {
		return Verified{}, ErrMissing
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return Verified{}, ErrMissing
	}
	sigs := candidates(strings.Fields(header), sha256.Size, func(part string) ([]byte, bool) {
		version, b64, ok := strings.Cut(part, ",")
		if !ok || version != "v1" {
			return nil, false
		}
		sig, err := base64.StdEncoding.DecodeString(b64)
		return sig, err == nil
	})
	if len(sigs) == 0 {
		return Verified{}, ErrMissing
	}
	if !anyMatch(nil, sha256.New, standardKeys(secrets), sigs, []byte(id), []byte{'.'}, []byte(ts), []byte{'.'}, d.Body) {
		return Verified{}, ErrMismatch
	}
	signedAt := time.Unix(unix, 0)
	if !withinTolerance(signedAt, d.Now, s.Tolerance) {
		return Verified{}, ErrStale
	}
	return Verified{SignedAt: signedAt}, nil
}

// standardKeys decodes the keys of the secrets that have one.
func standardKeys(secrets [][]byte) [][]byte {
	keys := make([][]byte, 0, len(secrets))
	for _, secret := range secrets {
		if key, ok := standardKey(secret); ok {
			keys = append(keys, key)
		}
	}
	return keys
}

// standardKey decodes the HMAC key of a "whsec_<base64>" secret
// (standardwebhooks.Key: padded or not, as the reference libraries accept).
func standardKey(secret []byte) ([]byte, bool) {
	key, err := standardwebhooks.Key(string(secret))
	return key, err == nil
}

// ErrStandardSecret: a Standard Webhooks secret that could verify nothing.
var ErrStandardSecret = standardwebhooks.ErrSecret

// ValidStandardSecret reports whether secret is a usable Standard Webhooks
// secret, so administration can refuse a typo before it reaches a source.
func ValidStandardSecret(secret string) bool {
	_, ok := standardKey([]byte(secret))
	return ok
}

// SignStandard produces a webhook-signature value, as a Standard Webhooks
// sender would: for load generators and tests of our own callers.
func SignStandard(secret, id string, at time.Time, body []byte) string {
	key, _ := standardKey([]byte(secret))
	return standardwebhooks.Signature(key, id, at, body)
}
