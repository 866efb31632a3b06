// Package storetest is the conformance suite of store.Store: every
// implementation passes it by calling Run from a test of a few lines.
//
// Each behaviour is a parallel subtest on a fresh store, named after what
// it checks; errors are checked by code with canvas.ErrorCode, never by
// message text. Instants are compared to the microsecond, the precision
// every store keeps (Postgres's).
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

// Run runs the whole suite. newStore returns a fresh, empty store and
// registers its Close with t.Cleanup.
func Run(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("Workspace", func(t *testing.T) { testWorkspaces(t, newStore) })
	t.Run("Project", func(t *testing.T) { testProjects(t, newStore) })
	t.Run("APIKey", func(t *testing.T) { testAPIKeys(t, newStore) })
	t.Run("Canvas", func(t *testing.T) { testCanvases(t, newStore) })
	t.Run("CanvasList", func(t *testing.T) { testCanvasList(t, newStore) })
	t.Run("Version", func(t *testing.T) { testVersions(t, newStore) })
	t.Run("VersionUpdate", func(t *testing.T) { testVersionUpdates(t, newStore) })
	t.Run("Message", func(t *testing.T) { testMessages(t, newStore) })
	t.Run("Environment", func(t *testing.T) { testEnvironments(t, newStore) })
	t.Run("Publication", func(t *testing.T) { testPublications(t, newStore) })
	t.Run("Protection", func(t *testing.T) { testProtection(t, newStore) })
	t.Run("Requests", func(t *testing.T) { testRequests(t, newStore) })
	t.Run("RequestSplits", func(t *testing.T) { testRequestSplits(t, newStore) })
	t.Run("Idempotency", func(t *testing.T) { testIdempotency(t, newStore) })
	t.Run("IdempotencyOwner", func(t *testing.T) { testIdempotencyOwners(t, newStore) })
	t.Run("IdempotencyRelease", func(t *testing.T) { testIdempotencyRelease(t, newStore) })
	t.Run("Queue", func(t *testing.T) { testQueue(t, newStore) })
	t.Run("QueueBacklog", func(t *testing.T) { testQueueBacklog(t, newStore) })
	t.Run("QueueStats", func(t *testing.T) { testQueueStats(t, newStore) })
	t.Run("Runs", func(t *testing.T) { testRuns(t, newStore) })
	t.Run("RunTotals", func(t *testing.T) { testRunTotals(t, newStore) })
	t.Run("TestCases", func(t *testing.T) { testTestCases(t, newStore) })
	t.Run("Generations", func(t *testing.T) { testGenerations(t, newStore) })
	t.Run("Experiments", func(t *testing.T) { testExperiments(t, newStore) })
	t.Run("Files", func(t *testing.T) { testFiles(t, newStore) })
	t.Run("Applications", func(t *testing.T) { testApplications(t, newStore) })
	t.Run("Credentials", func(t *testing.T) { testCredentials(t, newStore) })
	t.Run("Deliveries", func(t *testing.T) { testDeliveries(t, newStore) })
	t.Run("DeliveryAccess", func(t *testing.T) { testDeliveryAccess(t, newStore) })
	t.Run("Workflows", func(t *testing.T) { testWorkflows(t, newStore) })
	t.Run("Lists", func(t *testing.T) { testLists(t, newStore) })
	t.Run("Purge", func(t *testing.T) { testPurge(t, newStore) })
	t.Run("Review", func(t *testing.T) { testReview(t, newStore) })
	t.Run("Composition", func(t *testing.T) { testComposition(t, newStore) })
	t.Run("Splits", func(t *testing.T) { testSplits(t, newStore) })
	t.Run("Audit", func(t *testing.T) { testAudit(t, newStore) })
}

// fixture is a fresh store with one workspace, and helpers that create
// what a behaviour needs.
type fixture struct {
	t   *testing.T
	ctx context.Context
	s   store.Store
	ws  *canvas.Workspace
}

// run registers a parallel subtest that gets a fresh fixture.
func run(t *testing.T, newStore func(t *testing.T) store.Store, name string, fn func(t *testing.T, f *fixture)) {
	t.Helper()
	t.Run(name, func(t *testing.T) {
		t.Parallel()
		f := &fixture{t: t, ctx: context.Background(), s: newStore(t)}
		f.ws = f.Workspace("acme")
		fn(t, f)
	})
}

// requireCode fails unless err carries the error code want.
func requireCode(t *testing.T, want string, err error) {
	t.Helper()
	require.Error(t, err)
	require.Equal(t, want, canvas.ErrorCode(err), "error: %v", err)
}

// Workspace creates a workspace.
func (f *fixture) Workspace(name string) *canvas.Workspace {
	f.t.Helper()
	w := &canvas.Workspace{Name: name}
	require.NoError(f.t, f.s.CreateWorkspace(f.ctx, w))
	return w
}

// Project creates a project in the fixture's workspace.
func (f *fixture) Project(name string) *canvas.Project {
	f.t.Helper()
	p := &canvas.Project{Name: name, WorkspaceID: f.ws.ID}
	require.NoError(f.t, f.s.CreateProject(f.ctx, p))
	return p
}

// Canvas creates a canvas of the fixture's workspace in project (nil: a
// personal draft) created by by.
func (f *fixture) Canvas(title string, project *canvas.Project, by string) *canvas.Canvas {
	f.t.Helper()
	c := &canvas.Canvas{Title: title, WorkspaceID: f.ws.ID, InferencesPercentage: "0",
		LayoutVersion: canvas.LayoutV2, CreatedBy: by}
	if project != nil {
		c.ProjectID = &project.ID
	}
	require.NoError(f.t, f.s.CreateCanvas(f.ctx, c))
	return c
}

// Version creates a version of c whose prompt (system message at index 0)
// is content.
func (f *fixture) Version(c *canvas.Canvas, content string) *canvas.Version {
	f.t.Helper()
	v := &canvas.Version{PromptID: c.ID, WorkspaceID: c.WorkspaceID, Title: "v", CreatedBy: "alice",
		Messages: []canvas.Message{{Role: canvas.RoleSystem, Content: content}}}
	require.NoError(f.t, f.s.CreateVersion(f.ctx, v))
	return v
}

// Publish publishes v to the environment named envName.
func (f *fixture) Publish(v *canvas.Version, envName string) *env.Publication {
	f.t.Helper()
	pub, _, err := f.s.Publish(f.ctx, env.PublishParams{WorkspaceID: v.WorkspaceID, CanvasID: v.PromptID,
		EnvName: envName, VersionID: v.ID, By: "alice"})
	require.NoError(f.t, err)
	return pub
}

// Env creates a custom environment of c.
func (f *fixture) Env(c *canvas.Canvas, name string) *env.Environment {
	f.t.Helper()
	e := &env.Environment{Name: name, ResourceType: env.ResourcePrompt, ResourceID: c.ID,
		WorkspaceID: c.WorkspaceID, CreatedBy: "alice"}
	require.NoError(f.t, f.s.CreateEnvironment(f.ctx, e))
	return e
}

// History returns the whole history of an environment, newest first,
// reading it page by page.
func (f *fixture) History(e *env.Environment) []*env.Publication {
	f.t.Helper()
	var all []*env.Publication
	for offset := 0; ; offset += 100 {
		page, total, err := f.s.ListPublications(f.ctx, e.WorkspaceID, e.ID, 100, offset)
		require.NoError(f.t, err)
		all = append(all, page...)
		if len(page) == 0 || len(all) >= total {
			assert.Len(f.t, all, total)
			return all
		}
	}
}

func ptr[T any](v T) *T { return &v }

// ids returns the ids of a list, in order.
func ids[T any](list []T, id func(T) string) []string {
	out := make([]string, len(list))
	for i, v := range list {
		out[i] = id(v)
	}
	return out
}

func canvasID(c *canvas.Canvas) string     { return c.ID }
func versionID(v *canvas.Version) string   { return v.ID }
func messageID(m *canvas.Message) string   { return m.ID }
func pubVersion(p *env.Publication) string { return p.VersionID }
