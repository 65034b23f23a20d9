package cli

import (
	"context"
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/command/internal/pipeline"
	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/kafka"
	"github.com/sluicehq/sluice/internal/keyring"
	"github.com/sluicehq/sluice/internal/testenv"
)

// A pipeline whose Kafka user lacks one ACL Sluice needs refuses to start
// within seconds, with the line `sluice doctor` prints for it: the
// operation, the resource, the stage and the kafka-acls command. Never a
// stall: the relay would otherwise retry a refused produce forever.
func TestSecureKafkaMissingACLRefusesStartWithTheDoctorsLine(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, check, want string
		acls              func(prefix string) []kafka.ACL
	}{
		{"topic WRITE", "kafka_acls_relay", "lacks WRITE on topic", func(p string) []kafka.ACL {
			return dropACL(p, kafka.ACL{Name: p + ".", Prefixed: true, Op: kafka.Write})
		}},
		{"group READ", "kafka_acls_consumers", "lacks READ on group", func(p string) []kafka.ACL {
			return dropACL(p, kafka.ACL{Group: true, Name: p + ".", Prefixed: true, Op: kafka.Read})
		}},
		// READ and WRITE imply DESCRIBE: a topic lacks DESCRIBE when no ACL
		// names it, here every topic but the credits group's.
		{"topic DESCRIBE", "kafka_acls_consumers", "lacks DESCRIBE on topic", func(p string) []kafka.ACL {
			var acls []kafka.ACL
			for _, a := range kafka.Required(p) {
				if !a.Group {
					a.Name = p + ".credits"
				}
				acls = append(acls, a)
			}
			return acls
		}},
	}
	secured := testenv.RequireSecureKafka(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dbURL, _ := ownDatabase(t, "kafkaacl")
			suffix := testenv.RandomSuffix()
			topics := envelope.Topics{Prefix: "ka" + suffix + ".sluice"}
			kc, drop, err := secured.SASLUser(context.Background(), "acl", tc.acls(topics.Prefix))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(drop)
			t.Cleanup(func() { _ = kafka.DeleteTopicsWithPrefix(context.Background(), secured.Admin(), topics.Prefix+".") })
			// The topics exist (a super user made them), as on a managed
			// cluster where an operator did: WRITE is asked of them at once.
			if err := kafka.EnsureTopics(context.Background(), secured.Admin(), kafka.TopicSpec{Partitions: 1}, topicsOf(t, dbURL, kafka.Config{Brokers: secured.Plain}, topics)...); err != nil {
				t.Fatal(err)
			}
			secretKey, _ := keyring.Generate()
			cfg := pipeline.Config{DatabaseURL: dbURL, Kafka: kc, SecretKey: secretKey, HTTPAddr: "127.0.0.1:0", AdminAddr: "127.0.0.1:0",
				Topics: topics, TopicSpec: kafka.TopicSpec{Partitions: 1, Retention: time.Hour},
				Ingest: true, CDC: true, Consume: true}
			cfg.CDCConfig.Slot = "sluice_ka_" + suffix

			line := doctorFinding(t, cfg, tc.check)
			if !strings.Contains(line, tc.want) || !strings.Contains(line, "kafka-acls ") {
				t.Fatalf("doctor's %s: %q, want it to say %q and the kafka-acls command", tc.check, line, tc.want)
			}
			start := time.Now()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			proc, err := pipeline.Start(ctx, cfg, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
			if err == nil {
				cancel()
				_ = proc.Wait()
				t.Fatalf("started without %s", tc.name)
			}
			if took := time.Since(start); took > 15*time.Second {
				t.Errorf("refused after %s; want within seconds", took)
			}
			if !strings.Contains(err.Error(), tc.check+": "+line) {
				t.Errorf("start refused with %q\nwant the doctor's line %q", err, line)
			}
		})
	}
}

func dropACL(prefix string, drop kafka.ACL) []kafka.ACL {
	return slices.DeleteFunc(kafka.Required(prefix), func(a kafka.ACL) bool { return a == drop })
}

// doctorFinding is the error of `sluice doctor`'s check named check, which
// must fail as a refusal.
func doctorFinding(t *testing.T, cfg pipeline.Config, check string) string {
	t.Helper()
	findings, err := pipeline.Doctor(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range findings {
		if f.Check.Name == check {
			if f.Err == nil || !f.Refuse {
				t.Fatalf("doctor's %s: %v (refuses: %v), want a refusal", check, f.Err, f.Refuse)
			}
			return f.Err.Error()
		}
	}
	t.Fatalf("doctor has no check %s", check)
	return ""
}

// topicsOf are the deployment's topics, as the doctor's topics check names
// them missing to a super user (kc).
func topicsOf(t *testing.T, dbURL string, kc kafka.Config, topics envelope.Topics) []string {
	t.Helper()
	cfg := pipeline.Config{DatabaseURL: dbURL, Kafka: kc, Topics: topics, Ingest: false, CDC: true}
	findings, err := pipeline.Doctor(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range findings {
		if f.Check.Name == "topics" && f.Err != nil {
			msg := f.Err.Error()
			list := msg[strings.Index(msg, "(")+1 : strings.Index(msg, ")")]
			return strings.Split(list, ", ")
		}
	}
	t.Fatal("no topic missing")
	return nil
}
