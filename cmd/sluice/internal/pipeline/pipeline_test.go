package pipeline

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/kafka"
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
	} {
		_, err := Start(context.Background(), c.cfg, slog.New(slog.DiscardHandler))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %q", c.name, err, c.want)
		}
	}
}
