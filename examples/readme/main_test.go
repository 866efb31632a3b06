package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRun runs every snippet of the README.
func TestRun(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	assert.Equal(t, "embedded: published\nclient: completed\nopenai: completed\nprompts: served\n", out.String())
}

// quoted lists, per document, the regions of this package's files that
// its ```go blocks quote, in order.
var quoted = []struct {
	doc     string
	regions []string
}{
	{"README.md", []string{"claude", "embed", "client", "prompts"}},
	{"docs/api.md", []string{"openai"}},
}

// TestREADME_QuotesSnippets checks that each ```go block of the README
// (and of docs/api.md) is, verbatim, the region of this package's files
// (or of examples/claude's) it quotes: the lines between "// README: NAME" and "// README: end",
// without the indentation they share, several regions of one name joined by
// a blank line.
func TestREADME_QuotesSnippets(t *testing.T) {
	regions := map[string][]string{}
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	// The README's Claude snippet is quoted from the program that runs it.
	claude, err := filepath.Glob(filepath.Join("..", "claude", "*.go"))
	require.NoError(t, err)
	files = append(files, claude...)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		var name string
		var lines []string
		for _, line := range strings.Split(string(src), "\n") {
			marker, isMarker := strings.CutPrefix(strings.TrimSpace(line), "// README: ")
			switch {
			case isMarker && marker == "end":
				require.NotEmpty(t, name, "%s: an end without a start", f)
				regions[name] = append(regions[name], dedent(lines))
				name, lines = "", nil
			case isMarker:
				require.Empty(t, name, "%s: region %s starts inside %s", f, marker, name)
				name = marker
			case name != "":
				lines = append(lines, line)
			}
		}
		require.Empty(t, name, "%s: region %s has no end", f, name)
	}
	goBlock := regexp.MustCompile("(?ms)^```go\n(.*?)^```$")
	for _, q := range quoted {
		raw, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(q.doc)))
		require.NoError(t, err)
		blocks := goBlock.FindAllStringSubmatch(string(raw), -1)
		require.Len(t, blocks, len(q.regions), "every Go block of %s quotes a region of examples/readme", q.doc)
		for i, name := range q.regions {
			require.Contains(t, regions, name)
			assert.Equal(t, strings.Join(regions[name], "\n"), blocks[i][1], "%s's Go block %d quotes region %s", q.doc, i+1, name)
		}
	}
}

// dedent removes the leading tabs all non-blank lines share and the blank
// lines that end the region, and ends each line with a newline.
func dedent(lines []string) string {
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	common := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, "\t"))
		if common < 0 || n < common {
			common = n
		}
	}
	var b strings.Builder
	for _, l := range lines {
		if len(l) >= common && common > 0 {
			l = l[common:]
		}
		b.WriteString(l + "\n")
	}
	return b.String()
}
