package console_test

import (
	"io"
	"net/http"
	"regexp"
	"testing"

	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
)

// page fetches a console page with c and returns its body (200 expected).
func (b *bundle) page(t *testing.T, c *http.Client, path string) string {
	t.Helper()
	resp, err := c.Get(b.srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
	}
	return string(body)
}

var csrfInput = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func csrfOf(t *testing.T, page string) string {
	t.Helper()
	m := csrfInput.FindStringSubmatch(page)
	if m == nil {
		t.Fatal("the page has no CSRF field")
	}
	return m[1]
}

// signedIn is a client signed in with a new token of role (scoped to
// tenant, or unscoped when "").
func (b *bundle) signedIn(t *testing.T, role admintoken.Role, tenant string) *http.Client {
	t.Helper()
	_, token := b.token(t, role, tenant)
	c := b.client(t)
	b.signIn(t, c, token)
	return c
}
