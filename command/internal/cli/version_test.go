package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// versionOutput is `sluice version -o json`.
type versionOutput struct {
	Version        string `json:"version"`
	Commit         string `json:"commit"`
	Schema         int64  `json:"schema"`
	DatabaseSchema *int64 `json:"database_schema"`
	DatabaseError  string `json:"database_error"`
}

// sluice version (and --version) says which release the binary is, the
// commit it was built from, the schema it needs, and the schema the database
// is at: what an operator compares before and after an upgrade.
func TestVersionNamesTheReleaseTheCommitAndBothSchemas(t *testing.T) {
	t.Parallel()
	want := versionOutput{Version: Version, Commit: stampedCommit(t), Schema: newestMigration(t)}

	for _, args := range [][]string{{"version", "-o", "json"}, {"--version", "-o", "json"}} {
		stdout, stderr, code := cli(t, args...)
		if code != 0 {
			t.Fatalf("sluice %v exited %d: %s", args, code, stderr)
		}
		var got versionOutput
		if err := json.Unmarshal([]byte(stdout), &got); err != nil {
			t.Fatalf("sluice %v: %v\n%s", args, err, stdout)
		}
		if got.Version != want.Version || got.Commit != want.Commit || got.Schema != want.Schema {
			t.Errorf("sluice %v = %+v, want version %s, commit %s, schema %d", args, got, want.Version, want.Commit, want.Schema)
		}
		// The suite's database is migrated by this binary's migrations.
		if got.DatabaseSchema == nil || *got.DatabaseSchema != want.Schema || got.DatabaseError != "" {
			t.Errorf("sluice %v: database schema %v (%q), want %d", args, got.DatabaseSchema, got.DatabaseError, want.Schema)
		}
	}

	stdout, stderr, code := cli(t, "version")
	if code != 0 {
		t.Fatalf("sluice version exited %d: %s", code, stderr)
	}
	for _, line := range []string{"version   " + Version, "commit    " + want.Commit, "schema    " + strconv.FormatInt(want.Schema, 10),
		"database  " + strconv.FormatInt(want.Schema, 10)} {
		if !strings.Contains(stdout, line) {
			t.Errorf("sluice version does not say %q:\n%s", line, stdout)
		}
	}

	// Without a database it still answers, and says why it could not
	// read the database's schema.
	env := slices.DeleteFunc(sluiceEnv(suite.topics), func(kv string) bool {
		return strings.HasPrefix(kv, "SLUICE_DATABASE_URL=") || strings.HasPrefix(kv, "SLUICE_OWNER_DATABASE_URL=")
	})
	env = append(env, "SLUICE_DATABASE_URL=postgres://nobody@127.0.0.1:1/none?connect_timeout=2")
	stdout, stderr, code = cliWith(t, env, "version", "-o", "json")
	if code != 0 {
		t.Fatalf("sluice version without a database exited %d: %s", code, stderr)
	}
	var got versionOutput
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("sluice version: %v\n%s", err, stdout)
	}
	if got.Version != Version || got.DatabaseSchema != nil || got.DatabaseError == "" {
		t.Errorf("sluice version without a database = %+v, want version %s, no database schema and why", got, Version)
	}
}

// stampedCommit is what the binary should report: the revision go build
// stamped into it, read back with go version -m ("unknown" when the build
// had none: GOFLAGS=-buildvcs=false, or a work tree go does not take for a
// clone).
func stampedCommit(t *testing.T) string {
	t.Helper()
	cli(t, "version") // builds the binary
	out, err := exec.Command("go", "version", "-m", cliBinary.path).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	settings := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "build" {
			k, v, _ := strings.Cut(f[1], "=")
			settings[k] = v
		}
	}
	switch {
	case settings["vcs.revision"] == "":
		return "unknown"
	case settings["vcs.modified"] == "true":
		return settings["vcs.revision"] + "-dirty"
	}
	return settings["vcs.revision"]
}

// The commit comes from the build's VCS stamp: its revision, "-dirty" for
// a work tree with changes, "unknown" without a stamp.
func TestCommitComesFromTheBuildStamp(t *testing.T) {
	t.Parallel()
	rev := debug.BuildSetting{Key: "vcs.revision", Value: "3b0134b0f00d"}
	for _, c := range []struct {
		info *debug.BuildInfo
		ok   bool
		want string
	}{
		{&debug.BuildInfo{Settings: []debug.BuildSetting{rev, {Key: "vcs.modified", Value: "false"}}}, true, "3b0134b0f00d"},
		{&debug.BuildInfo{Settings: []debug.BuildSetting{rev, {Key: "vcs.modified", Value: "true"}}}, true, "3b0134b0f00d-dirty"},
		{&debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "-buildvcs", Value: "false"}}}, true, "unknown"},
		{nil, false, "unknown"},
	} {
		if got := commitOf(c.info, c.ok); got != c.want {
			t.Errorf("commitOf(%+v) = %s, want %s", c.info, got, c.want)
		}
	}
}

// newestMigration reads the newest migration's number from the folder,
// not from the code under test.
func newestMigration(t *testing.T) int64 {
	t.Helper()
	names, err := filepath.Glob("../../../migrations/*.sql")
	if err != nil || len(names) == 0 {
		t.Fatalf("migrations: %v", err)
	}
	slices.Sort(names)
	n, err := strconv.ParseInt(regexp.MustCompile(`^\d+`).FindString(filepath.Base(names[len(names)-1])), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// The version constant is the newest release CHANGELOG.md describes: its
// number when the newest section is a release, or the next number with
// "-dev" while the newest section is "Unreleased".
func TestTheVersionIsTheChangelogsNewest(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../../CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	headings := regexp.MustCompile(`(?m)^## (\S+)`).FindAllStringSubmatch(string(b), -1)
	if len(headings) == 0 {
		t.Fatal("CHANGELOG.md has no release heading (## <version> or ## Unreleased)")
	}
	var released []string
	for _, h := range headings {
		if h[1] != "Unreleased" {
			released = append(released, h[1])
		}
	}
	if len(released) == 0 {
		t.Fatal("CHANGELOG.md names no released version")
	}
	if headings[0][1] != "Unreleased" {
		if Version != released[0] {
			t.Errorf("Version is %s, CHANGELOG.md's newest release is %s", Version, released[0])
		}
		return
	}
	next, ok := strings.CutSuffix(Version, "-dev")
	if !ok {
		t.Fatalf("CHANGELOG.md's newest section is Unreleased, so Version must be the next release with -dev; it is %s", Version)
	}
	if !semverLess(released[0], next) {
		t.Errorf("Version %s does not come after CHANGELOG.md's newest release %s", Version, released[0])
	}
}

// semverLess compares two MAJOR.MINOR.PATCH versions.
func semverLess(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	if len(pa) != 3 || len(pb) != 3 {
		return false
	}
	for i := range 3 {
		x, errX := strconv.Atoi(pa[i])
		y, errY := strconv.Atoi(pb[i])
		if errX != nil || errY != nil {
			return false
		}
		if x != y {
			return x < y
		}
	}
	return false
}
