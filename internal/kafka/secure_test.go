package kafka_test

import (
	"context"
	"crypto/tls"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/sluicehq/sluice/internal/kafka"
	"github.com/sluicehq/sluice/internal/testenv"
)

// reach asks the brokers of c for their API versions, as readiness does,
// and returns the error in Explain's words with how long it took.
func reach(t *testing.T, c kafka.Config) (error, time.Duration) {
	t.Helper()
	cl, err := kafka.NewClient(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	err = c.Explain(kafka.Reachable(ctx, kadm.NewClient(cl)))
	return err, time.Since(start)
}

// refused checks that c fails within seconds as a refusal whose text has
// every one of words.
func refused(t *testing.T, c kafka.Config, words ...string) {
	t.Helper()
	err, took := reach(t, c)
	if err == nil {
		t.Fatal("connected; want a refusal")
	}
	if f := kafka.Classify(err); f != kafka.FaultAuthentication {
		t.Errorf("%v: judged %s, want authentication", err, f)
	}
	if took > 10*time.Second {
		t.Errorf("took %s to fail; want it fast", took)
	}
	for _, w := range words {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
}

func TestSecureKafkaConnects(t *testing.T) {
	s := testenv.RequireSecureKafka(t)
	user, password := s.NewUser(t, "connects")
	if err, _ := reach(t, s.SASL(user, password)); err != nil {
		t.Errorf("SCRAM-SHA-512 over TLS: %v", err)
	}
	cert, key := s.IssueCert(t, "connects-"+testenv.RandomSuffix(), time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	if err, _ := reach(t, s.MTLS(cert, key)); err != nil {
		t.Errorf("mutual TLS: %v", err)
	}
}

func TestSecureKafkaWrongPasswordFailsNamingIt(t *testing.T) {
	s := testenv.RequireSecureKafka(t)
	user, _ := s.NewUser(t, "wrongpw")
	refused(t, s.SASL(user, "not-the-password"), "SASL authentication failed for user "+user, "check the password")
}

func TestSecureKafkaWrongCAFailsNamingIt(t *testing.T) {
	s := testenv.RequireSecureKafka(t)
	user, password := s.NewUser(t, "wrongca")
	c := s.SASL(user, password)
	c.TLSCAFile = testenv.NewCA(t).File
	refused(t, c, "TLS", "unknown authority", "check --kafka-ca-file")
}

func TestSecureKafkaExpiredClientCertificateFailsNamingIt(t *testing.T) {
	s := testenv.RequireSecureKafka(t)
	cert, key := s.IssueCert(t, "expired", time.Now().Add(-48*time.Hour), time.Now().Add(-24*time.Hour))
	refused(t, s.MTLS(cert, key), "client certificate "+cert+" expired at", "renew it")
}

func TestSecureKafkaUntrustedClientCertificateFailsNamingIt(t *testing.T) {
	s := testenv.RequireSecureKafka(t)
	cert, key := testenv.NewCA(t).Issue(t, "untrusted", time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	refused(t, s.MTLS(cert, key), "does not trust the client certificate "+cert)
}

func TestSecureKafkaMissingClientCertificateFailsNamingIt(t *testing.T) {
	s := testenv.RequireSecureKafka(t)
	refused(t, kafka.Config{Brokers: s.SSL, TLSCAFile: s.CAFile}, "requires a client certificate", "--kafka-cert-file")
}

// An expired broker certificate: a TLS listener standing in for a broker,
// since the point is what the client says of the certificate.
func TestSecureKafkaExpiredBrokerCertificateFailsNamingIt(t *testing.T) {
	ca := testenv.NewCA(t)
	certFile, keyFile := ca.Issue(t, "broker", time.Now().Add(-48*time.Hour), time.Now().Add(-24*time.Hour))
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{pair}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func(c net.Conn) {
				defer c.Close()
				_ = c.(*tls.Conn).Handshake()
			}(conn)
		}
	}()
	refused(t, kafka.Config{Brokers: []string{ln.Addr().String()}, TLSCAFile: ca.File}, "broker's certificate has expired")
}

func TestSecureKafkaPlaintextClientOnATLSListenerIsTold(t *testing.T) {
	s := testenv.RequireSecureKafka(t)
	refused(t, kafka.Config{Brokers: s.SSL}, "speaks TLS on this port", "--kafka-tls")
}
