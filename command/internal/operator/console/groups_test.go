package console_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/testenv"
)

// An operator rewinds a stopped group from the console: the dry run says
// how many records would be read again and moves nothing; only its
// confirmation commits the offsets.
func TestRewindAStoppedGroupDryRunFirst(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cl, err := kgo.NewClient(kgo.SeedBrokers(testenv.Require(t).Brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	adm := kadm.NewClient(cl)
	topics := envelope.Topics{Prefix: "console" + testenv.RandomSuffix()}
	topic, group := topics.Resource("subscriptions"), topics.Resource("subscriptions")
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = adm.DeleteTopics(context.Background(), topic) })
	for range 5 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: 0, Value: []byte("x")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	committed := kadm.Offsets{}
	committed.AddOffset(topic, 0, 5, -1)
	if _, err := adm.CommitOffsets(ctx, group, committed); err != nil {
		t.Fatal(err)
	}
	at := func() int64 {
		t.Helper()
		got, err := adm.FetchOffsets(ctx, group)
		if err != nil {
			t.Fatal(err)
		}
		o, _ := got.Lookup(topic, 0)
		return o.At
	}
	b := setupWith(t, adm, topics)
	_, token := b.token(t, admintoken.RoleOperate, "")
	bctx := browser(t)
	b.browserSignIn(t, bctx, token)
	var confirm string
	err = chromedp.Run(bctx,
		chromedp.Navigate(b.srv.URL+"/console/consumer-groups/"+group),
		chromedp.WaitVisible(`select[name=to]`),
		chromedp.SetValue(`select[name=to]`, "earliest"),
		chromedp.Click(`form.filters button`),
		chromedp.WaitVisible(`p.confirm`),
		chromedp.Text(`p.confirm`, &confirm),
	)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(confirm, "5 records will be read again") {
		t.Errorf("dry run says %q, want 5 records", confirm)
	}
	if got := at(); got != 5 {
		t.Fatalf("the dry run moved the group to %d", got)
	}
	var notice string
	err = chromedp.Run(bctx,
		chromedp.Click(`button.danger`),
		chromedp.WaitVisible(`p.notice`),
		chromedp.Text(`p.notice`, &notice),
	)
	if err != nil {
		t.Fatal(err)
	}
	if got := at(); got != 0 {
		t.Errorf("after the confirmed rewind the group is at %d, want 0", got)
	}
}
