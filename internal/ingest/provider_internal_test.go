package ingest

import (
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/sluicehq/sluice/internal/provider"
	"github.com/sluicehq/sluice/internal/provider/kinds/github"
	"github.com/sluicehq/sluice/internal/provider/kinds/hmac"
	"github.com/sluicehq/sluice/internal/provider/kinds/standardsigned"
	"github.com/sluicehq/sluice/internal/provider/kinds/stripe"
	"github.com/sluicehq/sluice/internal/provider/signature"
	"github.com/sluicehq/sluice/schemas"
)

// fakeCatalogue stands in for entries the catalogue may or may not have yet.
type fakeCatalogue map[string]*schemas.Entry

func (f fakeCatalogue) Lookup(kind, typ string) (*schemas.Entry, error) {
	return f[kind+" "+typ], nil
}

func (fakeCatalogue) Subscribed(string) (bool, error) { return false, nil }

// openSource opens a source of p's kind with settings, as sources.load does.
func openSource(t *testing.T, p provider.Provider, settings string) *source {
	t.Helper()
	var raw []byte
	if settings != "" {
		raw = []byte(settings)
	}
	scheme, err := p.Open(raw, 0)
	if err != nil {
		t.Fatal(err)
	}
	return &source{Kind: p.Kind(), Scheme: scheme}
}

func TestReadEventFollowsTheContractPerKind(t *testing.T) {
	t.Parallel()
	catalogue := fakeCatalogue{
		"stripe charge.refunded":                  {ObjectType: "invoice", ObjectIDPointer: "/data/object/invoice"},
		"github installation.created":             {ObjectType: "installation", ObjectIDPointer: "/installation/id"},
		"standard_webhooks verification.approved": {ObjectType: "verification"},
		"standard_webhooks feedback.created":      {ObjectType: "feedback", ObjectIDPointer: "/data/feedback/id", EventTimePointer: "/data/at", EventTimeFormat: "unix"},
		"hmac order.shipped":                      {ObjectType: "order"},
		"hmac order.split":                        {ObjectType: "order", ObjectIDPointer: "header:X-Order", EventTimePointer: "header:X-At", EventTimeFormat: "unix"},
	}
	hmacSrc := openSource(t, hmac.Provider{}, `{"header":"X-Sig","eventId":"header:X-Event-Id","eventType":"/kind","objectId":"/order/ref","eventTime":"/at","eventTimeFormat":"rfc3339"}`)
	stripeSrc, githubSrc, standardSrc := openSource(t, stripe.Provider{}, ""), openSource(t, github.Provider{}, ""), openSource(t, standardsigned.Provider{}, "")
	header := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	cases := map[string]struct {
		src         *source
		h           http.Header
		body        string
		want        providerEvent
		quarantined bool
	}{
		"stripe defaults": {stripeSrc, nil,
			`{"id":"evt_1","type":"invoice.paid","created":1700000000,"data":{"object":{"id":"in_1","object":"invoice"}}}`,
			providerEvent{ID: "evt_1", Type: "invoice.paid", ObjectID: "in_1", ObjectType: "invoice", Time: time.Unix(1700000000, 0).UTC()}, false},
		"stripe refund routed to its invoice": {stripeSrc, nil,
			`{"id":"evt_2","type":"charge.refunded","created":1700000001,"data":{"object":{"id":"ch_1","object":"charge","invoice":"in_1"}}}`,
			providerEvent{ID: "evt_2", Type: "charge.refunded", ObjectID: "in_1", ObjectType: "charge", Time: time.Unix(1700000001, 0).UTC()}, false},
		"github with action": {githubSrc, header("X-GitHub-Delivery", "d-1", "X-GitHub-Event", "installation"),
			`{"action":"created","installation":{"id":42}}`,
			providerEvent{ID: "d-1", Type: "installation.created", ObjectID: "42"}, false},
		"github without action": {githubSrc, header("X-GitHub-Delivery", "d-2", "X-GitHub-Event", "ping"),
			`{"zen":"Keep it logically awesome."}`,
			providerEvent{ID: "d-2", Type: "ping"}, false},
		"standard webhooks defaults": {standardSrc, header(signature.StandardIDHeader, "msg_1"),
			`{"type":"verification.approved","timestamp":"2026-01-02T03:04:05Z","data":{"id":"ver_1"}}`,
			providerEvent{ID: "msg_1", Type: "verification.approved", ObjectID: "ver_1", Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}, false},
		"standard webhooks pointers from the entry": {standardSrc, header(signature.StandardIDHeader, "msg_2"),
			`{"type":"feedback.created","timestamp":"2026-01-02T03:04:05Z","data":{"id":"x","at":1700000002,"feedback":{"id":"fb_1"}}}`,
			providerEvent{ID: "msg_2", Type: "feedback.created", ObjectID: "fb_1", Time: time.Unix(1700000002, 0).UTC()}, false},
		"hmac configured locators": {hmacSrc, header("X-Event-Id", "e-1"),
			`{"kind":"order.shipped","at":"2026-02-03T04:05:06.5Z","order":{"ref":"o~/1"}}`,
			providerEvent{ID: "e-1", Type: "order.shipped", ObjectID: "o~/1", Time: time.Date(2026, 2, 3, 4, 5, 6, 5e8, time.UTC)}, false},
		"a tenant entry's header locations win over the source's pointers": {hmacSrc, header("X-Event-Id", "e-2", "X-Order", "o-h", "X-At", "1700000003"),
			`{"kind":"order.split","at":"2026-02-03T04:05:06Z","order":{"ref":"o-body"}}`,
			providerEvent{ID: "e-2", Type: "order.split", ObjectID: "o-h", Time: time.Unix(1700000003, 0).UTC()}, false},
		"a header location the delivery lacks": {hmacSrc, header("X-Event-Id", "e-3"),
			`{"kind":"order.split","order":{"ref":"o-body"}}`,
			providerEvent{ID: "e-3", Type: "order.split"}, true},
		"known type without its object id": {githubSrc, header("X-GitHub-Delivery", "d-3", "X-GitHub-Event", "installation"),
			`{"action":"created"}`,
			providerEvent{ID: "d-3", Type: "installation.created"}, true},
	}
	for name, tc := range cases {
		h := tc.h
		if h == nil {
			h = http.Header{}
		}
		got, err := readEvent(tc.src, h, []byte(tc.body), catalogue)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if got.ID != tc.want.ID || got.Type != tc.want.Type || got.ObjectID != tc.want.ObjectID || !got.Time.Equal(tc.want.Time) {
			t.Errorf("%s: got id=%q type=%q object=%q time=%v, want id=%q type=%q object=%q time=%v", name,
				got.ID, got.Type, got.ObjectID, got.Time, tc.want.ID, tc.want.Type, tc.want.ObjectID, tc.want.Time)
		}
		if (got.Problem != "") != tc.quarantined {
			t.Errorf("%s: problem %q, quarantined want %v", name, got.Problem, tc.quarantined)
		}
	}
}

func TestReadEventRefusesWhatCannotBeAKey(t *testing.T) {
	t.Parallel()
	stripeSrc, githubSrc := openSource(t, stripe.Provider{}, ""), openSource(t, github.Provider{}, "")
	cases := map[string]struct {
		src  *source
		h    http.Header
		body string
	}{
		"not json":           {stripeSrc, http.Header{}, `{"id":`},
		"no id":              {stripeSrc, http.Header{}, `{"type":"invoice.paid"}`},
		"github no delivery": {githubSrc, http.Header{"X-Github-Event": {"ping"}}, `{}`},
		"nul in id":          {stripeSrc, http.Header{}, `{"id":"evt\u0000","type":"x"}`},
		"huge id":            {stripeSrc, http.Header{}, `{"id":"` + strings.Repeat("x", 600) + `","type":"x"}`},
	}
	for name, tc := range cases {
		if _, err := readEvent(tc.src, tc.h, []byte(tc.body), fakeCatalogue{}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestQuarantineReasonIsStorable(t *testing.T) {
	t.Parallel()
	if got := storableText("a\x00b\xff"); got != "ab\uFFFD" {
		t.Fatalf("storableText = %q", got)
	}
	if got := storableText(strings.Repeat("é", maxReason)); len(got) > maxReason || !utf8.ValidString(got) {
		t.Fatalf("long reason: %d bytes, valid %v", len(got), utf8.ValidString(got))
	}
}
