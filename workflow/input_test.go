package workflow_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/vault"
	"github.com/promptcanvas/promptcanvas/workflow"
)

// fileSpec takes a text and a file, and outputs the text.
const fileSpec = `{"specVersion": "1", "nodes": [
	{"id": "start", "actionId": "input", "config": {"variables": [
		{"name": "note", "type": "text", "required": true},
		{"name": "doc", "type": "file", "required": true}]}},
	{"id": "out", "actionId": "output", "config": {"value": "{{note}}"}}],
 "edges": [{"from": {"node": "start", "port": "out"}, "to": {"node": "out", "port": "in"}}]}`

// upload stores data as a vault file and returns its vault:// address.
func (h *harness) upload(t *testing.T, name, contentType, data string) string {
	t.Helper()
	up, err := h.vault.CreateFile(h.ctx, vault.CreateFileParams{FileName: name})
	require.NoError(t, err)
	u, err := url.Parse(up.UploadURL)
	require.NoError(t, err)
	_, err = h.vault.Upload(h.ctx, vault.UploadParams{ID: up.ID, Expires: u.Query().Get("expires"),
		Signature: u.Query().Get("signature"), ContentType: contentType, Body: strings.NewReader(data)})
	require.NoError(t, err)
	return vault.Address(up.ID)
}

func TestRun_InputFiles(t *testing.T) {
	h := newHarness(t, harnessOptions{noWorker: true})
	addr := h.upload(t, "notes.txt", "text/plain", "Ada likes tea.")
	got := h.start(fileSpec, map[string]any{"note": "hi", "doc": []any{
		map[string]any{"file_url": addr},
		map[string]any{"file_url": "https://example.com/files/report.pdf"},
	}, "extra": 7})
	doc := got.Input["doc"]
	assert.Equal(t, "file", doc.Type)
	assert.True(t, doc.Required)
	assert.Equal(t, []workflow.InputFile{
		{FileURL: addr, Name: "notes.txt", MimeType: "text/plain"},
		{FileURL: "https://example.com/files/report.pdf", Name: "report.pdf", MimeType: "application/pdf"},
	}, doc.Files, "vault files are named from the vault, others from their URL")
	assert.Equal(t, workflow.InputValue{Name: "note", Type: "text", Required: true, Value: "hi", Files: []workflow.InputFile{}}, got.Input["note"])
	assert.Equal(t, "number", got.Input["extra"].Type, "an undeclared value is kept, typed by its kind")

	_, err := h.svc.Start(h.ctx, workflow.StartParams{VersionID: h.version(fileSpec), Input: map[string]any{
		"note": "hi", "doc": map[string]any{"file_url": "vault://6f1c0a0e-0000-4000-8000-000000000000"}}})
	assert.Equal(t, canvas.ENOTFOUND, canvas.ErrorCode(err), "an unknown vault file is refused when the run starts")

	pending, err := h.vault.CreateFile(h.ctx, vault.CreateFileParams{FileName: "never.txt"})
	require.NoError(t, err)
	_, err = h.svc.Start(h.ctx, workflow.StartParams{VersionID: h.version(fileSpec), Input: map[string]any{
		"note": "hi", "doc": map[string]any{"file_url": vault.Address(pending.ID)}}})
	assert.Equal(t, canvas.ENOTFOUND, canvas.ErrorCode(err), "a file whose bytes never arrived is refused")

	_, err = h.svc.Start(h.ctx, workflow.StartParams{VersionID: h.version(fileSpec), Input: map[string]any{
		"note": "hi", "doc": "not a file"}})
	require.Equal(t, canvas.EINVALID, canvas.ErrorCode(err))
	assert.Equal(t, "/json/input/doc", canvas.ErrorDetails(err)[0].Path)
}
