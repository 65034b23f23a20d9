package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/keyring"
	"github.com/sluicehq/sluice/internal/provider/kinds"
	"github.com/sluicehq/sluice/internal/store/endpoints"
	"github.com/sluicehq/sluice/internal/store/tenancy"
)

// doctorLines are what `sluice doctor -o json` printed.
type doctorLines []doctorLine

// doctor runs `sluice doctor -o json` with env and returns its lines and
// exit code.
func doctor(t *testing.T, env []string, args ...string) (doctorLines, int) {
	t.Helper()
	out, errOut, code := cliWith(t, env, append([]string{"doctor", "-o", "json"}, args...)...)
	var found struct {
		Checks doctorLines `json:"checks"`
	}
	if err := json.Unmarshal([]byte(out), &found); err != nil || found.Checks == nil {
		t.Fatalf("doctor -o json: %v\n%s%s", err, out, errOut)
	}
	return found.Checks, code
}

// find returns the line of the check named name.
func (ls doctorLines) find(name string) (doctorLine, bool) {
	for _, l := range ls {
		if l.Check == name {
			return l, true
		}
	}
	return doctorLine{}, false
}

// The deliverer signs with endpoints' secrets: a ring that cannot open one
// would leave that endpoint's deliveries waiting without a word, so the
// doctor names the key ids, for the endpoints' headers as for the secrets;
// not a refusal to start, which would stop every other tenant's effects.
func TestDoctorNamesEndpointSecretsTheRingCannotOpen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL, pool := ownDatabase(t, "doctorends")
	keyA, keyB := "a:"+newKey(t), "b:"+newKey(t)
	ring, err := keyring.Parse(keyA)
	if err != nil {
		t.Fatal(err)
	}
	f := newTenantIn(t, tenancy.Store{Pool: pool, Ring: ring, Providers: kinds.Builtin()})
	if _, _, err := (endpoints.Store{Pool: pool, Ring: ring}).CreateEndpoint(ctx, endpoints.New{TenantID: f.tenantID,
		URL: "https://receiver.example/hooks", Filters: []string{"*"}, Headers: map[string]string{"Authorization": "Bearer x"}}); err != nil {
		t.Fatal(err)
	}
	line := func(key string) doctorLine {
		env := append(sluiceEnv(suite.topics), "SLUICE_DATABASE_URL="+dbURL, "SLUICE_SECRET_KEY="+key)
		checks, _ := doctor(t, env, "--stage", "consume")
		l, ok := checks.find("keyring_endpoints")
		if !ok {
			t.Fatalf("no keyring_endpoints line: %+v", checks)
		}
		return l
	}
	if l := line(keyB + "," + "c:" + newKey(t)); l.OK || l.Refuse || !strings.Contains(l.Error, "endpoint secrets sealed with key id(s) a") ||
		!strings.Contains(l.Error, "endpoint headers sealed with key id(s) a") {
		t.Fatalf("doctor with a ring lacking the endpoints' key: %+v, want both columns named with key id a", l)
	}
	if l := line(keyB + "," + keyA); !l.OK {
		t.Fatalf("doctor with a ring holding the endpoints' key: %+v", l)
	}
}

// A rewind reaches back only as far as a topic keeps its records: the
// doctor names the topics keeping less than --topic-retention (the suite
// made its topics with one hour).
func TestDoctorNamesTopicsKeepingLessThanTheRetention(t *testing.T) {
	t.Parallel()
	line := func(retention string) doctorLine {
		env := append(sluiceEnv(suite.topics), "SLUICE_SECRET_KEY="+suite.secretKey, "SLUICE_TOPIC_RETENTION="+retention)
		checks, _ := doctor(t, env, "--stage", "consume")
		l, ok := checks.find("topic_retention")
		if !ok {
			t.Fatalf("no topic_retention line: %+v", checks)
		}
		return l
	}
	if l := line("1h"); !l.OK {
		t.Fatalf("doctor with --topic-retention 1h over topics keeping 1h: %+v", l)
	}
	if l := line("168h"); l.OK || l.Refuse || !strings.Contains(l.Error, suite.topics.Resource("invoices")+" (1h0m0s)") {
		t.Fatalf("doctor with --topic-retention 168h: %+v, want the suite's topics named with their 1h", l)
	}
}
