package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/golang-jwt/jwt/v5"
	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/server"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The cached reads (API keys, the served version) must be fresh on the very
// next request after any commit. These tests read once to fill the caches,
// change the data, and read again.

// served reads the version ec's environment serves, with token.
func (ec *envCanvas) served(t *testing.T, token, envName string) *testResponse {
	t.Helper()
	return ec.e.Do("GET", "/environment/version?"+ec.target(envName), token, nil)
}

// mustServed reads the served version and requires a 200.
func (ec *envCanvas) mustServed(t *testing.T, envName string) map[string]any {
	t.Helper()
	res := ec.served(t, ec.e.Viewer, envName)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	return res.Map(t)
}

func TestEnvironment_VersionFresh(t *testing.T) {
	t.Run("Publish", func(t *testing.T) {
		e := newTestEnv(t)
		ec := mustEnvCanvas(t, e, 2)
		ec.mustPublish(t, "production", 1)
		ec.mustServed(t, "production")
		assert.Equal(t, ec.Versions[0].ID, ec.mustServed(t, "production")["id"])
		ec.mustPublish(t, "production", 2)
		assert.Equal(t, ec.Versions[1].ID, ec.mustServed(t, "production")["id"])
	})

	t.Run("Rollback", func(t *testing.T) {
		e := newTestEnv(t)
		ec := mustEnvCanvas(t, e, 2)
		ec.mustCreateEnv(t, "staging")
		ec.mustPublish(t, "staging", 1)
		ec.mustPublish(t, "staging", 2)
		ec.mustServed(t, "staging")
		assert.Equal(t, ec.Versions[1].ID, ec.mustServed(t, "staging")["id"])
		ec.mustPublish(t, "staging", 1)
		assert.Equal(t, ec.Versions[0].ID, ec.mustServed(t, "staging")["id"])
	})

	t.Run("VersionPatch", func(t *testing.T) {
		e := newTestEnv(t)
		ec := mustEnvCanvas(t, e, 1)
		ec.mustPublish(t, "production", 1)
		ec.mustServed(t, "production")
		assert.Equal(t, "Prompt 1 for {{name}}", ec.mustServed(t, "production")["content"])
		res := e.Do("PATCH", "/prompt-version/"+ec.Versions[0].ID, e.Editor, map[string]any{
			"content": "Changed for {{name}}", "configuration": map[string]any{"temperature": 0.9},
		})
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
		v := ec.mustServed(t, "production")
		assert.Equal(t, "Changed for {{name}}", v["content"])
		assert.Equal(t, 0.9, v["configuration"].(map[string]any)["temperature"])
	})

	t.Run("WithdrawnFromProduction", func(t *testing.T) {
		e := newTestEnv(t)
		ec := mustEnvCanvas(t, e, 1)
		ec.mustPublish(t, "production", 1)
		ec.mustServed(t, "production")
		res := e.Do("PATCH", "/prompt-version/"+ec.Versions[0].ID, e.Editor, map[string]any{"promoted": false})
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
		res = ec.served(t, e.Viewer, "production")
		assert.Equal(t, http.StatusNotFound, res.Status, "%s", res.Body)
	})

	t.Run("CanvasMovedToAnotherProject", func(t *testing.T) {
		e := newTestEnv(t)
		ec := mustEnvCanvas(t, e, 1)
		ec.mustPublish(t, "production", 1)
		scoped := e.Key(canvas.RoleViewer, ec.Project.ID)
		require.Equal(t, http.StatusOK, ec.served(t, scoped, "production").Status)
		require.Equal(t, http.StatusOK, ec.served(t, scoped, "production").Status)

		other := &canvas.Project{Name: "other", WorkspaceID: e.Workspace.ID}
		require.NoError(t, e.Store.CreateProject(context.Background(), other))
		res := e.Do("PATCH", "/prompt/"+ec.Canvas.ID, e.Editor, map[string]any{"projectId": other.ID})
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)

		res = ec.served(t, scoped, "production")
		assert.Equal(t, http.StatusForbidden, res.Status, "%s", res.Body)
		assert.Equal(t, http.StatusOK, ec.served(t, e.Viewer, "production").Status, "an unscoped key still reads it")
	})

	t.Run("AccessCheckedForEveryCaller", func(t *testing.T) {
		e := newTestEnv(t)
		ec := mustEnvCanvas(t, e, 1)
		ec.mustPublish(t, "production", 1)
		// The unscoped viewer fills the cache; a key scoped to another
		// project of the same workspace must still be refused.
		ec.mustServed(t, "production")
		ec.mustServed(t, "production")
		scoped := e.Key(canvas.RoleViewer, "00000000-0000-4000-8000-000000000000")
		ec.mustServed(t, "production") // cached again after the key's commit
		res := ec.served(t, scoped, "production")
		assert.Equal(t, http.StatusForbidden, res.Status, "%s", res.Body)
	})

	t.Run("CanvasDeleted", func(t *testing.T) {
		e := newTestEnv(t)
		ec := mustEnvCanvas(t, e, 1)
		ec.mustPublish(t, "production", 1)
		ec.mustServed(t, "production")
		ec.mustServed(t, "production")
		res := e.Do("DELETE", "/prompt/"+ec.Canvas.ID, e.Editor, nil)
		require.Equal(t, http.StatusNoContent, res.Status, "%s", res.Body)
		res = ec.served(t, e.Viewer, "production")
		assert.Equal(t, http.StatusNotFound, res.Status, "%s", res.Body)
	})
}

func TestAuthenticator_Fresh(t *testing.T) {
	t.Run("RevokedByAnotherProcess", func(t *testing.T) {
		e := newTestEnv(t)
		path := e.Path
		ec := mustEnvCanvas(t, e, 1)
		ec.mustPublish(t, "production", 1)
		token := e.Key(canvas.RoleViewer)
		require.Equal(t, http.StatusOK, ec.served(t, token, "production").Status)
		require.Equal(t, http.StatusOK, ec.served(t, token, "production").Status)

		other, err := sqlite.Open(context.Background(), path)
		require.NoError(t, err)
		defer other.Close()
		key, err := other.GetAPIKeyByHash(context.Background(), canvas.HashToken(token))
		require.NoError(t, err)
		require.NoError(t, other.RevokeAPIKey(context.Background(), key.ID))

		assertUnauthorized(t, ec.served(t, token, "production"))
		assert.Equal(t, http.StatusOK, ec.served(t, e.Viewer, "production").Status, "other keys still work")
	})

	t.Run("JWTWorkspaceCreated", func(t *testing.T) {
		// Whether a JWT's workspace exists is cached, the answer "no" too:
		// a workspace created since is seen on the next request.
		secret := []byte("a-long-enough-test-secret-of-32-bytes!")
		e := newJWTEnv(t, server.AuthOptions{JWTSecrets: [][]byte{secret}})
		ws := &canvas.Workspace{ID: "7f0e6d3a-4a63-4d3b-9c55-0a4f4d0f4a11", Name: "later"}
		token := mustSign(t, jwt.SigningMethodHS256, secret, "", e.claims(canvas.RoleViewer, func(c jwt.MapClaims) {
			c["workspace_id"] = ws.ID
		}))
		assertUnauthorized(t, e.Do("GET", "/projects", token, nil))
		assertUnauthorized(t, e.Do("GET", "/projects", token, nil))
		require.NoError(t, e.Store.CreateWorkspace(context.Background(), ws))
		res := e.Do("GET", "/projects", token, nil)
		assert.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	})
}

// TestAuthenticator_Cache checks that a valid key is read from the store
// once while nothing changes, and again after any commit.
func TestAuthenticator_Cache(t *testing.T) {
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "canvas.db"))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	ws := &canvas.Workspace{Name: "test"}
	require.NoError(t, db.CreateWorkspace(ctx, ws))
	token, key := canvas.NewAPIKey(ws.ID, canvas.RoleViewer, []string{"p1"})
	require.NoError(t, db.CreateAPIKey(ctx, key))

	cs := &countingStore{DB: db}
	auth := server.NewAuthenticator(server.AuthOptions{Store: cs, Changes: cs})
	authenticate := func() (*canvas.Principal, error) {
		req := httptest.NewRequest("GET", "/projects", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		return auth.Authenticate(req)
	}

	p, err := authenticate()
	require.NoError(t, err)
	assert.Equal(t, []string{"p1"}, p.Projects)
	p.Projects[0] = "changed by the caller"
	p, err = authenticate()
	require.NoError(t, err)
	assert.Equal(t, []string{"p1"}, p.Projects, "each caller gets its own principal")
	assert.Equal(t, key.ID, p.KeyID)
	assert.EqualValues(t, 1, cs.keyReads.Load(), "served from the cache")

	require.NoError(t, db.RevokeAPIKey(ctx, key.ID))
	_, err = authenticate()
	assert.Equal(t, canvas.EUNAUTHORIZED, canvas.ErrorCode(err))
	_, err = authenticate()
	assert.Equal(t, canvas.EUNAUTHORIZED, canvas.ErrorCode(err))
	assert.EqualValues(t, 3, cs.keyReads.Load(), "refusals are not cached")
}

// countingStore counts the reads the caches save; embedding the DB keeps
// its DataVersion, so the services cache over it.
type countingStore struct {
	*sqlite.DB
	keyReads atomic.Int64
}

func (s *countingStore) GetAPIKeyByHash(ctx context.Context, hash string) (*canvas.APIKey, error) {
	s.keyReads.Add(1)
	return s.DB.GetAPIKeyByHash(ctx, hash)
}
