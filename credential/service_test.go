package credential_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/credential"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
)

// fixture is a credential service on a real SQLite store, with a
// workspace, two projects and a clock the test moves.
type fixture struct {
	t      *testing.T
	db     *sqlite.DB
	ring   *credential.KeyRing
	svc    *credential.Service
	ws     *canvas.Workspace
	p1, p2 *canvas.Project
	now    atomic.Int64
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "canvas.db"))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	f := &fixture{t: t, db: db, ring: mustRing(t, credential.NewKey())}
	f.now.Store(time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC).UnixNano())
	f.svc = f.service(f.ring)
	f.ws = &canvas.Workspace{Name: "acme"}
	require.NoError(t, db.CreateWorkspace(ctx, f.ws))
	f.p1, f.p2 = f.project("p1"), f.project("p2")
	return f
}

func (f *fixture) service(ring *credential.KeyRing) *credential.Service {
	return credential.NewService(credential.Options{Store: f.db, Projects: f.db, Keys: ring, Changes: f.db,
		Now: func() time.Time { return time.Unix(0, f.now.Load()).UTC() }})
}

func (f *fixture) project(name string) *canvas.Project {
	f.t.Helper()
	p := &canvas.Project{Name: name, WorkspaceID: f.ws.ID}
	require.NoError(f.t, f.db.CreateProject(context.Background(), p))
	return p
}

// as returns a context of a principal of the fixture's workspace.
func (f *fixture) as(role canvas.Role, projects ...string) context.Context {
	p := &canvas.Principal{WorkspaceID: f.ws.ID, KeyID: "k-" + string(role), Role: role}
	if len(projects) > 0 {
		p.Projects = projects
	}
	return canvas.NewContext(context.Background(), p)
}

func (f *fixture) create(ctx context.Context, params credential.CreateParams) *credential.Credential {
	f.t.Helper()
	c, err := f.svc.CreateCredential(ctx, params)
	require.NoError(f.t, err)
	return c
}

func ptr[T any](v T) *T { return &v }

func requireCode(t *testing.T, want string, err error) {
	t.Helper()
	require.Error(t, err)
	require.Equal(t, want, canvas.ErrorCode(err), "error: %v", err)
}

// detailPaths returns the paths of a VALIDATION error's details.
func detailPaths(t *testing.T, err error) []string {
	t.Helper()
	requireCode(t, canvas.EINVALID, err)
	var paths []string
	for _, d := range err.(*canvas.Error).Details {
		paths = append(paths, d.Path)
	}
	return paths
}

func TestService_CreateCredential(t *testing.T) {
	t.Parallel()
	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		admin := f.as(canvas.RoleAdmin)
		c := f.create(admin, credential.CreateParams{Name: " Claude ", Provider: canvas.ProviderAnthropic,
			APIKey: ptr(plainKeyAB), Settings: json.RawMessage(`{"timeoutSeconds": 60, "headers": {"x-team": "a"}}`)})
		assert.Equal(t, "Claude", c.Name)
		assert.Equal(t, "…text", *c.KeyHint)
		assert.Nil(t, c.ProjectIDs)
		assert.Equal(t, model.Settings{TimeoutSeconds: 60, Headers: map[string]string{"x-team": "a"}}, c.Settings)
		assert.Equal(t, "key:k-admin", c.CreatedBy)
		raw, err := json.Marshal(c)
		require.NoError(t, err)
		assert.NotContains(t, string(raw), plainKeyAB, "the answer never holds the key")

		got, err := f.svc.GetCredential(f.as(canvas.RoleViewer), c.ID)
		require.NoError(t, err)
		assert.Equal(t, c.Name, got.Name)

		opened, changed, err := f.svc.Open(context.Background(), f.ws.ID, c.ID)
		require.NoError(t, err)
		assert.Equal(t, plainKeyAB, opened.APIKey)
		assert.Equal(t, canvas.ProviderAnthropic, opened.Provider)
		assert.Equal(t, 60*time.Second, opened.Settings.Timeout())
		assert.True(t, changed.Equal(c.UpdatedAt))

		rec, err := f.db.GetCredential(context.Background(), f.ws.ID, c.ID)
		require.NoError(t, err)
		assert.NotContains(t, string(rec.Sealed.Ciphertext), plainKeyAB)
		assert.Equal(t, f.ring.Current(), rec.Sealed.KeyID)
	})
	t.Run("KeyOptionalForCompatible", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		c := f.create(f.as(canvas.RoleAdmin), credential.CreateParams{Name: "ollama", Provider: canvas.ProviderOpenAICompatible,
			BaseURL: ptr("http://localhost:11434/v1")})
		assert.Nil(t, c.KeyHint)
		opened, _, err := f.svc.Open(context.Background(), f.ws.ID, c.ID)
		require.NoError(t, err)
		assert.Empty(t, opened.APIKey)
		assert.Equal(t, "http://localhost:11434/v1", opened.BaseURL)
	})
	t.Run("ShortKeyHidesItsEnd", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		c := f.create(f.as(canvas.RoleAdmin), credential.CreateParams{Name: "n", Provider: canvas.ProviderOpenAI,
			APIKey: ptr("short")})
		assert.Equal(t, "…", *c.KeyHint)
	})
	t.Run("ValidationListsEveryProblem", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		admin := f.as(canvas.RoleAdmin)
		for _, tc := range []struct {
			name   string
			params credential.CreateParams
			want   []string
		}{
			{"Empty", credential.CreateParams{}, []string{"/json/name", "/json/provider"}},
			{"UnknownProvider", credential.CreateParams{Name: "x", Provider: "mistral", APIKey: ptr("k")},
				[]string{"/json/provider"}},
			{"KeyRequired", credential.CreateParams{Name: "x", Provider: canvas.ProviderAnthropic}, []string{"/json/apiKey"}},
			{"BlankKey", credential.CreateParams{Name: "x", Provider: canvas.ProviderOpenAI, APIKey: ptr("   ")},
				[]string{"/json/apiKey"}},
			{"BadURLAndProjects", credential.CreateParams{Name: "x", Provider: canvas.ProviderOpenAI, APIKey: ptr("k"),
				BaseURL: ptr("ftp://x"), ProjectIDs: []string{"nope"}}, []string{"/json/baseUrl", "/json/projectIds/0"}},
			{"URLWithUser", credential.CreateParams{Name: "x", Provider: canvas.ProviderOpenAI, APIKey: ptr("k"),
				BaseURL: ptr("https://u:p@example.com")}, []string{"/json/baseUrl"}},
			{"EmptyProjects", credential.CreateParams{Name: "x", Provider: canvas.ProviderOpenAI, APIKey: ptr("k"),
				ProjectIDs: []string{}}, []string{"/json/projectIds"}},
			{"AzureNeeds", credential.CreateParams{Name: "x", Provider: canvas.ProviderAzureOpenAI, APIKey: ptr("k")},
				[]string{"/json/baseUrl", "/json/settings/apiVersion"}},
			{"BedrockNeedsRegion", credential.CreateParams{Name: "x", Provider: canvas.ProviderBedrock, APIKey: ptr("k")},
				[]string{"/json/settings/region"}},
			{"VertexNeeds", credential.CreateParams{Name: "x", Provider: canvas.ProviderGemini, APIKey: ptr("k"),
				Settings: json.RawMessage(`{"backend": "vertex"}`)}, []string{"/json/settings/project", "/json/settings/location"}},
			{"GeminiBackend", credential.CreateParams{Name: "x", Provider: canvas.ProviderGemini, APIKey: ptr("k"),
				Settings: json.RawMessage(`{"backend": "cloud"}`)}, []string{"/json/settings/backend"}},
			{"UnknownAndForeignSettings", credential.CreateParams{Name: "x", Provider: canvas.ProviderAnthropic,
				APIKey: ptr("k"), Settings: json.RawMessage(`{"region": "us-east-1", "colour": "red"}`)},
				[]string{"/json/settings/colour", "/json/settings/region"}},
			{"Bounds", credential.CreateParams{Name: "x", Provider: canvas.ProviderOpenAI, APIKey: ptr("k"),
				Settings: json.RawMessage(`{"timeoutSeconds": 0, "maxConcurrency": 1001}`)},
				[]string{"/json/settings/maxConcurrency", "/json/settings/timeoutSeconds"}},
			{"KeyInHeaders", credential.CreateParams{Name: "x", Provider: canvas.ProviderOpenAI, APIKey: ptr("k"),
				Settings: json.RawMessage(`{"headers": {"Authorization": "Bearer sk", "bad name": "v"}}`)},
				[]string{"/json/settings/headers/Authorization", "/json/settings/headers/bad name"}},
		} {
			_, err := f.svc.CreateCredential(admin, tc.params)
			assert.Equal(t, tc.want, detailPaths(t, err), tc.name)
		}
	})
	t.Run("Conflict", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		admin := f.as(canvas.RoleAdmin)
		f.create(admin, credential.CreateParams{Name: "main", Provider: canvas.ProviderOpenAI, APIKey: ptr("k")})
		_, err := f.svc.CreateCredential(admin, credential.CreateParams{Name: "main", Provider: canvas.ProviderAnthropic,
			APIKey: ptr("k")})
		requireCode(t, canvas.ECONFLICT, err)
	})
	t.Run("Forbidden", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		params := credential.CreateParams{Name: "x", Provider: canvas.ProviderOpenAI, APIKey: ptr("k")}
		for _, role := range []canvas.Role{canvas.RoleViewer, canvas.RoleEditor} {
			_, err := f.svc.CreateCredential(f.as(role), params)
			requireCode(t, canvas.EFORBIDDEN, err)
		}
		_, err := f.svc.CreateCredential(context.Background(), params)
		requireCode(t, canvas.EUNAUTHORIZED, err)
	})
	t.Run("NoKeyRing", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		f.svc = f.service(nil)
		_, err := f.svc.CreateCredential(f.as(canvas.RoleAdmin), credential.CreateParams{Name: "x",
			Provider: canvas.ProviderOpenAI, APIKey: ptr("k")})
		requireCode(t, canvas.ECONFLICT, err)
		assert.Contains(t, err.Error(), "CANVAS_SECRETS_KEY_FILE")
	})
}

func TestService_ProjectScope(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	admin := f.as(canvas.RoleAdmin)
	every := f.create(admin, credential.CreateParams{Name: "every", Provider: canvas.ProviderOpenAI, APIKey: ptr("k")})
	of1 := f.create(admin, credential.CreateParams{Name: "of1", Provider: canvas.ProviderOpenAI, APIKey: ptr("k"),
		ProjectIDs: []string{f.p1.ID}})
	of12 := f.create(admin, credential.CreateParams{Name: "of12", Provider: canvas.ProviderOpenAI, APIKey: ptr("k"),
		ProjectIDs: []string{f.p1.ID, f.p2.ID}})

	names := func(ctx context.Context, q credential.ListQuery) []string {
		t.Helper()
		q.Limit = 10
		list, total, err := f.svc.ListCredentials(ctx, q)
		require.NoError(t, err)
		assert.Len(t, list, total)
		out := []string{}
		for _, c := range list {
			out = append(out, c.Name)
		}
		return out
	}
	of2 := f.as(canvas.RoleAdmin, f.p2.ID)
	assert.Equal(t, []string{"every", "of1", "of12"}, names(f.as(canvas.RoleViewer), credential.ListQuery{}))
	assert.Equal(t, []string{"every", "of12"}, names(of2, credential.ListQuery{}), "those of every project and those meeting p2")
	assert.Equal(t, []string{"every", "of12"}, names(admin, credential.ListQuery{ProjectID: f.p2.ID}))
	_, _, err := f.svc.ListCredentials(of2, credential.ListQuery{ProjectID: f.p1.ID, Limit: 10})
	requireCode(t, canvas.EFORBIDDEN, err)

	_, err = f.svc.GetCredential(of2, of1.ID)
	requireCode(t, canvas.EFORBIDDEN, err)
	_, err = f.svc.GetCredential(of2, every.ID)
	require.NoError(t, err)

	// A principal limited to projects writes only credentials wholly inside
	// them, and never one of every project.
	_, err = f.svc.UpdateCredential(of2, of12.ID, credential.UpdateParams{Name: ptr("x")})
	requireCode(t, canvas.EFORBIDDEN, err)
	_, err = f.svc.UpdateCredential(of2, every.ID, credential.UpdateParams{Name: ptr("x")})
	requireCode(t, canvas.EFORBIDDEN, err)
	requireCode(t, canvas.EFORBIDDEN, f.svc.DeleteCredential(of2, every.ID))
	_, err = f.svc.CreateCredential(of2, credential.CreateParams{Name: "mine", Provider: canvas.ProviderOpenAI, APIKey: ptr("k")})
	requireCode(t, canvas.EFORBIDDEN, err)
	_, err = f.svc.CreateCredential(of2, credential.CreateParams{Name: "mine", Provider: canvas.ProviderOpenAI,
		APIKey: ptr("k"), ProjectIDs: []string{f.p1.ID}})
	requireCode(t, canvas.EFORBIDDEN, err)
	mine := f.create(of2, credential.CreateParams{Name: "mine", Provider: canvas.ProviderOpenAI, APIKey: ptr("k"),
		ProjectIDs: []string{f.p2.ID}})
	_, err = f.svc.UpdateCredential(of2, mine.ID, credential.UpdateParams{ProjectIDsSet: true})
	requireCode(t, canvas.EFORBIDDEN, err)
	require.NoError(t, f.svc.DeleteCredential(of2, mine.ID))

	// Projects must be the workspace's, as a canvas's are.
	_, err = f.svc.CreateCredential(admin, credential.CreateParams{Name: "ghost", Provider: canvas.ProviderOpenAI,
		APIKey: ptr("k"), ProjectIDs: []string{"5f1d0c3a-0000-4000-8000-0000000000ff"}})
	requireCode(t, canvas.ENOTFOUND, err)

	// Another workspace sees none of them.
	other := &canvas.Workspace{Name: "other"}
	require.NoError(t, f.db.CreateWorkspace(context.Background(), other))
	otherAdmin := canvas.NewContext(context.Background(), &canvas.Principal{WorkspaceID: other.ID, KeyID: "o", Role: canvas.RoleAdmin})
	_, err = f.svc.GetCredential(otherAdmin, every.ID)
	requireCode(t, canvas.ENOTFOUND, err)
	requireCode(t, canvas.ENOTFOUND, f.svc.DeleteCredential(otherAdmin, every.ID))
	_, _, err = f.svc.Open(context.Background(), other.ID, every.ID)
	requireCode(t, canvas.ENOTFOUND, err)
}

func TestService_UpdateCredential(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	admin := f.as(canvas.RoleAdmin)
	c := f.create(admin, credential.CreateParams{Name: "azure", Provider: canvas.ProviderAzureOpenAI, APIKey: ptr(plainKeyAB),
		BaseURL:  ptr("https://acme.openai.azure.com"),
		Settings: json.RawMessage(`{"apiVersion": "2024-10-21", "deployment": "gpt4o", "headers": {"x-a": "1"}}`)})

	f.now.Add(int64(time.Second))
	got, err := f.svc.UpdateCredential(admin, c.ID, credential.UpdateParams{Name: ptr("azure-eu"),
		APIKey: ptr("sk-rotated-0000-9999"), APIKeySet: true,
		Settings: json.RawMessage(`{"deployment": null, "headers": {"x-b": "2"}}`)})
	require.NoError(t, err)
	assert.Equal(t, "azure-eu", got.Name)
	assert.Equal(t, "…9999", *got.KeyHint)
	assert.Equal(t, model.Settings{APIVersion: "2024-10-21", Headers: map[string]string{"x-a": "1", "x-b": "2"}}, got.Settings,
		"settings merge as a JSON merge patch")
	opened, _, err := f.svc.Open(context.Background(), f.ws.ID, c.ID)
	require.NoError(t, err)
	assert.Equal(t, "sk-rotated-0000-9999", opened.APIKey, "the key is rotated")

	for _, tc := range []struct {
		name   string
		params credential.UpdateParams
		want   []string
	}{
		{"KeyCannotBeRemoved", credential.UpdateParams{APIKeySet: true}, []string{"/json/apiKey"}},
		{"APIVersionCannotBeRemoved", credential.UpdateParams{Settings: json.RawMessage(`{"apiVersion": null}`)},
			[]string{"/json/settings/apiVersion"}},
		{"BaseURLCannotBeRemoved", credential.UpdateParams{BaseURLSet: true}, []string{"/json/baseUrl"}},
		{"UnknownSetting", credential.UpdateParams{Settings: json.RawMessage(`{"region": "x"}`)}, []string{"/json/settings/region"}},
		{"BadName", credential.UpdateParams{Name: ptr(" ")}, []string{"/json/name"}},
	} {
		_, err := f.svc.UpdateCredential(admin, c.ID, tc.params)
		assert.Equal(t, tc.want, detailPaths(t, err), tc.name)
	}

	got, err = f.svc.UpdateCredential(admin, c.ID, credential.UpdateParams{ProjectIDs: []string{f.p1.ID}, ProjectIDsSet: true})
	require.NoError(t, err)
	assert.Equal(t, []string{f.p1.ID}, got.ProjectIDs)
	got, err = f.svc.UpdateCredential(admin, c.ID, credential.UpdateParams{ProjectIDsSet: true})
	require.NoError(t, err)
	assert.Nil(t, got.ProjectIDs, "null opens it to every project")

	local := f.create(admin, credential.CreateParams{Name: "local", Provider: canvas.ProviderOpenAICompatible,
		APIKey: ptr("sk-local-key-1234"), BaseURL: ptr("http://localhost:8000/v1")})
	got, err = f.svc.UpdateCredential(admin, local.ID, credential.UpdateParams{APIKeySet: true})
	require.NoError(t, err)
	assert.Nil(t, got.KeyHint, "an openai-compatible credential may drop its key")

	_, err = f.svc.UpdateCredential(admin, local.ID, credential.UpdateParams{Name: ptr("azure-eu")})
	requireCode(t, canvas.ECONFLICT, err)
	_, err = f.svc.UpdateCredential(f.as(canvas.RoleEditor), local.ID, credential.UpdateParams{Name: ptr("x")})
	requireCode(t, canvas.EFORBIDDEN, err)

	require.NoError(t, f.svc.DeleteCredential(admin, c.ID))
	_, err = f.svc.GetCredential(admin, c.ID)
	requireCode(t, canvas.ENOTFOUND, err)
	_, _, err = f.svc.Open(context.Background(), f.ws.ID, c.ID)
	requireCode(t, canvas.ENOTFOUND, err)
	list, err := f.svc.List(context.Background(), f.ws.ID)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, local.ID, list[0].ID)
}

func TestService_ForTheCaller(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	admin := f.as(canvas.RoleAdmin)
	a := f.create(admin, credential.CreateParams{Name: "a", Provider: canvas.ProviderAnthropic, APIKey: ptr("sk-a-0001")})
	f.now.Add(int64(time.Millisecond))
	b := f.create(admin, credential.CreateParams{Name: "b", Provider: canvas.ProviderGemini, APIKey: ptr("sk-b-0002"),
		ProjectIDs: []string{f.p1.ID}})

	t.Run("List", func(t *testing.T) {
		list, err := f.svc.List(context.Background(), f.ws.ID)
		require.NoError(t, err)
		require.Len(t, list, 2)
		assert.Equal(t, model.CredentialInfo{ID: a.ID, Name: "a", Provider: canvas.ProviderAnthropic, CreatedAt: a.CreatedAt}, list[0])
		assert.Equal(t, []string{f.p1.ID}, list[1].ProjectIDs)

		// A change is seen at once, the cache notwithstanding.
		_, err = f.svc.UpdateCredential(admin, b.ID, credential.UpdateParams{Name: ptr("b2")})
		require.NoError(t, err)
		list, err = f.svc.List(context.Background(), f.ws.ID)
		require.NoError(t, err)
		assert.Equal(t, "b2", list[1].Name)
	})
	t.Run("UsedCoalesces", func(t *testing.T) {
		ctx := context.Background()
		lastUsed := func() *time.Time {
			t.Helper()
			c, err := f.svc.GetCredential(admin, a.ID)
			require.NoError(t, err)
			return c.LastUsedAt
		}
		first := time.Unix(0, f.now.Load()).UTC()
		f.svc.Used(ctx, f.ws.ID, a.ID)
		require.NotNil(t, lastUsed())
		assert.True(t, lastUsed().Equal(first))
		f.now.Add(int64(30 * time.Second))
		f.svc.Used(ctx, f.ws.ID, a.ID)
		assert.True(t, lastUsed().Equal(first), "within a minute, no second write")
		f.now.Add(int64(31 * time.Second))
		f.svc.Used(ctx, f.ws.ID, a.ID)
		assert.True(t, lastUsed().After(first), "past a minute, written again")
		f.svc.Used(ctx, f.ws.ID, "5f1d0c3a-0000-4000-8000-0000000000ff") // unknown: nothing, no panic
	})
}

func TestService_RotateKey(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	admin := f.as(canvas.RoleAdmin)
	var ids []string
	for _, name := range []string{"a", "b", "c"} {
		ids = append(ids, f.create(admin, credential.CreateParams{Name: name, Provider: canvas.ProviderOpenAI,
			APIKey: ptr("sk-" + name + "-distinctive")}).ID)
	}
	gone := f.create(admin, credential.CreateParams{Name: "gone", Provider: canvas.ProviderOpenAI, APIKey: ptr("sk-gone")})
	require.NoError(t, f.svc.DeleteCredential(admin, gone.ID))
	other := &canvas.Workspace{Name: "other"}
	require.NoError(t, f.db.CreateWorkspace(context.Background(), other))
	otherAdmin := canvas.NewContext(context.Background(), &canvas.Principal{WorkspaceID: other.ID, KeyID: "o", Role: canvas.RoleAdmin})
	theirs := f.create(otherAdmin, credential.CreateParams{Name: "a", Provider: canvas.ProviderOpenAI, APIKey: ptr("sk-theirs")})

	old := f.ring.Keys()[0]
	next := credential.NewKey()
	rotating := f.service(mustRing(t, next, old))
	n, err := rotating.RotateKey(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 4, n, "every live credential of every workspace")
	n, err = rotating.RotateKey(context.Background())
	require.NoError(t, err)
	assert.Zero(t, n, "nothing is left under the old key")

	rotated := f.service(mustRing(t, next))
	for i, id := range ids {
		c, _, err := rotated.Open(context.Background(), f.ws.ID, id)
		require.NoError(t, err)
		assert.Equal(t, "sk-"+[]string{"a", "b", "c"}[i]+"-distinctive", c.APIKey)
	}
	c, _, err := rotated.Open(context.Background(), other.ID, theirs.ID)
	require.NoError(t, err)
	assert.Equal(t, "sk-theirs", c.APIKey)

	_, _, err = f.service(mustRing(t, old)).Open(context.Background(), f.ws.ID, ids[0])
	requireCode(t, canvas.EINTERNAL, err)
	assert.NotContains(t, err.Error(), "sk-a")

	_, err = f.service(mustRing(t, credential.NewKey())).RotateKey(context.Background())
	assert.ErrorIs(t, err, credential.ErrOpen, "a key that does not open stops the rotation")
	assert.Contains(t, err.Error(), "credential ", "naming the credential")
}

func TestService_Prices(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	admin := f.as(canvas.RoleAdmin)
	ctx := context.Background()
	price := func(name string) (model.Price, bool) {
		t.Helper()
		p, ok, err := f.svc.Price(ctx, f.ws.ID, name)
		require.NoError(t, err)
		return p, ok
	}
	catalogued, ok := price("claude-sonnet-4-5-20250929")
	require.True(t, ok, "the catalogue prices a dated name")
	assert.Equal(t, model.SourceCatalogue, catalogued.Source)
	_, ok = price("llama3.1:8b")
	assert.False(t, ok)

	set, err := f.svc.SetModelPrice(admin, "claude-sonnet-4-5", credential.SetPriceParams{Provider: canvas.ProviderAnthropic,
		InputPerMillion: ptr(1.0), OutputPerMillion: ptr(2.0)})
	require.NoError(t, err)
	assert.Equal(t, model.SourceWorkspace, set.Source)
	assert.Equal(t, "key:k-admin", *set.UpdatedBy)
	_, err = f.svc.SetModelPrice(admin, "llama3.1:8b", credential.SetPriceParams{Provider: canvas.ProviderOpenAICompatible,
		InputPerMillion: ptr(0.0), OutputPerMillion: ptr(0.0)})
	require.NoError(t, err)

	p, ok := price("claude-sonnet-4-5-20250929")
	require.True(t, ok)
	assert.Equal(t, 1.0, p.InputPerMillion, "the override wins at once, and for the names extending it")
	_, ok = price("llama3.1:8b")
	assert.True(t, ok)
	_, ok, err = f.svc.Price(ctx, "another-workspace", "llama3.1:8b")
	require.NoError(t, err)
	assert.False(t, ok, "overrides are the workspace's")

	list, total, err := f.svc.ListModels(f.as(canvas.RoleViewer), credential.ModelsQuery{Provider: canvas.ProviderAnthropic})
	require.NoError(t, err)
	assert.Equal(t, total, len(list))
	var sources = map[string]string{}
	for _, m := range list {
		assert.Equal(t, canvas.ProviderAnthropic, m.Provider)
		sources[m.Name] = m.Source
	}
	assert.Equal(t, model.SourceWorkspace, sources["claude-sonnet-4-5"])
	assert.Equal(t, model.SourceCatalogue, sources["claude-opus-4-1"])
	all, total, err := f.svc.ListModels(f.as(canvas.RoleViewer), credential.ModelsQuery{Limit: 5, Offset: 2})
	require.NoError(t, err)
	assert.Len(t, all, 5)
	assert.Equal(t, len(model.Bundled().All())+1, total, "the catalogue and the one name it lacks")

	for _, tc := range []struct {
		name   string
		model  string
		params credential.SetPriceParams
		want   []string
	}{
		{"Missing", "m", credential.SetPriceParams{}, []string{"/json/provider", "/json/inputPerMillion", "/json/outputPerMillion"}},
		{"Bounds", "m", credential.SetPriceParams{Provider: "echo", InputPerMillion: ptr(-1.0), OutputPerMillion: ptr(10001.0)},
			[]string{"/json/inputPerMillion", "/json/outputPerMillion"}},
		{"Name", "bad name", credential.SetPriceParams{Provider: "echo", InputPerMillion: ptr(1.0), OutputPerMillion: ptr(1.0)},
			[]string{"/path/name"}},
	} {
		_, err := f.svc.SetModelPrice(admin, tc.model, tc.params)
		assert.Equal(t, tc.want, detailPaths(t, err), tc.name)
	}
	_, err = f.svc.SetModelPrice(f.as(canvas.RoleAdmin, f.p1.ID), "m", credential.SetPriceParams{Provider: "echo",
		InputPerMillion: ptr(1.0), OutputPerMillion: ptr(1.0)})
	requireCode(t, canvas.EFORBIDDEN, err)
	_, err = f.svc.SetModelPrice(f.as(canvas.RoleEditor), "m", credential.SetPriceParams{})
	requireCode(t, canvas.EFORBIDDEN, err)

	require.NoError(t, f.svc.DeleteModelPrice(admin, "claude-sonnet-4-5"))
	requireCode(t, canvas.ENOTFOUND, f.svc.DeleteModelPrice(admin, "claude-sonnet-4-5"))
	p, _ = price("claude-sonnet-4-5-20250929")
	assert.Equal(t, catalogued, p, "the catalogue prices it again")
}
