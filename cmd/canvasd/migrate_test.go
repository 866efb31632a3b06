package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/credential"
	"github.com/promptcanvas/promptcanvas/engine"
	"github.com/promptcanvas/promptcanvas/engine/pgengine"
	"github.com/promptcanvas/promptcanvas/internal/pgtest"
	"github.com/promptcanvas/promptcanvas/internal/s3test"
	"github.com/promptcanvas/promptcanvas/workflow"
)

// sourceWorld is what TestMigrateStore puts in the SQLite database before
// copying it: one of every kind of record, made through the HTTP API.
type sourceWorld struct {
	Key                                    string
	Project, Canvas, Version, Message      string
	WorkflowVersion, Environment, App      string
	Completion, AsyncCompletion, Task      string
	TestCase, Tag, Generation, Execution   string
	WorkflowRun, File, FileBytes, Delivery string
	// SplitCompletion is a run served by staging's split, with feedback.
	SplitCompletion string
	// Credential is an Anthropic credential whose key is CredentialKey.
	Credential, CredentialKey string
	// Evaluator is a saved evaluator of Canvas, Experiment a completed
	// experiment of Version, ReviewItem Completion in the review queue,
	// annotated.
	Evaluator, Experiment, ReviewItem string
	// Request is a pending publication request of the second version to
	// the protected staging, approved once.
	Request string
}

// mustSourceWorld serves a new SQLite data directory and fills it, waits
// for the background work to end, and stops the server.
func mustSourceWorld(t *testing.T, dir string) *sourceWorld {
	t.Helper()
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(hook.Close)
	w := &sourceWorld{Key: uuid.NewString()}
	jwtSecret := uuid.NewString()
	d := startDaemon(t, []string{"--addr", "127.0.0.1:0", "--data", dir}, map[string]string{
		"CANVAS_BOOTSTRAP_API_KEY": w.Key, "CANVAS_ALLOW_PRIVATE_NETWORKS": "1", "CANVAS_JWT_SECRET": jwtSecret})
	create := func(path string, body any, want int, headers ...string) map[string]any {
		t.Helper()
		status, out := d.postJSON(t, path, w.Key, body, append(headers, "x-compatibility-date", "2025-01-01")...)
		require.Equal(t, want, status, "POST %s: %v", path, out)
		return out
	}
	w.Project = create("/projects", map[string]any{"name": "p1"}, 201)["id"].(string)
	w.Canvas = create("/prompt", map[string]any{"title": "Support", "projectId": w.Project}, 201)["id"].(string)
	w.Version = create("/prompt-version", map[string]any{"promptId": w.Canvas,
		"configuration": map[string]any{"model": "echo"},
		"message":       map[string]any{"role": "system", "content": "Hello {{name}}"}}, 201)["id"].(string)
	w.Message = create("/prompt-version-message", map[string]any{"promptVersionId": w.Version,
		"role": "user", "content": "second"}, 201)["id"].(string)
	second := create("/prompt-version", map[string]any{"promptId": w.Canvas,
		"configuration": map[string]any{"model": "echo"},
		"message":       map[string]any{"role": "system", "content": "Hi {{name}}"}}, 201)["id"].(string)
	for _, v := range []string{w.Version, second, w.Version} {
		create("/environment/publish", map[string]any{"resourceType": "prompt", "resourceId": w.Canvas,
			"envName": "production", "versionId": v}, 201)
	}
	w.Environment = create("/environment", map[string]any{"resourceType": "prompt", "resourceId": w.Canvas,
		"name": "staging"}, 201)["id"].(string)
	create("/environment/publish", map[string]any{"resourceType": "prompt", "resourceId": w.Canvas, "envName": "staging",
		"split": []any{map[string]any{"versionId": w.Version, "weight": 60}, map[string]any{"versionId": second, "weight": 40}}}, 201)
	w.SplitCompletion = create("/v2/chat/completions", map[string]any{"canvas_id": w.Canvas, "environment_name": "staging",
		"assignment_key": "user-1", "variables": map[string]any{"name": "Eve"}}, 200)["id"].(string)
	create("/v2/chat/completions/"+w.SplitCompletion+"/feedback", map[string]any{"score": 0.9, "comment": "helpful"}, 200)
	w.WorkflowVersion = create("/prompt-version", map[string]any{"promptId": w.Canvas, "workflowSpec": map[string]any{
		"specVersion": workflow.SpecVersion,
		"nodes": []any{
			map[string]any{"id": "start", "actionId": "input", "config": map[string]any{"variables": []any{
				map[string]any{"name": "name", "type": "text", "required": true}}}},
			map[string]any{"id": "greet", "actionId": "template", "config": map[string]any{"template": "Hello {{name}}"}},
			map[string]any{"id": "done", "actionId": "output"}},
		"edges": []any{
			map[string]any{"from": map[string]any{"node": "start", "port": "out"}, "to": map[string]any{"node": "greet", "port": "in"}},
			map[string]any{"from": map[string]any{"node": "greet", "port": "out"}, "to": map[string]any{"node": "done", "port": "in"}}},
	}}, 201)["id"].(string)
	w.CredentialKey = "sk-ant-migrate-" + uuid.NewString()
	w.Credential = create("/credentials", map[string]any{"name": "claude", "provider": "anthropic",
		"apiKey": w.CredentialKey, "projectIds": []string{w.Project}}, 201)["id"].(string)
	status, price := d.sendJSON(t, http.MethodPut, "/models/llama3.1:8b", w.Key, map[string]any{"provider": "openai-compatible",
		"inputPerMillion": 0.1, "outputPerMillion": 0.2})
	require.Equal(t, http.StatusOK, status, "%v", price)
	w.Evaluator = create("/evaluators", map[string]any{"promptId": w.Canvas, "name": "greets",
		"type": "regex", "pattern": "^Hello"}, 201)["id"].(string)
	w.App = create("/applications", map[string]any{"name": "shop", "promptId": w.Canvas,
		"events": map[string]any{"enabled": true, "url": hook.URL}}, 201)["id"].(string)
	w.Completion = create("/v2/chat/completions", map[string]any{"canvas_id": w.Canvas, "application_id": w.App,
		"variables": map[string]any{"name": "Ada"}}, 200)["id"].(string)
	w.AsyncCompletion = create("/v2/chat/completions", map[string]any{"canvas_id": w.Canvas,
		"variables": map[string]any{"name": "Bob"}, "webhook_url": hook.URL}, 202)["id"].(string)
	w.Task = create("/v1/tasks", map[string]any{"prompt": "Say hi"}, 202, "Idempotency-Key", uuid.NewString())["id"].(string)
	w.TestCase = create("/test-case", map[string]any{"promptId": w.Canvas, "title": "greets",
		"variables": map[string]any{"name": "Ada"}}, 201)["id"].(string)
	w.Tag = create("/test-case-tags", map[string]any{"name": "smoke", "color": "red", "promptId": w.Canvas}, 201)["id"].(string)
	create("/test-case/bulk-add-tags", map[string]any{"testCaseIds": []string{w.TestCase}, "tagIds": []string{w.Tag}}, 200)
	// A favorite is a user's: the request carries a JWT.
	ws, err := openStore(t, dir).GetWorkspaceByName(t.Context(), "default")
	require.NoError(t, err)
	user, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "ada", "workspace_id": ws.ID,
		"role": "editor", "exp": time.Now().Add(time.Hour).Unix()}).SignedString([]byte(jwtSecret))
	require.NoError(t, err)
	status, fav := d.sendJSON(t, http.MethodPatch, "/prompt/"+w.Canvas, user, map[string]any{"favorited": true})
	require.Equal(t, http.StatusOK, status, "%v", fav)
	w.ReviewItem = create("/review-queue", map[string]any{"runId": w.Completion}, 201)["id"].(string)
	create("/review-queue/"+w.ReviewItem+"/annotation", map[string]any{"passed": true, "score": 0.9}, 200)
	w.Experiment = create("/experiments", map[string]any{"promptId": w.Canvas, "versionIds": []string{w.Version},
		"evaluators": []map[string]any{{"name": "exact", "type": "exact"}}}, 202)["id"].(string)
	status, policy := d.sendJSON(t, http.MethodPatch, "/environment/"+w.Environment, w.Key, map[string]any{"protected": true,
		"requiredApprovals": 2})
	require.Equal(t, http.StatusOK, status, "%v", policy)
	w.Request = create("/publication-requests", map[string]any{"resourceType": "prompt", "resourceId": w.Canvas,
		"envName": "staging", "versionId": second, "comment": "to staging"}, 201)["id"].(string)
	status, approved := d.sendJSON(t, http.MethodPost, "/publication-requests/"+w.Request+"/approve", user, map[string]any{"comment": "ok"})
	require.Equal(t, http.StatusOK, status, "%v", approved)
	run := create("/test-case/"+w.TestCase+"/run", map[string]any{"promptVersionId": w.Version}, 200)
	w.Generation, w.Execution = run["generationId"].(string), run["executionId"].(string)
	w.WorkflowRun = create("/workflow/runs", map[string]any{"versionId": w.WorkflowVersion,
		"input": map[string]any{"name": "Ada"}}, 201)["id"].(string)

	up := create("/v3/files", map[string]any{"fileName": "notes.txt"}, 201)
	w.File, w.FileBytes = up["id"].(string), "secret notes "+uuid.NewString()
	u, err := url.Parse(up["uploadUrl"].(string))
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPut, d.URL+u.RequestURI(), strings.NewReader(w.FileBytes))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "text/plain")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	// The background work ends: the async runs finish and the webhooks
	// are delivered, so that both databases hold ended records.
	require.Eventually(t, func() bool {
		done := true
		for _, path := range []string{"/v2/chat/completions/" + w.AsyncCompletion, "/v1/tasks/" + w.Task,
			"/workflow/runs/" + w.WorkflowRun, "/experiments/" + w.Experiment} {
			_, got := d.sendJSON(t, http.MethodGet, path, w.Key, nil)
			if s, _ := got["status"].(string); s != "succeeded" && s != "completed" {
				done = false
			}
		}
		return done
	}, waitLimit, 20*time.Millisecond, "the background work does not end")
	status, page := d.sendJSON(t, http.MethodGet, "/webhooks/deliveries?applicationId="+w.App, w.Key, nil)
	require.Equal(t, http.StatusOK, status)
	require.NotEmpty(t, page["data"])
	w.Delivery = page["data"].([]any)[0].(map[string]any)["id"].(string)
	require.NoError(t, d.stop())
	return w
}

// reads are the answers a world's reads get, to compare two servers.
func (w *sourceWorld) reads() []string {
	return []string{
		"/projects", "/prompt", "/prompt/" + w.Canvas,
		"/prompt-version?promptId=" + w.Canvas, "/prompt-version/" + w.Version, "/prompt-version/" + w.WorkflowVersion,
		"/prompt-version-message?promptVersionId=" + w.Version,
		"/environment?resourceType=prompt&resourceId=" + w.Canvas,
		"/environment/versions?resourceType=prompt&resourceId=" + w.Canvas + "&envName=production",
		"/environment/version?resourceType=prompt&resourceId=" + w.Canvas + "&envName=production",
		"/environment/versions?resourceType=prompt&resourceId=" + w.Canvas + "&envName=staging",
		"/environment/version?resourceType=prompt&resourceId=" + w.Canvas + "&envName=staging&assignmentKey=user-1",
		"/environment/split-stats?resourceType=prompt&resourceId=" + w.Canvas + "&envName=staging",
		"/v2/chat/completions/" + w.Completion, "/v2/chat/completions/" + w.AsyncCompletion, "/v1/tasks/" + w.Task,
		"/v2/chat/completions/" + w.SplitCompletion,
		"/test-case?promptId=" + w.Canvas, "/test-case/" + w.TestCase, "/test-case-tags?promptId=" + w.Canvas,
		"/test-case/generations/" + w.Generation, "/test-case/executions/" + w.Execution,
		"/workflow/runs/" + w.WorkflowRun, "/workflow/runs?promptId=" + w.Canvas,
		"/v3/files/" + w.File,
		"/applications", "/applications/" + w.App,
		"/credentials", "/credentials/" + w.Credential, "/models?provider=openai-compatible",
		"/evaluators?promptId=" + w.Canvas, "/experiments/" + w.Experiment, "/experiments/" + w.Experiment + "/results",
		"/review-queue?promptId=" + w.Canvas, "/review-queue/" + w.ReviewItem,
		"/webhooks/deliveries?applicationId=" + w.App, "/webhooks/deliveries/" + w.Delivery,
		"/publication-requests", "/publication-requests/" + w.Request, "/experiments/" + w.Experiment,
	}
}

// readAll GETs each path and returns the status and body of each.
func readAll(t *testing.T, d *daemon, token string, paths []string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, p := range paths {
		req, err := http.NewRequest(http.MethodGet, d.URL+p, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("x-compatibility-date", "2025-01-01")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, "GET %s: %s", p, body)
		out[p] = string(body)
	}
	return out
}

// TestMigrateStore fills a SQLite data directory through the HTTP API with
// every kind of record, copies it with canvasd migrate-store into a new
// Postgres database, and checks that every row of every table arrived as it
// was, that the file's bytes did, that a server on Postgres answers every
// read as the server on SQLite did, and that a second copy into the now
// non-empty database is refused.
func TestMigrateStore(t *testing.T) {
	t.Parallel()
	dsn := pgtest.New(t)
	dir := t.TempDir()
	w := mustSourceWorld(t, dir)

	src := startDaemon(t, []string{"--addr", "127.0.0.1:0", "--data", dir}, nil)
	before := readAll(t, src, w.Key, w.reads())
	require.NoError(t, src.stop())

	out := mustRun(t, nil, "migrate-store", "--from", "sqlite:"+dir, "--to", dsn)
	assert.Contains(t, out, "counts and checksums verified")
	assert.Contains(t, out, "1 files")
	requireSameRows(t, filepath.Join(dir, "canvas.db"), dsn)

	dst := startDaemon(t, []string{"--addr", "127.0.0.1:0", "--data", t.TempDir(), "--database", dsn,
		"--secrets-key-file", filepath.Join(dir, "secrets.key")}, nil)
	after := readAll(t, dst, w.Key, w.reads())
	for _, p := range w.reads() {
		assert.Equal(t, microseconds(t, before[p]), microseconds(t, after[p]), "GET %s answers the same on Postgres", p)
	}
	require.NoError(t, dst.stop())
	ring, err := credential.LoadKeyFile(filepath.Join(dir, "secrets.key"))
	require.NoError(t, err)
	eng, err := pgengine.Open(context.Background(), dsn, engine.Options{Secrets: ring})
	require.NoError(t, err)
	opened, _, err := eng.Credentials.Open(context.Background(), openWorkspace(t, eng), w.Credential)
	require.NoError(t, err, "the copied credential opens with the data directory's key file")
	assert.Equal(t, w.CredentialKey, opened.APIKey)
	require.NoError(t, eng.Close())

	var stdout, stderr bytes.Buffer
	err = run(context.Background(), []string{"migrate-store", "--from", "sqlite:" + dir, "--to", dsn}, getenv(nil), &stdout, &stderr)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not empty")
}

// TestMigrateStore_S3 copies the file bytes into an S3 bucket (--blobs) and
// reads them back from it.
func TestMigrateStore_S3(t *testing.T) {
	s3test.SetCredentials(t)
	dsn := pgtest.New(t)
	srv := s3test.Start(t)
	srv.CreateBucket(t, "files")
	dir := t.TempDir()
	w := mustSourceWorld(t, dir)
	mustRun(t, nil, "migrate-store", "--from", "sqlite:"+dir, "--to", dsn, "--blobs", srv.URL("files"))

	// A server on the copy finds the file's bytes in the bucket: a
	// completion that reads the file sees them.
	d := startDaemon(t, []string{"--addr", "127.0.0.1:0", "--data", t.TempDir(), "--database", dsn,
		"--blobs", srv.URL("files"), "--secrets-key-file", filepath.Join(dir, "secrets.key")}, nil)
	status, c := d.postJSON(t, "/prompt", w.Key, map[string]any{"title": "reader", "projectId": w.Project})
	require.Equal(t, http.StatusCreated, status)
	status, v := d.postJSON(t, "/prompt-version", w.Key, map[string]any{"promptId": c["id"],
		"configuration": map[string]any{"model": "echo"},
		"variables":     []any{map[string]any{"name": "doc", "type": "file"}},
		"message":       map[string]any{"role": "user", "content": "{{doc}}"}})
	require.Equal(t, http.StatusCreated, status, "%v", v)
	status, got := d.postJSON(t, "/v2/chat/completions", w.Key, map[string]any{"canvas_id": c["id"],
		"version_id": v["id"], "variables": map[string]any{"doc": map[string]any{"file_url": "vault://" + w.File}}})
	require.Equal(t, http.StatusOK, status, "%v", got)
	assert.Contains(t, fmt.Sprint(got), w.FileBytes)
	require.NoError(t, d.stop())
}

func TestMigrateStore_Usage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"migrate-store"},
		{"migrate-store", "--from", "sqlite:" + t.TempDir()},
		{"migrate-store", "--from", "postgres://h/db", "--to", "postgres://h/db2"},
		{"migrate-store", "--from", "sqlite:/x", "--to", "sqlite:/y"},
	} {
		var stderr bytes.Buffer
		err := run(context.Background(), args, getenv(nil), io.Discard, &stderr)
		assert.ErrorIs(t, err, errUsage, "%v", args)
		assert.Contains(t, stderr.String(), "migrate-store --from sqlite:DIR", "%v", args)
	}
	err := run(context.Background(), []string{"migrate-store", "--from", "sqlite:" + t.TempDir(),
		"--to", "postgres://127.0.0.1:1/none"}, getenv(nil), io.Discard, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no database in")
}

// requireSameRows compares every row of every table of the SQLite database
// at path with the same table in Postgres, value by value: instants,
// flags, numbers, text and bytes alike. Tables each store keeps for itself
// are left out.
func requireSameRows(t *testing.T, path, dsn string) {
	t.Helper()
	ctx := context.Background()
	lite, err := sql.Open("sqlite", "file:"+path+"?_pragma=query_only(ON)")
	require.NoError(t, err)
	defer lite.Close()
	pg, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer pg.Close(ctx)

	rows, err := lite.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table'
		AND name NOT LIKE 'sqlite_%' AND name NOT IN ('migrations', 'revision') ORDER BY name`)
	require.NoError(t, err)
	var tables []string
	for rows.Next() {
		var name string
		require.NoError(t, rows.Scan(&name))
		tables = append(tables, name)
	}
	require.NoError(t, rows.Err())
	require.Contains(t, tables, "webhook_deliveries")
	for _, table := range tables {
		cols, want := liteRows(t, lite, table)
		got := pgRows(t, pg, table, cols)
		require.NotEmpty(t, want, "the world has rows in %s", table)
		assert.Equal(t, want, got, "table %s", table)
	}
}

// liteRows returns the columns of table and its rows, each as its columns'
// values in SQLite's own form (instants to the microsecond, which is what
// Postgres keeps), sorted.
func liteRows(t *testing.T, db *sql.DB, table string) ([]string, []string) {
	t.Helper()
	rows, err := db.Query(`SELECT * FROM "` + table + `"`)
	require.NoError(t, err)
	defer rows.Close()
	cols, err := rows.Columns()
	require.NoError(t, err)
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		require.NoError(t, rows.Scan(ptrs...))
		var b strings.Builder
		for i, c := range cols {
			v := vals[i]
			if s, ok := v.([]byte); ok {
				v = string(s)
			}
			if s, ok := v.(string); ok {
				if at, err := time.Parse(sqliteTime, s); err == nil {
					v = at.Truncate(time.Microsecond).Format(sqliteTime)
				}
			}
			fmt.Fprintf(&b, "%s=%#v;", c, v)
		}
		out = append(out, b.String())
	}
	require.NoError(t, rows.Err())
	slices.Sort(out)
	return cols, out
}

// sqliteTime is how store/sqlite writes instants.
const sqliteTime = "2006-01-02T15:04:05.000000000Z"

// pgRows returns the rows of table with the columns SQLite has, each value
// put back in SQLite's form (instants as its fixed-width text, flags as 0
// and 1), sorted.
func pgRows(t *testing.T, conn *pgx.Conn, table string, cols []string) []string {
	t.Helper()
	ctx := context.Background()
	rows, err := conn.Query(ctx, `SELECT * FROM `+pgx.Identifier{table}.Sanitize())
	require.NoError(t, err)
	defer rows.Close()
	fields := rows.FieldDescriptions()
	var out []string
	for rows.Next() {
		vals, err := rows.Values()
		require.NoError(t, err)
		byName := map[string]any{}
		for i, f := range fields {
			v := vals[i]
			switch x := v.(type) {
			case time.Time:
				v = x.UTC().Format(sqliteTime)
			case []byte:
				v = string(x)
			case bool:
				v = map[bool]int64{false: 0, true: 1}[x]
			case int32:
				v = int64(x)
			}
			byName[f.Name] = v
		}
		var b strings.Builder
		for _, c := range cols {
			v, ok := byName[c]
			require.True(t, ok, "table %s has column %s in Postgres", table, c)
			fmt.Fprintf(&b, "%s=%#v;", c, v)
		}
		out = append(out, b.String())
	}
	require.NoError(t, rows.Err())
	slices.Sort(out)
	return out
}

// microseconds decodes a JSON body and cuts every instant in it to the
// microsecond, the precision Postgres keeps.
func microseconds(t *testing.T, body string) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal([]byte(body), &v), "body: %s", body)
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				x[k] = walk(e)
			}
		case []any:
			for i, e := range x {
				x[i] = walk(e)
			}
		case string:
			if at, err := time.Parse(time.RFC3339Nano, x); err == nil {
				return at.UTC().Truncate(time.Microsecond)
			}
		}
		return v
	}
	return walk(v)
}
