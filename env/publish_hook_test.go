package env_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/env"
)

func TestService_PublishHook(t *testing.T) {
	f := mustFixture(t)
	var told []*env.Publication
	var workspaces []string
	f.svc = env.NewService(f.db, f.db, env.WithPublishHook(func(_ context.Context, ws string, pub *env.Publication) {
		workspaces = append(workspaces, ws)
		told = append(told, pub)
	}))
	v1, v2 := f.mustVersion(t, "v1", "one"), f.mustVersion(t, "v2", "two")

	t.Run("OK", func(t *testing.T) {
		pub := f.mustPublish(t, env.Production, v1.ID)
		require.Len(t, told, 1)
		assert.Equal(t, pub.PublicationID, told[0].PublicationID)
		assert.Equal(t, f.canvas.ID, told[0].PromptID)
		assert.Equal(t, []string{f.workspace.ID}, workspaces)
	})
	t.Run("AlreadyActive", func(t *testing.T) {
		f.mustPublish(t, env.Production, v1.ID)
		assert.Len(t, told, 1, "publishing the active version again creates nothing to tell")
	})
	t.Run("Rollback", func(t *testing.T) {
		f.mustPublish(t, env.Production, v2.ID)
		f.mustPublish(t, env.Production, v1.ID)
		require.Len(t, told, 3)
		assert.Equal(t, v1.ID, told[2].VersionID)
	})
	t.Run("Forbidden", func(t *testing.T) {
		_, _, err := f.svc.Publish(f.as(canvas.RoleViewer), env.PublishVersionParams{
			CanvasID: f.canvas.ID, EnvName: env.Production, VersionID: v2.ID})
		require.Error(t, err)
		assert.Len(t, told, 3, "a refused publish is not told")
	})
}
