package server_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/credential"
	"github.com/promptcanvas/promptcanvas/engine"
	"github.com/promptcanvas/promptcanvas/engine/pgengine"
	"github.com/promptcanvas/promptcanvas/internal/pgtest"
	"github.com/promptcanvas/promptcanvas/server"
)

// credentialBody is a credential as the API answers it.
type credentialBody struct {
	ID         string         `json:"id"`
	Name       string         `json:"name"`
	Provider   string         `json:"provider"`
	BaseURL    *string        `json:"baseUrl"`
	ProjectIDs []string       `json:"projectIds"`
	Settings   map[string]any `json:"settings"`
	KeyHint    *string        `json:"keyHint"`
}

func TestCredentials_HTTP(t *testing.T) {
	t.Parallel()
	e := newFullEnv(t)
	p1 := mustProjectID(t, e.testEnv, "p1")
	const key = "sk-ant-api03-HTTPdistinctiveKEY-7f3e"

	r := e.Do(http.MethodPost, "/credentials", e.Admin, map[string]any{"name": "Claude", "provider": "anthropic",
		"apiKey": key, "settings": map[string]any{"timeoutSeconds": 60, "headers": map[string]string{"anthropic-beta": "x"}}})
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	assert.NotContains(t, string(r.Body), key, "the answer to create never holds the key")
	assert.NotContains(t, r.Map(t), "apiKey")
	var c credentialBody
	r.JSON(t, &c)
	assert.Equal(t, "…7f3e", *c.KeyHint)
	assert.Nil(t, c.ProjectIDs)
	assert.Equal(t, float64(60), c.Settings["timeoutSeconds"])

	t.Run("ReadAsViewerAndEditor", func(t *testing.T) {
		for _, token := range []string{e.Viewer, e.Editor} {
			r := e.Do(http.MethodGet, "/credentials/"+c.ID, token, nil)
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			assert.NotContains(t, string(r.Body), key)
		}
		r := e.Do(http.MethodPost, "/credentials", e.Editor, map[string]any{"name": "x", "provider": "openai", "apiKey": "k"})
		assert.Equal(t, http.StatusForbidden, r.Status)
	})
	t.Run("ListFilters", func(t *testing.T) {
		r := e.Do(http.MethodPost, "/credentials", e.Admin, map[string]any{"name": "ollama", "provider": "openai-compatible",
			"baseUrl": "http://localhost:11434/v1", "projectIds": []string{p1}})
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		assert.Nil(t, r.Map(t)["keyHint"], "no key, no hint")

		var page struct {
			Data []credentialBody `json:"data"`
			Meta struct {
				TotalCount int `json:"totalCount"`
			} `json:"meta"`
		}
		r = e.Do(http.MethodGet, "/credentials?provider=openai-compatible", e.Viewer, nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		r.JSON(t, &page)
		require.Len(t, page.Data, 1)
		assert.Equal(t, "ollama", page.Data[0].Name)
		r = e.Do(http.MethodGet, "/credentials?projectId="+p1+"&limit=1", e.Viewer, nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		r.JSON(t, &page)
		assert.Equal(t, 2, page.Meta.TotalCount)
		r = e.Do(http.MethodGet, "/credentials?provider=mistral", e.Viewer, nil)
		assert.Equal(t, http.StatusUnprocessableEntity, r.Status)
	})
	t.Run("PatchRotatesAndMerges", func(t *testing.T) {
		const rotated = "sk-ant-api03-ROTATEDdistinctive-a1b2"
		r := e.Do(http.MethodPatch, "/credentials/"+c.ID, e.Admin, map[string]any{"apiKey": rotated,
			"settings": map[string]any{"timeoutSeconds": nil, "maxConcurrency": 4}})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		assert.NotContains(t, string(r.Body), rotated)
		var got credentialBody
		r.JSON(t, &got)
		assert.Equal(t, "…a1b2", *got.KeyHint)
		assert.Equal(t, map[string]any{"maxConcurrency": float64(4), "headers": map[string]any{"anthropic-beta": "x"}}, got.Settings)
		opened, _, err := e.Engine.Credentials.Open(context.Background(), e.Workspace.ID, c.ID)
		require.NoError(t, err)
		assert.Equal(t, rotated, opened.APIKey)

		r = e.Do(http.MethodPatch, "/credentials/"+c.ID, e.Admin, map[string]any{"settings": map[string]any{"region": "x"}})
		assert.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
		r = e.Do(http.MethodPatch, "/credentials/"+c.ID, e.Admin, map[string]any{"apiKey": nil})
		assert.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
	})
	t.Run("ValidationListsEveryProblem", func(t *testing.T) {
		r := e.Do(http.MethodPost, "/credentials", e.Admin, map[string]any{"name": "az", "provider": "azure-openai",
			"apiKey": "   ", "settings": map[string]any{"region": "eu", "timeoutSeconds": 0}})
		require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
		var body struct {
			Details []struct{ Path, Message string } `json:"details"`
		}
		r.JSON(t, &body)
		var paths []string
		for _, d := range body.Details {
			paths = append(paths, d.Path)
		}
		for _, want := range []string{"/json/apiKey", "/json/settings/timeoutSeconds", "/json/baseUrl"} {
			assert.True(t, containsPrefix(paths, want), "%s in %v", want, paths)
		}
		assert.NotContains(t, string(r.Body), "   \"", "the refused key is not echoed")
	})
	t.Run("Conflict", func(t *testing.T) {
		r := e.Do(http.MethodPost, "/credentials", e.Admin, map[string]any{"name": "Claude", "provider": "openai", "apiKey": "k"})
		assert.Equal(t, http.StatusConflict, r.Status, "%s", r.Body)
		assert.Equal(t, canvas.ECONFLICT, r.Code(t))
	})
	t.Run("Models", func(t *testing.T) {
		for _, name := range []string{"llama3.1:8b", "anthropic.claude-sonnet-4-5-20250929-v1:0", "gemini-2.5-pro@001",
			"meta-llama%2FLlama-3.1-8B"} {
			r := e.Do(http.MethodPut, "/models/"+name, e.Admin, map[string]any{"provider": "openai-compatible",
				"inputPerMillion": 0.5, "outputPerMillion": 1.5})
			require.Equal(t, http.StatusOK, r.Status, "%s: %s", name, r.Body)
			assert.Equal(t, "workspace", r.Map(t)["source"])
		}
		var page struct {
			Data []map[string]any `json:"data"`
		}
		r := e.Do(http.MethodGet, "/models?provider=openai-compatible&limit=100", e.Viewer, nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		r.JSON(t, &page)
		var names []string
		for _, m := range page.Data {
			names = append(names, m["name"].(string))
		}
		assert.Contains(t, names, "meta-llama/Llama-3.1-8B", "an escaped slash is part of the name")
		assert.Contains(t, names, "llama3.1:8b")

		price, ok, err := e.Engine.Credentials.Price(context.Background(), e.Workspace.ID, "anthropic.claude-sonnet-4-5-20250929-v1:0")
		require.NoError(t, err)
		require.True(t, ok)
		assert.Equal(t, 0.5, price.InputPerMillion)

		r = e.Do(http.MethodDelete, "/models/meta-llama%2FLlama-3.1-8B", e.Admin, nil)
		assert.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
		r = e.Do(http.MethodDelete, "/models/meta-llama%2FLlama-3.1-8B", e.Admin, nil)
		assert.Equal(t, http.StatusNotFound, r.Status, "%s", r.Body)
		r = e.Do(http.MethodPut, "/models/gpt-5", e.Admin, map[string]any{"provider": "openai", "inputPerMillion": 10001,
			"outputPerMillion": -1})
		assert.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
		r = e.Do(http.MethodPut, "/models/gpt-5", e.Editor, map[string]any{"provider": "openai", "inputPerMillion": 1,
			"outputPerMillion": 1})
		assert.Equal(t, http.StatusForbidden, r.Status, "%s", r.Body)
	})
	t.Run("SlashUnescaped", func(t *testing.T) {
		// Sent as it is, a slash reaches the same name; the document's
		// router cannot match it, so this request goes around the harness.
		req, err := http.NewRequest(http.MethodDelete, e.URL+"/models/meta-llama/Llama-3.3-70B", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+e.Admin)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusNotFound, resp.StatusCode, "routed, and no such override")
	})
	t.Run("DeleteThenGone", func(t *testing.T) {
		r := e.Do(http.MethodDelete, "/credentials/"+c.ID, e.Admin, nil)
		require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
		r = e.Do(http.MethodGet, "/credentials/"+c.ID, e.Admin, nil)
		assert.Equal(t, http.StatusNotFound, r.Status)
	})
}

// TestCredentials_DocumentRefusesWhatServerRefuses checks that
// openapi.json states the credential rules a client can check before
// sending.
func TestCredentials_DocumentRefusesWhatServerRefuses(t *testing.T) {
	t.Parallel()
	e := newFullEnv(t)
	for _, tc := range []struct {
		name, method, path string
		body               map[string]any
	}{
		{"KeyRequired", "POST", "/credentials", map[string]any{"name": "a", "provider": "anthropic"}},
		{"AzureNeedsAPIVersion", "POST", "/credentials", map[string]any{"name": "a", "provider": "azure-openai",
			"apiKey": "k", "baseUrl": "https://acme.openai.azure.com"}},
		{"BedrockNeedsRegion", "POST", "/credentials", map[string]any{"name": "a", "provider": "bedrock", "apiKey": "k"}},
		{"VertexNeedsProject", "POST", "/credentials", map[string]any{"name": "a", "provider": "gemini", "apiKey": "k",
			"settings": map[string]any{"backend": "vertex"}}},
		{"ForeignSetting", "POST", "/credentials", map[string]any{"name": "a", "provider": "openai", "apiKey": "k",
			"settings": map[string]any{"region": "us-east-1"}}},
		{"CompatibleNeedsBaseURL", "POST", "/credentials", map[string]any{"name": "a", "provider": "openai-compatible"}},
		{"BaseURLWithUser", "POST", "/credentials", map[string]any{"name": "a", "provider": "openai", "apiKey": "k",
			"baseUrl": "https://user:pw@example.com"}},
		{"KeyInHeader", "POST", "/credentials", map[string]any{"name": "a", "provider": "openai", "apiKey": "k",
			"settings": map[string]any{"headers": map[string]string{"Authorization": "Bearer k"}}}},
		{"NoProjects", "POST", "/credentials", map[string]any{"name": "a", "provider": "openai", "apiKey": "k",
			"projectIds": []string{}}},
		{"BlankKey", "PATCH", "/credentials/00000000-0000-4000-8000-000000000000", map[string]any{"apiKey": " "}},
		{"PriceTooHigh", "PUT", "/models/gpt-5", map[string]any{"provider": "openai", "inputPerMillion": 10001,
			"outputPerMillion": 1}},
		{"PriceProvider", "PUT", "/models/gpt-5", map[string]any{"provider": "mistral", "inputPerMillion": 1,
			"outputPerMillion": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.Do(tc.method, tc.path, e.Admin, tc.body)
			require.Equal(t, http.StatusUnprocessableEntity, r.Status, "the server refuses it: %s", r.Body)
			raw, err := json.Marshal(tc.body)
			require.NoError(t, err)
			assert.Error(t, documentRefuses(t, tc.method, tc.path, raw), "openapi.json refuses it too")
		})
	}
}

func containsPrefix(list []string, prefix string) bool {
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}

// keyTraces returns the forms in which a key could be found in a file: the
// key itself, and the middle of its standard and URL-safe base64 at each
// of the three alignments it may have inside a longer encoded value, and
// its hex.
func keyTraces(key string) [][]byte {
	out := [][]byte{[]byte(key), []byte(hex.EncodeToString([]byte(key)))}
	for shift := range 3 {
		b := append(bytes.Repeat([]byte{'x'}, shift), key...)
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
			s := enc.EncodeToString(b)
			// Drop the characters that depend on the bytes around the key.
			out = append(out, []byte(s[4:len(s)-4]))
		}
	}
	return out
}

// requireNoTrace fails when data holds a trace of a key.
func requireNoTrace(t *testing.T, where string, data []byte, keys ...string) {
	t.Helper()
	for _, key := range keys {
		for _, trace := range keyTraces(key) {
			assert.False(t, bytes.Contains(data, trace), "%s holds the key %q as %q", where, key, trace)
		}
	}
}

// leakyKeys are keys distinctive enough to be found anywhere, and long
// enough that their base64 middles are too.
var leakyKeys = []string{"sk-ant-LEAKCHECK-2b7e151628aed2a6abf71589", "sk-proj-LEAKCHECK-rotated-3ad77bb40d7a3660",
	"AIzaLEAKCHECK-deleted-f69f2445df4f9b17ad2b"}

// storeKeysThroughAPI creates, rotates and deletes credentials holding
// leakyKeys through the HTTP API of an engine, as an admin of a fresh
// workspace, and checks the engine opens the live ones.
func storeKeysThroughAPI(t *testing.T, eng *engine.Engine) {
	t.Helper()
	ctx := context.Background()
	ws := &canvas.Workspace{Name: "leak"}
	require.NoError(t, eng.Store.CreateWorkspace(ctx, ws))
	token, apiKey := canvas.NewAPIKey(ws.ID, canvas.RoleAdmin, nil)
	require.NoError(t, eng.Store.CreateAPIKey(ctx, apiKey))
	h, err := server.New(server.Options{Engine: eng, Auth: server.NewAuthenticator(server.AuthOptions{Store: eng.Store,
		Changes: eng.Changes})})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	e := &testEnv{t: t, URL: srv.URL, Admin: token}

	r := e.Do(http.MethodPost, "/credentials", token, map[string]any{"name": "claude", "provider": "anthropic", "apiKey": leakyKeys[0]})
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	kept := r.Map(t)["id"].(string)
	r = e.Do(http.MethodPost, "/credentials", token, map[string]any{"name": "gpt", "provider": "openai", "apiKey": "sk-first-value-0000"})
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	rotatedID := r.Map(t)["id"].(string)
	r = e.Do(http.MethodPatch, "/credentials/"+rotatedID, token, map[string]any{"apiKey": leakyKeys[1]})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	r = e.Do(http.MethodPost, "/credentials", token, map[string]any{"name": "gemini", "provider": "gemini", "apiKey": leakyKeys[2]})
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	r = e.Do(http.MethodDelete, "/credentials/"+r.Map(t)["id"].(string), token, nil)
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)

	for id, want := range map[string]string{kept: leakyKeys[0], rotatedID: leakyKeys[1]} {
		c, _, err := eng.Credentials.Open(ctx, ws.ID, id)
		require.NoError(t, err)
		assert.Equal(t, want, c.APIKey)
	}
}

// TestCredentials_NoKeyOnDisk_SQLite stores keys through the API of an
// engine on a SQLite data directory and reads back every byte of every
// file there (database, WAL, shared memory, files, key file): no trace of
// a key, while the server still runs and after it closed.
func TestCredentials_NoKeyOnDisk_SQLite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	eng, err := engine.OpenSQLite(context.Background(), dir, engine.Options{})
	require.NoError(t, err)
	storeKeysThroughAPI(t, eng)

	grep := func(when string) int {
		n := 0
		require.NoError(t, filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			n++
			requireNoTrace(t, when+" "+filepath.Base(path), data, leakyKeys...)
			return nil
		}))
		return n
	}
	names := func() []string {
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		var out []string
		for _, e := range entries {
			out = append(out, e.Name())
		}
		return out
	}
	assert.Subset(t, names(), []string{engine.DatabaseFile, engine.DatabaseFile + "-wal", engine.SecretsKeyFile},
		"the WAL is read while the server runs")
	grep("running:")
	require.NoError(t, eng.Close())
	assert.GreaterOrEqual(t, grep("closed:"), 2)
}

// TestCredentials_NoKeyOnDisk_Postgres does the same on Postgres: a
// pg_dump of the database holds no trace of a key.
func TestCredentials_NoKeyOnDisk_Postgres(t *testing.T) {
	t.Parallel()
	dsn := pgtest.New(t)
	dump := "/usr/lib/postgresql/15/bin/pg_dump"
	if _, err := os.Stat(dump); err != nil {
		if dump, err = exec.LookPath("pg_dump"); err != nil {
			t.Skip("pg_dump is not installed (neither /usr/lib/postgresql/15/bin/pg_dump nor on PATH): cannot dump the database")
		}
	}
	ring, err := credential.NewKeyRing(credential.NewKey())
	require.NoError(t, err)
	eng, err := pgengine.Open(context.Background(), dsn, engine.Options{Secrets: ring})
	require.NoError(t, err)
	t.Cleanup(func() { eng.Close() })
	storeKeysThroughAPI(t, eng)

	out, err := exec.Command(dump, "--dbname", dsn, "--data-only").Output()
	require.NoError(t, err, "pg_dump")
	require.Contains(t, string(out), "COPY public.credentials", "the dump holds the credentials table")
	requireNoTrace(t, "pg_dump", out, leakyKeys...)
	for _, format := range []string{"--inserts", "--column-inserts"} {
		out, err := exec.Command(dump, "--dbname", dsn, format).Output()
		require.NoError(t, err, "pg_dump %s", format)
		requireNoTrace(t, "pg_dump "+format, out, leakyKeys...)
	}
}

// TestKeyTraces_FindEncodedKeys checks the leak tests' search itself: a
// key written in clear, in base64 inside a longer value at any alignment,
// or in hex, is found.
func TestKeyTraces_FindEncodedKeys(t *testing.T) {
	t.Parallel()
	key := leakyKeys[0]
	found := func(data []byte) bool {
		for _, trace := range keyTraces(key) {
			if bytes.Contains(data, trace) {
				return true
			}
		}
		return false
	}
	for prefix := range 3 {
		value := []byte(strings.Repeat("p", prefix) + `{"apiKey":"` + key + `"}`)
		assert.True(t, found([]byte(base64.StdEncoding.EncodeToString(value))), "base64, prefix %d", prefix)
		assert.True(t, found([]byte(base64.RawURLEncoding.EncodeToString(value))), "base64url, prefix %d", prefix)
	}
	assert.True(t, found([]byte(`\x`+hex.EncodeToString([]byte("..."+key+"...")))), "a bytea in hex")
	assert.True(t, found([]byte("row: "+key)))
	assert.False(t, found([]byte(leakyKeys[1])))
}
