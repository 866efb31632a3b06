package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	// mdLink is a Markdown link or image: [text](target) or ![alt](target).
	mdLink = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)\)`)
	// codeSpan is an inline code span.
	codeSpan = regexp.MustCompile("`([^`\n]+)`")
	// repoPath is a span that reads as a path in the repository: words
	// joined by slashes, nothing else.
	repoPath = regexp.MustCompile(`^\.?/?[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*/?$`)
	// goRun is a `go run` of a package of the repository.
	goRun = regexp.MustCompile(`go run (\./[A-Za-z0-9_./-]+)`)
	// goIdent is an exported Go identifier.
	goIdent = regexp.MustCompile(`^[A-Z][A-Za-z0-9_]*$`)
	// heading is a Markdown heading line.
	heading = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *$`)
)

// cutLast slices s around the last sep.
func cutLast(s, sep string) (before, after string, found bool) {
	if i := strings.LastIndex(s, sep); i >= 0 {
		return s[:i], s[i+len(sep):], true
	}
	return s, "", false
}

// docFiles returns README.md and docs/*.md, relative to root.
func docFiles(t *testing.T, root string) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	files := []string{"README.md"}
	for _, d := range docs {
		rel, err := filepath.Rel(root, d)
		require.NoError(t, err)
		files = append(files, rel)
	}
	return files
}

// withoutFences returns a Markdown text with its fenced code blocks blanked
// out, so that their contents are not read as links or code spans.
func withoutFences(text string) string {
	var b strings.Builder
	in := false
	for _, line := range strings.SplitAfter(text, "\n") {
		if strings.HasPrefix(line, "```") {
			in = !in
			b.WriteString("\n")
			continue
		}
		if in {
			b.WriteString("\n")
			continue
		}
		b.WriteString(line)
	}
	return b.String()
}

// anchors returns the anchors GitHub gives the headings of a Markdown text.
func anchors(text string) map[string]bool {
	set := map[string]bool{}
	for _, m := range heading.FindAllStringSubmatch(withoutFences(text), -1) {
		title := strings.ToLower(strings.ReplaceAll(m[1], "`", ""))
		var b strings.Builder
		for _, r := range title {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
				b.WriteRune(r)
			}
		}
		set[b.String()] = true
	}
	return set
}

// TestDocs_Paths checks that the documentation points only at what the
// repository holds: every relative link of README.md and docs/*.md (and the
// heading its #fragment names), every code span that reads as a path under
// one of the repository's top-level entries, and every `go run ./...`.
func TestDocs_Paths(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	entries, err := os.ReadDir(root)
	require.NoError(t, err)
	top := map[string]bool{}
	for _, e := range entries {
		top[e.Name()] = true
	}

	checked := 0
	for _, doc := range docFiles(t, root) {
		raw, err := os.ReadFile(filepath.Join(root, doc))
		require.NoError(t, err)
		text := string(raw)
		prose := withoutFences(text)

		for _, m := range mdLink.FindAllStringSubmatch(prose, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, frag, _ := strings.Cut(target, "#")
			file := filepath.Join(root, doc)
			if path != "" {
				file = filepath.Join(root, filepath.Dir(doc), path)
				checked++
				if _, err := os.Stat(file); !assert.NoError(t, err, "%s links to %s", doc, target) {
					continue
				}
			}
			if frag != "" && strings.HasSuffix(file, ".md") {
				linked, err := os.ReadFile(file)
				if assert.NoError(t, err) {
					assert.True(t, anchors(string(linked))[frag], "%s links to %s, a heading %s does not have", doc, target, path)
				}
			}
		}

		for _, m := range codeSpan.FindAllStringSubmatch(prose, -1) {
			span := m[1]
			if !repoPath.MatchString(span) || !strings.Contains(strings.Trim(span, "/"), "/") {
				continue
			}
			rel := strings.TrimPrefix(strings.TrimPrefix(span, "./"), "/")
			if !top[strings.Split(rel, "/")[0]] {
				continue // a media type, a URL path, a package path
			}
			checked++
			if _, err := os.Stat(filepath.Join(root, rel)); err != nil {
				// A Go identifier of a package: `store/storetest.Run`.
				if pkg, ident, ok := cutLast(rel, "."); ok && goIdent.MatchString(ident) {
					rel = pkg
				}
			}
			_, err := os.Stat(filepath.Join(root, rel))
			assert.NoError(t, err, "%s names `%s`, which is not in the repository", doc, span)
		}

		for _, m := range goRun.FindAllStringSubmatch(text, -1) {
			checked++
			assert.DirExists(t, filepath.Join(root, m[1]), "%s runs `go run %s`", doc, m[1])
		}
	}
	assert.Greater(t, checked, 20, "the test found the links it checks")
}

// TestDocs_Examples checks that the README mentions every program in
// examples/.
func TestDocs_Examples(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	mains, err := filepath.Glob(filepath.Join(root, "examples", "*", "main.go"))
	require.NoError(t, err)
	require.NotEmpty(t, mains)
	for _, m := range mains {
		name := filepath.Base(filepath.Dir(m))
		assert.Contains(t, string(readme), "examples/"+name, "the README does not mention examples/%s", name)
	}
}

// TestREADME_ConfigurationMatchesHelp checks that the README's
// configuration table and the help (envVars) list the same settings: every
// variable of the help is a row of the table with the same flag, and every
// row names variables and a flag the help knows.
func TestREADME_ConfigurationMatchesHelp(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	section := markdownSection(t, string(raw), "## Configuration")
	readme := map[string]string{} // variable → flag ("" when none)
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 6 || !strings.Contains(cells[2], "`") {
			continue // not a row of the table, or its head
		}
		flagName := strings.Trim(strings.TrimSpace(cells[1]), "`")
		for _, v := range codeSpan.FindAllStringSubmatch(cells[2], -1) {
			_, dup := readme[v[1]]
			assert.False(t, dup, "%s has one row", v[1])
			readme[v[1]] = flagName
		}
	}
	require.NotEmpty(t, readme, "the table is found")
	help := map[string]string{}
	for _, v := range envVars {
		help[v.name] = v.flag
	}
	for name, flagName := range help {
		got, ok := readme[name]
		if assert.True(t, ok, "the README's configuration table lacks %s, which the help lists", name) {
			assert.Equal(t, flagName, got, "the flag of %s", name)
		}
	}
	for name := range readme {
		_, ok := help[name]
		assert.True(t, ok, "the README's configuration table lists %s, which the help does not", name)
	}
}
