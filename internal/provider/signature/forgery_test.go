package signature

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// forgery is a signature value derived from a valid one: each must be
// refused, or a verifier that compares a prefix of the MAC, trusts a
// length the sender chose, or decodes leniently would pass unnoticed.
type forgery struct{ name, value string }

// hexForgeries derives forgeries from a valid hex MAC.
func hexForgeries(mac []byte) []forgery {
	valid := hex.EncodeToString(mac)
	return []forgery{
		{"one byte", valid[:2]},
		{"one byte short", valid[:len(valid)-2]},
		{"one digit short", valid[:len(valid)-1]},
		{"half", valid[:len(valid)/2]},
		{"one byte more", valid + "00"},
		{"one digit more", valid + "0"},
		{"doubled", valid + valid},
		{"base64 instead of hex", base64.StdEncoding.EncodeToString(mac)},
		{"last byte flipped", valid[:len(valid)-2] + hex.EncodeToString([]byte{mac[len(mac)-1] ^ 1})},
		{"empty", ""},
	}
}

// base64Forgeries derives forgeries from a valid base64 MAC.
func base64Forgeries(mac []byte) []forgery {
	valid := base64.StdEncoding.EncodeToString(mac)
	flipped := append([]byte(nil), mac...)
	flipped[0] ^= 1
	return []forgery{
		{"one byte", base64.StdEncoding.EncodeToString(mac[:1])},
		{"one byte short", base64.StdEncoding.EncodeToString(mac[:len(mac)-1])},
		{"half", base64.StdEncoding.EncodeToString(mac[:len(mac)/2])},
		{"truncated text", valid[:len(valid)-4]},
		{"one byte more", base64.StdEncoding.EncodeToString(append(append([]byte(nil), mac...), 0))},
		{"doubled", base64.StdEncoding.EncodeToString(append(append([]byte(nil), mac...), mac...))},
		{"case swapped", swapCase(valid)},
		{"hex instead of base64", hex.EncodeToString(mac)},
		{"url alphabet, unpadded", base64.RawURLEncoding.EncodeToString(mac)},
		{"first byte flipped", base64.StdEncoding.EncodeToString(flipped)},
		{"empty", ""},
	}
}

func swapCase(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z':
			return r - 'A' + 'a'
		}
		return r
	}, s)
}

func macOf(key []byte, parts ...string) []byte {
	m := hmac.New(sha256.New, key)
	for _, p := range parts {
		m.Write([]byte(p))
	}
	return m.Sum(nil)
}

// refuseAll checks that every header set in forged fails verification.
func refuseAll(t *testing.T, v Verifier, body []byte, now time.Time, secrets [][]byte, forged map[string]http.Header) {
	t.Helper()
	for name, h := range forged {
		if _, err := v.Verify(Delivery{Header: h, Body: body, Now: now}, secrets); err == nil {
			t.Errorf("%s: accepted %q", name, h)
		}
	}
}

func TestStripeRefusesEveryForgeryOfAValidSignature(t *testing.T) {
	t.Parallel()
	body := []byte(`{"id":"evt_forged"}`)
	now := time.Now()
	secret := "whsec_test"
	ts := strconv.FormatInt(now.Unix(), 10)
	mac := macOf([]byte(secret), ts, ".", string(body))
	if got := stripeSigned(t, secret, body, now).Get(StripeHeader); got != "t="+ts+",v1="+hex.EncodeToString(mac) {
		t.Fatalf("the MAC the forgeries derive from is not Stripe's: %s", got)
	}
	header := func(v string) http.Header { return http.Header{StripeHeader: {v}} }
	forged := map[string]http.Header{
		"label upper-cased": header("t=" + ts + ",V1=" + hex.EncodeToString(mac)),
		"v0 label":          header("t=" + ts + ",v0=" + hex.EncodeToString(mac)),
		"no timestamp":      header("v1=" + hex.EncodeToString(mac)),
	}
	for _, f := range hexForgeries(mac) {
		forged[f.name] = header("t=" + ts + ",v1=" + f.value)
	}
	refuseAll(t, Stripe{}, body, now, [][]byte{[]byte(secret)}, forged)
}

func TestStandardWebhooksRefusesEveryForgeryOfAValidSignature(t *testing.T) {
	t.Parallel()
	body := []byte(`{"type":"feedback.created"}`)
	now := time.Now()
	secret := newStandardSecret(t)
	valid := svixSigned(t, secret, "msg_forged", now, body)
	key, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	ts := valid.Get(StandardTimestampHeader)
	mac := macOf(key, "msg_forged", ".", ts, ".", string(body))
	if got := valid.Get(StandardSignatureHeader); got != "v1,"+base64.StdEncoding.EncodeToString(mac) {
		t.Fatalf("the MAC the forgeries derive from is not Svix's: %s", got)
	}
	header := func(sig string) http.Header {
		h := valid.Clone()
		h.Set(StandardSignatureHeader, sig)
		return h
	}
	forged := map[string]http.Header{
		"label upper-cased": header("V1," + base64.StdEncoding.EncodeToString(mac)),
		"ed25519 label":     header("v1a," + base64.StdEncoding.EncodeToString(mac)),
		"no label":          header(base64.StdEncoding.EncodeToString(mac)),
	}
	for _, f := range base64Forgeries(mac) {
		forged[f.name] = header("v1," + f.value)
	}
	refuseAll(t, StandardWebhooks{}, body, now, [][]byte{[]byte(secret)}, forged)
}

func TestGitHubRefusesEveryForgeryOfAValidSignature(t *testing.T) {
	t.Parallel()
	body := []byte(`{"action":"created"}`)
	mac := macOf([]byte("gh-secret"), string(body))
	header := func(v string) http.Header { return http.Header{GitHubHeader: {v}} }
	forged := map[string]http.Header{
		"label upper-cased": header("SHA256=" + hex.EncodeToString(mac)),
		"sha1 label":        header("sha1=" + hex.EncodeToString(mac)),
		"no label":          header(hex.EncodeToString(mac)),
	}
	for _, f := range hexForgeries(mac) {
		forged[f.name] = header("sha256=" + f.value)
	}
	refuseAll(t, GitHub{}, body, time.Now(), [][]byte{[]byte("gh-secret")}, forged)
}

func TestHMACRefusesEveryForgeryOfAValidSignature(t *testing.T) {
	t.Parallel()
	body := []byte(`{"id":"e1"}`)
	now := time.Now()
	secret := []byte("hmac-secret")
	for _, enc := range []string{"hex", "base64"} {
		cfg := HMACConfig{Header: "X-Signature", Encoding: enc, Prefix: "sha256=", TimestampHeader: "X-Timestamp"}
		v, err := NewHMAC(cfg, 0)
		if err != nil {
			t.Fatal(err)
		}
		valid := v.Sign(string(secret), body, now)
		ts := valid.Get("X-Timestamp")
		mac := macOf(secret, ts, ".", string(body))
		header := func(sig string) http.Header {
			h := valid.Clone()
			h.Set("X-Signature", sig)
			return h
		}
		forgeries := hexForgeries(mac)
		if enc == "base64" {
			forgeries = base64Forgeries(mac)
		}
		forged := map[string]http.Header{
			enc + ": prefix upper-cased": header("SHA256=" + cfg.encode(mac)),
			enc + ": no prefix":          header(cfg.encode(mac)),
		}
		for _, f := range forgeries {
			forged[enc+": "+f.name] = header("sha256=" + f.value)
		}
		refuseAll(t, v, body, now, [][]byte{secret}, forged)
	}
}
