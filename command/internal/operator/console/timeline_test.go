package console_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/command/internal/operator/console"
)

// The trail's timeline has the relay's hop of its own: the event published
// to Kafka (topic, partition, offset), once however many consumers read
// the record, right after it was received when the record's time is not
// kept, at that time when it is, and linked to what read it.
func TestTheTrailShowsTheHopFromTheOutboxToKafka(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	// A group set the same record aside as well: one publication.
	if _, err := b.pool.Exec(t.Context(), `INSERT INTO consumer_waiting (consumer_group, topic, partition, "offset", key, headers, payload, record_time, reason)
VALUES ('sluice.credits', 'sluice.invoices', 0, 1, 'k', jsonb_build_object('sluice_inboxid', $1::text), '{}', now(), 'locked')`, w.inboxID); err != nil {
		t.Fatal(err)
	}
	_, token := b.token(t, admintoken.RoleRead, w.tenant)
	ctx := browser(t)
	b.browserSignIn(t, ctx, token)
	var steps []string
	var href string
	var ok bool
	if err := chromedp.Run(ctx,
		chromedp.Navigate(b.srv.URL+console.Prefix+"/events/"+w.inboxID),
		chromedp.WaitVisible(`ol.timeline`),
		chromedp.Evaluate(`[...document.querySelectorAll('ol.timeline li')].map(li => li.innerText.replace(/\s+/g, ' '))`, &steps),
		chromedp.AttributeValue(`//ol[@class="timeline"]//a[starts-with(., "Published to Kafka")]`, "href", &href, &ok, chromedp.BySearch),
	); err != nil {
		t.Fatal(err)
	}
	published, received, delivery := -1, -1, -1
	for i, s := range steps {
		switch {
		case strings.Contains(s, "Published to Kafka by the relay"):
			if published >= 0 {
				t.Errorf("the record is published twice in the timeline: %q", steps)
			}
			published = i
			if !strings.Contains(s, "topic sluice.invoices, partition 0, offset 1") {
				t.Errorf("the publication step says %q", s)
			}
		case strings.Contains(s, "Received from the provider accepted"):
			received = i
		case strings.Contains(s, "Delivery "+w.delivery+" to endpoint"):
			delivery = i
		}
	}
	if published < 0 || received < 0 || published != received+1 || delivery < published {
		t.Errorf("the publication is step %d, the reception %d, the delivery %d; want it right after the reception: %q",
			published, received, delivery, steps)
	}
	if !ok || href != console.Prefix+"/deliveries/"+w.delivery {
		t.Errorf("the publication links to %q, want the delivery that read it", href)
	}
	// With the record's time kept (a delivery keeps it), the step is at it.
	if _, err := b.pool.Exec(t.Context(), `UPDATE deliveries SET accepted_at = now() + interval '1 hour' WHERE id = $1`, w.delivery); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Run(ctx, chromedp.Reload(), chromedp.WaitVisible(`ol.timeline`),
		chromedp.Evaluate(`[...document.querySelectorAll('ol.timeline li')].map(li => li.innerText.replace(/\s+/g, ' '))`, &steps)); err != nil {
		t.Fatal(err)
	}
	if last := steps[len(steps)-1]; !strings.Contains(last, "Published to Kafka") || !strings.Contains(last, "in 59 min") {
		t.Errorf("a publication an hour from now is not the last step at its time: %q", steps)
	}
}
