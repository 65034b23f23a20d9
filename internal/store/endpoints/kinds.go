package endpoints

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// Kind is what an endpoint's deliveries are sent to.
type Kind string

const (
	// KindHTTP: a signed POST to the endpoint's https URL (the default).
	KindHTTP Kind = "http"
	// KindRabbitMQ: a persistent message published to an exchange of an
	// AMQP 0-9-1 server (amqps://host/vhost), with publisher confirms.
	KindRabbitMQ Kind = "rabbitmq"
	// KindKafka: a record produced to a topic of the tenant's own Kafka
	// cluster (kafka://seed-broker:port), by an idempotent producer.
	KindKafka Kind = "kafka"
	// KindSQS: a message sent to an SQS-compatible queue (its queue URL,
	// https://sqs.region.amazonaws.com/account/queue), signed with AWS
	// Signature Version 4; a .fifo queue keeps order per resource.
	KindSQS Kind = "sqs"
)

// Kinds are the kinds an endpoint may have, HTTP first.
func Kinds() []Kind { return []Kind{KindHTTP, KindRabbitMQ, KindKafka, KindSQS} }

// column is k as stored: NULL for HTTP, what every endpoint was before
// there were other kinds.
func (k Kind) column() *string {
	if k == KindHTTP || k == "" {
		return nil
	}
	s := string(k)
	return &s
}

// TargetSettings are a target's settings beside its URL, those of its kind; none
// is secret (credentials are Credentials, sealed).
type TargetSettings struct {
	// Exchange is the RabbitMQ exchange published to; empty: the default
	// exchange, which routes by queue name.
	Exchange string `json:"exchange,omitempty" maxLength:"255" doc:"rabbitmq: the exchange published to; absent: the default exchange (the routing key is then a queue's name)."`
	// RoutingKey is the RabbitMQ routing key of every message.
	RoutingKey string `json:"routing_key,omitempty" maxLength:"255" doc:"rabbitmq: the routing key of every message (required)."`
	// Topic is the Kafka topic produced to.
	Topic string `json:"topic,omitempty" maxLength:"255" doc:"kafka: the topic produced to (required)."`
	// TLS makes a Kafka connection TLS (amqps:// says it for RabbitMQ).
	TLS bool `json:"tls,omitempty" doc:"kafka: connect with TLS (required unless the deployment allows plain-text targets)."`
	// SASLMechanism authenticates to Kafka with Credentials.
	SASLMechanism string `json:"sasl_mechanism,omitempty" enum:"plain,scram-sha-256,scram-sha-512" doc:"kafka: SASL mechanism, with the credentials; absent: no SASL."`
	// CA is a PEM bundle the target's certificate is verified against
	// besides the system roots (a tenant's own CA).
	CA string `json:"ca,omitempty" maxLength:"16384" doc:"PEM certificates the target's TLS certificate is verified against; absent: the system roots."`
	// Region is the AWS region an SQS request is signed for.
	Region string `json:"region,omitempty" maxLength:"64" doc:"sqs: the AWS region requests are signed for (required), e.g. eu-west-1."`
}

// TargetCredentials authenticate to a target that is not HTTP: sealed with the
// key ring, never shown, never logged.
// For sqs, Username is the access key id and Password the secret access
// key.
type TargetCredentials struct {
	Username string `json:"username" minLength:"1" maxLength:"255" doc:"The user name; sqs: the access key id."`
	Password string `json:"password" maxLength:"255" doc:"Its password; sqs: the secret access key."`
}

// Bounds of a target's settings.
const (
	maxSettingLength = 255
	maxCALength      = 16 << 10
)

// checkKind judges an endpoint's kind, URL, settings, credentials and
// headers together: each kind has its URL's schemes and its settings.
func (s Store) checkKind(k Kind, raw string, set TargetSettings, cred *TargetCredentials, headers map[string]string) error {
	switch k {
	case KindHTTP, "":
		if set != (TargetSettings{}) || cred != nil {
			return invalid("settings", "an http endpoint has no target settings nor credentials")
		}
		return s.checkURL(raw)
	case KindRabbitMQ, KindKafka, KindSQS:
	default:
		return invalid("kind", "must be one of http, rabbitmq, kafka, sqs")
	}
	if len(headers) > 0 {
		return invalid("headers", "static headers are HTTP's: a %s endpoint has none", k)
	}
	if err := s.checkTargetURL(k, raw, set); err != nil {
		return err
	}
	if err := checkSettings(k, set); err != nil {
		return err
	}
	return checkCredentials(k, set, cred)
}

// checkCredentials judges a target's credentials against its kind.
func checkCredentials(k Kind, set TargetSettings, cred *TargetCredentials) error {
	switch {
	case cred != nil && (len(cred.Username) > maxSettingLength || len(cred.Password) > maxSettingLength):
		return invalid("credentials", "user name and password must be at most %d bytes each", maxSettingLength)
	case k == KindKafka && (set.SASLMechanism != "") != (cred != nil):
		return invalid("credentials", "a SASL mechanism and credentials go together")
	case k == KindSQS && cred == nil:
		return invalid("credentials", "an sqs endpoint signs its requests: give the access key id as username and the secret access key as password")
	}
	return nil
}

// checkTargetURL judges the URL of a target that is not HTTP: amqp(s)://,
// kafka:// or an SQS queue's https:// URL, a host and port, no user
// (credentials are sealed apart), no query nor fragment; plain text
// (amqp://, kafka:// without TLS, http://) only where the deployment
// allows plain http. Its host passes the deployment's
// address check as an https URL's would.
func (s Store) checkTargetURL(k Kind, raw string, set TargetSettings) error {
	switch {
	case raw == "":
		return invalid("url", "an endpoint needs a URL")
	case len(raw) > MaxURLLength:
		return invalid("url", "must be at most %d bytes", MaxURLLength)
	case !text(raw):
		return invalid("url", "must be text without spaces, NUL or control characters")
	}
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" || u.Hostname() == "" {
		return invalid("url", "must be an absolute URL with a host (%s)", schemes(k))
	}
	if err := s.checkTargetParts(k, u, raw, set); err != nil {
		return err
	}
	if s.CheckURL != nil {
		// The policy's check of a literal address is the same for every
		// scheme: ask it of an https URL to the same host.
		if err := s.CheckURL("https://" + u.Host + "/"); err != nil {
			return invalid("url", "%s", err.Error())
		}
	}
	return nil
}

// checkTargetParts judges a parsed target URL's scheme, user, query,
// fragment, path and port.
func (s Store) checkTargetParts(k Kind, u *url.URL, raw string, set TargetSettings) error {
	plain := u.Scheme == "amqp" || u.Scheme == "kafka" && !set.TLS || u.Scheme == "http"
	switch {
	case !kindScheme(k, u.Scheme):
		return invalid("url", "a %s endpoint's URL is %s", k, schemes(k))
	case plain && !s.Limits.AllowHTTP:
		return invalid("url", "must be encrypted (amqps://, kafka:// with tls, https://): this deployment refuses plain-text targets (its setting --delivery-allow-http, SLUICE_DELIVERY_ALLOW_HTTP)")
	case u.User != nil:
		return invalid("url", "must not hold a user or password: give them as the endpoint's credentials, which are sealed")
	case u.RawQuery != "" || u.Fragment != "" || strings.Contains(raw, "#"):
		return invalid("url", "must have no query nor fragment")
	case k == KindKafka && strings.Trim(u.Path, "/") != "":
		return invalid("url", "a kafka endpoint's URL names its seed broker only (kafka://host:port); the topic is a setting")
	case k == KindSQS && !sqsQueuePath(u.Path):
		return invalid("url", "an sqs endpoint's URL is its queue URL, %s", schemes(k))
	}
	return checkPort(u.Port())
}

func checkPort(p string) error {
	if p == "" {
		return nil
	}
	if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
		return invalid("url", "the port %s is not between 1 and 65535", p)
	}
	return nil
}

// kindScheme says whether scheme is one of k's URLs'.
func kindScheme(k Kind, scheme string) bool {
	switch k {
	case KindRabbitMQ:
		return scheme == "amqp" || scheme == "amqps"
	case KindKafka:
		return scheme == "kafka"
	}
	return scheme == "https" || scheme == "http"
}

// sqsQueuePath says whether p is a queue URL's path: /account/queue.
func sqsQueuePath(p string) bool {
	account, queue, ok := strings.Cut(strings.TrimPrefix(p, "/"), "/")
	return ok && account != "" && queue != "" && !strings.Contains(queue, "/")
}

func schemes(k Kind) string {
	switch k {
	case KindKafka:
		return "kafka://host:port"
	case KindSQS:
		return "https://host[:port]/account/queue (http:// where plain text is allowed)"
	}
	return "amqps://host[:port][/vhost] or amqp://"
}

func checkSettings(k Kind, set TargetSettings) error {
	for name, v := range map[string]string{"exchange": set.Exchange, "routing_key": set.RoutingKey, "topic": set.Topic, "region": set.Region} {
		if len(v) > maxSettingLength || strings.ContainsFunc(v, func(r rune) bool { return r < ' ' }) {
			return invalid("settings."+name, "must be at most %d bytes of text", maxSettingLength)
		}
	}
	if set.CA != "" {
		if len(set.CA) > maxCALength || !x509.NewCertPool().AppendCertsFromPEM([]byte(set.CA)) {
			return invalid("settings.ca", "must be PEM certificates, at most %d bytes", maxCALength)
		}
	}
	switch k {
	case KindRabbitMQ:
		return checkRabbitMQ(set)
	case KindSQS:
		return checkSQS(set)
	}
	return checkKafka(set)
}

func checkRabbitMQ(set TargetSettings) error {
	if set.Topic != "" || set.TLS || set.SASLMechanism != "" || set.Region != "" {
		return invalid("settings", "a rabbitmq endpoint takes exchange, routing_key and ca")
	}
	if set.RoutingKey == "" {
		return invalid("settings.routing_key", "a rabbitmq endpoint needs a routing key (a queue's name on the default exchange)")
	}
	return nil
}

// checkSQS judges an sqs endpoint's settings: a region (the signature's
// scope), and a CA at most.
func checkSQS(set TargetSettings) error {
	if set.Exchange != "" || set.RoutingKey != "" || set.Topic != "" || set.TLS || set.SASLMechanism != "" {
		return invalid("settings", "an sqs endpoint takes region and ca")
	}
	if set.Region == "" {
		return invalid("settings.region", "an sqs endpoint needs the AWS region its requests are signed for")
	}
	if strings.ContainsFunc(set.Region, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') }) {
		return invalid("settings.region", "must be a region name: lower-case letters, digits and hyphens (eu-west-1)")
	}
	return nil
}

func checkKafka(set TargetSettings) error {
	if set.Exchange != "" || set.RoutingKey != "" || set.Region != "" {
		return invalid("settings", "a kafka endpoint takes topic, tls, sasl_mechanism and ca")
	}
	if set.Topic == "" {
		return invalid("settings.topic", "a kafka endpoint needs a topic")
	}
	switch set.SASLMechanism {
	case "", "plain", "scram-sha-256", "scram-sha-512":
		return nil
	}
	return invalid("settings.sasl_mechanism", "must be plain, scram-sha-256 or scram-sha-512")
}

// settingsColumn is set as stored: NULL when it is empty (HTTP).
func settingsColumn(set TargetSettings) ([]byte, error) {
	if set == (TargetSettings{}) {
		return nil, nil
	}
	b, err := json.Marshal(set)
	if err != nil {
		return nil, fmt.Errorf("target settings: %w", err)
	}
	return b, nil
}

// sealCredentials seals cred for endpoint id; none: NULL.
func (s Store) sealCredentials(id string, cred *TargetCredentials) (*string, []byte, error) {
	if cred == nil {
		return nil, nil, nil
	}
	if s.Ring == nil {
		return nil, nil, errNoRing
	}
	plain, err := json.Marshal(cred)
	if err != nil {
		return nil, nil, fmt.Errorf("seal credentials: %w", err)
	}
	keyID, sealed, err := s.Ring.Seal(plain, []byte(id))
	if err != nil {
		return nil, nil, fmt.Errorf("seal credentials: %w", err)
	}
	return &keyID, sealed, nil
}

// openCredentials opens what sealCredentials sealed.
func (s Store) openCredentials(id string, keyID *string, sealed []byte) (*TargetCredentials, error) {
	if keyID == nil {
		return nil, nil
	}
	plain, err := s.Ring.Open(*keyID, sealed, []byte(id))
	if err != nil {
		return nil, fmt.Errorf("endpoint %s: open credentials: %w", id, err)
	}
	var c TargetCredentials
	if err := json.Unmarshal(plain, &c); err != nil {
		return nil, fmt.Errorf("endpoint %s: credentials: %w", id, err)
	}
	return &c, nil
}

// checkTargetPatch judges a patch's URL, settings, credentials and headers
// against the endpoint's kind, with what the patch leaves as it is, and
// seals the new credentials.
func (s Store) checkTargetPatch(ctx context.Context, id string, p Patch, c *patched) error {
	if p.URL == nil && p.Settings == nil && p.Credentials == nil && p.Headers == nil {
		return nil
	}
	e, err := s.GetEndpoint(ctx, id)
	if err != nil {
		return err
	}
	if p.URL == nil && e.Kind == KindHTTP && p.Settings == nil && p.Credentials == nil {
		return nil // headers alone: checkPatch judged them
	}
	raw, set, cred, headers := patchedTarget(e, p)
	if err := s.checkKind(e.Kind, raw, set, cred, headers); err != nil {
		return err
	}
	if c.settings, err = settingsColumn(set); err != nil {
		return err
	}
	if p.Credentials != nil {
		c.credKey, c.credSealed, err = s.sealCredentials(id, p.Credentials)
	}
	return err
}

// patchedTarget is e's URL, settings, credentials and headers (their
// names: the values are not read) as p leaves them.
func patchedTarget(e Endpoint, p Patch) (string, TargetSettings, *TargetCredentials, map[string]string) {
	raw, set, cred, headers := e.URL, deref(e.Settings), p.Credentials, map[string]string{}
	for _, h := range e.Headers {
		headers[h] = ""
	}
	if cred == nil && e.HasCredentials {
		cred = &TargetCredentials{}
	}
	if p.URL != nil {
		raw = *p.URL
	}
	if p.Settings != nil {
		set = *p.Settings
	}
	if p.Headers != nil {
		headers = *p.Headers
	}
	return raw, set, cred, headers
}
