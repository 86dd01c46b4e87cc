package kube

import (
	"go/ast"
	"go/parser"
	"go/token"
	"testing"
)

// decide is the face's pure step: it takes no context and reaches the API
// server through nothing it calls itself; writing what pods claim
// (ResourceClaims that the pods of one unit share) is confirm's, the
// apply step's, before anything is bound.
func TestDecideDoesNoIO(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "decide.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	writers := map[string]bool{"recheck": true, "confirm": true, "writeShared": true, "PreBind": true, "Background": true, "TODO": true}
	var found bool
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Name.Name != "decide" || fn.Recv != nil {
			continue
		}
		found = true
		for _, p := range fn.Type.Params.List {
			if sel, ok := p.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Context" {
				t.Errorf("decide takes a context (%s)", fset.Position(p.Pos()))
			}
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && writers[sel.Sel.Name] {
				t.Errorf("decide calls %s (%s): a write, or the context one needs", sel.Sel.Name, fset.Position(sel.Pos()))
			}
			return true
		})
	}
	if !found {
		t.Fatal("no func decide in decide.go")
	}
}
