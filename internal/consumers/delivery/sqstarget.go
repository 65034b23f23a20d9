package delivery

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"

	"github.com/sluicehq/sluice/internal/egress"
	"github.com/sluicehq/sluice/internal/store/endpoints"
)

// sqsSender sends to an SQS-compatible queue (Amazon SQS, ElasticMQ) with
// the AWS SDK's SQS client over an HTTP client of its own per endpoint,
// whose every connection is dialled through the egress policy: a queue URL
// is a URL like any other. The SDK retries nothing (the loop retries, with
// its backoff and breaker), and requests are signed with AWS Signature
// Version 4 for the endpoint's region with its sealed access key.
//
// A message's body is the event's body, its attributes those of an HTTP
// request's headers (webhook-id, webhook-timestamp, webhook-signature, the
// CloudEvents attributes) with the resource key, at most SQS's 10
// (ce-specversion, always 1.0, and the content type, always JSON, are left
// out). On a FIFO queue (its name ends in .fifo) the message group is the
// resource key, so a resource's events are received in order, and the
// deduplication id the webhook-id, so a retry within SQS's 5-minute window
// is dropped by the queue. The attempt succeeds when the queue answers
// SendMessage with a message id: from then on it holds the message.
type sqsSender struct {
	d   *Deliverer
	cl  *sqs.Client
	tr  *http.Transport
	url string
	err error // the endpoint's target cannot be sent to: every attempt fails with it
}

// maxSQSAttributes is SQS's bound on a message's attributes.
const maxSQSAttributes = 10

func newSQSSender(d *Deliverer, t endpoints.Target, slots int) *sqsSender {
	s := &sqsSender{d: d, url: t.URL}
	u, err := url.Parse(t.URL)
	switch {
	case err != nil:
		s.err = errors.New("the endpoint's URL cannot be parsed")
		return s
	case d.cfg.Dial == nil:
		s.err = fmt.Errorf("no dialer for targets that are not HTTP: %w", egress.ErrRefusedAddress)
		return s
	case t.Credentials == nil:
		s.err = errors.New("the endpoint has no credentials to sign its requests with")
		return s
	}
	connect := egress.Config{}.WithDefaults().ConnectTimeout
	// Like egress.NewClient's: no proxy from the environment, no redirect
	// followed, TLS verified (against the tenant's CA too, if any).
	s.tr = &http.Transport{
		Proxy: nil, DialContext: d.cfg.Dial, TLSClientConfig: targetTLS(t.Settings.CA),
		TLSHandshakeTimeout: connect, MaxIdleConnsPerHost: slots, IdleConnTimeout: time.Minute, ForceAttemptHTTP2: true,
	}
	client := &http.Client{Transport: s.tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	key, secret := t.Credentials.Username, t.Credentials.Password
	s.cl = sqs.New(sqs.Options{
		Region:       t.Settings.Region,
		BaseEndpoint: aws.String(u.Scheme + "://" + u.Host),
		HTTPClient:   client,
		Retryer:      aws.NopRetryer{},
		AppID:        "sluice",
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: key, SecretAccessKey: secret, Source: "sluice endpoint"}, nil
		}),
	})
	return s
}

func (s *sqsSender) send(ctx context.Context, t *endpoints.Target, m message) (endpoints.Attempt, time.Duration) {
	now := time.Now()
	a := endpoints.Attempt{Attempt: m.attempt, At: now}
	switch {
	case m.missing:
		a.ErrorClass, a.Error = "request", errPayloadGone.Error()
		return a, 0
	case s.err != nil:
		a.ErrorClass, a.Error = classifyTarget(s.err), s.err.Error()
		if a.ErrorClass == egress.ClassOther {
			a.ErrorClass = "request"
		}
		return a, 0
	}
	ctx, cancel := context.WithTimeout(ctx, s.d.cfg.Timeout)
	defer cancel()
	_, err := s.cl.SendMessage(ctx, sqsMessage(s.url, t, m, now))
	a.LatencyMS = int(time.Since(now).Milliseconds())
	if err != nil {
		a.ErrorClass, a.Error = classifySQS(err), "send: "+err.Error()
	}
	return a, 0
}

// sqsMessage is m as a SendMessage to queue.
func sqsMessage(queue string, t *endpoints.Target, m message, now time.Time) *sqs.SendMessageInput {
	in := &sqs.SendMessageInput{QueueUrl: aws.String(queue), MessageBody: aws.String(string(m.body)),
		MessageAttributes: make(map[string]types.MessageAttributeValue, maxSQSAttributes)}
	attr := func(name, value string) {
		if value != "" && len(in.MessageAttributes) < maxSQSAttributes {
			in.MessageAttributes[name] = types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(value)}
		}
	}
	for _, f := range fields(t, m, now) {
		if f.Name != "ce-specversion" {
			attr(f.Name, f.Value)
		}
	}
	attr(PartitionKeyHeader, m.key)
	if strings.HasSuffix(queue, ".fifo") {
		in.MessageGroupId, in.MessageDeduplicationId = aws.String(sqsGroup(m.key)), aws.String(m.webhookID)
	}
	return in
}

// sqsGroup is a FIFO message group for resource key: the key itself when
// SQS takes it (at most 128 characters, ASCII letters, digits and
// punctuation), else a digest of it, the same for every event of the
// resource.
func sqsGroup(key string) string {
	ok := key != "" && len(key) <= 128 && !strings.ContainsFunc(key, func(r rune) bool { return r <= ' ' || r > '~' })
	if ok {
		return key
	}
	sum := sha256.Sum256([]byte(key))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// classifySQS is a SendMessage error's class: "status" for what the queue
// answered (a refused signature, a queue that does not exist, a message it
// refuses), else the connection's.
func classifySQS(err error) string {
	var api smithy.APIError
	if errors.As(err, &api) {
		return "status"
	}
	if c := egress.Classify(err); c != egress.ClassOther {
		return c
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return egress.ClassTimeout
	}
	return egress.ClassOther
}

func (s *sqsSender) close() {
	if s.tr != nil {
		s.tr.CloseIdleConnections()
	}
}
