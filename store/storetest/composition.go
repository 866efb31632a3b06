package storetest

import (
	"testing"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func testComposition(t *testing.T, newStore func(t *testing.T) store.Store) {
	run(t, newStore, "ListIncluders", func(t *testing.T, f *fixture) {
		p := f.Project("p")
		shared := f.Canvas("shared", p, "alice")
		a := f.Canvas("a", p, "alice")
		b := f.Canvas("b", p, "alice")
		va := f.Version(a, "{{> "+shared.ID+"@staging}} hello")
		f.Version(b, "mentions "+shared.ID+" without an include")
		vb2 := f.Version(b, "{{> "+shared.ID+"}}")
		f.Version(shared, "{{> "+shared.ID+"}} its own canvas is not listed")
		gone := f.Version(a, "{{> "+shared.ID+"@v1}}")
		require.NoError(t, f.s.DeleteVersion(f.ctx, canvas.DeleteVersionParams{WorkspaceID: f.ws.ID, ID: gone.ID, By: "alice"}))
		other := f.Workspace("other")
		list, err := f.s.ListIncluders(f.ctx, other.ID, shared.ID)
		require.NoError(t, err)
		assert.Empty(t, list, "another workspace")

		list, err = f.s.ListIncluders(f.ctx, f.ws.ID, shared.ID)
		require.NoError(t, err)
		ids := map[string]bool{}
		for _, v := range list {
			ids[v.ID] = true
			assert.NotEmpty(t, v.Messages, "filled as GetVersion fills them")
		}
		// The version that only mentions the id is read too: the caller
		// parses the includes.
		assert.True(t, ids[va.ID] && ids[vb2.ID])
		assert.False(t, ids[gone.ID], "a deleted version")
		deps, err := canvas.ListDependents(f.ctx, f.s, f.ws.ID, shared.ID)
		require.NoError(t, err)
		assert.ElementsMatch(t, []canvas.Dependent{
			{CanvasID: a.ID, VersionID: va.ID, VersionIndex: va.VersionIndex, Environment: "staging"},
			{CanvasID: b.ID, VersionID: vb2.ID, VersionIndex: vb2.VersionIndex, Environment: canvas.ProductionEnvironment},
		}, deps)
	})
	run(t, newStore, "RunIncludesAndVariant", func(t *testing.T, f *fixture) {
		v := f.Version(f.Canvas("c", f.Project("p"), "alice"), "hello")
		pub := f.Publish(v, "production")
		r := f.Run(v)
		r.Includes = []canvas.Include{{CanvasID: v.PromptID, Environment: "staging", VersionID: v.ID},
			{CanvasID: v.PromptID, VersionID: v.ID, VersionIndex: 1}}
		r.PublicationID = pub.PublicationID
		variant := 1
		r.Variant = &variant
		require.NoError(t, f.s.CreateRun(f.ctx, completion.CreateRunParams{Run: r}))
		got, err := f.s.GetRun(f.ctx, f.ws.ID, r.ID)
		require.NoError(t, err)
		assert.Equal(t, r.Includes, got.Includes)
		assert.Equal(t, pub.PublicationID, got.PublicationID)
		require.NotNil(t, got.Variant)
		assert.Equal(t, 1, *got.Variant)

		plain := f.Run(v)
		require.NoError(t, f.s.CreateRun(f.ctx, completion.CreateRunParams{Run: plain}))
		got, err = f.s.GetRun(f.ctx, f.ws.ID, plain.ID)
		require.NoError(t, err)
		assert.Nil(t, got.Includes)
		assert.Nil(t, got.Variant)
		assert.Empty(t, got.PublicationID)
	})
}
