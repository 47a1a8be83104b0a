package docs

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
)

var (
	// linkRE finds inline links and images: [text](target "title").
	linkRE = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	// headingRE finds ATX headings.
	headingRE = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	// inlineLinkRE is a link inside a heading: its text counts for the slug.
	inlineLinkRE = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	codeSpanRE   = regexp.MustCompile("`+[^`]*`+")
)

// prose returns the lines of a Markdown text outside fenced code blocks.
func prose(text string) []string {
	var out []string
	fence := ""
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case fence != "":
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
		case strings.HasPrefix(trimmed, "```"), strings.HasPrefix(trimmed, "~~~"):
			fence = trimmed[:3]
		default:
			out = append(out, line)
		}
	}
	return out
}

// Slug is the anchor GitHub gives a heading's text: lower case, markup and
// punctuation gone (but for - and _), each space a hyphen.
func Slug(heading string) string {
	heading = inlineLinkRE.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Anchors returns the anchors of a Markdown text's headings, a repeated
// slug numbered as GitHub numbers it (-1, -2, ...).
func Anchors(text string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	for _, line := range prose(text) {
		m := headingRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		slug := Slug(m[1])
		if n := seen[slug]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
	}
	return anchors
}

// Links returns the targets of the links in a Markdown text's prose (not
// in code blocks or code spans). A link's text may wrap onto the next
// line, as prose does, so the lines of a paragraph are read as one.
func Links(text string) []string {
	var paragraphs []string
	var para []string
	for _, line := range append(prose(text), "") {
		if strings.TrimSpace(line) == "" {
			if len(para) > 0 {
				paragraphs = append(paragraphs, strings.Join(para, " "))
			}
			para = para[:0]
			continue
		}
		para = append(para, line)
	}
	var out []string
	for _, line := range paragraphs {
		line = codeSpanRE.ReplaceAllString(line, "")
		for _, m := range linkRE.FindAllStringSubmatch(line, -1) {
			out = append(out, m[1])
		}
	}
	return out
}

// CheckLinks reports each relative link of the Markdown file at path whose
// target does not exist, or whose #anchor names no heading of its target.
// Links with a scheme (https:, mailto:) are not checked.
func CheckLinks(path string) ([]string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var broken []string
	for _, link := range Links(string(raw)) {
		u, err := url.Parse(link)
		if err != nil {
			broken = append(broken, fmt.Sprintf("%s: %s: %v", path, link, err))
			continue
		}
		if u.Scheme != "" || u.Host != "" {
			continue
		}
		target := path
		if u.Path != "" {
			target = filepath.Join(filepath.Dir(path), filepath.FromSlash(u.Path))
		}
		if _, err := os.Stat(target); err != nil {
			broken = append(broken, fmt.Sprintf("%s: %s: no file %s", path, link, target))
			continue
		}
		if u.Fragment == "" {
			continue
		}
		if !strings.HasSuffix(target, ".md") {
			broken = append(broken, fmt.Sprintf("%s: %s: an anchor into %s, which is not Markdown", path, link, target))
			continue
		}
		text, err := os.ReadFile(target)
		if err != nil {
			return nil, err
		}
		if !Anchors(string(text))[u.Fragment] {
			broken = append(broken, fmt.Sprintf("%s: %s: %s has no heading with the anchor #%s", path, link, target, u.Fragment))
		}
	}
	return broken, nil
}
