package clienttest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/client"
	"github.com/promptcanvas/promptcanvas/client/wire"
)

// TestPrompts_Includes: a cached prompt that includes another canvas is
// refreshed when the included canvas's environment changes, through the
// watch and through polling alike.
func TestPrompts_Includes(t *testing.T) {
	for _, mode := range []struct {
		name  string
		watch bool
	}{{"Watch", true}, {"Polling", false}} {
		t.Run(mode.name, func(t *testing.T) {
			ts := startServer(t)
			c := ts.Client(t)
			ctx := context.Background()
			shared := mustFixture(t, c, 2)
			shared.publish(t, c, "production", 1)
			bot, err := c.CreateCanvas(ctx, wire.CreateCanvasParams{Title: "Bot", ProjectID: shared.Canvas.ProjectID})
			require.NoError(t, err)
			v, err := c.CreateVersion(ctx, wire.CreateVersionParams{PromptID: bot.ID,
				Configuration: &wire.Configuration{Model: "echo", Type: "chat"},
				Message:       &wire.MessageInput{Role: wire.RoleSystem, Content: "Bot. {{> " + shared.Canvas.ID + "}}"}})
			require.NoError(t, err)
			_, err = c.Publish(ctx, client.PublishParams{CanvasID: bot.ID, EnvName: "production", VersionID: v.ID})
			require.NoError(t, err)

			p := mustPrompts(t, c, client.PromptsOptions{DisableWatch: !mode.watch})
			first, err := p.Get(ctx, bot.ID, "production")
			require.NoError(t, err)
			require.Len(t, first.Version.ResolvedMessages, 1)
			assert.Equal(t, "Bot. Prompt 1 for {{name}}", first.Version.ResolvedMessages[0].Content)
			require.Len(t, first.Version.Includes, 1)
			assert.Equal(t, shared.Versions[0].ID, first.Version.Includes[0].VersionID)

			shared.publish(t, c, "production", 2)
			eventually(t, p, bot.ID, "production", func(pr *client.Prompt, err error) bool {
				return err == nil && len(pr.Version.ResolvedMessages) == 1 &&
					pr.Version.ResolvedMessages[0].Content == "Bot. Prompt 2 for {{name}}"
			}, "a publish of the included canvas is seen by the dependent")
			got, _ := p.Get(ctx, bot.ID, "production")
			assert.Equal(t, v.ID, got.Version.ID, "the dependent's own version is unchanged")
			assert.NotEqual(t, first.ETag, got.ETag)
		})
	}
}
