package console_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/command/internal/operator/console"
	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/testenv"
)

// The overview's strip says, for each stage, whether it is ready and why:
// a stage this process runs by its checks (a failing one named with its
// line), the relay by its slot wherever it runs (none streams from it
// here), delivery by the endpoints failing; a tenant's overview has no
// strip.
func TestOverviewSaysWhetherEachStageIsReadyAndWhy(t *testing.T) {
	t.Parallel()
	topics := envelope.Topics{Prefix: "consolehealth" + testenv.RandomSuffix()}
	slot := "console_" + strings.ReplaceAll(topics.Prefix, ".", "_")
	health := func(context.Context) []console.StageHealth {
		return []console.StageHealth{{Stage: "ingest"}, {Stage: "consumers", Failing: []string{"kafka: no broker answers at 127.0.0.1:1"}}}
	}
	b := setupProcess(t, process{kafka: kafkaAdmin(t), topics: topics, slot: slot, health: health})
	w := b.newWorld(t)
	if _, err := b.pool.Exec(t.Context(), `SELECT pg_create_logical_replication_slot($1, 'pgoutput')`, slot); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = b.pool.Exec(context.Background(), `SELECT pg_drop_replication_slot($1)`, slot) })

	page := b.page(t, b.signedIn(t, admintoken.RoleRead, ""), console.Prefix+"/")
	strip := page[strings.Index(page, `id="health"`):]
	strip = strip[:strings.Index(strip, "</ul>")]
	stage := func(title string) string {
		i := strings.Index(strip, ">"+title+"<")
		if i < 0 {
			t.Fatalf("the strip has no %s: %s", title, strip)
		}
		s := strip[i:]
		if j := strings.Index(s, "</li>"); j >= 0 {
			s = s[:j]
		}
		return s
	}
	contains(t, "ingest on the strip", stage("Ingest"), `badge good">ready<`, "ready in this process", "events accepted in the last hour")
	contains(t, "consumers on the strip", stage("Consumers"), `badge bad">not ready<`, "kafka: no broker answers at 127.0.0.1:1")
	contains(t, "the relay on the strip", stage("Relay"), `badge bad">not ready<`, "no relay streams from slot "+slot)
	contains(t, "delivery on the strip", stage("Delivery"), "not run by this process")

	scoped := b.page(t, b.signedIn(t, admintoken.RoleRead, w.tenant), console.Prefix+"/")
	if strings.Contains(scoped, `id="health"`) {
		t.Errorf("a tenant-scoped overview shows the stages' health")
	}
}

// The overview refreshes its figures in place: an event accepted after
// the page loaded is counted on it without a navigation, and Pause stops
// the refreshing.
func TestOverviewRefreshesItsFiguresWithoutAReload(t *testing.T) {
	t.Parallel()
	b := setupProcess(t, process{topics: envelope.Topics{Prefix: "consolerefresh" + testenv.RandomSuffix()}, refresh: time.Second})
	_, token := b.token(t, admintoken.RoleRead, "")
	ctx := browser(t)
	b.browserSignIn(t, ctx, token)
	accepted := func() int {
		t.Helper()
		var s string
		if err := chromedp.Run(ctx, chromedp.Text(`dl.figures div:first-child dd`, &s)); err != nil {
			t.Fatal(err)
		}
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			t.Fatalf("events accepted reads %q", s)
		}
		return n
	}
	// A mark on the window: a navigation would lose it.
	if err := chromedp.Run(ctx, chromedp.Evaluate(`window.stayed = true`, nil)); err != nil {
		t.Fatal(err)
	}
	before := accepted()
	b.newWorld(t)
	more := fmt.Sprintf(`Number(document.querySelector("dl.figures div:first-child dd").textContent) > %d`, before)
	if err := chromedp.Run(ctx, chromedp.Poll(more, nil, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		t.Fatalf("the overview still counts %d events accepted after one more was: %v", before, err)
	}
	var stayed bool
	if err := chromedp.Run(ctx, chromedp.Evaluate(`window.stayed === true`, &stayed)); err != nil || !stayed {
		t.Fatalf("the overview was reloaded to refresh (stayed %v, %v)", stayed, err)
	}
	var pressed string
	var ok bool
	if err := chromedp.Run(ctx, chromedp.Click(`p.refresh button`), chromedp.AttributeValue(`p.refresh button`, "aria-pressed", &pressed, &ok)); err != nil {
		t.Fatal(err)
	}
	if pressed != "true" {
		t.Errorf("Pause pressed reads aria-pressed %q", pressed)
	}
}
