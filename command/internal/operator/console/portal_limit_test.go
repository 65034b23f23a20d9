package console_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/command/internal/operator/console"
	"github.com/sluicehq/sluice/command/internal/operator/portallink"
	"github.com/sluicehq/sluice/internal/listen"
)

// Each use of a portal link costs a look-up, so each is charged to its
// client's address: past the budget the portal answers 429 with
// Retry-After and looks nothing up, a good link included (it stays
// unused, for later).
func TestThePortalLimitsLinkUsesPerAddress(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	srv := listen.NewPublic("127.0.0.1:0", slog.New(slog.DiscardHandler), nil, false)
	if _, err := console.Register(srv.Engine, console.Config{Pool: b.pool, API: b.api,
		Portal: &console.Portal{Links: portallink.Store{Pool: b.pool}, OpenRate: 0.001, OpenBurst: 3}}, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	portal := httptest.NewServer(srv.Engine)
	t.Cleanup(portal.Close)
	use := func(secret string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, portal.URL+portallink.OpenPath, strings.NewReader(url.Values{"link": {secret}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	for i := range 3 {
		if resp := use("a-guess-" + strconv.Itoa(i)); resp.StatusCode != http.StatusForbidden {
			t.Fatalf("guess %d: %d, want 403 (an unknown link) while the budget lasts", i, resp.StatusCode)
		}
	}
	_, operator := b.token(t, admintoken.RoleOperate, w.tenant)
	link := b.mintLink(t, operator, w.tenant, "destinations", "read")
	_, secret, _ := strings.Cut(link.URL, "#")
	resp := use(secret)
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("a use past the budget: %d, want 429", resp.StatusCode)
	}
	if after, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || after < 1 {
		t.Errorf("Retry-After %q, want whole seconds", resp.Header.Get("Retry-After"))
	}
	if l, err := (portallink.Store{Pool: b.pool}).Get(t.Context(), link.ID); err != nil || l.UsedAt != nil {
		t.Errorf("a use refused by the limit used the link: %+v %v", l, err)
	}
}
