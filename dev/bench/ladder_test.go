package main

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The ladder's floors stand for what any implementation must do: one that
// used Sluice's own packages would measure Sluice against itself.
func TestFloorsImportNoSluicePackage(t *testing.T) {
	files, err := filepath.Glob("floor/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no floor sources found (%v)", err)
	}
	for _, name := range files {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(path, "github.com/sluicehq/sluice") {
				t.Errorf("%s imports %s: a floor uses no Sluice package", name, path)
			}
		}
	}
}
