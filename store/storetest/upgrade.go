package storetest

import (
	"context"
	"testing"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FirstReleaseData is what the first release wrote, as SQL that runs on
// both drivers' first migration set (SQLite's 001_foundation, Postgres's
// 001_schema): a workspace with a project, a canvas of two versions with
// their messages, and a production environment that served the first
// version, then the second. The stores' upgrade tests insert it into a
// database migrated that far and commit the result as a fixture;
// CheckFirstReleaseData reads it back after today's migrations.
const FirstReleaseData = `
INSERT INTO workspaces (id, name, created_at) VALUES ('ws-1', 'default', '2025-06-01T10:00:00.000000000Z');
INSERT INTO projects (id, workspace_id, name, created_at) VALUES ('p-1', 'ws-1', 'support', '2025-06-01T10:00:01.000000000Z');
INSERT INTO canvases (id, workspace_id, project_id, title, inferences_percentage, layout_version, custom_tags,
	version_seq, created_by, updated_by, created_at, updated_at)
	VALUES ('c-1', 'ws-1', 'p-1', 'Support bot', '100', '2', '["faq"]', 2, 'u-1', 'u-1',
	'2025-06-01T10:00:02.000000000Z', '2025-06-01T10:00:04.000000000Z');
INSERT INTO versions (id, canvas_id, version_index, title, configuration, variables, created_by, updated_by,
	created_at, updated_at)
	VALUES ('v-1', 'c-1', 1, 'First', '{"model":"echo","temperature":0.2}', '[{"name":"name","type":"text"}]',
	'u-1', 'u-1', '2025-06-01T10:00:03.000000000Z', '2025-06-01T10:00:03.000000000Z'),
	('v-2', 'c-1', 2, 'Second', '{"model":"echo"}', '[]',
	'u-1', 'u-1', '2025-06-01T10:00:04.000000000Z', '2025-06-01T10:00:04.000000000Z');
INSERT INTO messages (id, version_id, role, content, idx, created_by, updated_by, created_at, updated_at)
	VALUES ('m-1', 'v-1', 'system', 'Hello {{name}}', 0, 'u-1', 'u-1', '2025-06-01T10:00:03.000000000Z', '2025-06-01T10:00:03.000000000Z'),
	('m-2', 'v-2', 'system', 'Hi {{name}}', 0, 'u-1', 'u-1', '2025-06-01T10:00:04.000000000Z', '2025-06-01T10:00:04.000000000Z'),
	('m-3', 'v-2', 'user', 'And welcome', 1, 'u-1', 'u-1', '2025-06-01T10:00:04.000000000Z', '2025-06-01T10:00:04.000000000Z');
INSERT INTO environments (id, canvas_id, name, is_system, last_seq, created_by, created_at)
	VALUES ('e-1', 'c-1', 'production', TRUE, 2, 'u-1', '2025-06-01T10:00:02.000000000Z');
INSERT INTO publications (id, environment_id, version_id, seq, is_active, published_at, published_by, unpublished_at)
	VALUES ('pub-1', 'e-1', 'v-1', 1, FALSE, '2025-06-01T10:00:05.000000000Z', 'u-1', '2025-06-01T10:00:06.000000000Z'),
	('pub-2', 'e-1', 'v-2', 2, TRUE, '2025-06-01T10:00:06.000000000Z', 'u-1', NULL);
`

// CheckFirstReleaseData reads FirstReleaseData back from s, a store opened
// (and so migrated) over a database the first release left, and checks
// that today's code serves it as that release did.
func CheckFirstReleaseData(t *testing.T, s store.Store) {
	t.Helper()
	ctx := context.Background()
	ws, err := s.GetWorkspaceByName(ctx, canvas.DefaultWorkspaceName)
	require.NoError(t, err)
	assert.Equal(t, "ws-1", ws.ID)

	c, err := s.GetCanvas(ctx, canvas.GetCanvasParams{WorkspaceID: "ws-1", ID: "c-1"})
	require.NoError(t, err)
	assert.Equal(t, "Support bot", c.Title)
	require.NotNil(t, c.ProjectID)
	assert.Equal(t, "p-1", *c.ProjectID)
	assert.Equal(t, []string{"faq"}, c.CustomTags)

	v1, err := s.GetVersion(ctx, "ws-1", "v-1")
	require.NoError(t, err)
	assert.Equal(t, 1, v1.VersionIndex)
	assert.Equal(t, "echo", v1.Configuration.Model)
	require.Len(t, v1.Variables, 1)
	assert.Equal(t, "name", v1.Variables[0].Name)
	msgs, err := s.ListMessages(ctx, "ws-1", "v-2")
	require.NoError(t, err)
	require.Len(t, msgs, 2)
	assert.Equal(t, "Hi {{name}}", msgs[0].Content)
	assert.Equal(t, "And welcome", msgs[1].Content)

	prod, err := s.FindEnvironment(ctx, env.FindEnvironmentParams{WorkspaceID: "ws-1", CanvasID: "c-1", Name: "production"})
	require.NoError(t, err)
	require.NotNil(t, prod.ActiveVersionID, "production still serves a version")
	assert.Equal(t, "v-2", *prod.ActiveVersionID)
	history, total, err := s.ListPublications(ctx, "ws-1", "e-1", 10, 0)
	require.NoError(t, err)
	assert.Equal(t, 2, total)
	require.Len(t, history, 2)

	// Today's code writes on the old data: a third version is numbered
	// after the old ones.
	v3 := &canvas.Version{PromptID: "c-1", WorkspaceID: "ws-1", Title: "Third", CreatedBy: "u-2", UpdatedBy: "u-2"}
	require.NoError(t, s.CreateVersion(ctx, v3))
	assert.Equal(t, 3, v3.VersionIndex)
}

// ClearSecretsData is what servers before the sealing of webhook
// evaluators' secrets wrote, as SQL that runs on both drivers' schemas
// just before that migration (SQLite's 033, Postgres's 015): a saved
// webhook evaluator and an experiment with an inline one, each holding its
// secret in clear, beside an evaluator and an experiment without a secret.
// CheckClearSecretsFound reads it back after today's migrations.
const ClearSecretsData = `
INSERT INTO workspaces (id, name, created_at) VALUES ('ws-secrets', 'acme', '2026-11-01T10:00:00.000000000Z');
INSERT INTO evaluators (id, workspace_id, prompt_id, name, spec, created_by, created_at, updated_at) VALUES
	('ev-hook', 'ws-secrets', 'p', 'ev-hook',
	'{"id":"ev-hook","name":"team","type":"webhook","url":"https://example.com/hook","secret":"whsec_bGVnYWN5"}',
	'alice', '2026-11-01T10:00:01.000000000Z', '2026-11-01T10:00:01.000000000Z'),
	('ev-rule', 'ws-secrets', 'p', 'ev-rule', '{"id":"ev-rule","name":"exact","type":"exact"}',
	'alice', '2026-11-01T10:00:01.000000000Z', '2026-11-01T10:00:01.000000000Z');
INSERT INTO experiments (id, workspace_id, prompt_id, status, request, test_case_ids, versions, total, runner,
	created_by, created_at, updated_at) VALUES
	('ex-hook', 'ws-secrets', 'p', 'completed', '{"promptId":"p","evaluators":[{"name":"exact","type":"exact"},` +
	`{"name":"team","type":"webhook","url":"https://example.com/hook","secret":"whsec_bGVnYWN5"}]}',
	'[]', '[]', 0, '{}', 'alice', '2026-11-01T10:00:02.000000000Z', '2026-11-01T10:00:02.000000000Z'),
	('ex-rule', 'ws-secrets', 'p', 'completed', '{"promptId":"p","evaluators":[{"name":"exact","type":"exact"}]}',
	'[]', '[]', 0, '{}', 'alice', '2026-11-01T10:00:02.000000000Z', '2026-11-01T10:00:02.000000000Z');
`

// CheckClearSecretsFound checks, on s opened (and so migrated) over a
// database holding ClearSecretsData, that the rows holding a webhook
// secret in clear are the ones a key rotation re-seals, whatever the
// current key, and no other row, their secrets read as they were stored.
func CheckClearSecretsFound(t *testing.T, s store.Store) {
	t.Helper()
	ctx := context.Background()
	evs, err := s.SealedEvaluators(ctx, "any-key", "", 10)
	require.NoError(t, err)
	require.Len(t, evs, 1)
	assert.Equal(t, "ev-hook", evs[0].ID)
	assert.Equal(t, "whsec_bGVnYWN5", evs[0].Secret, "read as it was stored")
	exps, err := s.SealedExperiments(ctx, "any-key", "", 10)
	require.NoError(t, err)
	require.Len(t, exps, 1)
	assert.Equal(t, "ex-hook", exps[0].ID)
	assert.Equal(t, "whsec_bGVnYWN5", exps[0].Request.Evaluators[1].Secret)
}
