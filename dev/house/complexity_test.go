package house_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// maxComplexity is the most branches a production function may have: past
// it, a function is several steps that want names of their own.
const maxComplexity = 15

// No production function (outside dev/ and tests) is more complex than
// maxComplexity, counted as gocyclo counts: one, plus one for each if, for,
// range, non-default case or select clause, && and ||. Generated files
// (ast.IsGenerated: the admin API's Go client, make clients) are the
// generator's to shape.
func TestNoProductionFunctionIsTooComplex(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	for _, p := range productionFiles(t) {
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution|parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if ast.IsGenerated(f) {
			continue
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			if c := complexity(fn); c > maxComplexity {
				t.Errorf("%s: %s has complexity %d, more than %d: split it into the steps it is", fset.Position(fn.Pos()), name(fn), c, maxComplexity)
			}
		}
	}
}

// productionFiles are the module's production Go files (outside dev/ and
// tests), by their path in the module, each with its path from here.
func productionFiles(t *testing.T) map[string]string {
	t.Helper()
	root := filepath.Join("..", "..")
	files := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if rel == "dev" || strings.HasPrefix(d.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
			files[filepath.ToSlash(rel)] = p
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func complexity(fn *ast.FuncDecl) int {
	c := 1
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt:
			c++
		case *ast.CaseClause:
			if n.List != nil {
				c++
			}
		case *ast.CommClause:
			if n.Comm != nil {
				c++
			}
		case *ast.BinaryExpr:
			if n.Op == token.LAND || n.Op == token.LOR {
				c++
			}
		}
		return true
	})
	return c
}

func name(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	var recv string
	switch t := fn.Recv.List[0].Type.(type) {
	case *ast.StarExpr:
		recv = "*" + exprName(t.X)
	default:
		recv = exprName(t)
	}
	return "(" + recv + ")." + fn.Name.Name
}

func exprName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.IndexExpr:
		return exprName(e.X)
	case *ast.IndexListExpr:
		return exprName(e.X)
	}
	return "?"
}
