package pipeline

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/kafka"
	"github.com/sluicehq/sluice/internal/store/lifecycle"
)

// What waiting cannot fix refuses to start, before anything connects.
func TestStartRefusesWhatWaitingCannotFix(t *testing.T) {
	t.Parallel()
	db := "postgres://nowhere.invalid/sluice"
	for _, c := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no database", Config{Ingest: true, SecretKey: "k"}, "SLUICE_DATABASE_URL"},
		{"no brokers for cdc", Config{DatabaseURL: db, CDC: true}, "SLUICE_KAFKA_BROKERS"},
		{"no brokers for consume", Config{DatabaseURL: db, Consume: true}, "SLUICE_KAFKA_BROKERS"},
		{"no secret key for ingest", Config{DatabaseURL: db, Ingest: true}, "SLUICE_SECRET_KEY"},
		{"no stage", Config{DatabaseURL: db, Kafka: kafka.Config{Brokers: []string{"b:9092"}}}, "nothing to run"},
		{"payloads gone before Kafka forgets their claims", Config{DatabaseURL: db, Ingest: true, SecretKey: "k",
			TopicSpec: kafka.TopicSpec{Retention: 7 * 24 * time.Hour}, Lifecycle: lifecycle.Config{PayloadHorizon: 24 * time.Hour}},
			"shorter than the topics' retention"},
		{"keys gone before payloads", Config{DatabaseURL: db, Ingest: true, SecretKey: "k",
			Lifecycle: lifecycle.Config{PayloadHorizon: 7 * 24 * time.Hour, KeyHorizon: 24 * time.Hour}},
			"key horizon shorter than payload horizon"},
	} {
		_, err := Start(context.Background(), c.cfg, slog.New(slog.DiscardHandler))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %q", c.name, err, c.want)
		}
	}
}
