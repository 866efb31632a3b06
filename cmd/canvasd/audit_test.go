package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the driver of the planted edits' connections to Postgres
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/audit"
	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/credential"
	"github.com/promptcanvas/promptcanvas/engine"
	"github.com/promptcanvas/promptcanvas/engine/pgengine"
	"github.com/promptcanvas/promptcanvas/internal/pgtest"
	"github.com/promptcanvas/promptcanvas/testcase"
)

// auditDB is a database holding audit events, as the audit commands and a
// tamperer see it.
type auditDB struct {
	// args select it on canvasd's command line.
	args []string
	// conn reaches its tables directly, around the store.
	conn *sql.DB
	// dropTrigger removes the trigger that refuses updates.
	dropTrigger string
	// workspaceID is the default workspace's, whose chain the changes
	// made.
	workspaceID string
}

// exec runs a statement on the database directly and returns the rows it
// changed.
func (d *auditDB) exec(t *testing.T, query string) int64 {
	t.Helper()
	res, err := d.conn.Exec(query)
	require.NoError(t, err, query)
	n, err := res.RowsAffected()
	require.NoError(t, err)
	return n
}

// tamper runs an UPDATE of the default workspace's event seq, after
// dropping the trigger that refuses it.
func (d *auditDB) tamper(t *testing.T, seq int64, set string) {
	t.Helper()
	d.exec(t, d.dropTrigger)
	require.EqualValues(t, 1, d.exec(t, fmt.Sprintf(`UPDATE audit_events SET %s WHERE workspace_id = '%s' AND seq = %d`,
		set, d.workspaceID, seq)))
}

// mustAuditChanges makes changes through the engine's services in the
// default workspace (bootstrapped), as an admin user with a request's
// origin, and then a key in a second workspace: two chains. Texts carry
// characters JSON may escape (<, >, &, U+2028), which the events must
// keep byte for byte.
func mustAuditChanges(t *testing.T, eng *engine.Engine, args []string) string {
	t.Helper()
	ctx := context.Background()
	_, _, err := eng.Bootstrap(ctx, "")
	require.NoError(t, err)
	ws, err := eng.Store.GetWorkspaceByName(ctx, canvas.DefaultWorkspaceName)
	require.NoError(t, err)
	ctx = canvas.NewContext(ctx, &canvas.Principal{WorkspaceID: ws.ID, UserID: "ada", Role: canvas.RoleAdmin})
	ctx = audit.WithOrigin(ctx, audit.Origin{RequestID: "req-1", RemoteAddr: "192.0.2.7"})
	p, err := eng.Canvases.CreateProject(ctx, canvas.CreateProjectParams{Name: "support"})
	require.NoError(t, err)
	c, err := eng.Canvases.CreateCanvas(ctx, canvas.CreateCanvasParams{Title: "Support <bot> & \"friends\"\u2028",
		ProjectID: &p.ID})
	require.NoError(t, err)
	var versions []*canvas.Version
	for _, text := range []string{"Hello <b>{{name}}</b> & welcome", "Bonjour {{name}}"} {
		v, err := eng.Canvases.CreateVersion(ctx, canvas.CreateVersionParams{PromptID: c.ID,
			Configuration: &canvas.Configuration{Model: "echo", Type: "chat"},
			Variables:     []canvas.Variable{{Name: "name", Type: canvas.VariableText, Required: true}},
			Message:       &canvas.MessageInput{Role: canvas.RoleSystem, Content: text}})
		require.NoError(t, err)
		versions = append(versions, v)
	}
	title := "Support bot > all"
	_, err = eng.Canvases.UpdateCanvas(ctx, c.ID, canvas.CanvasUpdate{Title: &title})
	require.NoError(t, err)
	_, err = eng.TestCases.CreateTestCase(ctx, testcase.CreateParams{PromptID: c.ID, Title: "greets <Ada>",
		Variables: map[string]any{"name": "Ada & co"}})
	require.NoError(t, err)
	require.NoError(t, eng.Canvases.DeleteVersion(ctx, versions[0].ID))
	mustRun(t, nil, append([]string{"keys", "create", "--workspace", "acme", "--role", "viewer"}, args...)...)
	return ws.ID
}

// newAuditSQLite returns a SQLite data directory holding mustAuditChanges's
// events.
func newAuditSQLite(t *testing.T) *auditDB {
	t.Helper()
	dir := t.TempDir()
	eng, err := engine.OpenSQLite(context.Background(), dir, engine.Options{})
	require.NoError(t, err)
	d := &auditDB{args: []string{"--data", dir}, dropTrigger: `DROP TRIGGER IF EXISTS audit_events_append_only`}
	d.workspaceID = mustAuditChanges(t, eng, d.args)
	require.NoError(t, eng.Close())
	d.conn, err = sql.Open("sqlite", "file:"+filepath.Join(dir, "canvas.db"))
	require.NoError(t, err)
	t.Cleanup(func() { d.conn.Close() })
	return d
}

// newAuditPostgres returns a fresh Postgres database holding
// mustAuditChanges's events.
func newAuditPostgres(t *testing.T) *auditDB {
	t.Helper()
	dsn := pgtest.New(t)
	ring, err := credential.LoadKeyFile(newKeyFile(t))
	require.NoError(t, err)
	eng, err := pgengine.Open(context.Background(), dsn, engine.Options{Secrets: ring})
	require.NoError(t, err)
	d := &auditDB{args: []string{"--database", dsn},
		dropTrigger: `DROP TRIGGER IF EXISTS audit_events_append_only ON audit_events`}
	d.workspaceID = mustAuditChanges(t, eng, d.args)
	require.NoError(t, eng.Close())
	d.conn, err = sql.Open("pgx", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { d.conn.Close() })
	return d
}

// runAudit runs canvasd audit with args and the database's, and returns
// what it wrote and returned.
func runAudit(d *auditDB, args ...string) (stdout, stderr string, err error) {
	return runCmd(append(append([]string{"audit"}, args...), d.args...)...)
}

var headLine = regexp.MustCompile(`(?m)^workspace (\S+): (\d+) events? checked, seq (\d+) to (\d+).*; head (\d+) ([0-9a-f]{64})$`)

// heads returns the heads verify printed, by workspace id.
func heads(t *testing.T, stdout string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, m := range headLine.FindAllStringSubmatch(stdout, -1) {
		assert.Equal(t, m[4], m[5], "the head is the last event")
		out[m[1]] = m[6]
	}
	return out
}

// exportLines runs canvasd audit export with args and returns its events,
// each checked to carry the hash its own line recomputes.
func exportLines(t *testing.T, d *auditDB, args ...string) []*audit.Event {
	t.Helper()
	stdout, stderr, err := runAudit(d, append([]string{"export"}, args...)...)
	require.NoError(t, err, stderr)
	return decodeExport(t, []byte(stdout))
}

// decodeExport decodes NDJSON, one event a line, and checks each line
// recomputes to its event's hash: what a SIEM does with the export.
func decodeExport(t *testing.T, raw []byte) []*audit.Event {
	t.Helper()
	var events []*audit.Event
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var e audit.Event
		require.NoError(t, json.Unmarshal(sc.Bytes(), &e), sc.Text())
		require.Equal(t, e.Hash, e.ComputeHash(), "the line of event %d recomputes to its hash: %s", e.Seq, sc.Text())
		events = append(events, &e)
	}
	require.NoError(t, sc.Err())
	return events
}

// testAuditCommands runs the audit commands' tests on the databases
// newDB makes.
func testAuditCommands(t *testing.T, newDB func(t *testing.T) *auditDB) {
	t.Run("VerifyOK", func(t *testing.T) {
		t.Parallel()
		d := newDB(t)
		stdout, stderr, err := runAudit(d, "verify")
		require.NoError(t, err, stderr)
		got := heads(t, stdout)
		require.Len(t, got, 2, "two chains: %s", stdout)
		assert.Contains(t, got, d.workspaceID)
		assert.Regexp(t, `verified \d+ events in 2 chains: every chain is whole`, stdout)

		// The heads printed are the heads expected, found.
		var expect []string
		for ws, h := range got {
			expect = append(expect, "--expect-head", ws+"="+h)
		}
		stdout, stderr, err = runAudit(d, append([]string{"verify"}, expect...)...)
		require.NoError(t, err, stderr)
		assert.Contains(t, stdout, "workspace "+d.workspaceID+": the expected head is event")

		// One workspace, by name or id.
		for _, ref := range []string{canvas.DefaultWorkspaceName, d.workspaceID} {
			stdout, stderr, err = runAudit(d, "verify", "--workspace", ref)
			require.NoError(t, err, stderr)
			assert.Equal(t, map[string]string{d.workspaceID: got[d.workspaceID]}, heads(t, stdout), ref)
		}
	})
	t.Run("EditedEvent", func(t *testing.T) {
		t.Parallel()
		for _, set := range []string{`actor_id = 'mallory'`, `after = replace(after, 'Bonjour', 'Hola')`} {
			d := newDB(t)
			// The event of the second version: the one whose after holds
			// "Bonjour".
			var seq int64
			require.NoError(t, d.conn.QueryRow(fmt.Sprintf(`SELECT seq FROM audit_events WHERE workspace_id = '%s'
				AND action = 'prompt-version.create' AND after LIKE '%%Bonjour%%'`, d.workspaceID)).Scan(&seq))
			d.tamper(t, seq, set)
			stdout, _, err := runAudit(d, "verify")
			require.Error(t, err, set)
			assert.Contains(t, err.Error(), fmt.Sprintf("workspace %s: event %d (", d.workspaceID, seq), set)
			assert.Contains(t, err.Error(), "the event was edited", set)
			assert.Regexp(t, `(?m)^workspace `+d.workspaceID+`: .*; BROKEN$`, stdout, set)
			assert.Len(t, heads(t, stdout), 1, "the other chain is whole and prints its head")
		}
	})
	t.Run("DeletedEvent", func(t *testing.T) {
		t.Parallel()
		d := newDB(t)
		require.EqualValues(t, 1, d.exec(t, fmt.Sprintf(`DELETE FROM audit_events WHERE workspace_id = '%s' AND seq = 4`,
			d.workspaceID)))
		_, _, err := runAudit(d, "verify")
		require.Error(t, err)
		assert.Contains(t, err.Error(), fmt.Sprintf("workspace %s: event 5 (", d.workspaceID))
		assert.Contains(t, err.Error(), "events 4 to 4 are missing")
	})
	t.Run("RewrittenTail", func(t *testing.T) {
		t.Parallel()
		d := newDB(t)
		stdout, stderr, err := runAudit(d, "verify", "--workspace", d.workspaceID)
		require.NoError(t, err, stderr)
		head := heads(t, stdout)[d.workspaceID]
		require.NotEmpty(t, head)

		// Whoever edits an event and recomputes every hash after it keeps
		// a whole chain: only the head kept elsewhere tells.
		events := exportLines(t, d, "--workspace", d.workspaceID)
		require.Greater(t, len(events), 3)
		d.exec(t, d.dropTrigger)
		prev := events[1].Hash
		for _, e := range events[2:] {
			e.PrevHash = prev
			if e.Seq == events[2].Seq {
				e.Actor.ID = "mallory"
			}
			e.Hash = e.ComputeHash()
			prev = e.Hash
			require.EqualValues(t, 1, d.exec(t, fmt.Sprintf(`UPDATE audit_events SET actor_id = '%s', prev_hash = '%s',
				hash = '%s' WHERE workspace_id = '%s' AND seq = %d`, e.Actor.ID, e.PrevHash, e.Hash, d.workspaceID, e.Seq)))
		}
		_, stderr, err = runAudit(d, "verify")
		require.NoError(t, err, "the chain alone is whole: %s", stderr)
		_, _, err = runAudit(d, "verify", "--expect-head", d.workspaceID+"="+strings.ToUpper(head))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "workspace "+d.workspaceID+": the expected head "+head+" is missing")

		// A removed tail too.
		d.exec(t, fmt.Sprintf(`DELETE FROM audit_events WHERE workspace_id = '%s' AND seq = %d`, d.workspaceID,
			events[len(events)-1].Seq))
		_, _, err = runAudit(d, "verify")
		require.NoError(t, err)
		_, _, err = runAudit(d, "verify", "--expect-head", d.workspaceID+"="+events[len(events)-1].Hash)
		require.Error(t, err)
	})
	t.Run("PurgedHead", func(t *testing.T) {
		t.Parallel()
		d := newDB(t)
		// What retention leaves: an unbroken tail of the chain.
		require.EqualValues(t, 3, d.exec(t, fmt.Sprintf(`DELETE FROM audit_events WHERE workspace_id = '%s' AND seq <= 3`,
			d.workspaceID)))
		stdout, stderr, err := runAudit(d, "verify")
		require.NoError(t, err, stderr)
		assert.Regexp(t, `(?m)^workspace `+d.workspaceID+`: \d+ events checked, seq 4 to \d+ \(events 1 to 3 are gone, `+
			`purged by retention or deleted: verifying starts at 4\); head`, stdout)
	})
	t.Run("Export", func(t *testing.T) {
		t.Parallel()
		d := newDB(t)
		var rows int
		require.NoError(t, d.conn.QueryRow(`SELECT COUNT(*) FROM audit_events`).Scan(&rows))
		stdout, stderr, err := runAudit(d, "export")
		require.NoError(t, err, stderr)
		events := decodeExport(t, []byte(stdout))
		require.Len(t, events, rows, "every event, one a line")
		// Each workspace's events in the order of their seq, whole.
		last := map[string]int64{}
		for _, e := range events {
			assert.Equal(t, last[e.WorkspaceID]+1, e.Seq, "event %d of %s follows the one before", e.Seq, e.WorkspaceID)
			last[e.WorkspaceID] = e.Seq
		}
		require.Len(t, last, 2)
		assert.Contains(t, stdout, `\u003cbot\u003e \u0026`, "before and after as recorded")
		var origin bool
		for _, e := range events {
			origin = origin || e.Actor == audit.Actor{Type: audit.ActorUser, ID: "ada"} && e.RequestID == "req-1" &&
				e.RemoteAddr == "192.0.2.7"
		}
		assert.True(t, origin, "the changes carry their actor and origin")

		// --out writes the same bytes to a file, readable by its owner.
		path := filepath.Join(t.TempDir(), "audit.ndjson")
		out, stderr, err := runAudit(d, "export", "--out", path)
		require.NoError(t, err, stderr)
		assert.Equal(t, fmt.Sprintf("exported %d audit events to %s\n", rows, path), out)
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, stdout, string(raw))
		info, err := os.Stat(path)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())

		// One workspace; the events since a time.
		mine := exportLines(t, d, "--workspace", canvas.DefaultWorkspaceName)
		require.NotEmpty(t, mine)
		for _, e := range mine {
			assert.Equal(t, d.workspaceID, e.WorkspaceID)
		}
		mid := mine[len(mine)/2]
		var want int
		for _, e := range events {
			if !e.Time.Before(mid.Time.Truncate(time.Second)) {
				want++
			}
		}
		since := exportLines(t, d, "--since", mid.Time.Truncate(time.Second).Format(time.RFC3339))
		assert.Len(t, since, want)
		assert.Empty(t, exportLines(t, d, "--since", time.Now().Add(time.Hour).Format(time.RFC3339)))
	})
}

func TestAudit_SQLite(t *testing.T) {
	t.Parallel()
	testAuditCommands(t, newAuditSQLite)
}

func TestAudit_Postgres(t *testing.T) {
	t.Parallel()
	pgtest.ServerDSN(t)
	testAuditCommands(t, newAuditPostgres)
}

func TestAudit_Usage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mustRun(t, nil, "keys", "create", "--workspace", "acme", "--role", "viewer", "--data", dir)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"verify", "--expect-head", "ws"}, "is not WORKSPACE_ID=HASH"},
		{[]string{"verify", "--expect-head", "ws=abc"}, "is not WORKSPACE_ID=HASH"},
		{[]string{"export", "--since", "yesterday"}, "is not an RFC 3339 time"},
		{[]string{"export", "extra"}, `unexpected argument "extra"`},
	} {
		_, stderr, err := runCmd(append(append([]string{"audit"}, tc.args...), "--data", dir)...)
		assert.ErrorIs(t, err, errUsage, "%v", tc.args)
		assert.Contains(t, stderr, tc.want, "%v", tc.args)
	}
	_, _, err := runCmd("audit", "verify", "--workspace", "nowhere", "--data", dir)
	assert.ErrorContains(t, err, `no workspace has the id or name "nowhere"`)
	_, _, err = runCmd("audit", "export", "--data", filepath.Join(dir, "missing"))
	assert.ErrorContains(t, err, "no database in")

	// A workspace without events verifies as such.
	stdout, stderr, err := runCmd("audit", "verify", "--data", dir)
	require.NoError(t, err, stderr)
	assert.Contains(t, stdout, "verified 1 event in 1 chain: every chain is whole")
	_, _, err = runCmd("audit", "verify", "--data", dir, "--expect-head", "other="+strings.Repeat("a", 64))
	assert.ErrorContains(t, err, "workspace other: the expected head "+strings.Repeat("a", 64)+" is missing: the workspace has no events")
}

func TestAudit_RetentionReachesTheEngine(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]time.Duration{"": 0, "30d": 30 * 24 * time.Hour, "12h": 12 * time.Hour} {
		c, err := parseServe(map[string]string{"CANVAS_AUDIT_RETENTION": raw})
		require.NoError(t, err)
		opts, err := engineOptions(c, nil)
		require.NoError(t, err)
		assert.Equal(t, want, opts.Limits.Retention.AuditEvents, "CANVAS_AUDIT_RETENTION=%q", raw)
	}
}
