// Package house_test holds the house's rules as a test: each folder of the
// module is one level, and every import points down a level or stays inside
// its folder. The table below is the tree a reader sees; the test reads the
// real import graph with `go list` and fails on any import that breaks it:
//   - a package of no folder in the table (a new folder must be placed);
//   - an import of the same level or above, outside the importer's folder;
//   - a stage importing another stage (tests included: stages meet only in
//     command/ and dev/);
//   - a package below the operator layer importing a stage;
//   - a production package importing a test or dev helper;
//   - a top-level folder holding levels both below and above the stages.
//
// Test files are no package anyone imports, so they may reach up a level
// (a store's tests drive the relay and the consumers) and import helpers;
// dev/ may import anything.
package house_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/sluicehq/sluice"

// Levels, lowest first.
const (
	vocabulary = iota // internal/refusal: the kinds of "no", which every level speaks
	top               // schemas/, migrations/: the data the binary embeds
	plumbing          // what any stage may need, none of it Sluice's business
	providers
	stores // the tables stages and operators share
	stages
	library  // the public effect API, over the consumer stage; its kit
	operator // the operator layer: with the command line, the only importer of stages besides dev/
	cli      // the command line and its assembly of the stages
	binary
	dev // outside the rules
)

var levelNames = [...]string{"vocabulary", "top", "plumbing", "providers", "stores", "stages", "library", "operator layer", "command line", "binary", "dev"}

// folders is the house: a package belongs to the folder whose path is the
// longest prefix of its own, and has that folder's level. Inside one folder
// imports go where they must (consumers/credits -> consumers,
// internal/provider/kinds/stripe -> internal/provider).
var folders = map[string]int{
	// The refusal vocabulary imports nothing of Sluice's, so the data, the
	// plumbing and the providers may refuse in its words too.
	"internal/refusal": vocabulary,

	"schemas":    top,
	"migrations": top,

	"internal/pg":               plumbing,
	"internal/kafka":            plumbing,
	"internal/envelope":         plumbing,
	"internal/keyring":          plumbing,
	"internal/telemetry":        plumbing,
	"internal/audit":            plumbing,
	"internal/standardwebhooks": plumbing,
	"internal/listen":           plumbing,
	"internal/egress":           plumbing, // an HTTP client that dials only public addresses
	"internal/eventfilter":      plumbing, // endpoints' filter expressions and transformations (CEL, one set of variables)
	// Signals the loops of production code carry, inert until a test
	// starts one: plumbing, not a test helper.
	"internal/testsignal": plumbing,

	"internal/provider": providers, // the contract, signature/, jsonptr/, kinds/<kind>

	"internal/store/tenancy":   stores,
	"internal/store/catalog":   stores,
	"internal/store/lifecycle": stores,
	"internal/store/inbox":     stores,
	"internal/store/endpoints": stores,
	// The tests' Postgres and Kafka sit on the plumbing and the migrations,
	// and consumers/consumertest on them: beside the stores.
	"internal/testenv": stores,

	"internal/ingest":    stages,
	"internal/cdc":       stages,
	"internal/consumers": stages,

	// Public: what a team's own effect groups are written with, over the
	// consumer runtime, and the kit that proves them (effect/effecttest).
	"effect": library,
	// Public: the admin API's Go client, generated from its document; it
	// speaks HTTP only and imports nothing of Sluice's.
	"adminclient": vocabulary,

	// Above the stages, inside the command line's folder: the command
	// line imports them, and Go lets nothing outside command/ import them,
	// so the admin API's internals never become public API.
	"command/internal/operator": operator,

	// The command line (public: a team's own binary runs it) with its
	// assembly of the stages, and Sluice's own main.
	"command": cli,
	"cmd":     binary,

	"dev": dev,
}

// folderOf returns the folder of package p (a path inside the module), or
// "" when the table places it nowhere.
func folderOf(p string) string {
	best := ""
	for f := range folders {
		if (p == f || strings.HasPrefix(p, f+"/")) && len(f) > len(best) {
			best = f
		}
	}
	return best
}

// helper reports whether p exists only for tests or development: the
// test services, anything named *test, and dev/.
func helper(p string) bool {
	return folderOf(p) == "internal/testenv" || strings.HasSuffix(path.Base(p), "test") || folderOf(p) == "dev"
}

type pkg struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
}

// packages lists every package of the module with its imports, the module
// prefix cut off; imports from outside the module are left out.
func packages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports,TestImports,XTestImports", module+"/...")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		p.ImportPath = inModule(p.ImportPath)
		p.Imports, p.TestImports, p.XTestImports = local(p.Imports), local(p.TestImports), local(p.XTestImports)
		pkgs = append(pkgs, p)
	}
	if len(pkgs) == 0 {
		t.Fatal("go list found no packages")
	}
	return pkgs
}

func inModule(p string) string {
	if p == module {
		return "."
	}
	return strings.TrimPrefix(p, module+"/")
}

func local(imports []string) []string {
	var in []string
	for _, i := range imports {
		if strings.HasPrefix(i, module+"/") {
			in = append(in, inModule(i))
		}
	}
	return in
}

// brokenRule names the rule an import from package from to package to
// breaks, or "" when it keeps them all. test says the import is made by
// test files only.
func brokenRule(from, to string, test bool) string {
	ff, tf := folderOf(from), folderOf(to)
	fl, tl := folders[ff], folders[tf]
	switch {
	case fl == dev:
		return ""
	case fl == stages && tl == stages && ff != tf:
		return "stages never import one another"
	case test:
		return ""
	case helper(to) && !helper(from):
		return "no production package imports a test or dev helper"
	case ff == tf:
		return ""
	case tl == stages && fl < stages:
		return "only the effect library, the operator layer, the command line and dev/ import a stage"
	case tl >= fl:
		return fmt.Sprintf("imports point down a level or stay in their folder: %s is %s (%s), %s is %s (%s)",
			from, levelNames[fl], ff, to, levelNames[tl], tf)
	}
	return ""
}

func TestEveryImportPointsDown(t *testing.T) {
	t.Parallel()
	for _, p := range packages(t) {
		if folderOf(p.ImportPath) == "" {
			t.Errorf("%s has no level: place its folder in the table of dev/house/house_test.go", p.ImportPath)
			continue
		}
		for _, i := range p.Imports {
			if rule := brokenRule(p.ImportPath, i, false); rule != "" {
				t.Errorf("%s imports %s: %s", p.ImportPath, i, rule)
			}
		}
		for _, i := range append(p.TestImports, p.XTestImports...) {
			if rule := brokenRule(p.ImportPath, i, true); rule != "" {
				t.Errorf("%s's tests import %s: %s", p.ImportPath, i, rule)
			}
		}
	}
}

// The rules themselves, on imports the house does not have, so a change
// to brokenRule that lets one through fails here even while the tree is
// clean.
func TestTheRulesOnImportsNotInTheTree(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		from, to string
		test     bool
		broken   bool
	}{
		{"internal/consumers/credits", "internal/consumers", false, false},
		{"internal/provider/kinds/stripe", "internal/provider", false, false},
		{"internal/ingest/reconcile", "internal/ingest", false, false},
		{"command/internal/operator/admin", "internal/cdc", false, false},
		{"command", "command/internal/operator/admin", false, false},
		{"cmd/sluice", "command", false, false},
		{"internal/consumers/consumertest", "internal/testenv", false, false},
		{"dev/bench", "internal/provider/kinds/stripe/stripetest", false, false},
		{"internal/cdc", "internal/testsignal", false, false},                         // production carries its signals
		{"internal/store/lifecycle", "internal/cdc", true, false},                     // a store's tests drive a stage
		{"internal/ingest", "internal/provider/kinds/providertest", true, false},      // tests take helpers
		{"internal/ingest", "internal/cdc", false, true},                              // stage to stage
		{"internal/ingest", "internal/consumers/credits", true, true},                 // stage to stage, in tests too
		{"internal/store/tenancy", "internal/ingest", false, true},                    // a store above a stage
		{"internal/pg", "internal/kafka", false, true},                                // same level, another folder
		{"internal/provider", "internal/store/tenancy", false, true},                  // up a level
		{"internal/store/catalog", "internal/store/tenancy", false, true},             // store to store
		{"command/internal/operator/operate", "internal/testenv", false, true},        // a test helper in production
		{"internal/ingest", "internal/provider/kinds/stripe/stripetest", false, true}, // a test helper in production
		{"command", "dev/procfs", false, true},                                        // a dev helper in production
		{"internal/listen", "command", false, true},
		{"internal/cdc", "command/internal/operator/operate", false, true}, // a stage above itself
	} {
		if got := brokenRule(c.from, c.to, c.test) != ""; got != c.broken {
			t.Errorf("%s -> %s (test %v): broken %v, want %v", c.from, c.to, c.test, got, c.broken)
		}
	}
	if f := folderOf("internal/providers"); f != "" {
		t.Errorf("internal/providers placed in %s: a folder is a whole path segment", f)
	}
}

// A top-level folder holds levels on one side of the stages only, so the
// tree a reader sees draws the house: internal/ below the stages (and the
// stages), command/ above them. A folder placed with levels on both sides
// (the operator layer filed under internal/, as it once was) fails.
func TestNoTopFolderHoldsLevelsOnBothSidesOfTheStages(t *testing.T) {
	t.Parallel()
	if bad := foldersAcrossTheStages(folders); len(bad) > 0 {
		t.Errorf("top-level folders with levels both below and above the stages: %v", bad)
	}
	planted := map[string]int{}
	for f, l := range folders {
		planted[f] = l
	}
	planted["internal/operator"] = operator // the operator layer moved back beside the plumbing
	if bad := foldersAcrossTheStages(planted); len(bad) != 1 || bad[0] != "internal" {
		t.Errorf("a planted internal/operator: %v, want [internal]", bad)
	}
}

// foldersAcrossTheStages names each top-level folder of table that holds a
// level below the stages and one above them.
func foldersAcrossTheStages(table map[string]int) []string {
	below, above := map[string]bool{}, map[string]bool{}
	for f, l := range table {
		top, _, _ := strings.Cut(f, "/")
		switch {
		case l == dev:
		case l < stages:
			below[top] = true
		case l > stages:
			above[top] = true
		}
	}
	var both []string
	for top := range below {
		if above[top] {
			both = append(both, top)
		}
	}
	slices.Sort(both)
	return both
}

// builtinGroups is the folder of Sluice's own effect groups.
const builtinGroups = "command/internal/effects/"

// Sluice's built-in effect groups are written on the public effect API
// alone, as a team's own would be: none of them imports anything else of
// the module (their registry, command/internal/effects itself, does, and
// so does its tests' helper, builtintest), so the API is proven sufficient
// by the five of them.
func TestBuiltinGroupsUseOnlyThePublicAPI(t *testing.T) {
	t.Parallel()
	found := 0
	for _, p := range packages(t) {
		if !strings.HasPrefix(p.ImportPath, builtinGroups) || helper(p.ImportPath) {
			continue
		}
		found++
		if bad := beyondThePublicAPI(p.Imports); len(bad) > 0 {
			t.Errorf("%s imports %v: a built-in group uses only package effect", p.ImportPath, bad)
		}
	}
	if found < 5 {
		t.Errorf("%d built-in groups under %s, want the five", found, builtinGroups)
	}
	if bad := beyondThePublicAPI([]string{"effect", "internal/pg"}); len(bad) != 1 {
		t.Errorf("a planted internal/pg import: %v, want it named", bad)
	}
}

// beyondThePublicAPI are the imports of the module other than effect.
func beyondThePublicAPI(imports []string) []string {
	var bad []string
	for _, i := range imports {
		if i != "effect" {
			bad = append(bad, i)
		}
	}
	return bad
}
