package clienttest

import (
	"context"
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/client"
	"github.com/promptcanvas/promptcanvas/client/wire"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const waitFor, tick = 15 * time.Second, 10 * time.Millisecond

// mustPrompts returns a Prompts over c, closed with the test.
func mustPrompts(t *testing.T, c *client.Client, opts client.PromptsOptions) *client.Prompts {
	t.Helper()
	if opts.PollInterval == 0 {
		opts.PollInterval = 50 * time.Millisecond
	}
	p, err := c.NewPrompts(opts)
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	return p
}

// eventually waits until Get answers what ok accepts.
func eventually(t *testing.T, p *client.Prompts, canvasID, envName string, ok func(*client.Prompt, error) bool, msg string) {
	t.Helper()
	require.Eventually(t, func() bool {
		pr, err := p.Get(context.Background(), canvasID, envName)
		return ok(pr, err)
	}, waitFor, tick, msg)
}

func servesVersion(id string, stale bool) func(*client.Prompt, error) bool {
	return func(p *client.Prompt, err error) bool {
		return err == nil && p.Version.ID == id && p.Stale == stale
	}
}

func TestPrompts_Get(t *testing.T) {
	for _, mode := range []struct {
		name  string
		watch bool
	}{{"Watch", true}, {"Polling", false}} {
		t.Run(mode.name, func(t *testing.T) {
			ts := startServer(t)
			c := ts.Client(t)
			f := mustFixture(t, c, 3)
			f.publish(t, c, "production", 1)
			p := mustPrompts(t, c, client.PromptsOptions{DisableWatch: !mode.watch})
			ctx := context.Background()

			first, err := p.Get(ctx, f.Canvas.ID, "production")
			require.NoError(t, err)
			assert.Equal(t, f.Versions[0].ID, first.Version.ID)
			assert.Equal(t, "Prompt 1 for {{name}}", *first.Version.Content)
			assert.NotEmpty(t, first.ETag)
			assert.False(t, first.Stale)
			again, err := p.Get(ctx, f.Canvas.ID, "production")
			require.NoError(t, err)
			assert.Same(t, first, again, "a cached Get answers the same value")

			f.publish(t, c, "production", 2)
			eventually(t, p, f.Canvas.ID, "production", servesVersion(f.Versions[1].ID, false), "the publish is seen")

			_, err = c.UpdateVersion(ctx, f.Versions[1].ID, map[string]any{"content": "Edited {{name}}"})
			require.NoError(t, err)
			eventually(t, p, f.Canvas.ID, "production", func(pr *client.Prompt, err error) bool {
				return err == nil && *pr.Version.Content == "Edited {{name}}"
			}, "the edit is seen")

			f.publish(t, c, "production", 1)
			eventually(t, p, f.Canvas.ID, "production", servesVersion(f.Versions[0].ID, false), "the rollback is seen")
		})
	}
}

func TestPrompts_ServerRestart(t *testing.T) {
	ts := startServer(t)
	c := ts.Client(t)
	f := mustFixture(t, c, 3)
	f.publish(t, c, "production", 1)
	p := mustPrompts(t, c, client.PromptsOptions{})
	ctx := context.Background()
	_, err := p.Get(ctx, f.Canvas.ID, "production")
	require.NoError(t, err)

	ts.Stop() // drops the watch
	eventually(t, p, f.Canvas.ID, "production", servesVersion(f.Versions[0].ID, true),
		"the last good version is served, marked stale")
	pr, _ := p.Get(ctx, f.Canvas.ID, "production")
	assert.Error(t, pr.Err)

	ts.Start() // same data, same address
	eventually(t, p, f.Canvas.ID, "production", servesVersion(f.Versions[0].ID, false), "fresh again")
	f.publish(t, c, "production", 3)
	eventually(t, p, f.Canvas.ID, "production", servesVersion(f.Versions[2].ID, false), "a publish after the restart is seen")
}

func TestPrompts_Gone(t *testing.T) {
	ts := startServer(t)
	c := ts.Client(t)
	f := mustFixture(t, c, 1)
	ctx := context.Background()
	_, err := c.CreateEnvironment(ctx, f.Canvas.ID, "staging")
	require.NoError(t, err)
	f.publish(t, c, "staging", 1)
	p := mustPrompts(t, c, client.PromptsOptions{})
	_, err = p.Get(ctx, f.Canvas.ID, "staging")
	require.NoError(t, err)

	t.Run("NeverPublished", func(t *testing.T) {
		_, err := p.Get(ctx, f.Canvas.ID, "production")
		assert.Equal(t, wire.CodeNotFound, client.ErrorCode(err))
	})

	envs, err := c.ListEnvironments(ctx, f.Canvas.ID)
	require.NoError(t, err)
	for _, e := range envs {
		if e.Name == "staging" {
			require.NoError(t, c.DeleteEnvironment(ctx, e.ID))
		}
	}
	eventually(t, p, f.Canvas.ID, "staging", func(pr *client.Prompt, err error) bool {
		return pr == nil && client.ErrorCode(err) == wire.CodeNotFound
	}, "a deleted environment is gone")

	ts.Stop()
	time.Sleep(200 * time.Millisecond) // let a refresh fail against the stopped server
	pr, err := p.Get(ctx, f.Canvas.ID, "staging")
	assert.Nil(t, pr, "the version the server said is gone is not served while it is down")
	assert.Equal(t, wire.CodeNotFound, client.ErrorCode(err))
}

func BenchmarkPrompts_GetCached(b *testing.B) {
	ts := startServer(b)
	c := ts.Client(b)
	f := mustFixture(b, c, 1)
	f.publish(b, c, "production", 1)
	p, err := c.NewPrompts(client.PromptsOptions{})
	require.NoError(b, err)
	defer p.Close()
	ctx := context.Background()
	_, err = p.Get(ctx, f.Canvas.ID, "production")
	require.NoError(b, err)
	id := f.Canvas.ID
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := p.Get(ctx, id, "production"); err != nil {
			b.Fatal(err)
		}
	}
}
