// Package stripetest is a fake of the part of Stripe's API reconciliation
// uses (GET /v1/events, paginated by limit and starting_after, filtered by
// created and types; GET /v1/invoice_payments), for tests and the bench:
// Stripe is a third party, never called from a test.
package stripetest

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Event is one event the fake Stripe account recorded.
type Event struct {
	ID, Type   string
	Created    time.Time
	Object     map[string]any
	APIVersion string
}

// Body renders the event as Stripe does, with pendingWebhooks: the event
// list and each webhook delivery of one event differ in it.
func (e Event) Body(pendingWebhooks int) []byte {
	b, _ := json.Marshal(map[string]any{
		"id": e.ID, "object": "event", "type": e.Type, "created": e.Created.Unix(), "livemode": false,
		"api_version": e.APIVersion, "pending_webhooks": pendingWebhooks,
		"request": map[string]any{"id": nil, "idempotency_key": nil},
		"data":    map[string]any{"object": e.Object},
	})
	return b
}

// InvoicePayment links a payment intent to the invoice it paid.
type InvoicePayment struct {
	ID, Invoice, PaymentIntent, Charge string
	AmountPaid                         int64
	PaidAt                             time.Time
}

func (p InvoicePayment) json() []byte {
	b, _ := json.Marshal(map[string]any{
		"id": p.ID, "object": "invoice_payment", "invoice": p.Invoice, "status": "paid", "amount_paid": p.AmountPaid,
		"created": p.PaidAt.Unix(), "livemode": false, "status_transitions": map[string]any{"paid_at": p.PaidAt.Unix()},
		"payment": map[string]any{"type": "payment_intent", "payment_intent": p.PaymentIntent, "charge": p.Charge},
	})
	return b
}

// API is the fake. Its zero value is not usable: call New or Start.
type API struct {
	*httptest.Server
	mu       sync.Mutex
	events   []Event        // oldest first (by created, then as recorded)
	byID     map[string]int // event id to its index in events
	sorted   bool
	payments []InvoicePayment
	// throttle answers requests 429 with Retry-After: 1, once throttleAfter
	// more were served.
	throttle, throttleAfter int
	// forbidPayments answers invoice payment lists 403 as Stripe does for a
	// restricted key without the permission.
	forbidPayments bool
	requests       map[string]int // by path, throttled and refused ones included
	latency        time.Duration
}

// New starts a fake Stripe API, closed when the test ends.
func New(t testing.TB) *API {
	a := Start()
	t.Cleanup(a.Close)
	return a
}

// Start starts a fake Stripe API outside a test (the bench's stand-in);
// the caller closes it.
func Start() *API {
	a := &API{byID: map[string]int{}, requests: map[string]int{}}
	a.Server = httptest.NewServer(http.HandlerFunc(a.serve))
	return a
}

// StartOn starts a fake Stripe API serving ln (make run's, on the address
// it had before); the caller closes it.
func StartOn(ln net.Listener) *API {
	a := &API{byID: map[string]int{}, requests: map[string]int{}}
	a.Server = httptest.NewUnstartedServer(http.HandlerFunc(a.serve))
	a.Server.Listener.Close()
	a.Server.Listener = ln
	a.Server.Start()
	return a
}

// Record adds events to the account, as Stripe does when something happens.
func (a *API) Record(evs ...Event) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.events = append(a.events, evs...)
	a.sorted = false
}

// RecordInvoicePayment adds invoice payments to the account.
func (a *API) RecordInvoicePayment(ps ...InvoicePayment) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.payments = append(a.payments, ps...)
}

// Throttle makes the next n requests answer 429 with Retry-After: 1.
func (a *API) Throttle(n int) { a.ThrottleAfter(0, n) }

// ThrottleAfter makes n requests in a row answer 429 with Retry-After: 1,
// once after more were served: in the middle of a listing.
func (a *API) ThrottleAfter(after, n int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.throttle, a.throttleAfter = n, after
}

// SlowDown makes every answer wait d first, as a distant API's would: a
// listing then takes long enough to be stopped in its middle.
func (a *API) SlowDown(d time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.latency = d
}

// ForbidInvoicePayments makes GET /v1/invoice_payments answer as Stripe
// answers a restricted key that lacks the permission.
func (a *API) ForbidInvoicePayments() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.forbidPayments = true
}

// Requests counts the requests served, throttled ones included; with
// paths, only those to them.
func (a *API) Requests(paths ...string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for p, c := range a.requests {
		if len(paths) == 0 || slices.Contains(paths, p) {
			n += c
		}
	}
	return n
}

// The pages a list answers: limit as asked, 10 when not, at most 100, as
// Stripe's.
const (
	defaultLimit = 10
	maxLimit     = 100
)

// forbidden is the body Stripe answers a restricted key without a
// permission with (status 403).
const forbidden = `{"error":{"message":"The provided key 'rk_test_*********************************************************************************************123' does not have the required permissions for this endpoint on account 'acct_1Fake'. Having the 'rak_invoice_read' permission would allow this request to continue.","type":"invalid_request_error"}}`

func (a *API) serve(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	latency := a.latency
	a.mu.Unlock()
	time.Sleep(latency) // the stand-in's latency, not a synchronisation
	a.mu.Lock()
	defer a.mu.Unlock()
	a.requests[r.URL.Path]++
	if a.throttleAfter > 0 {
		a.throttleAfter--
	} else if a.throttle > 0 {
		a.throttle--
		w.Header().Set("Retry-After", "1")
		http.Error(w, `{"error":{"type":"rate_limit_error"}}`, http.StatusTooManyRequests)
		return
	}
	switch {
	case r.Method != http.MethodGet || r.Header.Get("Authorization") == "":
		http.Error(w, `{"error":{"type":"invalid_request_error"}}`, http.StatusNotFound)
	case r.URL.Path == "/v1/events":
		a.listEvents(w, r)
	case r.URL.Path == "/v1/invoice_payments" && a.forbidPayments:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		w.Write([]byte(forbidden))
	case r.URL.Path == "/v1/invoice_payments":
		a.listInvoicePayments(w, r)
	default:
		http.Error(w, `{"error":{"type":"invalid_request_error"}}`, http.StatusNotFound)
	}
}

func (a *API) listInvoicePayments(w http.ResponseWriter, r *http.Request) {
	pi := r.URL.Query().Get("payment[payment_intent]")
	var page [][]byte
	for _, p := range a.payments {
		if p.PaymentIntent == pi {
			page = append(page, p.json())
		}
	}
	writeList(w, "/v1/invoice_payments", false, page)
}

// sort orders the events by created, keeping the recorded order within a
// second, and indexes them by id.
func (a *API) sort() {
	if a.sorted {
		return
	}
	slices.SortStableFunc(a.events, func(x, y Event) int { return x.Created.Compare(y.Created) })
	clear(a.byID)
	for i, e := range a.events {
		a.byID[e.ID] = i
	}
	a.sorted = true
}

func (a *API) listEvents(w http.ResponseWriter, r *http.Request) {
	a.sort()
	q := r.URL.Query()
	gte, _ := strconv.ParseInt(q.Get("created[gte]"), 10, 64)
	lt, _ := strconv.ParseInt(q.Get("created[lt]"), 10, 64)
	limit, err := strconv.Atoi(q.Get("limit"))
	if err != nil || limit < 1 {
		limit = defaultLimit
	}
	limit = min(limit, maxLimit)
	// Stripe reads an array as types[] or, as stripe-go sends it, types[0],
	// types[1], ...
	types := slices.Clone(q["types[]"])
	for k, v := range q {
		if strings.HasPrefix(k, "types[") && k != "types[]" {
			types = append(types, v...)
		}
	}
	if len(types) > 20 {
		http.Error(w, `{"error":{"type":"invalid_request_error","message":"types: at most 20"}}`, http.StatusBadRequest)
		return
	}
	// Newest first, as Stripe lists: from the end, or from just before the
	// starting_after event.
	i := len(a.events) - 1
	if lt != 0 {
		i = sort.Search(len(a.events), func(j int) bool { return a.events[j].Created.Unix() >= lt }) - 1
	}
	if after := q.Get("starting_after"); after != "" {
		at, ok := a.byID[after]
		if !ok {
			http.Error(w, `{"error":{"type":"invalid_request_error","code":"resource_missing"}}`, http.StatusBadRequest)
			return
		}
		i = min(i, at-1)
	}
	var page [][]byte
	hasMore := false
	for ; i >= 0; i-- {
		e := a.events[i]
		if e.Created.Unix() < gte {
			break
		}
		if len(types) > 0 && !slices.Contains(types, e.Type) {
			continue
		}
		if len(page) == limit {
			hasMore = true
			break
		}
		page = append(page, e.Body(0))
	}
	writeList(w, "/v1/events", hasMore, page)
}

// writeList answers a Stripe list object.
func writeList(w http.ResponseWriter, url string, hasMore bool, page [][]byte) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"object":"list","url":%q,"has_more":%t,"data":[`, url, hasMore)
	for i, b := range page {
		if i > 0 {
			w.Write([]byte(","))
		}
		w.Write(b)
	}
	w.Write([]byte("]}"))
}

// Outage is what a Stripe account records while an endpoint is down: n
// events spread evenly over [from, from+span), one in ten a paid invoice of
// customer (1,500 cents: what a handler grants credits for), each its own
// invoice, the others of types no handler of Sluice's knows. It returns
// them, oldest first, and how many are invoices. Built for a million: the
// events of one unhandled type share one object (nothing reads it but a
// listing of every type).
func Outage(n int, customer string, from time.Time, span time.Duration) (evs []Event, invoices int) {
	s := strconv.FormatInt(time.Now().UnixNano(), 36)
	others := []string{"customer.created", "charge.succeeded", "payment_intent.created", "product.updated", "price.created",
		"customer.updated", "invoice.created", "invoice.finalized", "payment_method.attached"}
	shared := make(map[string]map[string]any, len(others))
	for _, t := range others {
		object, _, _ := strings.Cut(t, ".")
		shared[t] = map[string]any{"id": "obj_out_" + s, "object": object}
	}
	evs = make([]Event, n)
	for i := range evs {
		e := &evs[i]
		e.ID, e.Created, e.APIVersion = "evt_out_"+s+"_"+strconv.Itoa(i), from.Add(span/time.Duration(n)*time.Duration(i)), "2024-06-20"
		if i%10 != 0 {
			e.Type = others[i%len(others)]
			e.Object = shared[e.Type]
			continue
		}
		e.Type, invoices = "invoice.paid", invoices+1
		e.Object = map[string]any{"id": "in_out_" + s + "_" + strconv.Itoa(i), "object": "invoice", "customer": customer,
			"amount_paid": 1500, "currency": "usd", "status": "paid"}
	}
	return evs, invoices
}
