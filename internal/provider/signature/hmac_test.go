package signature

import (
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// RFC 4231 test case 2: key "Jefe", data "what do ya want for nothing?".
// Published vectors, so the generic scheme is held against values not ours.
const (
	rfc4231Key    = "Jefe"
	rfc4231Data   = "what do ya want for nothing?"
	rfc4231SHA256 = "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
	rfc4231SHA512 = "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737"
	// base64 of the SHA-256 vector.
	rfc4231SHA256B64 = "W9zBRr9gdU5qBCQmCJV1x1oAPwidJzmDnexYuWTsOEM="
)

func TestHMACAcceptsPublishedVectors(t *testing.T) {
	t.Parallel()
	body := []byte(rfc4231Data)
	secrets := [][]byte{[]byte("other"), []byte(rfc4231Key)}
	cases := map[string]struct {
		cfg HMACConfig
		sig string
	}{
		"sha256 hex":             {HMACConfig{Header: "X-Signature"}, rfc4231SHA256},
		"sha256 hex with prefix": {HMACConfig{Header: "X-Signature", Prefix: "sha256="}, "sha256=" + rfc4231SHA256},
		"sha512 hex":             {HMACConfig{Header: "X-Signature", Algorithm: "sha512"}, rfc4231SHA512},
		"sha256 base64":          {HMACConfig{Header: "X-Sig", Encoding: "base64"}, rfc4231SHA256B64},
		"several signatures":     {HMACConfig{Header: "X-Signature"}, "00, " + rfc4231SHA256},
	}
	for name, tc := range cases {
		v, err := NewHMAC(tc.cfg, 0)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		h := http.Header{}
		h.Set(tc.cfg.Header, tc.sig)
		if _, err := v.Verify(Delivery{Header: h, Body: body, Now: time.Now()}, secrets); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if got := v.Sign(rfc4231Key, body, time.Now()).Get(tc.cfg.Header); name != "several signatures" && got != tc.sig {
			t.Errorf("%s: Sign = %s, want %s", name, got, tc.sig)
		}
	}
}

func TestHMACWithSignedTimestamp(t *testing.T) {
	t.Parallel()
	v, err := NewHMAC(HMACConfig{Header: "X-Signature", TimestampHeader: "X-Timestamp", Algorithm: "sha512", Encoding: "base64"}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"id":"e1","type":"thing.done"}`)
	now := time.Now()
	secrets := [][]byte{[]byte("s3cret")}
	if _, err := v.Verify(Delivery{Header: v.Sign("s3cret", body, now), Body: body, Now: now}, secrets); err != nil {
		t.Fatalf("verify: %v", err)
	}
	moved := v.Sign("s3cret", body, now)
	moved.Set("X-Timestamp", strconv.FormatInt(now.Unix()+1, 10))
	cases := map[string]struct {
		header http.Header
		want   error
	}{
		"timestamp changed":   {moved, ErrMismatch},
		"two minutes old":     {v.Sign("s3cret", body, now.Add(-2*time.Minute)), ErrStale},
		"two minutes ahead":   {v.Sign("s3cret", body, now.Add(2*time.Minute)), ErrStale},
		"no timestamp header": {http.Header{"X-Signature": moved["X-Signature"]}, ErrMissing},
		"wrong secret":        {v.Sign("other", body, now), ErrMismatch},
	}
	for name, tc := range cases {
		if _, err := v.Verify(Delivery{Header: tc.header, Body: body, Now: now}, secrets); !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", name, err, tc.want)
		}
	}
}

func TestHMACConfigValidation(t *testing.T) {
	t.Parallel()
	for name, cfg := range map[string]HMACConfig{
		"no header": {},
		"md5":       {Header: "X", Algorithm: "md5"},
		"base32":    {Header: "X", Encoding: "base32"},
	} {
		if _, err := NewHMAC(cfg, 0); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
