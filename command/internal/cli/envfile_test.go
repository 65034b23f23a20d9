package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// env is a process environment for the resolver, so these tests run in
// parallel without touching the real one.
type env map[string]string

func (e env) lookup(name string) (string, bool) {
	v, ok := e[name]
	return v, ok
}

func secretFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// A _FILE variable's file is the value, with one trailing newline trimmed
// (echo and editors leave one; a second is the secret's own).
func TestEnvFileIsTheValueWithOneTrailingNewlineTrimmed(t *testing.T) {
	t.Parallel()
	for content, want := range map[string]string{
		"k3y":       "k3y",
		"k3y\n":     "k3y",
		"k3y\r\n":   "k3y",
		"k3y\n\n":   "k3y\n",
		"k3y\r":     "k3y\r",
		" k3y \n":   " k3y ",
		"a,b\nc\n":  "a,b\nc",
		"\n":        "",
		"":          "",
		"x\r\n\r\n": "x\r\n",
	} {
		got, found, err := fromEnvFile("SLUICE_SECRET_KEY", env{"SLUICE_SECRET_KEY_FILE": secretFile(t, content)}.lookup)
		if err != nil || !found || got != want {
			t.Errorf("file %q: value %q found %v err %v, want %q", content, got, found, err, want)
		}
	}
}

// No _FILE (or an empty one, as compose files pass variables through) is
// no value: the variable itself, or the default, stands.
func TestEnvFileUnsetOrEmptyGivesNoValue(t *testing.T) {
	t.Parallel()
	for _, e := range []env{{}, {"SLUICE_SECRET_KEY_FILE": ""}, {"SLUICE_SECRET_KEY": "from-env", "SLUICE_SECRET_KEY_FILE": ""}} {
		if v, found, err := fromEnvFile("SLUICE_SECRET_KEY", e.lookup); found || err != nil || v != "" {
			t.Errorf("%v: value %q found %v err %v, want nothing", e, v, found, err)
		}
	}
}

// Both the variable and its _FILE set is refused, naming both: which one
// was meant cannot be guessed.
func TestEnvFileAndItsVariableBothSetIsRefused(t *testing.T) {
	t.Parallel()
	path := secretFile(t, "from-file\n")
	_, found, err := fromEnvFile("SLUICE_DATABASE_URL", env{"SLUICE_DATABASE_URL": "postgres://a", "SLUICE_DATABASE_URL_FILE": path}.lookup)
	if err == nil || found {
		t.Fatalf("both set: found %v err %v, want a refusal", found, err)
	}
	for _, want := range []string{"SLUICE_DATABASE_URL and SLUICE_DATABASE_URL_FILE are both set"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "from-file") || strings.Contains(err.Error(), "postgres://a") {
		t.Errorf("error %q quotes a value", err)
	}
}

// A file that cannot be read is refused with its path and the reason,
// never any of its content.
func TestEnvFileUnreadableIsRefusedNamingThePathNotTheContent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	big := secretFile(t, "hunter2-"+strings.Repeat("x", maxSecretFile))
	for path, reason := range map[string]string{
		filepath.Join(dir, "missing"): "no such file or directory",
		dir:                           "is a directory",
		big:                           "too large for a secret",
	} {
		_, found, err := fromEnvFile("SLUICE_KAFKA_SASL_PASSWORD", env{"SLUICE_KAFKA_SASL_PASSWORD_FILE": path}.lookup)
		if err == nil || found {
			t.Errorf("%s: found %v err %v, want a refusal", path, found, err)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, "SLUICE_KAFKA_SASL_PASSWORD_FILE: cannot read "+path+": ") || !strings.Contains(msg, reason) {
			t.Errorf("%s: error %q does not name the variable, the path and %q", path, msg, reason)
		}
		if strings.Contains(msg, "hunter2") {
			t.Errorf("%s: error %q quotes the file", path, msg)
		}
	}
}

// parseWithEnv parses args as sluice does, with e as the _FILE variables.
func parseWithEnv(t *testing.T, e env, args ...string) (*CLI, error) {
	t.Helper()
	var cli CLI
	parser, err := kong.New(&cli, kong.Resolvers(envFiles(e.lookup)), kong.Exit(func(int) { t.Fatal("kong exited") }))
	if err != nil {
		t.Fatal(err)
	}
	_, err = parser.Parse(args)
	return &cli, err
}

// Every flag that holds a secret reads its _FILE, and no other flag does;
// a flag on the command line wins over the file, as over the variable.
func TestSecretFlagsReadTheirFiles(t *testing.T) {
	t.Parallel()
	e := env{
		"SLUICE_SECRET_KEY_FILE":          secretFile(t, "ring\n"),
		"SLUICE_DATABASE_URL_FILE":        secretFile(t, "postgres://from-file\n"),
		"SLUICE_KAFKA_SASL_PASSWORD_FILE": secretFile(t, "scram\n"),
		"SLUICE_DISPATCH_SECRET_FILE":     secretFile(t, "whsec_file\n"),
		"SLUICE_TOPIC_PREFIX_FILE":        secretFile(t, "not-read\n"),
	}
	cli, err := parseWithEnv(t, e, "serve")
	if err != nil {
		t.Fatal(err)
	}
	g := cli.Globals
	if g.SecretKey != "ring" || g.DatabaseURL != "postgres://from-file" || g.KafkaPassword != "scram" || cli.Serve.DispatchSecret != "whsec_file" {
		t.Errorf("secret key %q, database URL %q, SASL password %q, dispatch secret %q: want the files' content",
			g.SecretKey, g.DatabaseURL, g.KafkaPassword, cli.Serve.DispatchSecret)
	}
	if g.TopicPrefix == "not-read" {
		t.Error("--topic-prefix, no secret, read SLUICE_TOPIC_PREFIX_FILE")
	}
	cli, err = parseWithEnv(t, e, "--secret-key=flag", "migrate")
	if err != nil || cli.SecretKey != "flag" {
		t.Errorf("--secret-key on the command line: %q, %v; want it to win over the file", cli.SecretKey, err)
	}
	cli, err = parseWithEnv(t, env{"SLUICE_SOURCE_SECRET_FILE": secretFile(t, "whsec_src\n")},
		"source", "rotate-secret", "--source=00000000-0000-4000-8000-000000000000")
	if err != nil || cli.Source.RotateSecret.Secret != "whsec_src" {
		t.Errorf("source rotate-secret with SLUICE_SOURCE_SECRET_FILE: secret %q, %v", cli.Source.RotateSecret.Secret, err)
	}
}

// The resolver's refusals reach the command line as a parse error naming
// the flag, before any command runs.
func TestSecretFileRefusalStopsTheParse(t *testing.T) {
	t.Parallel()
	_, err := parseWithEnv(t, env{"SLUICE_SECRET_KEY_FILE": filepath.Join(t.TempDir(), "gone")}, "migrate")
	if err == nil || !strings.Contains(err.Error(), "--secret-key") || !strings.Contains(err.Error(), "SLUICE_SECRET_KEY_FILE: cannot read") {
		t.Errorf("unreadable SLUICE_SECRET_KEY_FILE: %v, want a parse error naming --secret-key and the variable", err)
	}
}
