package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Names checks the code names a page mentions in backticks against the
// repository at root: each path (a token with a '/' or a file suffix, such
// as translate/engine.go or caddymodule/) must exist, and each dotted Go
// name (Engine.Page, cursor.Encode, legacy.Body.AppendPage) must
// be declared: a function, a type, a variable, a constant or a method of
// that name, in the package the name starts with when it starts with one.
// It returns the names that are not real, so a page that describes the
// code cannot outlive a rename.
func Names(root, page string) (missing []string, err error) {
	raw, err := os.ReadFile(page)
	if err != nil {
		return nil, err
	}
	decls, err := declarations(root)
	if err != nil {
		return nil, err
	}
	for _, m := range codeSpan.FindAllStringSubmatch(string(raw), -1) {
		name := m[1]
		switch {
		case pathName.MatchString(name):
			if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(strings.TrimSuffix(name, "/")))); err != nil {
				missing = append(missing, name)
			}
		case goName.MatchString(name):
			if !declared(decls, name) {
				missing = append(missing, name)
			}
		}
	}
	return missing, nil
}

var (
	codeSpan = regexp.MustCompile("`([^`\n]+)`")
	// A repository path: words joined by '/', ending in a file suffix or
	// a '/'; no spaces, queries or leading '/' (those are URLs).
	pathName = regexp.MustCompile(`^[a-z][a-z0-9_]*(/[A-Za-z0-9_.-]+)*(/|\.(go|md|json))$`)
	// A dotted Go name: Type.Method, pkg.Name or pkg.Type.Method.
	goName     = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*){1,2}$`)
	fileSuffix = regexp.MustCompile(`\.(go|md|json)$`)
)

// declared reports whether a dotted name is declared: its last part is a
// function or type of the package its first part names, or a method of the
// type before it.
func declared(decls map[string]map[string]bool, name string) bool {
	if fileSuffix.MatchString(name) {
		return false
	}
	parts := strings.Split(name, ".")
	pkg, rest := "", parts
	if _, ok := decls[parts[0]]; ok && len(parts) > 1 {
		pkg, rest = parts[0], parts[1:]
	}
	want := strings.Join(rest, ".") // Type.Method, or Name
	for p, names := range decls {
		if (pkg == "" || p == pkg) && names[want] {
			return true
		}
	}
	return false
}

// declarations maps each package's name (its folder's last element) to
// the functions, types, package-level variables and constants, and
// Type.Method names its non-test files declare, as go/parser reads them.
func declarations(root string) (map[string]map[string]bool, error) {
	decls := map[string]map[string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		pkg := filepath.Base(filepath.Dir(path))
		if decls[pkg] == nil {
			decls[pkg] = map[string]bool{}
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				name := d.Name.Name
				if d.Recv != nil && len(d.Recv.List) == 1 {
					name = receiver(d.Recv.List[0].Type) + "." + name
				}
				decls[pkg][name] = true
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch spec := spec.(type) {
					case *ast.TypeSpec:
						decls[pkg][spec.Name.Name] = true
					case *ast.ValueSpec:
						for _, n := range spec.Names {
							decls[pkg][n.Name] = true
						}
					}
				}
			}
		}
		return nil
	})
	return decls, err
}

// receiver returns the type name of a method's receiver: T of T, *T, T[K]
// or *T[K].
func receiver(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// testNameRE finds a test, benchmark, fuzz target or example named in a
// code span: `TestX`, `BenchmarkX`, `FuzzX`, `Example_x`.
var testNameRE = regexp.MustCompile("`((?:Test|Benchmark|Fuzz)[A-Z][A-Za-z0-9_]*|Example_[A-Za-z0-9_]+)`")

// TestNames returns the tests a page names in code spans (the brackets
// that show a behaviour: [`TestX`, `TestY`]) that no _test.go file under
// root declares, so that a page cannot point at a test that was renamed
// or merged away.
func TestNames(root, page string) (missing []string, err error) {
	raw, err := os.ReadFile(page)
	if err != nil {
		return nil, err
	}
	declared := map[string]bool{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil {
				declared[fn.Name.Name] = true
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, m := range testNameRE.FindAllStringSubmatch(string(raw), -1) {
		if !declared[m[1]] {
			missing = append(missing, m[1])
		}
	}
	return missing, nil
}
