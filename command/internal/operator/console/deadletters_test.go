package console_test

import (
	stdhtml "html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/command/internal/operator/console"
)

// The scenario of DESIGN.md: an invoice's event failed for want of a
// workspace; once the customer is mapped, an operator replays its dead
// letter from the console, after its count, and the grant is in Postgres.
func TestReplayADeadLetterAndTheGrantAppears(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	if _, err := b.store.CreateWorkspace(t.Context(), w.tenant, w.customer, "w"); err != nil {
		t.Fatal(err)
	}
	rec, token := b.token(t, admintoken.RoleOperate, w.tenant)
	ctx := browser(t)
	b.browserSignIn(t, ctx, token)
	var confirm, notice string
	replay := `a[href="/console/dead-letters/` + w.deadLetter + `/replay"]`
	err := chromedp.Run(ctx,
		chromedp.Click(`a[href="/console/dead-letters"]`),
		chromedp.WaitVisible(replay),
		chromedp.Click(replay),
		chromedp.WaitVisible(`p.confirm`),
		chromedp.Text(`p.confirm`, &confirm),
	)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(confirm, "1 dead letter will be applied again") {
		t.Errorf("confirmation %q, want the count of one letter", confirm)
	}
	if n := b.granted(t, w); n != 0 {
		t.Fatalf("granted %d before the replay was confirmed", n)
	}
	if n := b.audited(t, rec.ID, "dead_letter.read_payload"); n != 0 {
		t.Errorf("the confirmation read the letter's payload (%d audited reads)", n)
	}
	err = chromedp.Run(ctx,
		chromedp.Click(`button.danger`),
		chromedp.WaitVisible(`p.notice`),
		chromedp.Text(`p.notice`, &notice),
	)
	if err != nil {
		t.Fatal(err)
	}
	if notice != "Dead letter replayed." {
		t.Errorf("notice %q", notice)
	}
	if n := b.granted(t, w); n != 100 {
		t.Errorf("granted %d for the invoice after the replay, want 100", n)
	}
	if n := b.audited(t, rec.ID, "dead_letter.replay"); n != 1 {
		t.Errorf("%d replays audited under the session's token, want 1", n)
	}
}

// A filtered replay shows the dry run's count first, and replays what it
// counted.
func TestFilteredReplayCountsFirst(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	if _, err := b.store.CreateWorkspace(t.Context(), w.tenant, w.customer, "w"); err != nil {
		t.Fatal(err)
	}
	_, token := b.token(t, admintoken.RoleOperate, "")
	c := b.client(t)
	b.signIn(t, c, token)
	page := b.page(t, c, console.Prefix+"/dead-letters/replay?tenant_id="+w.tenant+"&reason=no+workspace")
	contains(t, "the confirmation", page, "<strong>1</strong> dead letter will be", `name="tenant_id" value="`+w.tenant+`"`)
	resp, err := c.PostForm(b.srv.URL+console.Prefix+"/dead-letters/replay", map[string][]string{
		"csrf": {csrfOf(t, page)}, "tenant_id": {w.tenant}, "reason": {"no workspace"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 303 {
		t.Fatalf("filtered replay: %d", resp.StatusCode)
	}
	if n := b.granted(t, w); n != 100 {
		t.Errorf("granted %d after the filtered replay, want 100", n)
	}
	page = b.page(t, c, console.Prefix+"/dead-letters/replay?tenant_id="+w.tenant+"&reason=no+workspace")
	contains(t, "the confirmation after the replay", page, "Nothing to replay")
}

// A conflict's two bodies side by side, the differing lines marked.
func TestConflictShowsBothBodiesSideBySide(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	rec, token := b.token(t, admintoken.RoleRead, w.tenant)
	c := b.client(t)
	b.signIn(t, c, token)
	list := b.page(t, c, console.Prefix+"/conflicts")
	i := strings.Index(list, `href="/console/conflicts/`)
	if i < 0 {
		t.Fatalf("the conflicts page links to no conflict: %s", list)
	}
	href := list[i+len(`href="`):]
	href = href[:strings.Index(href, `"`)]
	page := b.page(t, c, href)
	contains(t, "the conflict", page, `<ins class="diff">`, "9999", `<del class="diff">`, w.customer)
	if n := b.audited(t, rec.ID, "conflict.read_payload"); n != 1 {
		t.Errorf("%d conflict reads audited, want 1", n)
	}
}

// The dead-letters page's own "replay every pending letter this filter
// selects" link carries its filter to the server: a filter that matches no
// letter offers nothing, and one that matches one tenant's letter replays
// exactly that letter, not another tenant's pending beside it.
func TestFilteredReplayFromTheListReplaysWhatItCounted(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w, other := b.newWorld(t), b.newWorld(t)
	for _, x := range []world{w, other} {
		if _, err := b.store.CreateWorkspace(t.Context(), x.tenant, x.customer, "w"); err != nil {
			t.Fatal(err)
		}
	}
	_, token := b.token(t, admintoken.RoleOperate, "")
	c := b.client(t)
	b.signIn(t, c, token)
	follow := func(list string) string {
		t.Helper()
		m := replayLink.FindStringSubmatch(b.page(t, c, list))
		if m == nil {
			t.Fatalf("%s offers no filtered replay", list)
		}
		return b.page(t, c, stdhtml.UnescapeString(m[1]))
	}

	none := follow(console.Prefix + "/dead-letters?" + url.Values{"tenant_id": {w.tenant}, "reason": {"matches-no-letter"}}.Encode())
	contains(t, "the confirmation of a filter matching nothing", none, "Nothing to replay")

	page := follow(console.Prefix + "/dead-letters?" + url.Values{"tenant_id": {w.tenant}, "reason": {"workspace"}}.Encode())
	contains(t, "the confirmation", page, "<strong>1</strong> dead letter will be", `name="tenant_id" value="`+w.tenant+`"`)
	form := url.Values{"csrf": {csrfOf(t, page)}}
	for _, m := range hiddenInput.FindAllStringSubmatch(page, -1) {
		if m[1] != "csrf" {
			form.Set(m[1], stdhtml.UnescapeString(m[2]))
		}
	}
	resp, err := c.PostForm(b.srv.URL+console.Prefix+"/dead-letters/replay", form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("filtered replay: %d", resp.StatusCode)
	}
	if n := b.granted(t, w); n != 100 {
		t.Errorf("granted %d to the filtered tenant after its replay, want 100", n)
	}
	if n := b.granted(t, other); n != 0 {
		t.Errorf("granted %d to a tenant the filter did not name, want 0", n)
	}

	bare := b.page(t, c, console.Prefix+"/dead-letters/replay")
	contains(t, "the confirmation without a filter", bare, "Name at least a group")
}

var (
	replayLink  = regexp.MustCompile(`<a href="([^"]*/dead-letters/replay\?[^"]*)">Replay every pending`)
	hiddenInput = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)
)
