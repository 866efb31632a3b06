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
