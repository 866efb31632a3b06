package completion_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
)

func TestService_Call(t *testing.T) {
	f := newFilesFixture(t)
	svc := completion.NewService(completion.Options{Store: f.DB, Canvases: f.DB,
		Providers: completion.NewRegistry(completion.NewEcho(completion.EchoOptions{})),
		Files:     completion.FileOptions{Vault: completion.VaultFiles(f.Vault)}})
	user := func(content string) []completion.Message {
		return []completion.Message{{Role: canvas.RoleUser, Content: content}}
	}

	t.Run("OK", func(t *testing.T) {
		res, err := svc.Call(context.Background(), f.WS, completion.RunRequest{Messages: user("Hello there")})
		require.NoError(t, err)
		assert.Equal(t, "Hello there", res.Text)
		assert.Equal(t, completion.EchoModel, res.Model, "no model means the echo model")
		assert.Equal(t, completion.Usage{InputTokens: 2, OutputTokens: 2}, res.Usage)
	})
	t.Run("Files", func(t *testing.T) {
		addr := f.Upload(t, f.Ctx, "notes.txt", "text/plain", "owls hunt at night")
		msgs := renderFile(t, "Summarize {{doc}}", false, fileURL(addr))
		res, err := svc.Call(context.Background(), f.WS, completion.RunRequest{Messages: msgs, Model: completion.EchoModel})
		require.NoError(t, err)
		assert.Equal(t, "Summarize [file name=notes.txt type=text/plain size=18]\nowls hunt at night", res.Text)

		// The files are resolved in the given workspace.
		_, err = svc.Call(context.Background(), f.Other, completion.RunRequest{Messages: msgs})
		requireFileError(t, err, canvas.ENOTFOUND, "not found")
	})
	t.Run("StructuredOutput", func(t *testing.T) {
		so := &canvas.StructuredOutput{Enabled: true, Schema: json.RawMessage(`{"type": "object", "required": ["ok"]}`)}
		res, err := svc.Call(context.Background(), f.WS, completion.RunRequest{Messages: user(`{"ok": true}`), StructuredOutput: so})
		require.NoError(t, err)
		assert.Equal(t, `{"ok": true}`, res.Text)

		_, err = svc.Call(context.Background(), f.WS, completion.RunRequest{Messages: user(`{"fine": true}`), StructuredOutput: so})
		assert.Equal(t, canvas.EPROVIDER, canvas.ErrorCode(err))
		assert.Equal(t, []canvas.Detail{{Path: "/output", Message: "missing properties: 'ok'"}}, canvas.ErrorDetails(err))
	})
	t.Run("UnknownModel", func(t *testing.T) {
		_, err := svc.Call(context.Background(), f.WS, completion.RunRequest{Messages: user("x"), Model: "nobody"})
		assert.Equal(t, canvas.EINVALID, canvas.ErrorCode(err))
	})
	t.Run("Cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := svc.Call(ctx, f.WS, completion.RunRequest{Messages: user("x")})
		assert.Equal(t, completion.ErrCodeCancelled, canvas.ErrorCode(err))
		assert.True(t, errors.Is(err, context.Canceled), "%v", err)
	})
}
