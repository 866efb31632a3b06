package engine_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDeps_SQLiteEmbedder checks that a program embedding the engine on
// SQLite (the engine package itself, and examples/embed) links neither the
// PostgreSQL driver, nor a cloud SDK, nor the OpenAI client: only the
// programs that import engine/pgengine, vault/bucketblobs or model/openai
// do.
func TestDeps_SQLiteEmbedder(t *testing.T) {
	t.Parallel()
	const module = "github.com/promptcanvas/promptcanvas"
	for _, pkg := range []string{module + "/engine", module + "/examples/embed"} {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		require.NoError(t, err, "go list -deps %s", pkg)
		deps := strings.Fields(string(out))
		assert.Contains(t, deps, module+"/store/sqlite", "%s embeds SQLite", pkg)
		for _, dep := range deps {
			for _, banned := range []string{module + "/store/postgres", module + "/engine/pgengine",
				module + "/vault/bucketblobs", module + "/model/openai", "github.com/jackc/", "github.com/aws/",
				"gocloud.dev/", "github.com/openai/"} {
				assert.False(t, strings.HasPrefix(dep, banned), "%s links %s", pkg, dep)
			}
		}
	}
}

// TestDeps_ImportsGoDown checks the direction of imports that
// docs/architecture.md states: each package imports only packages above it
// on the page's graph (a package's subpackages count as the package), the
// domain packages import canvas and queue alone of the module's packages,
// and the server reaches storage through the engine, never importing a
// store. internal/ helpers are imported from anywhere.
func TestDeps_ImportsGoDown(t *testing.T) {
	t.Parallel()
	const module = "github.com/promptcanvas/promptcanvas/"
	// rank is each top-level package's line on the graph, from the top.
	rank := map[string]int{"canvas": 0,
		"env": 1, "vault": 1, "queue": 1, "webhook": 1, "idempotency": 1, "retention": 1, "audit": 1,
		"model": 2, "credential": 3, "workflow": 3, "completion": 4, "testcase": 5, "experiment": 6, "review": 6,
		"client": 7, "store": 8, "engine": 9, "server": 10, "cmd": 11, "examples": 11, "tests": 11}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, module+"...").Output()
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	require.Greater(t, len(lines), 20, "the module's packages are listed")
	for _, line := range lines {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], module)
		top, _, _ := strings.Cut(pkg, "/")
		if top == "internal" {
			continue
		}
		r, ok := rank[top]
		require.True(t, ok, "%s has a place on the graph", pkg)
		for _, imp := range fields[1:] {
			dep, ok := strings.CutPrefix(imp, module)
			if !ok {
				continue
			}
			depTop, _, _ := strings.Cut(dep, "/")
			switch {
			case depTop == "internal" || depTop == top:
			case top == "server" && depTop == "store":
				t.Errorf("%s imports %s: the server reaches storage through the engine", pkg, dep)
			case r == 1:
				if depTop != "canvas" && dep != "queue" {
					t.Errorf("%s imports %s: a domain package imports canvas and queue only", pkg, dep)
				}
			case rank[depTop] >= r:
				t.Errorf("%s imports %s, which is not above it", pkg, dep)
			}
		}
	}
}
