package model_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/internal/testfiles"
	"github.com/promptcanvas/promptcanvas/model"
)

func TestCaller_Call(t *testing.T) {
	f := testfiles.New(t)
	svc := model.NewCaller(model.Options{Providers: model.NewRegistry(model.NewEcho(model.EchoOptions{})),
		Files: model.FileOptions{Vault: model.VaultFiles(f.Vault)}})
	user := func(content string) []model.Message {
		return []model.Message{{Role: canvas.RoleUser, Content: content}}
	}

	t.Run("OK", func(t *testing.T) {
		res, err := svc.Call(context.Background(), f.WS, model.Request{Messages: user("Hello there")}, nil)
		require.NoError(t, err)
		assert.Equal(t, "Hello there", res.Text)
		assert.Equal(t, model.EchoModel, res.Model, "no model means the echo model")
		assert.Equal(t, model.Usage{InputTokens: 2, OutputTokens: 2}, res.Usage)
	})
	t.Run("Files", func(t *testing.T) {
		addr := f.Upload(t, f.Ctx, "notes.txt", "text/plain", "owls hunt at night")
		msgs := renderFile(t, "Summarize {{doc}}", false, testfiles.Value(addr))
		res, err := svc.Call(context.Background(), f.WS, model.Request{Messages: msgs, Model: model.EchoModel}, nil)
		require.NoError(t, err)
		assert.Equal(t, "Summarize [file name=notes.txt type=text/plain size=18]\nowls hunt at night", res.Text)

		// The files are resolved in the given workspace.
		_, err = svc.Call(context.Background(), f.Other, model.Request{Messages: msgs}, nil)
		testfiles.RequireError(t, err, canvas.ENOTFOUND, "not found")
	})
	t.Run("StructuredOutput", func(t *testing.T) {
		so := &canvas.StructuredOutput{Enabled: true, Schema: json.RawMessage(`{"type": "object", "required": ["ok"]}`)}
		res, err := svc.Call(context.Background(), f.WS, model.Request{Messages: user(`{"ok": true}`), StructuredOutput: so}, nil)
		require.NoError(t, err)
		assert.Equal(t, `{"ok": true}`, res.Text)

		_, err = svc.Call(context.Background(), f.WS, model.Request{Messages: user(`{"fine": true}`), StructuredOutput: so}, nil)
		assert.Equal(t, canvas.EPROVIDER, canvas.ErrorCode(err))
		assert.Equal(t, []canvas.Detail{{Path: "/output", Message: "missing properties: 'ok'"}}, canvas.ErrorDetails(err))
	})
	t.Run("UnknownModel", func(t *testing.T) {
		_, err := svc.Call(context.Background(), f.WS, model.Request{Messages: user("x"), Model: "nobody"}, nil)
		assert.Equal(t, canvas.EINVALID, canvas.ErrorCode(err))
	})
	t.Run("Cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := svc.Call(ctx, f.WS, model.Request{Messages: user("x")}, nil)
		assert.Equal(t, canvas.ECANCELLED, canvas.ErrorCode(err))
		assert.True(t, errors.Is(err, context.Canceled), "%v", err)
	})
}
