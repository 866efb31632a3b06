package model_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/internal/testfiles"
	"github.com/promptcanvas/promptcanvas/model"
)

// pngBytes starts with the PNG signature, enough for sniffing.
const pngBytes = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"

// renderFile renders one user message whose file variable "doc" holds value.
func renderFile(t *testing.T, content string, multimodal bool, value any) []model.Message {
	t.Helper()
	defs := []canvas.Variable{{Name: "doc", Type: canvas.VariableFile,
		ProcessingOptions: canvas.ProcessingOptions{AllowMultimodal: multimodal}}}
	msgs, err := model.Render([]canvas.Message{{Role: canvas.RoleUser, Content: content}}, defs,
		map[string]any{"doc": value})
	require.NoError(t, err)
	return msgs
}

func TestRender_FileRefs(t *testing.T) {
	msgs := renderFile(t, "a {{doc}} b", true, []any{testfiles.Value("vault://f1"), testfiles.Value("https://x/y.pdf")})
	require.Len(t, msgs, 1)
	assert.Equal(t, "a [file: vault://f1]\n[file: https://x/y.pdf] b", msgs[0].Content)
	assert.Equal(t, []model.FileRef{
		{Variable: "doc", URL: "vault://f1", Multimodal: true, Start: 2, End: 20},
		{Variable: "doc", URL: "https://x/y.pdf", Multimodal: true, Start: 21, End: 44},
	}, msgs[0].FileRefs)
	for _, r := range msgs[0].FileRefs {
		assert.Equal(t, "[file: "+r.URL+"]", msgs[0].Content[r.Start:r.End])
	}
}

func TestFileResolver_Resolve(t *testing.T) {
	f := testfiles.New(t)
	pub := testfiles.NewPublicFiles(t, map[string]testfiles.PublicFile{
		"/cat.png":    {ContentType: "image/png", Body: pngBytes},
		"/raw":        {ContentType: "application/octet-stream", Body: pngBytes},
		"/report":     {ContentType: "application/pdf", Disposition: `attachment; filename="q3.pdf"`, Body: "%PDF-1.7"},
		"/data.json":  {ContentType: "application/json; charset=utf-8", Body: `{"a":1}`},
		"/big.txt":    {ContentType: "text/plain", Body: strings.Repeat("x", 64)},
		"/broken.txt": {ContentType: "text/plain", Status: http.StatusInternalServerError, Body: "down"},
		"/slow.txt":   {Hang: true},
	})
	fr := model.NewFileResolver(model.FileOptions{Vault: model.VaultFiles(f.Vault),
		AllowPrivateNetworks: true, MaxSize: 32})

	t.Run("OK", func(t *testing.T) {
		notes := f.Upload(t, f.Ctx, "notes.txt", "text/plain", "hello vault")
		msgs := renderFile(t, "Read {{doc}}.", false, testfiles.Value(notes))
		out, err := fr.Resolve(context.Background(), f.WS, msgs)
		require.NoError(t, err)
		require.Len(t, out, 1)
		assert.Equal(t, "Read [file name=notes.txt type=text/plain size=11]\nhello vault.", out[0].Content)
		assert.Empty(t, out[0].FileRefs)
		assert.Empty(t, out[0].Files)
		assert.NotEmpty(t, msgs[0].FileRefs, "the input is left as it was")
	})
	t.Run("KeepsToolCalls", func(t *testing.T) {
		notes := f.Upload(t, f.Ctx, "notes.txt", "text/plain", "hello vault")
		call := model.ToolCall{ID: "call_1", Name: "lookup", Arguments: []byte(`{"q":"owls"}`)}
		msgs := append(renderFile(t, "Read {{doc}}.", false, testfiles.Value(notes)),
			model.Message{Role: canvas.RoleAssistant, ToolCalls: []model.ToolCall{call}},
			model.Message{Role: model.RoleTool, ToolCallID: "call_1", Content: "found"})
		out, err := fr.Resolve(context.Background(), f.WS, msgs)
		require.NoError(t, err)
		require.Len(t, out, 3)
		assert.Equal(t, model.Message{Role: canvas.RoleAssistant, ToolCalls: []model.ToolCall{call}}, out[1])
		assert.Equal(t, model.Message{Role: model.RoleTool, ToolCallID: "call_1", Content: "found"}, out[2])
	})
	t.Run("Mixed", func(t *testing.T) {
		img := f.Upload(t, f.Ctx, "logo.png", "", pngBytes)
		msgs := renderFile(t, "{{doc}}", true, []any{testfiles.Value(pub.URL + "/report"), testfiles.Value(img), testfiles.Value(pub.URL + "/data.json")})
		out, err := fr.Resolve(context.Background(), f.WS, msgs)
		require.NoError(t, err)
		assert.Equal(t, "[file name=q3.pdf type=application/pdf size=8]\n"+
			"[file name=logo.png type=image/png size=16]\n"+
			"[file name=data.json type=application/json size=7]\n{\"a\":1}", out[0].Content)
		assert.Equal(t, []model.File{
			{Variable: "doc", Name: "q3.pdf", MIMEType: "application/pdf", Size: 8, Data: []byte("%PDF-1.7")},
			{Variable: "doc", Name: "logo.png", MIMEType: "image/png", Size: 16, Data: []byte(pngBytes), Image: true},
		}, out[0].Files)
	})
	t.Run("ImageWithoutMultimodal", func(t *testing.T) {
		out, err := fr.Resolve(context.Background(), f.WS, renderFile(t, "{{doc}}", false, testfiles.Value(pub.URL+"/cat.png")))
		require.NoError(t, err)
		require.Len(t, out[0].Files, 1)
		assert.False(t, out[0].Files[0].Image)
		assert.Equal(t, "image/png", out[0].Files[0].MIMEType)
	})
	t.Run("Sniffed", func(t *testing.T) {
		out, err := fr.Resolve(context.Background(), f.WS, renderFile(t, "{{doc}}", true, testfiles.Value(pub.URL+"/raw")))
		require.NoError(t, err)
		assert.Equal(t, "[file name=raw type=image/png size=16]", out[0].Content)
		require.Len(t, out[0].Files, 1)
		assert.True(t, out[0].Files[0].Image)
	})
	t.Run("ReadOnce", func(t *testing.T) {
		before := pub.Hits("/cat.png")
		u := pub.URL + "/cat.png"
		_, err := fr.Resolve(context.Background(), f.WS, renderFile(t, "{{doc}} {{doc}}", true, []any{testfiles.Value(u), testfiles.Value(u)}))
		require.NoError(t, err)
		assert.Equal(t, before+1, pub.Hits("/cat.png"))
	})
	t.Run("NotFound", func(t *testing.T) {
		for name, addr := range map[string]string{
			"OtherWorkspace": f.Upload(t, f.OtherCtx, "secret.txt", "text/plain", "theirs"),
			"NeverUploaded":  f.Pending(t, f.Ctx),
			"Unknown":        "vault://7b0c6f5e-8a3e-4a0e-9d53-0d6f3f1f0b8c",
			"NotAnID":        "vault://nope",
		} {
			t.Run(name, func(t *testing.T) {
				_, err := fr.Resolve(context.Background(), f.WS, renderFile(t, "{{doc}}", false, testfiles.Value(addr)))
				testfiles.RequireError(t, err, canvas.ENOTFOUND, "not found")
			})
		}
	})
	t.Run("Invalid", func(t *testing.T) {
		for name, tc := range map[string]struct{ url, want string }{
			"Scheme":   {"ftp://example.com/a.txt", "must be a public http(s) URL or a vault:// address"},
			"NoVault":  {"vault://", "without a file id"},
			"TooLarge": {pub.URL + "/big.txt", "larger than the limit of 32 bytes"},
			"Status":   {pub.URL + "/broken.txt", "answered HTTP 500"},
			"Missing":  {pub.URL + "/missing", "answered HTTP 404"},
		} {
			t.Run(name, func(t *testing.T) {
				_, err := fr.Resolve(context.Background(), f.WS, renderFile(t, "{{doc}}", false, testfiles.Value(tc.url)))
				testfiles.RequireError(t, err, canvas.EINVALID, tc.want)
			})
		}
	})
	t.Run("Timeout", func(t *testing.T) {
		quick := model.NewFileResolver(model.FileOptions{AllowPrivateNetworks: true, Timeout: 50 * time.Millisecond})
		_, err := quick.Resolve(context.Background(), f.WS, renderFile(t, "{{doc}}", false, testfiles.Value(pub.URL+"/slow.txt")))
		testfiles.RequireError(t, err, canvas.EINVALID, "did not finish within 50ms")
	})
	t.Run("Blocked", func(t *testing.T) {
		guarded := model.NewFileResolver(model.FileOptions{})
		_, err := guarded.Resolve(context.Background(), f.WS, renderFile(t, "{{doc}}", false, testfiles.Value(pub.URL+"/cat.png")))
		testfiles.RequireError(t, err, canvas.EINVALID, "not allowed (loopback, private or link-local network)")
	})
	t.Run("NoVault", func(t *testing.T) {
		_, err := model.NewFileResolver(model.FileOptions{}).Resolve(context.Background(), f.WS,
			renderFile(t, "{{doc}}", false, testfiles.Value("vault://x")))
		testfiles.RequireError(t, err, canvas.EINVALID, "not served here")
	})
}

func TestFileResolver_Check(t *testing.T) {
	f := testfiles.New(t)
	pub := testfiles.NewPublicFiles(t, map[string]testfiles.PublicFile{"/a.txt": {ContentType: "text/plain", Body: "a"}})
	fr := model.NewFileResolver(model.FileOptions{Vault: model.VaultFiles(f.Vault), AllowPrivateNetworks: true})

	t.Run("OK", func(t *testing.T) {
		notes := f.Upload(t, f.Ctx, "notes.txt", "text/plain", "hello")
		err := fr.Check(context.Background(), f.WS, renderFile(t, "{{doc}}", false, []any{testfiles.Value(notes), testfiles.Value(pub.URL + "/a.txt")}))
		require.NoError(t, err)
		assert.Zero(t, pub.Hits("/a.txt"), "public files are fetched only when the run executes")
	})
	t.Run("NotFound", func(t *testing.T) {
		err := fr.Check(context.Background(), f.WS, renderFile(t, "{{doc}}", false, testfiles.Value(f.Pending(t, f.Ctx))))
		testfiles.RequireError(t, err, canvas.ENOTFOUND, "not found")
	})
	t.Run("Invalid", func(t *testing.T) {
		err := fr.Check(context.Background(), f.WS, renderFile(t, "{{doc}}", false, testfiles.Value("file:///etc/passwd")))
		testfiles.RequireError(t, err, canvas.EINVALID, "must be a public http(s) URL")
	})
}

func TestFile_Marker(t *testing.T) {
	f := model.File{Name: "a]b\nc.txt", MIMEType: "text/plain", Size: 3}
	assert.Equal(t, "[file name=a_b_c.txt type=text/plain size=3]", f.Marker())
}
