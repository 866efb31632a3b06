package model_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/internal/testfiles"
	"github.com/promptcanvas/promptcanvas/model"
)

func TestEcho_CompleteFiles(t *testing.T) {
	f := testfiles.New(t)
	notes := f.Upload(t, f.Ctx, "notes.txt", "text/plain; charset=utf-8", "line one")
	img := f.Upload(t, f.Ctx, "cat.png", "image/png", pngBytes)
	fr := model.NewFileResolver(model.FileOptions{Vault: model.VaultFiles(f.Vault)})
	msgs, err := fr.Resolve(context.Background(), f.WS, renderFile(t, "Files:\n{{doc}}", true, []any{testfiles.Value(img), testfiles.Value(notes)}))
	require.NoError(t, err)

	res, err := model.NewEcho(model.EchoOptions{}).Complete(context.Background(), model.Request{Messages: msgs})
	require.NoError(t, err)
	assert.Equal(t, "Files:\n[file name=cat.png type=image/png size=16]\n[file name=notes.txt type=text/plain size=8]\nline one", res.Text)
}
