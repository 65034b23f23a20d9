package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/command/internal/operator/console"
)

// sessionEnded reports whether the session of cookie value v is revoked.
func (b *bundle) sessionRevoked(t *testing.T, tokenID string) (revoked, live int) {
	t.Helper()
	err := b.pool.QueryRow(t.Context(), `SELECT count(*) FILTER (WHERE revoked_at IS NOT NULL), count(*) FILTER (WHERE revoked_at IS NULL)
FROM console_sessions WHERE token_id = $1`, tokenID).Scan(&revoked, &live)
	if err != nil {
		t.Fatal(err)
	}
	return revoked, live
}

// get fetches a console page with cookie v and returns status and where it
// redirects.
func (b *bundle) getWith(t *testing.T, cookie, path string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, b.srv.URL+path, nil)
	req.AddCookie(&http.Cookie{Name: console.CookieName, Value: cookie})
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Location")
}

func TestSignInShowsTheOverviewAndSignOutEndsTheSession(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rec, token := b.token(t, admintoken.RoleOperate, "")
	ctx := browser(t)
	b.browserSignIn(t, ctx, token)
	page := html(t, ctx)
	contains(t, "the overview", page, "Dead letters pending", "Events accepted", "<svg")
	var cookie string
	err := chromedp.Run(ctx, chromedp.Evaluate(`document.cookie`, &cookie))
	if err != nil {
		t.Fatal(err)
	}
	if cookie != "" {
		t.Errorf("the session cookie is readable by scripts (%q): it must be HttpOnly", cookie)
	}
	if _, live := b.sessionRevoked(t, rec.ID); live != 1 {
		t.Fatalf("%d live sessions after sign-in, want 1", live)
	}
	var h1 string
	err = chromedp.Run(ctx,
		chromedp.Click(`form.signout button`),
		chromedp.WaitVisible(`#token`, chromedp.ByID),
		chromedp.Text(`h1`, &h1),
	)
	if err != nil {
		t.Fatalf("sign out: %v", err)
	}
	if h1 != "Sign in" {
		t.Errorf("after sign-out the page is %q, want Sign in", h1)
	}
	if revoked, live := b.sessionRevoked(t, rec.ID); revoked != 1 || live != 0 {
		t.Errorf("after sign-out: %d revoked and %d live sessions, want 1 and 0", revoked, live)
	}
	// Back in the browser, the overview asks for a sign-in again.
	err = chromedp.Run(ctx, chromedp.Navigate(b.srv.URL+console.Prefix+"/"), chromedp.WaitVisible(`#token`, chromedp.ByID))
	if err != nil {
		t.Errorf("the overview after sign-out: %v", err)
	}
}

func TestSignOutRevokesTheCookieServerSide(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, token := b.token(t, admintoken.RoleRead, "")
	c := b.client(t)
	cookie := b.signIn(t, c, token)
	if status, _ := b.getWith(t, cookie, console.Prefix+"/"); status != http.StatusOK {
		t.Fatalf("overview with the session: %d", status)
	}
	// Sign out with the CSRF token of the page.
	page := b.page(t, c, console.Prefix+"/")
	resp, err := c.PostForm(b.srv.URL+console.Prefix+"/sign-out", map[string][]string{"csrf": {csrfOf(t, page)}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-out: %d", resp.StatusCode)
	}
	// The cookie kept by someone who copied it is worth nothing now.
	if status, to := b.getWith(t, cookie, console.Prefix+"/"); status != http.StatusSeeOther || to != console.Prefix+"/sign-in" {
		t.Errorf("overview with a signed-out cookie: %d to %q, want 303 to sign-in", status, to)
	}
}

func TestSessionEndsWithItsToken(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rec, token := b.token(t, admintoken.RoleOperate, "")
	cookie := b.signIn(t, b.client(t), token)
	var within bool
	if err := b.pool.QueryRow(t.Context(), `SELECT s.expires_at <= t.expires_at FROM console_sessions s JOIN admin_tokens t ON t.id = s.token_id
WHERE s.token_id = $1`, rec.ID).Scan(&within); err != nil {
		t.Fatal(err)
	}
	if !within {
		t.Errorf("the session outlives its token")
	}
	if err := (admintoken.Store{Pool: b.pool}).Revoke(t.Context(), rec.ID); err != nil {
		t.Fatal(err)
	}
	if status, to := b.getWith(t, cookie, console.Prefix+"/"); status != http.StatusSeeOther || to != console.Prefix+"/sign-in" {
		t.Errorf("overview after the token's revocation: %d to %q, want 303 to sign-in", status, to)
	}
}

func TestSignInRefusesABadToken(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := b.client(t)
	resp, err := c.PostForm(b.srv.URL+console.Prefix+"/sign-in", map[string][]string{"token": {admintoken.Prefix + "wrong"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("sign-in with a wrong token: %d, want 401", resp.StatusCode)
	}
	for _, ck := range resp.Cookies() {
		if ck.Name == console.CookieName && ck.Value != "" {
			t.Errorf("a refused sign-in set a session cookie")
		}
	}
}

// An action whose form lost its CSRF token does nothing: here the sign-out
// form, stripped of it in the browser, leaves the session live.
func TestActionWithoutCSRFTokenIsRefused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rec, token := b.token(t, admintoken.RoleOperate, "")
	ctx := browser(t)
	b.browserSignIn(t, ctx, token)
	var h1, alert string
	err := chromedp.Run(ctx,
		chromedp.Evaluate(`document.querySelector('form.signout input[name=csrf]').remove()`, nil),
		chromedp.Click(`form.signout button`),
		chromedp.WaitVisible(`p.error`),
		chromedp.Text(`h1`, &h1),
		chromedp.Text(`p.error`, &alert),
	)
	if err != nil {
		t.Fatal(err)
	}
	if h1 != "Refused" || !strings.Contains(alert, "CSRF") {
		t.Errorf("a sign-out without its CSRF token: page %q %q, want Refused naming the CSRF token", h1, alert)
	}
	if revoked, live := b.sessionRevoked(t, rec.ID); revoked != 0 || live != 1 {
		t.Errorf("after the refused sign-out: %d revoked and %d live sessions, want 0 and 1", revoked, live)
	}
	// A wrong token is refused as well (from a client without a browser).
	c := b.client(t)
	b.signIn(t, c, token)
	resp, err := c.PostForm(b.srv.URL+console.Prefix+"/sign-out", map[string][]string{"csrf": {"not-the-token"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("sign-out with a wrong CSRF token: %d, want 403", resp.StatusCode)
	}
}

func TestPagesCarryTheCSP(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, token := b.token(t, admintoken.RoleRead, "")
	c := b.client(t)
	b.signIn(t, c, token)
	resp, err := c.Get(b.srv.URL + console.Prefix + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("Content-Security-Policy"); got != console.CSP {
		t.Errorf("CSP %q, want %q", got, console.CSP)
	}
	if got := resp.Header.Get("Cache-Control"); got != "no-store" {
		t.Errorf("Cache-Control %q, want no-store", got)
	}
}

// A deep link opened without a session comes back after sign-in, filters
// intact; a next that leaves the console (another host, a scheme, "//",
// a backslash, ".." out of it) signs in to the overview instead.
func TestSignInReturnsToTheRequestedPageAndNowhereElse(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, token := b.token(t, admintoken.RoleRead, "")
	deep := console.Prefix + "/dead-letters?group=sluice.credits&reason=workspace"
	resp, err := b.client(t).Get(b.srv.URL + deep)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	signIn := resp.Header.Get("Location")
	want := console.Prefix + "/sign-in?" + (url.Values{"next": {deep}}).Encode()
	if resp.StatusCode != http.StatusSeeOther || signIn != want {
		t.Fatalf("a deep link without a session: %d to %q, want 303 to %q", resp.StatusCode, signIn, want)
	}
	c := b.client(t)
	form := b.page(t, c, signIn)
	if !strings.Contains(form, `name="next" value="`+strings.ReplaceAll(deep, "&", "&amp;")+`"`) {
		t.Fatalf("the sign-in form does not carry the deep link: %.1000s", form)
	}
	for next, want := range map[string]string{
		deep:                             deep,
		"":                               console.Prefix + "/",
		"https://evil.example/console/":  console.Prefix + "/",
		"//evil.example/console/":        console.Prefix + "/",
		"/\\evil.example/console/":       console.Prefix + "/",
		"/console/../admin/v1/tokens":    console.Prefix + "/",
		"/console/%2e%2e/admin/v1":       console.Prefix + "/",
		"/admin/v1/audit":                console.Prefix + "/",
		"javascript:alert(1)":            console.Prefix + "/",
		"/console/sign-in?next=/console": console.Prefix + "/",
	} {
		resp, err := b.client(t).PostForm(b.srv.URL+console.Prefix+"/sign-in", url.Values{"token": {token}, "next": {next}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if to := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || to != want {
			t.Errorf("sign-in with next %q: %d to %q, want 303 to %q", next, resp.StatusCode, to, want)
		}
	}
}
