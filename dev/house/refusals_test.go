package house_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// One refusal vocabulary (internal/refusal): the kinds of "no" are declared
// there once, and a package refuses in its words. A package may declare a
// sub-kind of its own (refusal.Sub, with a code no other package uses); it
// may not declare a sentinel of its own (an errors.New, a value of an error
// type of its own) nor an error type that matches sentinels (an Is method):
// that is how a second vocabulary for "not found" starts, which every face
// (the admin API, the command line, the console) would have to learn.
//
// A sentinel that is no refusal (a failure: a lost slot, a schema behind the
// binary, a record's permanent fault) is listed below with why; the list
// is checked both ways, and no name on it may read as a kind of refusal.
// Sentinels a package keeps to itself (unexported) are its own business.
var notRefusals = map[string]string{
	"internal/cdc.ErrSlotLost":                         "a failure of the relay: its slot is gone, and an operator resyncs",
	"internal/consumers.ErrPayloadExpired":             "a record's permanent fault, its dead letter's reason (operate shows the payload as expired)",
	"command/internal/effects/credits.ErrNoWorkspace":  "a record's permanent fault, its dead letter's reason",
	"effect.ErrKeyTaken":                               "a record's permanent fault in a team's group (a business key taken with other content), its dead letter's reason",
	"internal/pg.ErrLocksNotGranted":                   "a failure of the deployment: a migration's locks were held by others through every attempt",
	"internal/pg.ErrNoSchema":                          "a failure of the deployment: the database has no Sluice schema yet (sluice version reports it)",
	"internal/egress.ErrRefusedAddress":                "egress's verdict on an address dialled, an attempt's error class (the endpoints store words a URL's as invalid)",
	"internal/ingest.ErrNotCommitted":                  "a failure: the commit failed or its outcome is unknown, and the provider retries",
	"internal/ingest.ErrNotReconcilable":               "a failure of a run under way (its source vanished, was disabled, or cannot be read); callers check the source first",
	"internal/keyring.ErrUnknownKey":                   "a failure of the deployment: sealed data names a key the ring lacks",
	"internal/pg.ErrSchemaBehind":                      "a failure of the deployment: the database's schema is older than the binary",
	"internal/provider.ErrNotOffered":                  "a capability a provider's API lacks, which reconciliation moves past",
	"internal/store/endpoints.ErrNoSecret":             "the deliverer's condition: an endpoint with no secret in force waits",
	"internal/store/lifecycle.ErrPartitionsRunningOut": "a health verdict (readiness, doctor), no one's request",
}

// kindWords are the kinds' names as a sentinel's name would spell them.
var kindWords = regexp.MustCompile(`NotFound|Conflict|Invalid|Forbidden|Unauthenticated|Limited|Unavailable`)

// A finding is one declaration the rule refuses, or a sub-kind's code.
type finding struct {
	at   string // file:line
	name string // package path (in the module) "." name
	why  string
	code string // a sub-kind's code (refusal.Sub), for the uniqueness check
}

// refusalPackage is the vocabulary's own folder: the one place sentinels
// of the kinds and an Is method belong.
const refusalPackage = "internal/refusal"

func TestNoPackageDeclaresARefusalOfItsOwn(t *testing.T) {
	t.Parallel()
	found := scan(t, productionFiles(t), nil)
	seen := map[string]bool{}
	codes := map[string]string{}
	for _, f := range found {
		switch {
		case f.code != "":
			if other, ok := codes[f.code]; ok {
				t.Errorf("%s: %s declares sub-kind %q, as %s does: a code is a problem type and a JSON code, one meaning each", f.at, f.name, f.code, other)
			}
			codes[f.code] = f.name
		case notRefusals[f.name] != "":
			seen[f.name] = true
		default:
			t.Errorf("%s: %s %s: refuse in internal/refusal's words (refusal.New, NoSuch, InvalidField), or declare a sub-kind (refusal.Sub); "+
				"a sentinel that is no refusal goes in notRefusals of dev/house/refusals_test.go, with why", f.at, f.name, f.why)
		}
	}
	for name, why := range notRefusals {
		switch {
		case !seen[name]:
			t.Errorf("notRefusals lists %s, which the tree does not declare: drop it", name)
		case kindWords.MatchString(name[strings.LastIndex(name, ".")+1:]):
			t.Errorf("notRefusals lists %s (%s), whose name reads as a kind of refusal: it is one; make it a sub-kind", name, why)
		}
	}
}

// The rule on sources the tree does not have, so a change to the scan
// that lets one through fails here even while the tree is clean.
func TestTheRefusalRuleOnAPlantedPackage(t *testing.T) {
	t.Parallel()
	planted := map[string]string{
		"internal/store/planted/planted.go": `package planted

import (
	"errors"
	"fmt"

	"github.com/sluicehq/sluice/internal/refusal"
)

var ErrNotFound = errors.New("not found")

var (
	errHidden   = errors.New("kept to itself")
	ErrWrapped  = fmt.Errorf("invalid: %s", "x")
	ErrTyped    = &NotFoundError{}
	ErrKindWide = refusal.New(refusal.Conflict, "a conflict")
	ErrNoCode   = refusal.Sub(refusal.Conflict, "", "a conflict")
	ErrQuota    = refusal.Sub(refusal.Conflict, "quota", "over quota")
	ErrAlias    = refusal.ErrNotFound
	ErrLiteral  = &refusal.Error{Kind: refusal.NotFound, Message: "none"}
)

type NotFoundError struct{ ID string }

func (e *NotFoundError) Error() string        { return "no " + e.ID }
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }
`,
	}
	var got []string
	for _, f := range scanSources(t, planted) {
		if f.code != "" {
			got = append(got, "sub-kind "+f.name+" "+f.code)
			continue
		}
		got = append(got, f.name+": "+f.why)
	}
	want := []string{
		"internal/store/planted.ErrNotFound: is a sentinel of its own (errors.New)",
		"internal/store/planted.ErrWrapped: is a sentinel of its own (fmt.Errorf)",
		"internal/store/planted.ErrTyped: is a sentinel of its own (a NotFoundError)",
		"internal/store/planted.ErrKindWide: is a sentinel of a whole kind (refusal.New): the kinds' own are refusal's",
		"internal/store/planted.ErrNoCode: is a sub-kind without a code",
		"internal/store/planted.ErrLiteral: is a sentinel of a whole kind (a refusal.Error): the kinds' own are refusal's",
		"sub-kind internal/store/planted.ErrQuota quota",
		"internal/store/planted.NotFoundError.Is: matches sentinels (an Is method): wrap a refusal instead (Unwrap)",
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("planted findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// scanSources scans sources given as text, by their path in the module.
func scanSources(t *testing.T, sources map[string]string) []finding {
	t.Helper()
	return scan(t, nil, sources)
}

// scan parses the files (path in the module -> path on disk) and the
// sources (path in the module -> text), package by package.
func scan(t *testing.T, files, sources map[string]string) []finding {
	t.Helper()
	fset := token.NewFileSet()
	byPkg := map[string][]*ast.File{}
	add := func(rel string, src any, disk string) {
		f, err := parser.ParseFile(fset, disk, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		byPkg[filepath.ToSlash(filepath.Dir(rel))] = append(byPkg[filepath.ToSlash(filepath.Dir(rel))], f)
	}
	for rel, disk := range files {
		add(rel, nil, disk)
	}
	for rel, src := range sources {
		add(rel, src, rel)
	}
	var found []finding
	for pkg, fs := range byPkg {
		if pkg == refusalPackage {
			continue
		}
		found = append(found, scanPackage(fset, pkg, fs)...)
	}
	return found
}

// scanPackage finds a package's exported sentinels, its sub-kinds and its
// Is methods.
func scanPackage(fset *token.FileSet, pkg string, files []*ast.File) []finding {
	errorTypes := map[string]bool{}
	for _, f := range files {
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv != nil && fn.Name.Name == "Error" {
				errorTypes[receiverType(fn)] = true
			}
		}
	}
	var found []finding
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv != nil && d.Name.Name == "Is" && d.Type.Params.NumFields() == 1 {
					found = append(found, finding{at: fset.Position(d.Pos()).String(), name: pkg + "." + receiverType(d) + ".Is",
						why: "matches sentinels (an Is method): wrap a refusal instead (Unwrap)"})
				}
			case *ast.GenDecl:
				if d.Tok == token.VAR {
					found = append(found, scanVars(fset, pkg, d, errorTypes)...)
				}
			}
		}
	}
	return found
}

// scanVars judges the exported package-level variables of one var
// declaration.
func scanVars(fset *token.FileSet, pkg string, d *ast.GenDecl, errorTypes map[string]bool) []finding {
	var found []finding
	for _, spec := range d.Specs {
		vs := spec.(*ast.ValueSpec)
		for i, name := range vs.Names {
			if !name.IsExported() || i >= len(vs.Values) {
				continue
			}
			f := finding{at: fset.Position(name.Pos()).String(), name: pkg + "." + name.Name}
			f.why, f.code = judge(vs.Values[i], errorTypes)
			if f.why != "" || f.code != "" {
				found = append(found, f)
			}
		}
	}
	return found
}

// judge says why value declares a sentinel the rule refuses, or the code
// of the sub-kind it declares; neither for anything else (an alias of
// another package's sentinel, a value that is no error).
func judge(value ast.Expr, errorTypes map[string]bool) (why, code string) {
	if u, ok := value.(*ast.UnaryExpr); ok && u.Op == token.AND {
		value = u.X
	}
	switch v := value.(type) {
	case *ast.CompositeLit:
		if id, ok := v.Type.(*ast.Ident); ok && errorTypes[id.Name] {
			return "is a sentinel of its own (a " + id.Name + ")", ""
		}
		if sel, ok := v.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Error" {
			if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "refusal" {
				return "is a sentinel of a whole kind (a refusal.Error): the kinds' own are refusal's", ""
			}
		}
	case *ast.CallExpr:
		switch fn := callee(v); fn {
		case "errors.New", "fmt.Errorf":
			return "is a sentinel of its own (" + fn + ")", ""
		case "refusal.Sub":
			if c := stringArg(v, 1); c != "" {
				return "", c
			}
			return "is a sub-kind without a code", ""
		case "refusal.New", "refusal.NoSuch", "refusal.InvalidField":
			return fmt.Sprintf("is a sentinel of a whole kind (%s): the kinds' own are refusal's", fn), ""
		}
	}
	return "", ""
}

// callee is a call's function as written: "errors.New".
func callee(c *ast.CallExpr) string {
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok {
		return ""
	}
	pkg, ok := sel.X.(*ast.Ident)
	if !ok {
		return ""
	}
	return pkg.Name + "." + sel.Sel.Name
}

// stringArg is call's argument i when it is a string literal, else "".
func stringArg(c *ast.CallExpr, i int) string {
	if i >= len(c.Args) {
		return ""
	}
	lit, ok := c.Args[i].(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return ""
	}
	s, err := strconv.Unquote(lit.Value)
	if err != nil {
		return ""
	}
	return s
}

// receiverType is a method's receiver's type name, without its star.
func receiverType(fn *ast.FuncDecl) string {
	t := fn.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}
