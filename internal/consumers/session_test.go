package consumers

import (
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"
)

// A SIGKILLed member's partitions wait out its session: the default must
// keep that a few seconds, not franz-go's 45, with heartbeats well inside it.
func TestKilledMemberSessionIsSecondsNotFranzGoDefault(t *testing.T) {
	t.Parallel()
	c := Config{Group: "g", Topics: []string{"t"}}.WithDefaults()
	if c.SessionTimeout <= 0 || c.SessionTimeout > 10*time.Second {
		t.Errorf("SessionTimeout = %s, want a few seconds", c.SessionTimeout)
	}
	if c.HeartbeatInterval <= 0 || c.HeartbeatInterval > c.SessionTimeout/3 {
		t.Errorf("HeartbeatInterval = %s, want at most a third of %s", c.HeartbeatInterval, c.SessionTimeout)
	}
	c = Config{Group: "g", Topics: []string{"t"}, SessionTimeout: 30 * time.Second}.WithDefaults()
	if c.HeartbeatInterval != time.Second {
		t.Errorf("HeartbeatInterval = %s with a 30s session, want 1s", c.HeartbeatInterval)
	}
}

// A member whose coordinator died (its broker killed) gives its session up,
// and the coordinator taking over gives every member one session to join
// again. With franz-go's retries, which grow to 5 s apart, a member missed
// it and came back as a new member: two rebalances for one broker kill in
// `make chaos`. The group's client retries at most a heartbeat apart.
func TestGroupClientRetriesAtMostAHeartbeatApart(t *testing.T) {
	t.Parallel()
	g, err := NewGroup(Config{Group: "g", Topics: []string{"t"}}, slog.New(slog.DiscardHandler), nil, nil,
		[]kgo.Opt{kgo.SeedBrokers("127.0.0.1:1")}, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(g.clientOpts()...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	heartbeat := cl.OptValue(kgo.HeartbeatInterval).(time.Duration)
	backoff := cl.OptValue(kgo.RetryBackoffFn).(func(int) time.Duration)
	if heartbeat != time.Second {
		t.Fatalf("heartbeat interval %s, want the 1s default", heartbeat)
	}
	for fails := 0; fails <= 30; fails++ {
		for range 50 {
			if d := backoff(fails); d <= 0 || d > heartbeat {
				t.Fatalf("retry %d waits %s, want (0, %s]", fails, d, heartbeat)
			}
		}
	}
	if first, later := backoff(1), backoff(10); first >= later {
		t.Errorf("first retry waits %s, later ones %s: want a backoff that grows", first, later)
	}
}
