package floor

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/segmentio/encoding/json"
)

// Source is one Stripe source the ingest floor accepts webhooks for.
type Source struct {
	ID      string `json:"id"`
	Tenant  string `json:"tenant"`
	Account string `json:"account"`
	Secret  string `json:"secret"`
}

// IngestConfig is what the ingest floor serves.
type IngestConfig struct {
	Addr, DatabaseURL string
	Sources           []Source
	// Topic is the outbox topic of invoice events (the bench's
	// <prefix>.invoices).
	Topic string
	// Batch is the deliveries per group commit: the mean of Sluice's
	// ingest in the same run, so that Postgres's share compares.
	Batch int
}

// row is one accepted webhook, ready for the group commit.
type row struct {
	src                *Source
	eventID, eventType string
	objectID           string
	eventTime          time.Time
	body               []byte
	bodySum, jsonSum   []byte
	key, headers       string
	received           time.Time
	done               chan bool // true: new; false: a duplicate
	failed             chan error
}

// Ingest serves POST /v1/ingest/{source} until ctx ends: read the body,
// verify the Stripe signature, parse the JSON into the fields the schema
// checks, and store the inbox, payload and outbox rows in group commits of
// cfg.Batch deliveries. The answer is 202 for a new event, 200 for one
// already stored, as Sluice answers.
func Ingest(ctx context.Context, cfg IngestConfig) error {
	pool, err := pgxpool.New(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	sources := map[string]*Source{}
	for i := range cfg.Sources {
		sources[cfg.Sources[i].ID] = &cfg.Sources[i]
	}
	queue := make(chan *row, 8192)
	go commitLoop(ctx, pool, queue, max(1, cfg.Batch), cfg.Topic)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(http.ResponseWriter, *http.Request) {})
	mux.HandleFunc("POST /v1/ingest/{source}", func(w http.ResponseWriter, r *http.Request) {
		src := sources[r.PathValue("source")]
		if src == nil {
			http.Error(w, "unknown source", http.StatusNotFound)
			return
		}
		ev, status := readWebhook(r, src)
		if status != 0 {
			http.Error(w, http.StatusText(status), status)
			return
		}
		queue <- ev
		select {
		case isNew := <-ev.done:
			if isNew {
				w.WriteHeader(http.StatusAccepted)
			} else {
				w.WriteHeader(http.StatusOK)
			}
		case <-ev.failed:
			http.Error(w, "not committed", http.StatusServiceUnavailable)
		}
	})
	srv := &http.Server{Addr: cfg.Addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// stripeEvent is what the schema of invoice.paid checks.
type stripeEvent struct {
	id, typ, apiVersion  string
	created              int64
	invoice, customer    string
	amountPaid, currency string
}

// readWebhook authenticates and parses one request; a status other than 0
// is the refusal to answer.
func readWebhook(r *http.Request, src *Source) (*row, int) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return nil, http.StatusBadRequest
	}
	now := time.Now()
	if !verifyStripe(src.Secret, r.Header.Get("Stripe-Signature"), body, now) {
		return nil, http.StatusUnauthorized
	}
	var doc any
	if _, err := json.Parse(body, &doc, json.UseNumber|json.DontCopyString|json.DontCopyNumber); err != nil {
		return nil, http.StatusBadRequest
	}
	ev, ok := stripeFields(doc)
	if !ok || ev.typ != "invoice.paid" {
		return nil, http.StatusUnprocessableEntity
	}
	bodySum := sha256.Sum256(body)
	jsonSum := sha256.Sum256(canonical(make([]byte, 0, len(body)), doc))
	key := src.Tenant + "/invoice/" + ev.invoice
	created := time.Unix(ev.created, 0).UTC()
	return &row{
		src: src, eventID: ev.id, eventType: ev.typ, objectID: ev.invoice, eventTime: created,
		body: body, bodySum: bodySum[:], jsonSum: jsonSum[:], key: key,
		headers:  headersJSON(src, ev, key, created),
		received: now, done: make(chan bool, 1), failed: make(chan error, 1),
	}, 0
}

// verifyStripe checks a Stripe-Signature header (t=<unix>,v1=<hex>) within
// five minutes of now.
func verifyStripe(secret, header string, body []byte, now time.Time) bool {
	var ts string
	var sigs []string
	for part := range strings.SplitSeq(header, ",") {
		k, v, _ := strings.Cut(part, "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			sigs = append(sigs, v)
		}
	}
	at, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || now.Sub(time.Unix(at, 0)).Abs() > 5*time.Minute {
		return false
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts))
	mac.Write([]byte{'.'})
	mac.Write(body)
	want := mac.Sum(nil)
	for _, s := range sigs {
		got, err := hex.DecodeString(s)
		if err == nil && hmac.Equal(got, want) {
			return true
		}
	}
	return false
}

// stripeFields reads the fields invoice.paid's schema requires, with their
// types.
func stripeFields(doc any) (stripeEvent, bool) {
	top, ok := doc.(map[string]any)
	if !ok {
		return stripeEvent{}, false
	}
	var ev stripeEvent
	str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
	ev.id, ev.typ, ev.apiVersion = str(top, "id"), str(top, "type"), str(top, "api_version")
	created, ok := top["created"].(json.Number)
	if !ok {
		return ev, false
	}
	if ev.created, ok = parseInt(string(created)); !ok {
		return ev, false
	}
	data, _ := top["data"].(map[string]any)
	obj, _ := data["object"].(map[string]any)
	if obj == nil || str(obj, "object") != "invoice" {
		return ev, false
	}
	ev.invoice, ev.customer, ev.currency = str(obj, "id"), str(obj, "customer"), str(obj, "currency")
	amount, ok := obj["amount_paid"].(json.Number)
	if !ok || ev.id == "" || ev.invoice == "" || ev.customer == "" || len(ev.currency) != 3 {
		return ev, false
	}
	ev.amountPaid = string(amount)
	return ev, true
}

func parseInt(s string) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// headersJSON is the outbox row's headers: the CloudEvents attributes of
// the record, as a flat JSON object of strings in key order, with a new
// trace.
func headersJSON(src *Source, ev stripeEvent, key string, at time.Time) string {
	var trace [24]byte
	_, _ = rand.Read(trace[:])
	b := make([]byte, 0, 640)
	add := func(k, v string) {
		if len(b) > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(append(strconv.AppendQuote(b, k), ':'), v)
	}
	add("ce_apiversion", ev.apiVersion)
	add("ce_id", ev.id)
	add("ce_partitionkey", key)
	add("ce_source", "/tenants/"+src.Tenant+"/sources/"+src.ID)
	add("ce_sourceaccount", src.Account)
	add("ce_specversion", "1.0")
	add("ce_subject", ev.invoice)
	add("ce_tenantid", src.Tenant)
	add("ce_time", at.Format(time.RFC3339Nano))
	add("ce_type", "stripe."+ev.typ)
	add("content-type", "application/json")
	add("traceparent", "00-"+hex.EncodeToString(trace[:16])+"-"+hex.EncodeToString(trace[16:])+"-01")
	return "{" + string(b) + "}"
}

// commitLoop is the group commit: it takes the first waiting delivery, then
// up to batch-1 more, waiting for them until the first has waited 5 ms, and
// stores them in one statement.
func commitLoop(ctx context.Context, pool *pgxpool.Pool, queue chan *row, batch int, topic string) {
	rows := make([]*row, 0, batch)
	for {
		rows = rows[:0]
		select {
		case <-ctx.Done():
			return
		case r := <-queue:
			rows = append(rows, r)
		}
		// The wait runs from the first delivery's arrival: deliveries
		// that queued while the last batch committed wait no more.
		gather(queue, &rows, batch, rows[0].received.Add(5*time.Millisecond))
		commit(ctx, pool, rows, topic)
	}
}

// gather adds queued deliveries to rows until it holds batch or, once the
// queue is empty, the deadline passed.
func gather(queue chan *row, rows *[]*row, batch int, deadline time.Time) {
	for len(*rows) < batch {
		select {
		case r := <-queue:
			*rows = append(*rows, r)
			continue
		default:
		}
		wait := time.Until(deadline)
		if wait <= 0 {
			return
		}
		t := time.NewTimer(wait)
		select {
		case r := <-queue:
			*rows = append(*rows, r)
		case <-t.C:
		}
		t.Stop()
	}
}

// acceptSQL stores a batch: an inbox row per new event key, its payload
// row, its outbox row; keys already stored are left (duplicates). It
// returns the event ids stored.
const acceptSQL = `
WITH input AS (
    SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[],
                         $7::timestamptz[], $8::timestamptz[], $9::bytea[], $10::bytea[], $11::bytea[],
                         $12::text[], $13::bytea[], $14::text[])
        AS t(tenant_id, source_id, source_account, event_id, event_type, object_id,
             event_time, received_at, body_sha256, json_sha256, body, topic, key, headers)
), ins AS (
    INSERT INTO inbox (tenant_id, source_id, source_account, event_id, event_type, object_type, object_id,
                       event_time, received_at, status, body_sha256, json_sha256)
    SELECT tenant_id, source_id, source_account, event_id, event_type, 'invoice', object_id,
           event_time, received_at, 'published', body_sha256, json_sha256
    FROM input
    ORDER BY source_id, source_account, event_id
    ON CONFLICT ON CONSTRAINT inbox_event_key DO NOTHING
    RETURNING id, source_id, source_account, event_id
), payloads AS (
    INSERT INTO inbox_payloads (inbox_id, received_at, body)
    SELECT ins.id, input.received_at, input.body FROM ins JOIN input USING (source_id, source_account, event_id)
), published AS (
    INSERT INTO outbox (topic, key, headers, payload, inbox_id)
    SELECT input.topic, input.key, input.headers::jsonb, input.body, ins.id
    FROM ins JOIN input USING (source_id, source_account, event_id)
    ORDER BY ins.id
)
SELECT source_id::text, event_id FROM ins`

// commit stores rows in one statement and answers each. One key twice in
// a batch (a redelivery racing its original) is stored once: the later
// copies are answered as duplicates.
func commit(ctx context.Context, pool *pgxpool.Pool, rows []*row, topic string) {
	cols := struct {
		tenant, source, account, id, typ, object, topic, headers []string
		eventTime, received                                      []time.Time
		bodySum, jsonSum, body, key                              [][]byte
	}{}
	seen := map[[2]string]bool{}
	for _, r := range rows {
		k := [2]string{r.src.ID, r.eventID}
		if seen[k] {
			continue
		}
		seen[k] = true
		cols.tenant, cols.source, cols.account = append(cols.tenant, r.src.Tenant), append(cols.source, r.src.ID), append(cols.account, r.src.Account)
		cols.id, cols.typ, cols.object = append(cols.id, r.eventID), append(cols.typ, r.eventType), append(cols.object, r.objectID)
		cols.eventTime, cols.received = append(cols.eventTime, r.eventTime), append(cols.received, r.received)
		cols.bodySum, cols.jsonSum, cols.body = append(cols.bodySum, r.bodySum), append(cols.jsonSum, r.jsonSum), append(cols.body, r.body)
		cols.topic, cols.key, cols.headers = append(cols.topic, topic), append(cols.key, []byte(r.key)), append(cols.headers, r.headers)
	}
	stored := map[[2]string]bool{}
	res, err := pool.Query(ctx, acceptSQL, cols.tenant, cols.source, cols.account, cols.id, cols.typ, cols.object,
		cols.eventTime, cols.received, cols.bodySum, cols.jsonSum, cols.body, cols.topic, cols.key, cols.headers)
	if err == nil {
		for res.Next() {
			var k [2]string
			if err = res.Scan(&k[0], &k[1]); err != nil {
				break
			}
			stored[k] = true
		}
		res.Close()
		if err == nil {
			err = res.Err()
		}
	}
	for _, r := range rows {
		if err != nil {
			r.failed <- fmt.Errorf("commit: %w", err)
			continue
		}
		k := [2]string{r.src.ID, r.eventID}
		r.done <- stored[k]
		delete(stored, k) // a later copy in the same batch is a duplicate
	}
}
