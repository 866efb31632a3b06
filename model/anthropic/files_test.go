package anthropic_test

import (
	"context"
	"encoding/base64"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
)

func TestProvider_Files(t *testing.T) {
	png := model.File{Variable: "photo", Name: "cat.png", MIMEType: "image/png", Data: []byte("\x89PNG fake"), Image: true}
	pdf := model.File{Variable: "doc", Name: "report.pdf", MIMEType: "application/pdf", Data: []byte("%PDF-1.7 fake")}
	b64 := func(f model.File) string { return base64.StdEncoding.EncodeToString(f.Data) }

	t.Run("OK", func(t *testing.T) {
		fake, url := newFake(t, &fakeAnthropic{Blocks: []fakeBlock{{Text: []string{"A cat."}}}})
		req := model.Request{Model: "claude-test", Messages: []model.Message{
			{Role: canvas.RoleSystem, Content: "Describe.", Files: []model.File{pdf}},
			{Role: canvas.RoleUser, Content: "What is this? [file name=cat.png type=image/png size=9]", Files: []model.File{png}},
			{Role: canvas.RoleAssistant, Content: "Which part?", Files: []model.File{png}},
		}}
		_, err := mustProvider(t, url).Complete(context.Background(), req)
		require.NoError(t, err)

		image := `{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "` + b64(png) + `"}}`
		document := `{"type": "document", "title": "report.pdf", "source": {"type": "base64", "media_type": "application/pdf", "data": "` + b64(pdf) + `"}}`
		assert.Equal(t, mustJSON(t, `[
			{"role": "user", "content": [`+document+`,
				{"type": "text", "text": "What is this? [file name=cat.png type=image/png size=9]"}, `+image+`]},
			{"role": "assistant", "content": [{"type": "text", "text": "Which part?"}]},
			{"role": "user", "content": [`+image+`]}
		]`), fake.Requests()[0]["messages"])
		assert.Equal(t, mustJSON(t, `[{"type": "text", "text": "Describe."}]`), fake.Requests()[0]["system"])
	})
	t.Run("ToolResult", func(t *testing.T) {
		fake, url := newFake(t, &fakeAnthropic{Blocks: []fakeBlock{{Text: []string{"ok"}}}})
		req := model.Request{Model: "claude-test", Messages: []model.Message{
			{Role: canvas.RoleUser, Content: "Chart?"},
			{Role: canvas.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "toolu_1", Name: "chart", Arguments: []byte(`{}`)}}},
			{Role: model.RoleTool, ToolCallID: "toolu_1", Content: "drawn", Files: []model.File{png}},
		}}
		_, err := mustProvider(t, url).Complete(context.Background(), req)
		require.NoError(t, err)
		msgs := fake.Requests()[0]["messages"].([]any)
		require.Len(t, msgs, 3)
		assert.Equal(t, mustJSON(t, `{"role": "user", "content": [
			{"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "drawn"}]},
			{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "`+b64(png)+`"}}]}`), msgs[2])
	})
	t.Run("Refused", func(t *testing.T) {
		for _, f := range []model.File{
			{Variable: "sheet", Name: "a.xlsx", MIMEType: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", Data: []byte("PK")},
			{Variable: "icon", Name: "a.svg", MIMEType: "image/svg+xml", Data: []byte("<svg/>"), Image: true},
			{Variable: "raw/photo", Name: "a.png", MIMEType: "image/png", Data: []byte("\x89PNG")}, // not multimodal
		} {
			fake, url := newFake(t, &fakeAnthropic{})
			req := model.Request{Model: "claude-test", Messages: []model.Message{{Role: canvas.RoleUser, Content: "x", Files: []model.File{f}}}}
			_, err := mustProvider(t, url).Complete(context.Background(), req)
			var e *canvas.Error
			require.ErrorAs(t, err, &e, f.MIMEType)
			assert.Equal(t, canvas.EINVALID, e.Code)
			require.Len(t, e.Details, 1)
			assert.Contains(t, e.Details[0].Message, f.MIMEType)
			assert.Empty(t, fake.Requests())
			if f.Variable == "raw/photo" {
				assert.Equal(t, "/json/variables/raw~1photo", e.Details[0].Path)
			}
		}
	})
}
