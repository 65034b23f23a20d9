package consumers

import (
	"testing"
	"time"
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
