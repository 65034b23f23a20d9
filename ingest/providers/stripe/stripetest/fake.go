// Package stripetest is a fake of the part of Stripe's API reconciliation
// uses (GET /v1/events, paginated, filtered by created and types), for tests:
// Stripe is a third party, never called from a test.
package stripetest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
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

// API is the fake. Its zero value is not usable: call New.
type API struct {
	*httptest.Server
	mu       sync.Mutex
	events   []Event // oldest first
	payments []InvoicePayment
	// throttle answers the next requests 429 with Retry-After: 1.
	throttle int
	requests int
}

// New starts a fake Stripe API, closed when the test ends.
func New(t testing.TB) *API {
	a := &API{}
	a.Server = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.Close)
	return a
}

// Record adds events to the account, as Stripe does when something happens.
func (a *API) Record(evs ...Event) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.events = append(a.events, evs...)
}

// RecordInvoicePayment adds invoice payments to the account.
func (a *API) RecordInvoicePayment(ps ...InvoicePayment) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.payments = append(a.payments, ps...)
}

// Throttle makes the next n requests answer 429 with Retry-After: 1.
func (a *API) Throttle(n int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.throttle = n
}

// Requests counts the requests served, throttled ones included.
func (a *API) Requests() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.requests
}

// pageSize is small so that tests page.
const pageSize = 10

func (a *API) serve(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.requests++
	if a.throttle > 0 {
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

func (a *API) listEvents(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	gte, _ := strconv.ParseInt(q.Get("created[gte]"), 10, 64)
	lt, _ := strconv.ParseInt(q.Get("created[lt]"), 10, 64)
	types := q["types[]"]
	var page [][]byte
	hasMore, started := false, q.Get("starting_after") == ""
	// Newest first, as Stripe lists.
	for i := len(a.events) - 1; i >= 0; i-- {
		e := a.events[i]
		if !started {
			started = e.ID == q.Get("starting_after")
			continue
		}
		c := e.Created.Unix()
		if c < gte || (lt != 0 && c >= lt) || (len(types) > 0 && !slices.Contains(types, e.Type)) {
			continue
		}
		if len(page) == pageSize {
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
