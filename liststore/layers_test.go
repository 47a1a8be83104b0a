package liststore

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// decls is what a package's non-test files declare and import.
type decls struct {
	imports  map[string]bool
	exported map[string]bool // Name, or Recv.Name for a method
	aliases  []string
}

func parsePackage(t *testing.T, dir string) decls {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	d := decls{imports: map[string]bool{}, exported: map[string]bool{}}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			d.imports[path] = true
		}
		for _, decl := range f.Decls {
			switch decl := decl.(type) {
			case *ast.FuncDecl:
				name := decl.Name.Name
				if decl.Recv != nil {
					typ := decl.Recv.List[0].Type
					if star, ok := typ.(*ast.StarExpr); ok {
						typ = star.X
					}
					if ix, ok := typ.(*ast.IndexExpr); ok {
						typ = ix.X
					}
					name = typ.(*ast.Ident).Name + "." + name
				}
				if decl.Name.IsExported() {
					d.exported[name] = true
				}
			case *ast.GenDecl:
				for _, spec := range decl.Specs {
					if ts, ok := spec.(*ast.TypeSpec); ok {
						if ts.Name.IsExported() {
							d.exported[ts.Name.Name] = true
						}
						if ts.Assign.IsValid() {
							d.aliases = append(d.aliases, ts.Name.Name)
						}
					}
				}
			}
		}
	}
	return d
}

// TestStoresBelowTheEngine: the contracts between the engine and the
// stores that serve it are liststore's, so a store shared by instances
// (redisstore) needs the engine for nothing and sits beside it, and no
// package names another's types under its own (issue 45). Production code
// that only tests call is not API: the tests reach it by test files of
// their own package or by liststoretest.
func TestStoresBelowTheEngine(t *testing.T) {
	const mod = "github.com/helpdesk-gateway/gateway/"
	translate := parsePackage(t, "../translate")
	redisstore := parsePackage(t, "../redisstore")
	liststore := parsePackage(t, ".")

	assert.False(t, redisstore.imports[mod+"translate"], "redisstore imports translate")
	assert.True(t, redisstore.imports[mod+"liststore"], "redisstore takes the store contracts from liststore")
	for path := range liststore.imports {
		assert.False(t, strings.HasPrefix(path, mod) && !strings.HasPrefix(path, mod+"liststore/internal/"),
			"liststore imports %s: it sits below the engine and the stores", path)
	}
	for _, contract := range []string{"WalkStore", "AheadClaimer", "WindowCopier", "CutQuery", "CutResult",
		"Walked", "Walk", "StoredWindow", "WindowData", "WindowStats", "NewStoredWindow"} {
		assert.True(t, liststore.exported[contract], "liststore declares %s", contract)
		assert.False(t, translate.exported[contract], "translate declares %s again", contract)
	}
	for pkg, d := range map[string]decls{"translate": translate, "redisstore": redisstore, "liststore": liststore} {
		assert.Empty(t, d.aliases, "type aliases in %s", pkg)
	}

	testOnly := map[string][]string{
		"translate": {"Engine.PageSizeLimit", "NewIndex", "Index.Len"},
		"liststore": {"NewMemory", "Memory.TrustWalks", "StoredWindow.Bytes"},
	}
	for _, name := range testOnly["translate"] {
		assert.False(t, translate.exported[name], "translate exports %s, which only tests call", name)
	}
	for _, name := range testOnly["liststore"] {
		assert.False(t, liststore.exported[name], "liststore exports %s, which only tests call", name)
	}
}
