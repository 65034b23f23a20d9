package signature

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	svix "github.com/svix/svix-webhooks/go"
)

// Signatures here are made by Svix's own library (the Standard Webhooks
// reference), so the verifier is held against an implementation not ours.
func newStandardSecret(t *testing.T) string {
	t.Helper()
	key := make([]byte, 24)
	_, _ = rand.Read(key)
	return "whsec_" + base64.StdEncoding.EncodeToString(key)
}

func svixSigned(t *testing.T, secret, id string, at time.Time, body []byte) http.Header {
	t.Helper()
	wh, err := svix.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := wh.Sign(id, at, body)
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	h.Set(StandardIDHeader, id)
	h.Set(StandardTimestampHeader, strconv.FormatInt(at.Unix(), 10))
	h.Set(StandardSignatureHeader, sig)
	return h
}

func TestStandardWebhooksAcceptsSvixSignature(t *testing.T) {
	t.Parallel()
	secret := newStandardSecret(t)
	body := []byte(`{"type":"feedback.created","timestamp":"2026-01-01T00:00:00Z","data":{"id":"fb_1"}}`)
	now := time.Now()
	h := svixSigned(t, secret, "msg_1", now, body)
	v, err := StandardWebhooks{}.Verify(Delivery{Header: h, Body: body, Now: now}, [][]byte{[]byte(newStandardSecret(t)), []byte(secret)})
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	if v.SignedAt.Unix() != now.Unix() {
		t.Fatalf("signed at %v, want %v", v.SignedAt, now)
	}
}

func TestStandardWebhooksAcceptsAnySignatureDuringRotation(t *testing.T) {
	t.Parallel()
	oldSecret, newSecret := newStandardSecret(t), newStandardSecret(t)
	body := []byte(`{"type":"verification.approved"}`)
	now := time.Now()
	h := svixSigned(t, newSecret, "msg_2", now, body)
	oldSig := svixSigned(t, oldSecret, "msg_2", now, body).Get(StandardSignatureHeader)
	h.Set(StandardSignatureHeader, "v1a,aWdub3JlZA== "+h.Get(StandardSignatureHeader)+" "+oldSig)
	if _, err := (StandardWebhooks{}).Verify(Delivery{Header: h, Body: body, Now: now}, [][]byte{[]byte(oldSecret)}); err != nil {
		t.Fatalf("old secret refused while rotating: %v", err)
	}
}

func TestSignStandardVerifiesWithSvix(t *testing.T) {
	t.Parallel()
	secret := newStandardSecret(t)
	body := []byte(`{"type":"feedback.created"}`)
	now := time.Now()
	h := http.Header{}
	h.Set(StandardIDHeader, "msg_3")
	h.Set(StandardTimestampHeader, strconv.FormatInt(now.Unix(), 10))
	h.Set(StandardSignatureHeader, SignStandard(secret, "msg_3", now, body))
	wh, _ := svix.NewWebhook(secret)
	if err := wh.Verify(body, h); err != nil {
		t.Fatalf("Svix refuses our signature: %v", err)
	}
}

func TestStandardWebhooksRejections(t *testing.T) {
	t.Parallel()
	secret := newStandardSecret(t)
	body := []byte(`{"type":"feedback.created"}`)
	now := time.Now()
	secrets := [][]byte{[]byte(secret)}
	good := func() http.Header { return svixSigned(t, secret, "msg_4", now, body) }
	with := func(k, v string) http.Header { h := good(); h.Set(k, v); return h }
	tooMany := strings.Repeat("v1,"+base64.StdEncoding.EncodeToString(make([]byte, 32))+" ", MaxSignatures) + good().Get(StandardSignatureHeader)
	cases := map[string]struct {
		header http.Header
		body   []byte
		want   error
	}{
		"no headers":             {http.Header{}, body, ErrMissing},
		"no id":                  {with(StandardIDHeader, ""), body, ErrMissing},
		"timestamp not a number": {with(StandardTimestampHeader, "yesterday"), body, ErrMissing},
		"only v1a":               {with(StandardSignatureHeader, "v1a,aWdub3JlZA=="), body, ErrMissing},
		"other id":               {with(StandardIDHeader, "msg_5"), body, ErrMismatch},
		"timestamp changed":      {with(StandardTimestampHeader, strconv.FormatInt(now.Unix()+1, 10)), body, ErrMismatch},
		"body changed":           {good(), []byte(`{"type":"feedback.deleted"}`), ErrMismatch},
		"wrong secret":           {svixSigned(t, newStandardSecret(t), "msg_4", now, body), body, ErrMismatch},
		"ten minutes old":        {svixSigned(t, secret, "msg_4", now.Add(-10*time.Minute), body), body, ErrStale},
		"ten minutes ahead":      {svixSigned(t, secret, "msg_4", now.Add(10*time.Minute), body), body, ErrStale},
		"good one past the cap":  {with(StandardSignatureHeader, tooMany), body, ErrMismatch},
	}
	for name, tc := range cases {
		_, err := StandardWebhooks{}.Verify(Delivery{Header: tc.header, Body: tc.body, Now: now}, secrets)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", name, err, tc.want)
		}
	}
	if ValidStandardSecret("whsec_not base64!") {
		t.Error("a secret that is not base64 was accepted")
	}
}
