package kafka

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// explained is an error in words with the cause kept for errors.Is/As,
// and its fault as Classify reads it: Explain's verdict on a connection
// (FaultAuthentication), Access.Check's on an ACL (a denial).
type explained struct {
	msg   string
	cause error
	fault Fault
}

func (e *explained) Error() string { return e.msg }

func (e *explained) Unwrap() error { return e.cause }

// Explain says in words what a TLS or SASL failure means and which setting
// to check, for readiness and the start log, and judges it: Classify reads
// FaultAuthentication from what it explained. Other errors come back as
// they are. Go's and the broker's own texts ("x509: certificate signed by
// unknown authority", SASL_AUTHENTICATION_FAILED) stay in the cause.
func (c Config) Explain(err error) error {
	if err == nil || errors.As(err, new(*explained)) {
		return err
	}
	if msg := c.explainTLS(err); msg != "" {
		return &explained{msg: msg, cause: err, fault: FaultAuthentication}
	}
	if errors.Is(err, kerr.SaslAuthenticationFailed) {
		return &explained{fault: FaultAuthentication, msg: fmt.Sprintf("kafka: SASL authentication failed for user %s with %s (check the password, --kafka-sasl-password): %v",
			c.SASLUser, strings.ToUpper(c.SASLMechanism), err), cause: err}
	}
	if errors.Is(err, kerr.UnsupportedSaslMechanism) {
		return &explained{fault: FaultAuthentication, msg: fmt.Sprintf("kafka: the broker does not offer SASL mechanism %s on this listener (check --kafka-sasl-mechanism): %v",
			strings.ToUpper(c.SASLMechanism), err), cause: err}
	}
	return err
}

// explainTLS names the TLS failure, or "". The broker's certificate is
// judged here (x509's errors); the client's is judged by the broker, which
// only sends an alert back.
func (c Config) explainTLS(err error) string {
	var unknown x509.UnknownAuthorityError
	var invalid x509.CertificateInvalidError
	var host x509.HostnameError
	var remote *net.OpError
	var record tls.RecordHeaderError
	switch {
	case errors.As(err, &unknown):
		return fmt.Sprintf("kafka: TLS: the broker's certificate is signed by an unknown authority (check --kafka-ca-file%s): %v", c.caNote(), err)
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired:
		return fmt.Sprintf("kafka: TLS: the broker's certificate has expired or is not yet valid (renew the broker's certificate, or check this machine's clock): %v", err)
	case errors.As(err, &invalid):
		return fmt.Sprintf("kafka: TLS: the broker's certificate is not valid for a server (check the broker's certificate and --kafka-ca-file): %v", err)
	case errors.As(err, &host):
		return fmt.Sprintf("kafka: TLS: the broker's certificate does not name the address dialed (check --kafka-brokers against the certificate's names): %v", err)
	case errors.As(err, &remote) && remote.Op == "remote error":
		// An alert the broker sent: crypto/tls keeps its type unexported.
		return c.explainAlert(remote.Err.Error(), err)
	case errors.As(err, &record), errors.As(err, new(*kgo.ErrFirstReadEOF)) && c.usesTLS():
		return fmt.Sprintf("kafka: TLS: the broker does not speak TLS on this port (check --kafka-brokers names a TLS listener, or drop --kafka-tls): %v", err)
	case !c.usesTLS() && strings.Contains(err.Error(), "tls alert record"):
		// franz-go's guess when a plaintext client reads a TLS alert.
		return fmt.Sprintf("kafka: the broker speaks TLS on this port (set --kafka-tls): %v", err)
	}
	return ""
}

func (c Config) caNote() string {
	if c.TLSCAFile == "" {
		return ", unset: the system's roots"
	}
	return ", " + c.TLSCAFile
}

// explainAlert reads the broker's alert about the client's certificate.
// Java's TLS sends certificate_unknown for an expired certificate and
// bad_certificate for an untrusted or missing one, never
// certificate_expired: the certificate's own dates tell expired apart.
func (c Config) explainAlert(text string, err error) string {
	switch {
	case c.CertFile == "" && strings.Contains(text, "certificate"):
		return fmt.Sprintf("kafka: TLS: the broker requires a client certificate (set --kafka-cert-file and --kafka-key-file): %v", err)
	case strings.Contains(text, "certificate"):
		if msg := c.certDates(err); msg != "" {
			return msg
		}
		return fmt.Sprintf("kafka: TLS: the broker does not trust the client certificate %s (its issuer must be in the listener's ssl.truststore; check with openssl x509 -noout -issuer -in %s): %v",
			c.CertFile, c.CertFile, err)
	}
	return fmt.Sprintf("kafka: TLS: the broker ended the handshake (%s; check --kafka-ca-file, --kafka-cert-file and the listener's TLS settings): %v", text, err)
}

// certDates names a client certificate out of its validity, or "".
func (c Config) certDates(err error) string {
	pair, lerr := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
	if lerr != nil || len(pair.Certificate) == 0 {
		return ""
	}
	cert, perr := x509.ParseCertificate(pair.Certificate[0])
	if perr != nil {
		return ""
	}
	now := time.Now()
	switch {
	case now.After(cert.NotAfter):
		return fmt.Sprintf("kafka: TLS: the client certificate %s expired at %s (renew it): %v", c.CertFile, cert.NotAfter.UTC().Format(time.RFC3339), err)
	case now.Before(cert.NotBefore):
		return fmt.Sprintf("kafka: TLS: the client certificate %s is not valid before %s (check this machine's clock): %v", c.CertFile, cert.NotBefore.UTC().Format(time.RFC3339), err)
	}
	return ""
}
