package cli

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/sluicehq/sluice/internal/consumers/delivery"
	"github.com/sluicehq/sluice/internal/store/endpoints"
	"github.com/sluicehq/sluice/internal/testenv"
)

// An SQS target, a FIFO queue of an SQS-compatible server (ElasticMQ),
// through a kill -9 of the delivering process and an outage mid-run,
// holds exactly the endpoint's events, each resource in a message group of
// its own with its first copies in Kafka's order, every copy deduplicated
// on its webhook-id and signed; the tenant's HTTP endpoint is not delayed
// while the queue is down.
//
// The outage is a cut of the network between Sluice and the server (every
// connection closed, new ones refused, as a stopped server's), not a stop
// of the server: ElasticMQ's store is not faithful across its own stop
// under load (messages it acknowledged seconds before were missing after
// it, and a message deleted before it came back in flight, holding its
// group), which no sender can help; Amazon's SQS answers once the message
// is stored. The sender's test stops and starts the server itself
// (internal/consumers/delivery).
func TestSQSTargetGetsEverythingInOrderThroughKillAndOutage(t *testing.T) {
	t.Parallel()
	mq := testenv.StartElasticMQ(t)
	queue := mq.CreateQueue(t, "tenant-events.fifo")
	link := testenv.NewProxy(t, strings.TrimPrefix(mq.URL, "http://"))
	target := targetServer{
		endpoint: endpoints.New{Kind: endpoints.KindSQS, URL: "http://" + link.Addr() + "/000000000000/tenant-events.fifo",
			Settings:    endpoints.TargetSettings{Region: "elasticmq"},
			Credentials: &endpoints.TargetCredentials{Username: "AKIDTENANT", Password: "tenant-secret"}},
		stop:  func(testing.TB) { link.Cut() },
		start: func(testing.TB) { link.Restore() },
		messages: func(t *testing.T) []targetMessage {
			return sqsTargetMessages(t, mq, queue)
		},
	}
	deliverThroughKillAndOutage(t, target)
}

// sqsTargetMessages receives and deletes every message of a FIFO queue, in
// the order a receiver gets them (in order within a message group),
// checking that each message's group is its ce-partitionkey attribute. A
// message's id is its deduplication id.
func sqsTargetMessages(t *testing.T, mq *testenv.ElasticMQ, queue string) []targetMessage {
	t.Helper()
	var got []targetMessage
	for _, msg := range mq.Drain(t, queue) {
		m := targetMessage{id: msg.Attributes["MessageDeduplicationId"], headers: map[string]string{}, body: []byte(aws.ToString(msg.Body))}
		for k, v := range msg.MessageAttributes {
			m.headers[k] = aws.ToString(v.StringValue)
		}
		if group := msg.Attributes["MessageGroupId"]; group != m.headers[delivery.PartitionKeyHeader] || group == "" {
			t.Errorf("message group %q, %s %q: want the resource key in both", group, delivery.PartitionKeyHeader, m.headers[delivery.PartitionKeyHeader])
		}
		got = append(got, m)
	}
	return got
}
