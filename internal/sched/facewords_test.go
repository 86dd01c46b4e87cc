package sched

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// faceDirs are the faces' packages, which word the core's reasons and
// must not read them back.
var faceDirs = []string{"../kube", "../server", "../sim", "../../cmd/corral"}

// readsWords are the strings functions that look inside a text.
var readsWords = map[string]bool{
	"Contains": true, "HasPrefix": true, "HasSuffix": true, "Cut": true, "CutPrefix": true, "CutSuffix": true,
	"Index": true, "Split": true, "SplitN": true, "Fields": true, "TrimPrefix": true, "TrimSuffix": true,
	"Replace": true, "ReplaceAll": true, "Count": true, "EqualFold": true,
}

// reasonFields are the names under which the core's reasons reach a face:
// sched.Wait's Reason, Cause and Then, gang.Unfit's lines.
var reasonFields = map[string]bool{"Reason": true, "Reasons": true, "Cause": true, "Then": true, "Lines": true}

// wordsAllowed are the reads a face may make, each with why: they are of
// texts that are not the core's reasons.
var wordsAllowed = map[string]string{
	// squeue's REASON column: the server's eligibility verdict (held,
	// dependencies) already starts with its Slurm code.
	"cmd/corral/queue.go:reasonOf": "an eligibility verdict, not a core reason",
}

// TestFacesDoNotParseReasons checks that no face looks inside the core's
// reasons with the strings package: the core gives codes with counts
// (gang.Unfit, sched.Wait), and each face words them.
func TestFacesDoNotParseReasons(t *testing.T) {
	for _, dir := range faceDirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			for _, at := range reasonReads(t, path) {
				t.Errorf("%s reads a reason's text; word the core's codes instead (gang.Unfit.Format, sched.Wait.Unfit)", at)
			}
		}
	}
}

// reasonReads lists "file:line func" for each strings call in path whose
// text is a reason field, leaving out those wordsAllowed allows.
func reasonReads(t *testing.T, path string) []string {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, 0)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	rel := strings.TrimPrefix(filepath.ToSlash(path), "../../")
	rel = strings.TrimPrefix(rel, "../")
	if !strings.HasPrefix(rel, "cmd/") {
		rel = "internal/" + rel
	}
	var out []string
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		if _, ok := wordsAllowed[rel+":"+fn.Name.Name]; ok {
			continue
		}
		ast.Inspect(fn, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok && isStringsRead(call) && len(call.Args) > 0 && namesReason(call.Args[0]) {
				out = append(out, fset.Position(call.Pos()).String()+" "+fn.Name.Name)
			}
			return true
		})
	}
	return out
}

func isStringsRead(call *ast.CallExpr) bool {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "strings" && readsWords[sel.Sel.Name]
}

// namesReason reports whether e is a reason field (w.Reason, u.Lines()
// ...), or an index or join of one.
func namesReason(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.SelectorExpr:
		return reasonFields[e.Sel.Name]
	case *ast.CallExpr:
		if sel, ok := e.Fun.(*ast.SelectorExpr); ok && reasonFields[sel.Sel.Name] {
			return true
		}
		for _, a := range e.Args {
			if namesReason(a) {
				return true
			}
		}
	case *ast.IndexExpr:
		return namesReason(e.X)
	case *ast.ParenExpr:
		return namesReason(e.X)
	}
	return false
}
