package main

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/sluicehq/sluice/internal/provider/signature"
)

// delivery is one HTTP request the load sends, signed when it is sent (a
// provider signs each attempt anew; the body and event id stay).
type delivery struct {
	src     *source
	url     string // set for requests to an unknown source
	eventID string
	body    []byte
	// hostile names what is wrong with a request meant to be refused; empty
	// for a legitimate delivery, which is retried until it gets a 2xx.
	hostile string
	// sign returns the headers for an attempt at now.
	sign func(now time.Time) http.Header
}

// version is one state of a projected object as sent.
type version struct {
	eventID, status string
	final           bool
	at              time.Time
}

// invoice is what the load said about one invoice.
type invoice struct {
	src       *source
	id        string
	customer  string
	amount    int
	mapped    bool
	paidIDs   []string // invoice.paid event ids
	refundIDs []string // charge.refunded event ids
}

// plan is the seeded load: the deliveries in sending order and what each
// object should end as.
type plan struct {
	rng        *rand.Rand
	tenants    []*tenant
	deliveries []*delivery
	refunds    []*delivery // sent once every invoice.paid got its 2xx
	invoices   map[string]*invoice
	// projections by table, keyed by source id + "/" + object id.
	projections map[string]map[string][]version
	feedback    map[string][]string // source/project/feedback -> created event ids
	hostile     []*delivery
}

type sizes struct {
	tenants, invoices, subscriptions, installations, verifications, feedback, hmac, poison int
}

func newPlan(seed uint64, tenants []*tenant, sz sizes, ingestURL string) *plan {
	p := &plan{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), tenants: tenants, invoices: map[string]*invoice{},
		projections: map[string]map[string][]version{"subscriptions": {}, "github_installations": {}, "verifications": {}},
		feedback:    map[string][]string{}}
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	for ti, t := range tenants {
		for i := range sz.invoices {
			p.addInvoice(t, fmt.Sprintf("in_chaos_%d_%d", ti, i), t.customers[p.rng.IntN(len(t.customers))], true)
		}
		for i := range sz.poison {
			// No workspace maps this customer: a permanent error, dead-lettered.
			p.addInvoice(t, fmt.Sprintf("in_poison_%d_%d", ti, i), fmt.Sprintf("cus_orphan_%d_%d", ti, i), false)
		}
		for i := range sz.subscriptions {
			p.addSubscription(t, fmt.Sprintf("sub_chaos_%d_%d", ti, i), base.Add(time.Duration(i)*time.Minute))
		}
		for i := range sz.installations {
			p.addInstallation(t, int64(ti*100000+i+1), base.Add(time.Duration(i)*time.Minute))
		}
		for i := range sz.verifications {
			p.addVerification(t, fmt.Sprintf("ver_chaos_%d_%d", ti, i), base.Add(time.Duration(i)*time.Minute))
		}
		for i := range sz.feedback {
			p.addFeedback(t, fmt.Sprintf("proj_%d", i%3), fmt.Sprintf("fb_chaos_%d_%d", ti, i), base)
		}
		for i := range sz.hmac {
			id := fmt.Sprintf("ping_chaos_%d_%d", ti, i)
			p.add(macDelivery(t.mac, id, fmt.Appendf(nil, `{"id":%q,"type":"chaos.ping","n":%d}`, id, i)))
		}
	}
	p.addHostile(ingestURL)
	// Providers deliver in no particular order, and again: shuffle, then
	// redeliver a fifth of the legitimate deliveries at a random later point.
	p.rng.Shuffle(len(p.deliveries), func(i, j int) { p.deliveries[i], p.deliveries[j] = p.deliveries[j], p.deliveries[i] })
	n := len(p.deliveries)
	for i := 0; i < n; i++ {
		if d := p.deliveries[i]; d.hostile == "" && p.rng.Float64() < 0.2 {
			at := i + 1 + p.rng.IntN(n-i)
			p.deliveries = append(p.deliveries[:at], append([]*delivery{d}, p.deliveries[at:]...)...)
			n++
			i++
		}
	}
	for _, h := range p.hostile {
		at := p.rng.IntN(len(p.deliveries) + 1)
		p.deliveries = append(p.deliveries[:at], append([]*delivery{h}, p.deliveries[at:]...)...)
	}
	return p
}

func (p *plan) add(d *delivery) { p.deliveries = append(p.deliveries, d) }

func stripeDelivery(src *source, eventID string, body []byte) *delivery {
	return &delivery{src: src, eventID: eventID, body: body, sign: func(now time.Time) http.Header {
		return http.Header{signature.StripeHeader: {signature.SignStripe(src.secret, body, now)}}
	}}
}

func standardDelivery(src *source, msgID string, body []byte) *delivery {
	return &delivery{src: src, eventID: msgID, body: body, sign: func(now time.Time) http.Header {
		return http.Header{signature.StandardIDHeader: {msgID}, signature.StandardTimestampHeader: {fmt.Sprint(now.Unix())},
			signature.StandardSignatureHeader: {signature.SignStandard(src.secret, msgID, now, body)}}
	}}
}

func githubDelivery(src *source, deliveryID string, body []byte) *delivery {
	return &delivery{src: src, eventID: deliveryID, body: body, sign: func(time.Time) http.Header {
		return http.Header{"X-Github-Event": {"installation"}, "X-Github-Delivery": {deliveryID}, signature.GitHubHeader: {signature.SignGitHub(src.secret, body)}}
	}}
}

func macDelivery(src *source, eventID string, body []byte) *delivery {
	return &delivery{src: src, eventID: eventID, body: body, sign: func(now time.Time) http.Header {
		return src.hmac.Sign(src.secret, body, now)
	}}
}

func invoicePaidBody(eventID, inv, customer string, amount int) []byte {
	return fmt.Appendf(nil, `{"id":%q,"object":"event","api_version":"2024-06-20","type":"invoice.paid","created":%d,"livemode":false,`+
		`"data":{"object":{"id":%q,"object":"invoice","customer":%q,"amount_paid":%d,"amount_due":%d,"currency":"usd","status":"paid"}}}`,
		eventID, time.Now().Unix(), inv, customer, amount, amount)
}

// addInvoice sends one to three invoice.paid events (several event ids for
// one operation), one in ten later refunded (twice, under two ids).
func (p *plan) addInvoice(t *tenant, id, customer string, mapped bool) {
	inv := &invoice{src: t.stripe, id: id, customer: customer, amount: 2000, mapped: mapped}
	if mapped && p.rng.IntN(20) == 0 {
		inv.amount = 0 // paid, but nothing to grant
	}
	p.invoices[t.stripe.id+"/"+id] = inv
	for k := range 1 + p.rng.IntN(3) {
		if !mapped && k > 0 {
			break
		}
		ev := fmt.Sprintf("evt_%s_paid_%d", id, k)
		inv.paidIDs = append(inv.paidIDs, ev)
		p.add(stripeDelivery(t.stripe, ev, invoicePaidBody(ev, id, customer, inv.amount)))
	}
	if mapped && p.rng.IntN(10) == 0 {
		for k := range 2 {
			ev := fmt.Sprintf("evt_%s_refund_%d", id, k)
			inv.refundIDs = append(inv.refundIDs, ev)
			body := fmt.Appendf(nil, `{"id":%q,"object":"event","type":"charge.refunded","created":%d,"data":{"object":{"id":"ch_%s","object":"charge","invoice":%q,"customer":%q,"amount_refunded":%d,"refunded":true}}}`,
				ev, time.Now().Unix(), id, id, customer, inv.amount)
			p.refunds = append(p.refunds, stripeDelivery(t.stripe, ev, body))
		}
	}
}

// addSubscription sends created (active), updated (past_due or active) and,
// for most, deleted (canceled, final), in whatever order the shuffle gives.
func (p *plan) addSubscription(t *tenant, id string, at time.Time) {
	steps := []struct{ typ, status string }{{"customer.subscription.created", "active"}, {"customer.subscription.updated", []string{"past_due", "active"}[p.rng.IntN(2)]}}
	if p.rng.IntN(4) > 0 {
		steps = append(steps, struct{ typ, status string }{"customer.subscription.deleted", "canceled"})
	}
	for i, s := range steps {
		ev := fmt.Sprintf("evt_%s_%d", id, i)
		when := at.Add(time.Duration(i) * time.Second)
		body := fmt.Appendf(nil, `{"id":%q,"object":"event","type":%q,"created":%d,"data":{"object":{"id":%q,"object":"subscription","customer":%q,"status":%q}}}`,
			ev, s.typ, when.Unix(), id, t.customers[0], s.status)
		p.version("subscriptions", t.stripe, id, version{ev, s.status, s.status == "canceled", when})
		p.add(stripeDelivery(t.stripe, ev, body))
	}
}

func (p *plan) addInstallation(t *tenant, id int64, at time.Time) {
	actions := []string{"created", "suspend", "unsuspend"}
	if p.rng.IntN(3) == 0 {
		actions = append(actions, "deleted")
	}
	state := map[string]string{"created": "active", "suspend": "suspended", "unsuspend": "active", "deleted": "deleted"}
	for i, a := range actions {
		when := at.Add(time.Duration(i) * time.Second).UTC()
		delivery := fmt.Sprintf("chaos-%d-%d", id, i)
		body := fmt.Appendf(nil, `{"action":%q,"installation":{"id":%d,"account":{"id":%d,"login":"org%d","type":"Organization"},"updated_at":%q},"sender":{"login":"octocat"}}`,
			a, id, id, id, when.Format(time.RFC3339))
		p.version("github_installations", t.github, fmt.Sprint(id), version{delivery, state[a], a == "deleted", when})
		p.add(githubDelivery(t.github, delivery, body))
	}
}

// addVerification sends pending, in_review, a decision and, for some, a
// late pending after it (the provider retries for a day): final stands.
func (p *plan) addVerification(t *tenant, id string, at time.Time) {
	statuses := []string{"pending", "in_review", []string{"approved", "rejected"}[p.rng.IntN(2)]}
	if p.rng.IntN(3) == 0 {
		statuses = append(statuses, "pending")
	}
	for i, s := range statuses {
		when := at.Add(time.Duration(i) * time.Second).UTC()
		msg := fmt.Sprintf("msg_%s_%d", id, i)
		body := fmt.Appendf(nil, `{"type":"verification.%s","timestamp":%q,"data":{"id":%q}}`, s, when.Format(time.RFC3339), id)
		p.version("verifications", t.standard, id, version{msg, s, s == "approved" || s == "rejected", when})
		p.add(standardDelivery(t.standard, msg, body))
	}
}

// addFeedback sends feedback.created, for a third of them twice under two
// message ids (one operation, one alert).
func (p *plan) addFeedback(t *tenant, project, id string, at time.Time) {
	key := t.standard.id + "/" + project + "/" + id
	for k := range 1 + min(1, p.rng.IntN(3)/2) {
		msg := fmt.Sprintf("msg_%s_%d", id, k)
		body := fmt.Appendf(nil, `{"type":"feedback.created","timestamp":%q,"data":{"id":%q,"project_id":%q,"text":"chaos"}}`,
			at.UTC().Format(time.RFC3339), id, project)
		p.feedback[key] = append(p.feedback[key], msg)
		p.add(standardDelivery(t.standard, msg, body))
	}
}

func (p *plan) version(table string, src *source, object string, v version) {
	k := src.id + "/" + object
	p.projections[table][k] = append(p.projections[table][k], v)
}

// addHostile adds requests that must be refused and leave no row: bad and
// stale signatures, another tenant's secret, oversized, malformed and deeply
// nested bodies, unknown sources.
func (p *plan) addHostile(ingestURL string) {
	for i, t := range p.tenants {
		other := p.tenants[(i+1)%len(p.tenants)]
		id := func(what string) string { return fmt.Sprintf("evt_hostile_%s_%d", what, i) }
		body := func(ev string) []byte { return invoicePaidBody(ev, "in_"+ev, t.customers[0], 2000) }
		h := func(what string, d *delivery) { d.hostile = what; p.hostile = append(p.hostile, d) }

		ev := id("badsig")
		h("bad_signature", &delivery{src: t.stripe, eventID: ev, body: body(ev), sign: func(now time.Time) http.Header {
			return http.Header{signature.StripeHeader: {signature.SignStripe("whsec_wrong", body(ev), now)}}
		}})
		ev = id("stale")
		h("replayed_timestamp", &delivery{src: t.stripe, eventID: ev, body: body(ev), sign: func(now time.Time) http.Header {
			return http.Header{signature.StripeHeader: {signature.SignStripe(t.stripe.secret, body(ev), now.Add(-10*time.Minute))}}
		}})
		ev = id("othertenant")
		h("other_tenant_secret", &delivery{src: t.stripe, eventID: ev, body: body(ev), sign: func(now time.Time) http.Header {
			return http.Header{signature.StripeHeader: {signature.SignStripe(other.stripe.secret, body(ev), now)}}
		}})
		ev = id("oversized")
		big := fmt.Appendf(nil, `{"id":%q,"object":"event","type":"invoice.paid","pad":%q}`, ev, strings.Repeat("x", 2<<20))
		h("oversized", stripeDelivery(t.stripe, ev, big))
		ev = id("malformed")
		h("malformed", stripeDelivery(t.stripe, ev, fmt.Appendf(nil, `{"id":%q,"type":"invoice.paid",`, ev)))
		ev = id("nested")
		nested := fmt.Appendf(nil, `{"id":%q,"type":"invoice.paid","data":%s1%s}`, ev, strings.Repeat("[", 5000), strings.Repeat("]", 5000))
		h("deeply_nested", stripeDelivery(t.stripe, ev, nested))
		ev = id("unknown")
		d := stripeDelivery(t.stripe, ev, body(ev))
		d.url = fmt.Sprintf("%s/v1/ingest/%08x-0000-4000-8000-000000000000", ingestURL, p.rng.Uint32())
		h("unknown_source", d)
	}
}
