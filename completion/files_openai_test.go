package completion_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
)

func TestOpenAI_CompleteFiles(t *testing.T) {
	img := completion.File{Name: "cat.png", MIMEType: "image/png", Size: 3, Data: []byte("png"), Image: true}
	pdf := completion.File{Name: "q3.pdf", MIMEType: "application/pdf", Size: 3, Data: []byte("pdf")}
	fake, url := newFakeOpenAI(t, &fakeOpenAI{Chunks: []string{"ok"}})
	p := mustOpenAI(t, completion.OpenAIOptions{BaseURL: url})

	_, err := p.Complete(context.Background(), completion.Request{Model: "gpt-test", Messages: []completion.Message{
		{Role: canvas.RoleSystem, Content: "Policy: [file name=q3.pdf type=application/pdf size=3]", Files: []completion.File{pdf}},
		{Role: canvas.RoleUser, Content: "Look at [file name=cat.png type=image/png size=3]", Files: []completion.File{img}},
		{Role: canvas.RoleUser, Content: "Thanks."},
	}})
	require.NoError(t, err)

	reqs := fake.Requests()
	require.Len(t, reqs, 1)
	got, err := json.Marshal(reqs[0]["messages"])
	require.NoError(t, err)
	assert.JSONEq(t, `[
		{"role": "system", "content": "Policy: [file name=q3.pdf type=application/pdf size=3]"},
		{"role": "user", "content": [
			{"type": "file", "file": {"filename": "q3.pdf", "file_data": "data:application/pdf;base64,cGRm"}}
		]},
		{"role": "user", "content": [
			{"type": "text", "text": "Look at [file name=cat.png type=image/png size=3]"},
			{"type": "image_url", "image_url": {"url": "data:image/png;base64,cG5n"}}
		]},
		{"role": "user", "content": "Thanks."}
	]`, string(got))
}

func TestEcho_CompleteFiles(t *testing.T) {
	f := newFilesFixture(t)
	notes := f.Upload(t, f.Ctx, "notes.txt", "text/plain; charset=utf-8", "line one")
	img := f.Upload(t, f.Ctx, "cat.png", "image/png", pngBytes)
	fr := completion.NewFileResolver(completion.FileOptions{Vault: completion.VaultFiles(f.Vault)})
	msgs, err := fr.Resolve(context.Background(), f.WS, renderFile(t, "Files:\n{{doc}}", true, []any{fileURL(img), fileURL(notes)}))
	require.NoError(t, err)

	res, err := completion.NewEcho(completion.EchoOptions{}).Complete(context.Background(), completion.Request{Messages: msgs})
	require.NoError(t, err)
	assert.Equal(t, "Files:\n[file name=cat.png type=image/png size=16]\n[file name=notes.txt type=text/plain size=8]\nline one", res.Text)
}
