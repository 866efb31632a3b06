package openai_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/model/openai"
)

func TestOpenAI_CompleteFiles(t *testing.T) {
	img := model.File{Name: "cat.png", MIMEType: "image/png", Size: 3, Data: []byte("png"), Image: true}
	pdf := model.File{Name: "q3.pdf", MIMEType: "application/pdf", Size: 3, Data: []byte("pdf")}
	fake, url := newFakeOpenAI(t, &fakeOpenAI{Chunks: []string{"ok"}})
	p := mustOpenAI(t, openai.Options{BaseURL: url})

	_, err := p.Complete(context.Background(), model.Request{Model: "gpt-test", Messages: []model.Message{
		{Role: canvas.RoleSystem, Content: "Policy: [file name=q3.pdf type=application/pdf size=3]", Files: []model.File{pdf}},
		{Role: canvas.RoleUser, Content: "Look at [file name=cat.png type=image/png size=3]", Files: []model.File{img}},
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
