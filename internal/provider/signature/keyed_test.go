package signature

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"
)

// A verifier that keeps keyed states answers what one that keys every MAC
// anew answers, delivery after delivery, from many goroutines at once, a
// secret rolled with overlap (old and new both active, then the new
// alone), forged signatures refused, and with more secrets than it keeps.
func TestKeyedStatesAnswerAsFreshOnes(t *testing.T) {
	t.Parallel()
	now := time.Now()
	hm, err := NewHMAC(HMACConfig{Header: "X-Signature", Algorithm: "sha512", TimestampHeader: "X-Timestamp"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	schemes := []struct {
		name        string
		keyed, zero Verifier
		sign        func(secret string, body []byte) http.Header
	}{
		{"stripe", NewStripe(0), Stripe{}, func(secret string, body []byte) http.Header {
			return http.Header{StripeHeader: {SignStripe(secret, body, now)}}
		}},
		{"hmac", hm, HMAC{Config: hm.Config}, func(secret string, body []byte) http.Header { return hm.Sign(secret, body, now) }},
	}
	many := make([][]byte, maxKeyed+3)
	for i := range many {
		many[i] = fmt.Appendf(nil, "whsec_many_%d", i)
	}
	phases := []struct {
		name    string
		secrets [][]byte
	}{
		{"old alone", [][]byte{[]byte("whsec_old")}},
		{"rolling", [][]byte{[]byte("whsec_old"), []byte("whsec_new")}},
		{"new alone", [][]byte{[]byte("whsec_new")}},
		{"more than it keeps", many},
	}
	senders := []string{"whsec_old", "whsec_new", "whsec_forged", string(many[0]), string(many[len(many)-1])}
	for _, sc := range schemes {
		for _, ph := range phases {
			var wg sync.WaitGroup
			for g := range 4 {
				wg.Go(func() {
					for i := range 50 {
						body := fmt.Appendf(nil, `{"id":"evt_%d_%d"}`, g, i)
						for _, sender := range senders {
							d := Delivery{Header: sc.sign(sender, body), Body: body, Now: now}
							_, got := sc.keyed.Verify(d, ph.secrets)
							_, want := sc.zero.Verify(d, ph.secrets)
							if got != want {
								t.Errorf("%s, %s, signed with %s: keyed %v, fresh %v", sc.name, ph.name, sender, got, want)
								return
							}
						}
					}
				})
			}
			wg.Wait()
		}
	}
}

// The keyed states are what the verifier saves: fewer allocations per
// delivery than keying each MAC anew. Not parallel: it counts allocations.
func TestKeyedStatesSaveKeying(t *testing.T) {
	now := time.Now()
	body := []byte(`{"id":"evt_1","type":"invoice.paid"}`)
	d := Delivery{Header: http.Header{StripeHeader: {SignStripe("whsec_test", body, now)}}, Body: body, Now: now}
	secrets := [][]byte{[]byte("whsec_test")}
	per := func(v Verifier) float64 {
		return testing.AllocsPerRun(100, func() {
			if _, err := v.Verify(d, secrets); err != nil {
				t.Fatal(err)
			}
		})
	}
	keyed, fresh := per(NewStripe(0)), per(Stripe{})
	if keyed >= fresh {
		t.Errorf("%.0f allocations per delivery with keyed states, %.0f without", keyed, fresh)
	}
}

func BenchmarkStripeVerify(b *testing.B) {
	now := time.Now()
	body := make([]byte, 1500)
	d := Delivery{Header: http.Header{StripeHeader: {SignStripe("whsec_test", body, now)}}, Body: body, Now: now}
	secrets := [][]byte{[]byte("whsec_test")}
	for _, v := range []struct {
		name string
		v    Verifier
	}{{"keyed", NewStripe(0)}, {"fresh", Stripe{}}} {
		b.Run(v.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := v.v.Verify(d, secrets); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
