// Package standardwebhooks is the Standard Webhooks signing scheme both ways
// Sluice uses it: ingest verifies what providers sign, the dispatcher signs
// what it sends. One key decoder and one signer, so the two directions can
// never disagree about the scheme.
package standardwebhooks

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/internal/refusal"
)

// The scheme's headers.
const (
	IDHeader        = "webhook-id"
	TimestampHeader = "webhook-timestamp"
	SignatureHeader = "webhook-signature"
)

// SecretPrefix precedes the base64 key in a secret.
const SecretPrefix = "whsec_"

// ErrSecret: a secret that could sign or verify nothing.
var ErrSecret = refusal.Sub(refusal.Invalid, "webhook_secret", "a Standard Webhooks secret is whsec_ followed by the base64 of its key (padded or not)")

// Key decodes the HMAC key of a "whsec_<base64>" secret, its base64 padded
// or not: the spec's reference libraries (npm and Python standardwebhooks)
// accept both, and providers hand out both. A secret without the prefix is
// taken as base64 too, as those libraries do.
func Key(secret string) ([]byte, error) {
	b64 := strings.TrimPrefix(secret, SecretPrefix)
	key, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		key, err = base64.RawStdEncoding.DecodeString(b64)
	}
	if err != nil || len(key) == 0 {
		return nil, ErrSecret
	}
	return key, nil
}

// MAC is the scheme's HMAC-SHA256 over "id.timestamp.body".
func MAC(key []byte, id string, at time.Time, body []byte) []byte {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + strconv.FormatInt(at.Unix(), 10) + "."))
	mac.Write(body)
	return mac.Sum(nil)
}

// Signature is the webhook-signature value for one key.
func Signature(key []byte, id string, at time.Time, body []byte) string {
	return "v1," + base64.StdEncoding.EncodeToString(MAC(key, id, at, body))
}
