package docs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInternalsNamesAreReal: every file, folder and Go name the internals
// page mentions exists, so the page follows the code through renames.
func TestInternalsNamesAreReal(t *testing.T) {
	missing, err := Names("..", "./internals.md")
	require.NoError(t, err)
	assert.Empty(t, missing, "docs/internals.md names what the code no longer has")
}

// TestNamesFindsWhatIsNotThere runs the check on a tree made for it.
func TestNamesFindsWhatIsNotThere(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		path := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	}
	write("eng/eng.go", "package eng\n\ntype Engine struct{ Field int }\n\nconst Limit = 1\n\nfunc (e *Engine) Page() {}\n\nfunc Encode(s string) string { return s }\n")
	write("eng/eng_test.go", "package eng\n\nfunc (e *Engine) TestOnly() {}\n")
	write("page.md", "`eng/eng.go`, `eng/`, `Engine.Page`, `eng.Encode`, `eng.Engine.Page`, `eng.Limit`, `/calls/`, `_perPage`, `GET /x?a=b`\n"+
		"`eng/gone.go`, `gone/`, `Engine.Gone`, `eng.Decode`, `other.Encode`, `Engine.TestOnly`, `eng.Field`\n")
	missing, err := Names(dir, filepath.Join(dir, "page.md"))
	require.NoError(t, err)
	assert.Equal(t, []string{"eng/gone.go", "gone/", "Engine.Gone", "eng.Decode", "other.Encode", "Engine.TestOnly", "eng.Field"}, missing)
}

// TestNamedTestsExist: every test, benchmark, fuzz target and example
// that README.md, SECURITY.md and docs/*.md name (the brackets that show
// a behaviour) is declared in a _test.go file, so a claim cannot keep
// pointing at a test that was renamed, merged or moved away.
func TestNamedTestsExist(t *testing.T) {
	root := repoRoot(t)
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	require.NotEmpty(t, pages)
	for _, page := range append([]string{filepath.Join(root, "README.md"), filepath.Join(root, "SECURITY.md")}, pages...) {
		missing, err := TestNames(root, page)
		require.NoError(t, err)
		assert.Empty(t, missing, "%s names tests that do not exist", page)
	}
}

// TestTestNamesFindsWhatIsNotThere runs the check on a tree made for it.
func TestTestNamesFindsWhatIsNotThere(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		path := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	}
	write("eng/eng.go", "package eng\n\nfunc TestInCode() {}\n")
	write("eng/eng_test.go", "package eng\n\nimport \"testing\"\n\nfunc TestHere(t *testing.T) {}\n\nfunc BenchmarkHere(b *testing.B) {}\n\nfunc FuzzHere(f *testing.F) {}\n\nfunc Example_here() {}\n\ntype s struct{}\n\nfunc (s) TestMethod() {}\n")
	write("page.md", "[`TestHere`, `BenchmarkHere`, `FuzzHere`, `Example_here`] and `TestHere/sub` and TestBare\n"+
		"[`TestGone`, `BenchmarkGone`, `TestInCode`, `TestMethod`, `Example_gone`]\n")
	missing, err := TestNames(dir, filepath.Join(dir, "page.md"))
	require.NoError(t, err)
	assert.Equal(t, []string{"TestGone", "BenchmarkGone", "TestInCode", "TestMethod", "Example_gone"}, missing)
}

// repoRoot is the repository's root, the folder of go.mod above the
// test's, wherever this package sits in the tree.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(".")
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, dir, parent, "no go.mod above the test's folder")
		dir = parent
	}
}
