package signature

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// HMACConfig describes a generic HMAC scheme, for providers that sign with a
// plain keyed hash in a header of their choosing.
type HMACConfig struct {
	// Header carries the signature, e.g. "X-Signature". Required.
	Header string `json:"header"`
	// Algorithm is "sha256" (default) or "sha512".
	Algorithm string `json:"algorithm,omitempty"`
	// Encoding of the signature: "hex" (default) or "base64".
	Encoding string `json:"encoding,omitempty"`
	// Prefix precedes each signature in the header, e.g. "sha256=".
	Prefix string `json:"prefix,omitempty"`
	// TimestampHeader, when set, carries a unix timestamp that is signed
	// too: the MAC covers "timestamp.body", and the timestamp must be within
	// the tolerance. Without it the MAC covers the body alone and a captured
	// request can be replayed (the event key makes that a duplicate).
	TimestampHeader string `json:"timestampHeader,omitempty"`
}

// Validate reports a configuration that could never verify anything.
func (c HMACConfig) Validate() error {
	if c.Header == "" {
		return errors.New("hmac: a signature header name is required")
	}
	if _, err := c.hash(); err != nil {
		return err
	}
	switch c.Encoding {
	case "", "hex", "base64":
	default:
		return fmt.Errorf("hmac: unknown encoding %q (want hex or base64)", c.Encoding)
	}
	return nil
}

func (c HMACConfig) hash() (func() hash.Hash, error) {
	switch c.Algorithm {
	case "", "sha256":
		return sha256.New, nil
	case "sha512":
		return sha512.New, nil
	default:
		return nil, fmt.Errorf("hmac: unknown algorithm %q (want sha256 or sha512)", c.Algorithm)
	}
}

func (c HMACConfig) decode(s string) ([]byte, error) {
	if c.Encoding == "base64" {
		return base64.StdEncoding.DecodeString(s)
	}
	return hex.DecodeString(s)
}

func (c HMACConfig) encode(b []byte) string {
	if c.Encoding == "base64" {
		return base64.StdEncoding.EncodeToString(b)
	}
	return hex.EncodeToString(b)
}

// HMAC verifies a generic HMAC scheme. The header may hold several
// signatures separated by spaces or commas (rotation); any one matching any
// active secret is enough. Secrets are used as-is.
type HMAC struct {
	Config    HMACConfig
	Tolerance time.Duration // default DefaultTolerance, both directions
	macs      *keyedMACs    // NewHMAC's, for Config's hash
}

// NewHMAC checks the configuration once, when the source is loaded, and
// keeps the secrets' keyed states from one delivery to the next.
func NewHMAC(cfg HMACConfig, tolerance time.Duration) (HMAC, error) {
	if err := cfg.Validate(); err != nil {
		return HMAC{}, err
	}
	newHash, _ := cfg.hash() // Validate checked it
	return HMAC{Config: cfg, Tolerance: tolerance, macs: newKeyedMACs(newHash)}, nil
}

func (v HMAC) Verify(d Delivery, secrets [][]byte) (Verified, error) {
	newHash, err := v.Config.hash()
	if err != nil {
		return Verified{}, err
	}
	parts := strings.FieldsFunc(d.Header.Get(v.Config.Header), func(r rune) bool { return r == ' ' || r == ',' })
	sigs := candidates(parts, newHash().Size(), func(part string) ([]byte, bool) {
		raw, ok := strings.CutPrefix(part, v.Config.Prefix)
		if !ok {
			return nil, false
		}
		sig, err := v.Config.decode(raw)
		return sig, err == nil
	})
	if len(sigs) == 0 {
		return Verified{}, ErrMissing
	}
	if v.Config.TimestampHeader == "" {
		if !anyMatch(v.macs, newHash, secrets, sigs, d.Body) {
			return Verified{}, ErrMismatch
		}
		return Verified{}, nil
	}
	ts := d.Header.Get(v.Config.TimestampHeader)
	unix, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return Verified{}, ErrMissing
	}
	if !anyMatch(v.macs, newHash, secrets, sigs, []byte(ts), []byte{'.'}, d.Body) {
		return Verified{}, ErrMismatch
	}
	signedAt := time.Unix(unix, 0)
	if !withinTolerance(signedAt, d.Now, v.Tolerance) {
		return Verified{}, ErrStale
	}
	return Verified{SignedAt: signedAt}, nil
}

// Sign produces the headers a sender configured like v would set: for load
// generators and tests of our own callers.
func (v HMAC) Sign(secret string, body []byte, at time.Time) http.Header {
	newHash, _ := v.Config.hash()
	mac := hmac.New(newHash, []byte(secret))
	h := http.Header{}
	if v.Config.TimestampHeader != "" {
		ts := strconv.FormatInt(at.Unix(), 10)
		h.Set(v.Config.TimestampHeader, ts)
		mac.Write([]byte(ts + "."))
	}
	mac.Write(body)
	h.Set(v.Config.Header, v.Config.Prefix+v.Config.encode(mac.Sum(nil)))
	return h
}
