// Package githubtest is a fake of the part of GitHub's REST API
// reconciliation uses (an App's hook deliveries: list, paginated by cursor,
// newest first; redeliver), for tests: GitHub is a third party, never
// called from a test. It checks that calls carry a JWT issued for the App.
package githubtest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Delivery is one attempt to deliver a webhook, as GitHub records it.
type Delivery struct {
	ID          int64     `json:"id"`
	GUID        string    `json:"guid"`
	DeliveredAt time.Time `json:"delivered_at"`
	Redelivery  bool      `json:"redelivery"`
	Status      string    `json:"status"`
	StatusCode  int       `json:"status_code"`
	Event       string    `json:"event"`
	Action      string    `json:"action,omitempty"`
	// Body is the payload the attempt carried (GitHub keeps it too).
	Body []byte `json:"-"`
}

// API is the fake. Build it with New.
type API struct {
	*httptest.Server
	AppID int64
	// Key is the App's private key; Credentials holds it as Sluice stores it.
	Key *rsa.PrivateKey
	// Redeliver is called for each redelivery asked, with the attempt to
	// send again, and returns the status the endpoint answered.
	Redeliver func(d Delivery) int

	mu            sync.Mutex
	installations map[int64]Installation
	deliveries    []Delivery // oldest first
	redelivery    []string   // GUIDs asked, in order
	nextID        int64
}

// New starts a fake GitHub API for an App with a fresh key.
func New(t testing.TB) *API {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	a := &API{AppID: 4242, Key: key, nextID: 1000}
	a.Server = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.Close)
	return a
}

// Credentials are the App's API credentials for this fake, as JSON.
func (a *API) Credentials() string {
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(a.Key)})
	b, _ := json.Marshal(map[string]any{"app_id": a.AppID, "private_key": string(pemKey), "api_base": a.URL})
	return string(b)
}

// Installation is an installation's current state, as GET
// /app/installations/{id} shows it.
type Installation struct {
	ID          int64
	Suspended   bool
	UpdatedAt   time.Time
	AccountID   int64
	AccountName string
}

// SetInstallation records an installation's current state.
func (a *API) SetInstallation(in Installation) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.installations == nil {
		a.installations = map[int64]Installation{}
	}
	a.installations[in.ID] = in
}

// Record adds delivery attempts GitHub made; ids are assigned.
func (a *API) Record(ds ...Delivery) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, d := range ds {
		a.nextID++
		d.ID = a.nextID
		d.Status = statusText(d.StatusCode)
		a.deliveries = append(a.deliveries, d)
	}
}

// Redelivered lists the GUIDs whose redelivery was asked.
func (a *API) Redelivered() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.redelivery...)
}

func statusText(code int) string {
	if code >= 200 && code < 300 {
		return "OK"
	}
	return "failed"
}

const pageSize = 10

func (a *API) serve(w http.ResponseWriter, r *http.Request) {
	if !a.authorised(r) {
		http.Error(w, `{"message":"A JSON web token could not be decoded"}`, http.StatusUnauthorized)
		return
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/app/hook/deliveries":
		a.list(w, r)
	case r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/app/hook/deliveries/") && strings.HasSuffix(r.URL.Path, "/attempts"):
		id, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/app/hook/deliveries/"), "/attempts"), 10, 64)
		a.redeliver(w, id)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/app/installations/"):
		id, _ := strconv.ParseInt(strings.TrimPrefix(r.URL.Path, "/app/installations/"), 10, 64)
		a.installation(w, id)
	default:
		http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
	}
}

func (a *API) installation(w http.ResponseWriter, id int64) {
	a.mu.Lock()
	in, ok := a.installations[id]
	a.mu.Unlock()
	if !ok {
		http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
		return
	}
	doc := map[string]any{"id": in.ID, "updated_at": in.UpdatedAt.UTC().Format(time.RFC3339), "suspended_at": nil,
		"account": map[string]any{"id": in.AccountID, "login": in.AccountName, "type": "Organization"}}
	if in.Suspended {
		doc["suspended_at"] = in.UpdatedAt.UTC().Format(time.RFC3339)
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(doc)
}

func (a *API) list(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	from, _ := strconv.Atoi(r.URL.Query().Get("cursor"))
	var page []Delivery
	for i := len(a.deliveries) - 1 - from; i >= 0 && len(page) < pageSize; i-- {
		page = append(page, a.deliveries[i])
	}
	if next := from + len(page); next < len(a.deliveries) {
		w.Header().Set("Link", fmt.Sprintf(`<%s/app/hook/deliveries?cursor=%d>; rel="next"`, a.URL, next))
	}
	w.Header().Set("Content-Type", "application/json")
	if page == nil {
		page = []Delivery{}
	}
	json.NewEncoder(w).Encode(page)
}

func (a *API) redeliver(w http.ResponseWriter, id int64) {
	a.mu.Lock()
	var found *Delivery
	for i := range a.deliveries {
		if a.deliveries[i].ID == id {
			d := a.deliveries[i]
			found = &d
		}
	}
	if found == nil {
		a.mu.Unlock()
		http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
		return
	}
	a.redelivery = append(a.redelivery, found.GUID)
	a.mu.Unlock()
	status := http.StatusServiceUnavailable
	if a.Redeliver != nil {
		status = a.Redeliver(*found)
	}
	again := *found
	again.Redelivery, again.StatusCode, again.DeliveredAt = true, status, time.Now()
	a.Record(again)
	w.WriteHeader(http.StatusAccepted)
	w.Write([]byte("{}"))
}

// authorised checks for a JWT issued by the App (its claims only: the
// signature is ghinstallation's, tested by its authors).
func (a *API) authorised(r *http.Request) bool {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	parts := strings.Split(token, ".")
	if !ok || len(parts) != 3 {
		return false
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return false
	}
	var claims struct {
		Iss any `json:"iss"`
	}
	return json.Unmarshal(raw, &claims) == nil && fmt.Sprint(claims.Iss) == strconv.FormatInt(a.AppID, 10)
}
