package delivery

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/internal/egress"
	"github.com/sluicehq/sluice/internal/kafka"
	"github.com/sluicehq/sluice/internal/store/endpoints"
)

// kafkaSender produces to a topic of a tenant's own Kafka cluster with a
// client of its own per endpoint (its brokers, TLS and SASL are the
// tenant's; no two endpoints share them safely), made when the loop starts
// and closed when it stops. Every broker connection, the seed's and those
// of the brokers the cluster advertises, is dialled through the egress
// policy (kgo.Dialer), TLS on top when the endpoint asks for it.
//
// A record's key is the delivery's resource key, so the cluster's default
// partitioner puts a resource's events on one partition; its value the
// body, its headers those of an HTTP request (webhook-id, signature,
// CloudEvents attributes). The producer is idempotent (franz-go's
// default): a retry inside one attempt writes nothing twice. The attempt
// succeeds when the partition's leader acknowledged the record with
// acks=all; a later attempt after a lost acknowledgement produces it again,
// with the same webhook-id for the receiver to deduplicate on.
//
// Memory: a client holds its metadata, a connection per broker it
// produces to, and at most 2x the endpoint's concurrency records buffered.
type kafkaSender struct {
	d     *Deliverer
	t     endpoints.Target
	slots int

	mu  sync.Mutex
	cl  *kgo.Client // nil: made at the next attempt
	err error       // the client cannot be made: every attempt fails with it
}

func newKafkaSender(d *Deliverer, t endpoints.Target, slots int) *kafkaSender {
	return &kafkaSender{d: d, t: t, slots: slots}
}

// client is the endpoint's client, made when there is none.
func (s *kafkaSender) client() (*kgo.Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cl == nil && s.err == nil {
		s.cl, s.err = kafkaClient(s.d, s.t, s.slots)
	}
	return s.cl, s.err
}

// renew lets go of cl after an attempt that got no answer from the
// cluster: the next attempt makes a client afresh (new connections, a new
// producer id). A client whose records timed out while its brokers were
// away did not always produce again once they were back.
func (s *kafkaSender) renew(cl *kgo.Client) {
	s.mu.Lock()
	if s.cl == cl {
		s.cl = nil
	}
	s.mu.Unlock()
	go cl.Close() // fails what it buffered: those attempts are failed already
}

func kafkaClient(d *Deliverer, t endpoints.Target, slots int) (*kgo.Client, error) {
	u, err := url.Parse(t.URL)
	if err != nil {
		return nil, errors.New("the endpoint's URL cannot be parsed")
	}
	if d.cfg.Dial == nil {
		return nil, fmt.Errorf("no dialer for targets that are not HTTP: %w", egress.ErrRefusedAddress)
	}
	dial := d.cfg.Dial
	if t.Settings.TLS {
		dial = dialTLS(dial, targetTLS(t.Settings.CA))
	}
	kc := kafka.Config{Brokers: []string{u.Host}, ClientID: "sluice-destinations", Dial: dial,
		SASLMechanism: t.Settings.SASLMechanism}
	if t.Credentials != nil {
		kc.SASLUser, kc.SASLPassword = t.Credentials.Username, t.Credentials.Password
	}
	opts, err := kc.Options()
	if err != nil {
		return nil, err
	}
	opts = append(opts,
		kgo.DefaultProduceTopic(t.Settings.Topic),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		// Before the attempt's own end, so that the client fails the
		// record itself, naming its last error (why no broker answered).
		kgo.RecordDeliveryTimeout(d.cfg.Timeout*4/5),
		kgo.MaxBufferedRecords(2*slots),
		kgo.ProducerLinger(0),
		kgo.UnknownTopicRetries(2),
		kgo.DialTimeout(egress.Config{}.WithDefaults().ConnectTimeout),
	)
	return kgo.NewClient(opts...)
}

// dialTLS makes TLS connections over dial's, verified for the broker's
// host name.
func dialTLS(dial func(context.Context, string, string) (net.Conn, error), cfg *tls.Config) func(context.Context, string, string) (net.Conn, error) {
	return func(ctx context.Context, network, host string) (net.Conn, error) {
		raw, err := dial(ctx, network, host)
		if err != nil {
			return nil, err
		}
		c := cfg.Clone()
		if name, _, err := net.SplitHostPort(host); err == nil {
			c.ServerName = name
		}
		conn := tls.Client(raw, c)
		if err := conn.HandshakeContext(ctx); err != nil {
			_ = raw.Close()
			return nil, err
		}
		return conn, nil
	}
}

func (s *kafkaSender) send(ctx context.Context, t *endpoints.Target, m message) (endpoints.Attempt, time.Duration) {
	now := time.Now()
	a := endpoints.Attempt{Attempt: m.attempt, At: now}
	switch {
	case m.missing:
		a.ErrorClass, a.Error = "request", errPayloadGone.Error()
		return a, 0
	}
	cl, err := s.client()
	if err != nil {
		a.ErrorClass, a.Error = classifyTarget(err), err.Error()
		if a.ErrorClass == egress.ClassOther {
			a.ErrorClass = "request"
		}
		return a, 0
	}
	ctx, cancel := context.WithTimeout(ctx, s.d.cfg.Timeout)
	defer cancel()
	rec := &kgo.Record{Key: []byte(m.key), Value: m.body, Timestamp: now,
		Headers: []kgo.RecordHeader{{Key: PartitionKeyHeader, Value: []byte(m.key)}, {Key: "content-type", Value: []byte(m.contentType)}}}
	for _, f := range fields(t, m, now) {
		rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: f.Name, Value: []byte(f.Value)})
	}
	err = produce(ctx, cl, rec)
	a.LatencyMS = int(time.Since(now).Milliseconds())
	if err != nil {
		a.ErrorClass, a.Error = classifyKafka(err), "produce: "+err.Error()
		if a.ErrorClass != "status" {
			s.renew(cl)
		}
	}
	return a, 0
}

// produce hands rec to the client and waits for its acknowledgement, or
// for ctx: a record buffered while no broker answers is not failed by the
// client until it can write it, and the attempt must not wait for that.
// Left buffered, it may still be produced: a copy before the next
// attempt's, with the same webhook-id. The buffer is bounded, so attempts
// made while it is full wait for room up to ctx, and fail.
func produce(ctx context.Context, cl *kgo.Client, rec *kgo.Record) error {
	done := make(chan error, 1)
	cl.Produce(ctx, rec, func(_ *kgo.Record, err error) { done <- err })
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("no acknowledgement: %w", ctx.Err())
	}
}

// classifyKafka is a produce error's class: "status" for what the
// cluster answered (a refused SASL login, an unknown topic, a record too
// large, an ACL), "timeout" for a record not acknowledged in time, else
// the connection's.
func classifyKafka(err error) string {
	switch c := egress.Classify(err); c {
	case egress.ClassRefusedAddress, egress.ClassDNS, egress.ClassTLS, egress.ClassConnect:
		return c // why no broker could be reached, however long the client tried
	}
	switch f := kafka.Classify(err); {
	case errors.Is(err, kgo.ErrRecordTimeout), errors.Is(err, context.DeadlineExceeded):
		return egress.ClassTimeout
	case f != kafka.FaultTransient && f != kafka.FaultNone:
		return "status" // the cluster's answer
	}
	return classifyTarget(err)
}

func (s *kafkaSender) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cl != nil {
		s.cl.Close()
		s.cl = nil
	}
}
