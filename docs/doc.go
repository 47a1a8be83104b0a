// Package docs checks the repository's Markdown documentation (README.md
// and docs/*.md): its tests fail on a relative link whose file, or whose
// #anchor's heading, does not exist.
package docs
