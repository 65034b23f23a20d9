package signature

import (
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v82/webhook"
)

// Signatures here are made by Stripe's own library, so the verifier is held
// against the provider's implementation rather than our reading of it.
func stripeSigned(t *testing.T, secret string, body []byte, at time.Time) http.Header {
	t.Helper()
	p := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: body, Secret: secret, Timestamp: at})
	h := http.Header{}
	h.Set(StripeHeader, p.Header)
	return h
}

func TestStripeAcceptsProviderSignature(t *testing.T) {
	t.Parallel()
	body := []byte(`{"id":"evt_1","type":"invoice.paid"}`)
	now := time.Now()
	h := stripeSigned(t, "whsec_test", body, now)
	v, err := Stripe{}.Verify(Delivery{Header: h, Body: body, Now: now}, [][]byte{[]byte("whsec_other"), []byte("whsec_test")})
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	if v.SignedAt.Unix() != now.Unix() {
		t.Fatalf("signed at %v, want %v", v.SignedAt, now)
	}
}

func TestStripeAcceptsAnyV1DuringRotation(t *testing.T) {
	t.Parallel()
	body := []byte(`{"id":"evt_2"}`)
	now := time.Now()
	newSig := stripeSigned(t, "whsec_new", body, now).Get(StripeHeader)
	oldSig := stripeSigned(t, "whsec_old", body, now).Get(StripeHeader)
	// Stripe sends t=..,v1=<new>,v1=<old> while a secret is rolled.
	h := http.Header{}
	_, oldV1, _ := strings.Cut(oldSig, ",")
	h.Set(StripeHeader, newSig+","+oldV1)
	if _, err := (Stripe{}).Verify(Delivery{Header: h, Body: body, Now: now}, [][]byte{[]byte("whsec_old")}); err != nil {
		t.Fatalf("old secret rejected while rotating: %v", err)
	}
}

func TestStripeRejections(t *testing.T) {
	t.Parallel()
	body := []byte(`{"id":"evt_3"}`)
	now := time.Now()
	secrets := [][]byte{[]byte("whsec_test")}
	cases := map[string]struct {
		header http.Header
		body   []byte
		want   error
	}{
		"no header":         {http.Header{}, body, ErrMissing},
		"garbage header":    {http.Header{StripeHeader: {"nonsense"}}, body, ErrMissing},
		"wrong secret":      {stripeSigned(t, "whsec_wrong", body, now), body, ErrMismatch},
		"body changed":      {stripeSigned(t, "whsec_test", body, now), []byte(`{"id":"evt_4"}`), ErrMismatch},
		"ten minutes old":   {stripeSigned(t, "whsec_test", body, now.Add(-10*time.Minute)), body, ErrStale},
		"ten minutes ahead": {stripeSigned(t, "whsec_test", body, now.Add(10*time.Minute)), body, ErrStale},
		"no secrets at all": {stripeSigned(t, "whsec_test", body, now), body, ErrMismatch},
	}
	for name, tc := range cases {
		s := secrets
		if name == "no secrets at all" {
			s = nil
		}
		_, err := Stripe{}.Verify(Delivery{Header: tc.header, Body: tc.body, Now: now}, s)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", name, err, tc.want)
		}
	}
}

func TestSignStripeMatchesStripeLibrary(t *testing.T) {
	t.Parallel()
	body := []byte(`{"id":"evt_5"}`)
	at := time.Unix(1_700_000_000, 0)
	want := webhook.ComputeSignature(at, body, "whsec_x")
	got := SignStripe("whsec_x", body, at)
	if got != "t=1700000000,v1="+hex.EncodeToString(want) {
		t.Fatalf("SignStripe = %s, Stripe computes %x", got, want)
	}
}
