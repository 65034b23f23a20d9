package delivery

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/sluicehq/sluice/internal/egress"
	"github.com/sluicehq/sluice/internal/store/endpoints"
)

// PartitionKeyHeader carries a delivery's resource key to targets that are
// not HTTP (CloudEvents' partitioning extension): a Kafka target's record
// key is the same value.
const PartitionKeyHeader = "ce-partitionkey"

// rabbitSender publishes to an AMQP 0-9-1 server (RabbitMQ) over one
// connection per endpoint, dialled through the egress policy, with a
// channel in confirm mode per send in flight (at most the endpoint's
// concurrency): a channel carries one publish at a time, so the server's
// return and confirm on it are that publish's. A message is persistent,
// published mandatory (an exchange that routes it nowhere returns it: a
// failed attempt, never a silent drop), its message id the webhook-id and
// its headers those of an HTTP request (signature included) with the
// resource key. The attempt succeeds when the server confirms it (ack):
// from then on the server holds it, and a retry after a lost confirm
// publishes it again with the same message id.
type rabbitSender struct {
	d       *Deliverer
	uri     string
	cfg     amqp.Config
	setting endpoints.TargetSettings

	mu   sync.Mutex
	conn *amqp.Connection
	idle chan *rabbitChannel
}

// rabbitChannel is a channel in confirm mode with its own listeners.
type rabbitChannel struct {
	ch      *amqp.Channel
	returns chan amqp.Return
	closed  chan *amqp.Error
}

func newRabbitSender(d *Deliverer, t endpoints.Target, slots int) *rabbitSender {
	u, err := url.Parse(t.URL)
	if err == nil && t.Credentials != nil {
		u.User = url.UserPassword(t.Credentials.Username, t.Credentials.Password)
	}
	s := &rabbitSender{d: d, setting: t.Settings, idle: make(chan *rabbitChannel, slots)}
	if err == nil {
		s.uri = u.String()
	}
	connect := egress.Config{}.WithDefaults().ConnectTimeout
	s.cfg = amqp.Config{
		Heartbeat:       10 * time.Second,
		TLSClientConfig: targetTLS(t.Settings.CA),
		Properties:      amqp.Table{"connection_name": "sluice endpoint " + t.ID, "product": UserAgent},
		Dial: func(network, addr string) (net.Conn, error) {
			if d.cfg.Dial == nil {
				return nil, fmt.Errorf("no dialer for targets that are not HTTP: %w", egress.ErrRefusedAddress)
			}
			ctx, cancel := context.WithTimeout(context.Background(), connect)
			defer cancel()
			c, err := d.cfg.Dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			// No heartbeat before the handshake ends: a server that
			// accepts and says nothing must not hold the attempt (the
			// handshake's end clears the deadline).
			return c, c.SetDeadline(time.Now().Add(connect))
		},
	}
	return s
}

// targetTLS verifies a target against the system roots plus its CA, if it
// has one (a tenant's own CA).
func targetTLS(ca string) *tls.Config {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca == "" {
		return cfg
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	pool.AppendCertsFromPEM([]byte(ca))
	cfg.RootCAs = pool
	return cfg
}

func (s *rabbitSender) send(ctx context.Context, t *endpoints.Target, m message) (endpoints.Attempt, time.Duration) {
	now := time.Now()
	a := endpoints.Attempt{Attempt: m.attempt, At: now}
	if m.missing {
		a.ErrorClass, a.Error = "request", errPayloadGone.Error()
		return a, 0
	}
	ctx, cancel := context.WithTimeout(ctx, s.d.cfg.Timeout)
	defer cancel()
	err := s.publish(ctx, t, m, now)
	a.LatencyMS = int(time.Since(now).Milliseconds())
	if err != nil {
		a.ErrorClass, a.Error = classifyTarget(err), err.Error()
	}
	return a, 0
}

// errRefused is a target's no: a RabbitMQ nack or return, a Kafka error
// the cluster answered. Its class is "status": the target answered.
type errRefused struct{ why string }

func (e errRefused) Error() string { return e.why }

// classifyTarget is an attempt's class for an error of a target that is
// not HTTP: the egress classes for the connection, "status" for the
// target's refusal.
func classifyTarget(err error) string {
	var refused errRefused
	var amqpErr *amqp.Error
	switch {
	case errors.As(err, &refused):
		return "status"
	case errors.As(err, &amqpErr) && amqpErr.Server:
		return "status"
	}
	return egress.Classify(err)
}

// publish sends m on an idle channel (a new one when none is) and waits
// for the server's confirm.
func (s *rabbitSender) publish(ctx context.Context, t *endpoints.Target, m message, now time.Time) error {
	rc, err := s.channel()
	if err != nil {
		return err
	}
	msg := amqp.Publishing{
		ContentType: m.contentType, DeliveryMode: amqp.Persistent, MessageId: m.webhookID, Timestamp: now,
		Type: m.eventType, AppId: "sluice", Headers: amqp.Table{PartitionKeyHeader: m.key}, Body: m.body,
	}
	for _, f := range fields(t, m, now) {
		msg.Headers[f.Name] = f.Value
	}
	dc, err := rc.ch.PublishWithDeferredConfirmWithContext(ctx, s.setting.Exchange, s.setting.RoutingKey, true, false, msg)
	if err != nil {
		s.drop(rc)
		return fmt.Errorf("publish: %w", err)
	}
	select {
	case <-dc.Done():
	case e := <-rc.closed:
		s.drop(rc)
		if e == nil {
			return errors.New("publish: the channel closed before the server confirmed")
		}
		return fmt.Errorf("publish: %w", e)
	case <-ctx.Done():
		// Confirmed later or never: this channel's next confirm would not
		// be its next publish's.
		s.drop(rc)
		return fmt.Errorf("publish: no confirm: %w", ctx.Err())
	}
	if !dc.Acked() {
		s.drop(rc)
		return errRefused{"the server did not confirm the message (nack)"}
	}
	select {
	case r := <-rc.returns:
		s.put(rc)
		return errRefused{fmt.Sprintf("the server returned the message: %d %s (no queue is bound for exchange %q, routing key %q)",
			r.ReplyCode, r.ReplyText, s.setting.Exchange, s.setting.RoutingKey)}
	default:
	}
	s.put(rc)
	return nil
}

// put keeps a channel for the next send (a channel more than the
// endpoint's concurrency, if ever, is closed).
func (s *rabbitSender) put(rc *rabbitChannel) {
	select {
	case s.idle <- rc:
	default:
		s.drop(rc)
	}
}

// channel is an idle channel in confirm mode, opened on the connection
// (dialled again when closed) when none is idle.
func (s *rabbitSender) channel() (*rabbitChannel, error) {
	select {
	case rc := <-s.idle:
		if !rc.ch.IsClosed() {
			return rc, nil
		}
	default:
	}
	if s.uri == "" {
		return nil, errors.New("the endpoint's URL cannot be parsed")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil || s.conn.IsClosed() {
		conn, err := amqp.DialConfig(s.uri, s.cfg)
		if err != nil {
			return nil, fmt.Errorf("connect: %w", err)
		}
		s.conn = conn
	}
	ch, err := s.conn.Channel()
	if err != nil {
		return nil, fmt.Errorf("open a channel: %w", err)
	}
	if err := ch.Confirm(false); err != nil {
		_ = ch.Close()
		return nil, fmt.Errorf("confirm mode: %w", err)
	}
	rc := &rabbitChannel{ch: ch, returns: ch.NotifyReturn(make(chan amqp.Return, 1)), closed: ch.NotifyClose(make(chan *amqp.Error, 1))}
	return rc, nil
}

// drop closes a channel whose state is unknown.
func (s *rabbitSender) drop(rc *rabbitChannel) { _ = rc.ch.Close() }

func (s *rabbitSender) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != nil {
		_ = s.conn.Close()
		s.conn = nil
	}
}
