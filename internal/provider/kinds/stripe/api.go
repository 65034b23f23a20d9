package stripe

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	segjson "github.com/segmentio/encoding/json"
	stripego "github.com/stripe/stripe-go/v82"

	"github.com/sluicehq/sluice/internal/provider"
	"github.com/sluicehq/sluice/internal/provider/jsonptr"
)

// Credentials are a Stripe source's API credentials, as stored (sealed)
// with the source.
type Credentials struct {
	// SecretKey is a restricted key (rk_...) with read access to events,
	// or a secret key (sk_...).
	SecretKey string `json:"secret_key"`
	// APIBase replaces https://api.stripe.com: a proxy, or a test server.
	APIBase string `json:"api_base,omitempty"`
}

// Base is where the API is.
func (c *Credentials) Base() string { return c.APIBase }

// Check refuses a key that is neither a restricted nor a secret key.
func (c *Credentials) Check() error {
	if !strings.HasPrefix(c.SecretKey, "rk_") && !strings.HasPrefix(c.SecretKey, "sk_") {
		// The key itself is never quoted: errors end up in logs.
		return errors.New("stripe API credentials: secret_key must be a restricted (rk_) or secret (sk_) key")
	}
	return nil
}

// credentialsExample is the document the refusal of one that is not
// shows.
const credentialsExample = `{"secret_key":"rk_..."}`

// CheckAPICredentials refuses credentials that could not call Stripe.
func (Provider) CheckAPICredentials(raw []byte) error {
	_, err := provider.ReadCredentials[Credentials](Kind, raw, credentialsExample)
	return err
}

// OpenAPI returns a client of Stripe's API built on stripe-go, which pages
// lists itself. Its own retries are off: client's transport (reconcile's)
// is the one retry policy, and stripe-go's does not honour Retry-After.
func (Provider) OpenAPI(raw []byte, client *http.Client) (provider.API, error) {
	c, err := provider.ReadCredentials[Credentials](Kind, raw, credentialsExample)
	if err != nil {
		return nil, err
	}
	retries := int64(0)
	cfg := &stripego.BackendConfig{HTTPClient: client, MaxNetworkRetries: &retries, LeveledLogger: &stripego.LeveledLogger{Level: stripego.LevelNull}}
	if c.APIBase != "" {
		cfg.URL = stripego.String(strings.TrimRight(c.APIBase, "/"))
	}
	backends := &stripego.Backends{API: stripego.GetBackendWithConfig(stripego.APIBackend, cfg)}
	return api{client: stripego.NewClient(c.SecretKey, stripego.WithBackends(backends))}, nil
}

// api is Stripe's API. Stripe lists every event of the last 30 days
// (GET /v1/events), so Events recovers what never arrived with its real
// event id; it has no redelivery, and the event list makes fetching
// objects unnecessary for the types the catalogue handles.
type api struct {
	client *stripego.Client
}

// maxTypes is how many types one GET /v1/events may filter on; pageSize is
// the largest page Stripe lists.
const (
	maxTypes = 20
	pageSize = 100
)

// Events lists the window's events, newest first as Stripe does, 100 to a
// page and only of w.Types (in chunks of 20, Stripe's limit for types[]),
// handing each page over before asking for the next. The cursor is the
// chunk, a digest of the types (a changed list starts the window over),
// and the last event handed over: Stripe resumes after it with
// starting_after, so events sharing a second are neither skipped nor
// listed twice.
func (a api) Events(ctx context.Context, w provider.Window, cursor string, page func(provider.Page) error) error {
	chunks := typeChunks(w.Types)
	digest := typesDigest(w.Types)
	chunk, after := parseCursor(cursor, digest)
	for ; chunk < len(chunks); chunk, after = chunk+1, "" {
		params := &stripego.EventListParams{CreatedRange: &stripego.RangeQueryParams{GreaterThanOrEqual: w.Since.Unix()}}
		params.Limit = stripego.Int64(pageSize)
		if !w.Until.IsZero() {
			// Stripe's times are whole seconds: an event of until's own
			// second, before it, is in the window (the next window's
			// overlap lists it again, as a duplicate).
			params.CreatedRange.LesserThan = w.Until.Add(time.Second - 1).Unix()
		}
		if after != "" {
			params.StartingAfter = stripego.String(after)
		}
		for _, t := range chunks[chunk] {
			params.Types = append(params.Types, stripego.String(t))
		}
		var p provider.Page
		// The iterator asks for the next page only when the loop pulls
		// past the last event of this one: a full page is handed over
		// (entered, its cursor saved) before Stripe is asked again.
		for ev, err := range a.client.V1Events.List(ctx, params) {
			if err != nil {
				return listError("list stripe events", err)
			}
			body, err := json.Marshal(ev)
			if err != nil {
				return fmt.Errorf("encode stripe event %s: %w", ev.ID, err)
			}
			p.Found = append(p.Found, provider.Found{Header: http.Header{}, Body: body})
			p.Listed++
			p.Reached = time.Unix(ev.Created, 0)
			p.Cursor = formatCursor(chunk, digest, ev.ID)
			if p.Listed == pageSize {
				if err := page(p); err != nil {
					return err
				}
				p = provider.Page{Reached: p.Reached}
			}
		}
		p.Cursor, p.Done = formatCursor(chunk+1, digest, ""), chunk+1 == len(chunks)
		if err := page(p); err != nil {
			return err
		}
	}
	return nil
}

// typeChunks splits types into Stripe's chunks of 20; no types is one
// listing of every type.
func typeChunks(types []string) [][]string {
	if len(types) == 0 {
		return [][]string{nil}
	}
	var out [][]string
	for len(types) > 0 {
		n := min(len(types), maxTypes)
		out = append(out, types[:n])
		types = types[n:]
	}
	return out
}

func typesDigest(types []string) string {
	h := sha256.New()
	for _, t := range types {
		h.Write([]byte(t))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:6])
}

func formatCursor(chunk int, digest, after string) string {
	return strconv.Itoa(chunk) + ":" + digest + ":" + after
}

// parseCursor reads a cursor of the same types; any other (another list
// of types, or none) starts the window from its newest event.
func parseCursor(cursor, digest string) (chunk int, after string) {
	parts := strings.SplitN(cursor, ":", 3)
	if len(parts) != 3 || parts[1] != digest {
		return 0, ""
	}
	chunk, err := strconv.Atoi(parts[0])
	if err != nil || chunk < 0 {
		return 0, ""
	}
	return chunk, parts[2]
}

// listError names a permission Stripe refused ("Having the 'rak_..._read'
// permission would allow this request to continue"), so an operator can
// grant it; other errors are wrapped as they are.
func listError(op string, err error) error {
	var se *stripego.Error
	if errors.As(err, &se) && se.HTTPStatusCode == http.StatusForbidden {
		perm := ""
		if m := permissionInMessage.FindStringSubmatch(se.Msg); m != nil {
			perm = m[1]
		}
		return &provider.PermissionError{Op: op, Permission: perm, Err: err}
	}
	return fmt.Errorf("%s: %w", op, err)
}

var permissionInMessage = regexp.MustCompile(`'(rak_[a-z0-9_]+)'`)

func (api) Redeliver(context.Context, provider.Window, string, func(provider.Page) error) error {
	return provider.ErrNotOffered
}

// State resolves a payment an event names without its invoice (a refund
// from API version basil on waits for that link): it lists the invoice
// payments of the payment intent (GET /v1/invoice_payments) and enters the
// first paid one as the invoice_payment.paid event that links them, under
// an id derived from the invoice payment. Other objects are not looked up.
func (a api) State(ctx context.Context, objectID string) (provider.Found, error) {
	if !strings.HasPrefix(objectID, "pi_") {
		// Stripe lists invoice payments by payment intent only.
		return provider.Found{}, provider.ErrNotFound
	}
	params := &stripego.InvoicePaymentListParams{Status: stripego.String("paid"),
		Payment: &stripego.InvoicePaymentListPaymentParams{Type: stripego.String("payment_intent"), PaymentIntent: stripego.String(objectID)}}
	for ip, err := range a.client.V1InvoicePayments.List(ctx, params) {
		if err != nil {
			return provider.Found{}, listError("list stripe invoice payments of "+objectID, err)
		}
		if ip.Invoice == nil {
			continue
		}
		return invoicePaymentPaid(ip, objectID)
	}
	return provider.Found{}, provider.ErrNotFound
}

// invoicePaymentPaid is the event Stripe sent, or would have, when the
// invoice payment was paid.
func invoicePaymentPaid(ip *stripego.InvoicePayment, paymentIntent string) (provider.Found, error) {
	created := ip.Created
	if ip.StatusTransitions != nil && ip.StatusTransitions.PaidAt > 0 {
		created = ip.StatusTransitions.PaidAt
	}
	payment := map[string]any{"type": "payment_intent", "payment_intent": paymentIntent}
	if ip.Payment != nil && ip.Payment.Charge != nil {
		payment["charge"] = ip.Payment.Charge.ID
	}
	sum := sha256.Sum256([]byte("invoice_payment.paid\x00" + ip.ID))
	body, err := json.Marshal(map[string]any{
		"id": "sluice_reconcile_" + hex.EncodeToString(sum[:16]), "object": "event", "type": "invoice_payment.paid",
		"created": created, "livemode": ip.Livemode,
		"data": map[string]any{"object": map[string]any{"id": ip.ID, "object": "invoice_payment", "invoice": ip.Invoice.ID,
			"status": ip.Status, "amount_paid": ip.AmountPaid, "payment": payment}},
	})
	if err != nil {
		return provider.Found{}, err
	}
	return provider.Found{Header: http.Header{}, Body: body}, nil
}

// compared is what identifies a Stripe event: Stripe renders one event
// differently per delivery (pending_webhooks counts down; the body is
// written in the API version of the endpoint, or of the request that
// listed it), so copies under one id are compared by id, type, time, mode,
// account and object, not by their bytes.
func compared(doc any) []byte {
	// These bytes are hashed and stored, so they stay what json.Marshal of
	// the fields' fmt.Sprint strings gave; appended by hand because this
	// runs for every Stripe event.
	b := append(make([]byte, 0, 160), '[')
	for i, ptr := range comparedFields {
		if i > 0 {
			b = append(b, ',')
		}
		// Absent, null and "" are one: stripe-go writes "account":"" where
		// a webhook leaves account out.
		var s string
		switch v, _ := jsonptr.Get(doc, ptr); v := v.(type) {
		case nil:
		case string:
			s = v
		case bool:
			s = strconv.FormatBool(v)
		case fmt.Stringer: // json.Number
			s = v.String()
		default:
			s = fmt.Sprint(v)
		}
		b = segjson.AppendEscape(b, s, segjson.EscapeHTML)
	}
	return append(b, ']')
}

var comparedFields = [...]string{"/id", "/type", "/created", "/livemode", "/account", "/data/object/object", "/data/object/id"}
