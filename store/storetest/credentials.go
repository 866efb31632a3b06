package storetest

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/credential"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/store"
)

// Credential creates a credential of the fixture's workspace named name,
// of provider, limited to projects (nil: every project), with a sealed key
// of made-up bytes under key id kek.
func (f *fixture) Credential(name, provider string, projects []string, kek string) *credential.Record {
	f.t.Helper()
	hint := "…abcd"
	r := &credential.Record{Credential: credential.Credential{ID: uuid.NewString(), WorkspaceID: f.ws.ID, Name: name,
		Provider: provider, ProjectIDs: projects, KeyHint: &hint, CreatedBy: "alice",
		Settings: model.Settings{Region: "eu-west-1", Headers: map[string]string{"x-team": "a"}}},
		UpdatedBy: "alice",
		Sealed:    &credential.Sealed{Ciphertext: []byte{0, 1, 2, 0xff}, Nonce: []byte("nonce-12byte"), KeyID: kek}}
	require.NoError(f.t, f.s.CreateCredential(f.ctx, r))
	return r
}

func credentialID(r *credential.Record) string { return r.ID }

func testCredentials(t *testing.T, newStore func(t *testing.T) store.Store) {
	run(t, newStore, "CreateGetRoundTrip", func(t *testing.T, f *fixture) {
		p := f.Project("p")
		r := f.Credential("bedrock", canvas.ProviderBedrock, []string{p.ID}, "k1")
		base := "https://example.com/v1"
		open := &credential.Record{Credential: credential.Credential{ID: uuid.NewString(), WorkspaceID: f.ws.ID,
			Name: "local", Provider: canvas.ProviderOpenAICompatible, BaseURL: &base, CreatedBy: "bob"}, UpdatedBy: "bob"}
		require.NoError(t, f.s.CreateCredential(f.ctx, open))

		got, err := f.s.GetCredential(f.ctx, f.ws.ID, r.ID)
		require.NoError(t, err)
		assert.Equal(t, "bedrock", got.Name)
		assert.Equal(t, []string{p.ID}, got.ProjectIDs)
		assert.Equal(t, model.Settings{Region: "eu-west-1", Headers: map[string]string{"x-team": "a"}}, got.Settings)
		require.NotNil(t, got.Sealed)
		assert.Equal(t, *r.Sealed, *got.Sealed, "the sealed bytes come back as they went in")
		assert.Equal(t, "…abcd", *got.KeyHint)
		assert.Nil(t, got.BaseURL)
		assert.Nil(t, got.LastUsedAt)
		assert.WithinDuration(t, r.CreatedAt, got.CreatedAt, time.Microsecond)
		assert.Equal(t, "alice", got.CreatedBy)

		got, err = f.s.GetCredential(f.ctx, f.ws.ID, open.ID)
		require.NoError(t, err)
		assert.Nil(t, got.ProjectIDs, "every project")
		assert.Nil(t, got.Sealed, "no key")
		assert.Nil(t, got.KeyHint)
		assert.Equal(t, base, *got.BaseURL)
	})
	run(t, newStore, "NameUniqueAmongLive", func(t *testing.T, f *fixture) {
		a := f.Credential("main", canvas.ProviderAnthropic, nil, "k1")
		dup := &credential.Record{Credential: credential.Credential{ID: uuid.NewString(), WorkspaceID: f.ws.ID,
			Name: "main", Provider: canvas.ProviderOpenAI, CreatedBy: "alice"}, UpdatedBy: "alice"}
		requireCode(t, canvas.ECONFLICT, f.s.CreateCredential(f.ctx, dup))

		b := f.Credential("other", canvas.ProviderOpenAI, nil, "k1")
		name := "main"
		_, err := f.s.UpdateCredential(f.ctx, f.ws.ID, b.ID, credential.Update{Name: &name})
		requireCode(t, canvas.ECONFLICT, err)

		require.NoError(t, f.s.DeleteCredential(f.ctx, f.ws.ID, a.ID, "alice"))
		require.NoError(t, f.s.CreateCredential(f.ctx, dup), "a deleted credential's name is free again")

		other := f.Workspace("other")
		f.ws = other
		f.Credential("main", canvas.ProviderOpenAI, nil, "k1") // names are unique per workspace
	})
	run(t, newStore, "OtherWorkspaceNotFound", func(t *testing.T, f *fixture) {
		r := f.Credential("main", canvas.ProviderAnthropic, nil, "k1")
		other := f.Workspace("other")
		_, err := f.s.GetCredential(f.ctx, other.ID, r.ID)
		requireCode(t, canvas.ENOTFOUND, err)
		name := "x"
		_, err = f.s.UpdateCredential(f.ctx, other.ID, r.ID, credential.Update{Name: &name})
		requireCode(t, canvas.ENOTFOUND, err)
		requireCode(t, canvas.ENOTFOUND, f.s.DeleteCredential(f.ctx, other.ID, r.ID, "eve"))
		ok, err := f.s.ResealCredential(f.ctx, other.ID, r.ID, *r.Sealed, credential.Sealed{Ciphertext: []byte("x"),
			Nonce: []byte("y"), KeyID: "k2"})
		require.NoError(t, err)
		assert.False(t, ok)
		list, total, err := f.s.ListCredentials(f.ctx, credential.ListParams{WorkspaceID: other.ID, Limit: 10})
		require.NoError(t, err)
		assert.Empty(t, list)
		assert.Zero(t, total)
	})
	run(t, newStore, "ListFilters", func(t *testing.T, f *fixture) {
		p1, p2, p3 := f.Project("p1"), f.Project("p2"), f.Project("p3")
		all := f.Credential("all", canvas.ProviderOpenAI, nil, "k1")
		one := f.Credential("one", canvas.ProviderAnthropic, []string{p1.ID}, "k1")
		two := f.Credential("two", canvas.ProviderAnthropic, []string{p2.ID, p3.ID}, "k1")
		gone := f.Credential("gone", canvas.ProviderAnthropic, nil, "k1")
		require.NoError(t, f.s.DeleteCredential(f.ctx, f.ws.ID, gone.ID, "alice"))

		list := func(p credential.ListParams) ([]string, int) {
			t.Helper()
			p.WorkspaceID = f.ws.ID
			if p.Limit == 0 {
				p.Limit = 10
			}
			recs, total, err := f.s.ListCredentials(f.ctx, p)
			require.NoError(t, err)
			return ids(recs, credentialID), total
		}
		got, total := list(credential.ListParams{})
		assert.Equal(t, []string{all.ID, one.ID, two.ID}, got, "oldest first, the deleted one left out")
		assert.Equal(t, 3, total)
		got, total = list(credential.ListParams{Limit: 1, Offset: 1})
		assert.Equal(t, []string{one.ID}, got)
		assert.Equal(t, 3, total)
		got, _ = list(credential.ListParams{Provider: canvas.ProviderAnthropic})
		assert.Equal(t, []string{one.ID, two.ID}, got)
		got, _ = list(credential.ListParams{ProjectID: p3.ID})
		assert.Equal(t, []string{all.ID, two.ID}, got, "those p3 may use")
		got, total = list(credential.ListParams{Visible: []string{p1.ID}})
		assert.Equal(t, []string{all.ID, one.ID}, got, "what a principal of p1 sees")
		assert.Equal(t, 2, total)
		got, _ = list(credential.ListParams{Visible: []string{}})
		assert.Equal(t, []string{all.ID}, got, "a principal of no project sees those of every project")
	})
	run(t, newStore, "UpdateAndClear", func(t *testing.T, f *fixture) {
		p := f.Project("p")
		r := f.Credential("main", canvas.ProviderOpenAICompatible, []string{p.ID}, "k1")
		base := "http://localhost:11434/v1"
		basePtr := &base
		var every []string
		settings := model.Settings{TimeoutSeconds: 30}
		time.Sleep(2 * time.Millisecond)
		got, err := f.s.UpdateCredential(f.ctx, f.ws.ID, r.ID, credential.Update{BaseURL: &basePtr,
			ProjectIDs: &every, Settings: &settings, ClearKey: true, UpdatedBy: "bob"})
		require.NoError(t, err)
		assert.Equal(t, base, *got.BaseURL)
		assert.Nil(t, got.ProjectIDs)
		assert.Nil(t, got.Sealed)
		assert.Nil(t, got.KeyHint)
		assert.True(t, got.UpdatedAt.After(r.UpdatedAt))
		read, err := f.s.GetCredential(f.ctx, f.ws.ID, r.ID)
		require.NoError(t, err)
		assert.Equal(t, got.Settings, read.Settings)
		assert.Nil(t, read.ProjectIDs)
		assert.Nil(t, read.Sealed)
		assert.Equal(t, "bob", read.UpdatedBy)

		sealed := credential.Sealed{Ciphertext: []byte("new"), Nonce: []byte("nonce-000002"), KeyID: "k2"}
		hint := "…wxyz"
		got, err = f.s.UpdateCredential(f.ctx, f.ws.ID, r.ID, credential.Update{Sealed: &sealed, KeyHint: &hint})
		require.NoError(t, err)
		assert.Equal(t, sealed, *got.Sealed)
		read, err = f.s.GetCredential(f.ctx, f.ws.ID, r.ID)
		require.NoError(t, err)
		assert.Equal(t, sealed, *read.Sealed)
		assert.Equal(t, "…wxyz", *read.KeyHint)
	})
	run(t, newStore, "DeleteForgetsKey", func(t *testing.T, f *fixture) {
		r := f.Credential("main", canvas.ProviderAnthropic, nil, "k1")
		require.NoError(t, f.s.DeleteCredential(f.ctx, f.ws.ID, r.ID, "alice"))
		_, err := f.s.GetCredential(f.ctx, f.ws.ID, r.ID)
		requireCode(t, canvas.ENOTFOUND, err)
		requireCode(t, canvas.ENOTFOUND, f.s.DeleteCredential(f.ctx, f.ws.ID, r.ID, "alice"))
		left, err := f.s.SealedCredentials(f.ctx, "k2", "", 10)
		require.NoError(t, err)
		assert.Empty(t, left, "a deleted credential keeps no sealed key to rotate")
	})
	run(t, newStore, "TouchMovesForward", func(t *testing.T, f *fixture) {
		r := f.Credential("main", canvas.ProviderAnthropic, nil, "k1")
		at := time.Now().UTC().Truncate(time.Microsecond)
		require.NoError(t, f.s.TouchCredential(f.ctx, f.ws.ID, r.ID, at))
		require.NoError(t, f.s.TouchCredential(f.ctx, f.ws.ID, r.ID, at.Add(-time.Hour)))
		got, err := f.s.GetCredential(f.ctx, f.ws.ID, r.ID)
		require.NoError(t, err)
		require.NotNil(t, got.LastUsedAt)
		assert.True(t, got.LastUsedAt.Equal(at), "never moved back: %s", got.LastUsedAt)
		assert.True(t, got.UpdatedAt.Equal(r.UpdatedAt), "a use is not an update")
		require.NoError(t, f.s.TouchCredential(f.ctx, f.ws.ID, uuid.NewString(), at), "an unknown one is nothing to record")
	})
	run(t, newStore, "SealedAndReseal", func(t *testing.T, f *fixture) {
		a := f.Credential("a", canvas.ProviderAnthropic, nil, "old")
		b := f.Credential("b", canvas.ProviderAnthropic, nil, "old")
		c := f.Credential("c", canvas.ProviderAnthropic, nil, "new")
		other := f.Workspace("other")
		f.ws = other
		d := f.Credential("d", canvas.ProviderAnthropic, nil, "old")

		var seen []string
		after := ""
		for {
			batch, err := f.s.SealedCredentials(f.ctx, "new", after, 2)
			require.NoError(t, err)
			if len(batch) == 0 {
				break
			}
			for _, r := range batch {
				seen = append(seen, r.ID)
				after = r.ID
			}
		}
		assert.ElementsMatch(t, []string{a.ID, b.ID, d.ID}, seen, "every workspace's, but those under the new key")
		assert.NotContains(t, seen, c.ID)

		next := credential.Sealed{Ciphertext: []byte("resealed"), Nonce: []byte("nonce-000003"), KeyID: "new"}
		ok, err := f.s.ResealCredential(f.ctx, a.WorkspaceID, a.ID, *a.Sealed, next)
		require.NoError(t, err)
		assert.True(t, ok)
		ok, err = f.s.ResealCredential(f.ctx, a.WorkspaceID, a.ID, *a.Sealed, next)
		require.NoError(t, err)
		assert.False(t, ok, "a sealed key that changed since it was read is left alone")
		got, err := f.s.GetCredential(f.ctx, a.WorkspaceID, a.ID)
		require.NoError(t, err)
		assert.Equal(t, next, *got.Sealed)
	})
	run(t, newStore, "ModelPrices", func(t *testing.T, f *fixture) {
		set := func(name string, in, out float64) *credential.PriceOverride {
			t.Helper()
			p := &credential.PriceOverride{WorkspaceID: f.ws.ID, UpdatedBy: "alice", Price: model.Price{Name: name,
				Provider: canvas.ProviderAnthropic, InputPerMillion: in, OutputPerMillion: out}}
			require.NoError(t, f.s.SetModelPrice(f.ctx, p))
			return p
		}
		set("claude-sonnet-4-5", 3, 15)
		set("anthropic.claude:1/x@eu", 0.25, 1.5)
		set("claude-sonnet-4-5", 2.5, 12.5) // replaces
		list, err := f.s.ListModelPrices(f.ctx, f.ws.ID)
		require.NoError(t, err)
		require.Len(t, list, 2)
		assert.Equal(t, "anthropic.claude:1/x@eu", list[0].Name)
		assert.Equal(t, 0.25, list[0].InputPerMillion)
		assert.Equal(t, "claude-sonnet-4-5", list[1].Name)
		assert.Equal(t, 2.5, list[1].InputPerMillion)
		assert.Equal(t, 12.5, list[1].OutputPerMillion)
		assert.Equal(t, model.SourceWorkspace, list[1].Source)
		assert.Equal(t, "alice", list[1].UpdatedBy)

		other := f.Workspace("other")
		theirs, err := f.s.ListModelPrices(f.ctx, other.ID)
		require.NoError(t, err)
		assert.Empty(t, theirs)
		requireCode(t, canvas.ENOTFOUND, f.s.DeleteModelPrice(f.ctx, other.ID, "claude-sonnet-4-5"))

		require.NoError(t, f.s.DeleteModelPrice(f.ctx, f.ws.ID, "claude-sonnet-4-5"))
		requireCode(t, canvas.ENOTFOUND, f.s.DeleteModelPrice(f.ctx, f.ws.ID, "claude-sonnet-4-5"))
		list, err = f.s.ListModelPrices(f.ctx, f.ws.ID)
		require.NoError(t, err)
		assert.Len(t, list, 1)
	})
	run(t, newStore, "ChangesMoveTheDataVersion", func(t *testing.T, f *fixture) {
		cv, ok := f.s.(canvas.ChangeVersioner)
		if !ok {
			t.Skip("the store has no data version")
		}
		version := func() int64 {
			t.Helper()
			v, err := cv.DataVersion(f.ctx)
			require.NoError(t, err)
			return v
		}
		before := version()
		r := f.Credential("main", canvas.ProviderAnthropic, nil, "k1")
		afterCreate := version()
		assert.NotEqual(t, before, afterCreate, "a new credential is a change the caller's cache must see")
		require.NoError(t, f.s.TouchCredential(f.ctx, f.ws.ID, r.ID, time.Now()))
		assert.Equal(t, afterCreate, version(), "recording a use empties no cache")
		require.NoError(t, f.s.SetModelPrice(f.ctx, &credential.PriceOverride{WorkspaceID: f.ws.ID, UpdatedBy: "a",
			Price: model.Price{Name: "m", Provider: "echo"}}))
		assert.NotEqual(t, afterCreate, version(), "a price override is a change the caller's cache must see")
	})
}
