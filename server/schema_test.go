package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// decode reads a JSON document the way decodeJSON does, numbers as
// json.Number.
func decode(t *testing.T, s string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	require.NoError(t, dec.Decode(&v))
	return v
}

func mustSchemas(t *testing.T) *schemaSet {
	t.Helper()
	s, err := loadSchemas()
	require.NoError(t, err)
	return s
}

func TestSchemaSet_Validate(t *testing.T) {
	s := mustSchemas(t)
	const id = "6f1c2a3e-7d5b-4c8a-9e0f-1a2b3c4d5e6f"
	long := strings.Repeat("x", 257)

	tests := []struct {
		name   string
		schema string
		body   string
		want   []canvas.Detail // nil: valid
	}{
		{"CanvasOK", "CreateCanvasRequest", `{"title":"t","projectId":null,"customTags":["a"],"layoutVersion":"v2","allowedCredentials":null}`, nil},
		{"CanvasUnknownFieldRefused", "CreateCanvasRequest", `{"title":"t","titel":1}`, []canvas.Detail{
			{Path: "/json/titel", Message: `is not allowed: unknown field "titel"; did you mean "title"?`},
		}},
		{"ConfigurationExtraKeysAllowed", "CreateVersionRequest", `{"promptId":"` + id + `","configuration":{"model":"echo","seed":1}}`, nil},
		{"CanvasMissingTitle", "CreateCanvasRequest", `{}`, []canvas.Detail{{Path: "/json/title", Message: "is required"}}},
		{"CanvasEveryProblem", "CreateCanvasRequest", `{"title":"` + long + `","projectId":"nope","layoutVersion":"v3","customTags":[1]}`, []canvas.Detail{
			{Path: "/json/customTags/0", Message: "must be a string"},
			{Path: "/json/layoutVersion", Message: `must be one of "v1", "v2"`},
			{Path: "/json/projectId", Message: "must be a UUID"},
			{Path: "/json/title", Message: "must be at most 256 characters"},
		}},
		{"CanvasNullableType", "CreateCanvasRequest", `{"title":"t","allowedCredentials":"x"}`, []canvas.Detail{
			{Path: "/json/allowedCredentials", Message: "must be an array or null"},
		}},
		{"BodyNotObject", "CreateCanvasRequest", `[]`, []canvas.Detail{{Path: "/json", Message: "must be an object"}}},
		{"CanvasPercentOK", "CreateCanvasRequest", `{"title":"t","inferencesPercentage":"100.0"}`, nil},
		{"CanvasPercentPattern", "CreateCanvasRequest", `{"title":"t","inferencesPercentage":"100.5","customTags":[""]}`, []canvas.Detail{
			{Path: "/json/customTags/0", Message: "must not be empty"},
			{Path: "/json/inferencesPercentage", Message: "must be a decimal string between 0 and 100"},
		}},
		{"UpdateCanvasOK", "UpdateCanvasRequest", `{"favorited":true}`, nil},
		{"UpdateCanvasFavorited", "UpdateCanvasRequest", `{"favorited":"yes"}`, []canvas.Detail{{Path: "/json/favorited", Message: "must be a boolean"}}},
		{"VersionOK", "CreateVersionRequest", `{"promptId":"` + id + `","configuration":{"model":"echo","temperature":0.5,"functions":[]},"variables":[{"name":"x","type":"text"}],"message":{"role":"system","content":"hi"},"workflowSpec":null}`, nil},
		{"VersionNestedRef", "CreateVersionRequest", `{"promptId":"` + id + `","variables":[{"name":"x","type":"video"},{}],"configuration":{"temperature":"hot"}}`, []canvas.Detail{
			{Path: "/json/configuration/temperature", Message: "must be a number"},
			{Path: "/json/variables/0/type", Message: `must be one of "text", "number", "boolean", "json", "file"`},
			{Path: "/json/variables/1/name", Message: "is required"},
		}},
		{"UpdateVersionMessagesObject", "UpdateVersionRequest", `{"messages":{"role":"system","content":"c","index":0}}`, nil},
		{"UpdateVersionMessagesArray", "UpdateVersionRequest", `{"messages":[{"role":"system","content":"c","index":0},{"role":"user","content":"u","index":1}]}`, nil},
		{"UpdateVersionMessagesWrongType", "UpdateVersionRequest", `{"messages":"c"}`, []canvas.Detail{
			{Path: "/json/messages", Message: "must be an object or an array"},
		}},
		{"UpdateVersionMessagesBadItem", "UpdateVersionRequest", `{"messages":[{"role":"robot","content":"c","index":-1}]}`, []canvas.Detail{
			{Path: "/json/messages/0/index", Message: "must be at least 0"},
			{Path: "/json/messages/0/role", Message: `must be one of "user", "assistant", "system", "function"`},
		}},
		{"MessageMissingEverything", "CreateMessageRequest", `{}`, []canvas.Detail{
			{Path: "/json/content", Message: "is required"},
			{Path: "/json/promptVersionId", Message: "is required"},
			{Path: "/json/role", Message: "is required"},
		}},
		{"MessageIndexInteger", "CreateMessageRequest", `{"promptVersionId":"` + id + `","role":"user","content":"c","index":1.5}`, []canvas.Detail{
			{Path: "/json/index", Message: "must be an integer"},
		}},
		{"ProjectEmptyName", "CreateProjectRequest", `{"name":""}`, []canvas.Detail{{Path: "/json/name", Message: "must not be empty"}}},
		{"EnvironmentNameOK", "CreateEnvironmentRequest", `{"resourceType":"prompt","resourceId":"` + id + `","name":" staging-2 "}`, nil},
		{"PublishBadResourceType", "PublishRequest", `{"resourceType":"agent","resourceId":"` + id + `","envName":"production","versionId":"` + id + `"}`, []canvas.Detail{
			{Path: "/json/resourceType", Message: `must be "prompt"`},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.validate(tt.schema, decode(t, tt.body))
			if tt.want == nil {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Equal(t, canvas.EINVALID, canvas.ErrorCode(err))
			assert.Equal(t, tt.want, canvas.ErrorDetails(err))
		})
	}
}

func TestSchemaSet_Validate_UnknownSchema(t *testing.T) {
	err := mustSchemas(t).validate("NoSuchRequest", map[string]any{})
	require.Error(t, err)
	assert.Equal(t, canvas.EINTERNAL, canvas.ErrorCode(err), "an unknown schema name is a bug, not the caller's fault")
}

func TestSchemaSet_Validate_EveryRequestSchemaCompiles(t *testing.T) {
	s := mustSchemas(t)
	names := []string{
		"CreateCanvasRequest", "UpdateCanvasRequest", "CreateVersionRequest", "UpdateVersionRequest",
		"CreateMessageRequest", "UpdateMessageRequest", "CreateProjectRequest", "CreateEnvironmentRequest",
		"PublishRequest",
	}
	for _, name := range names {
		_, err := s.schema(name)
		assert.NoError(t, err, name)
	}
}

func TestSchemaSet_Validate_Concurrent(t *testing.T) {
	s := mustSchemas(t)
	var wg sync.WaitGroup
	errs := make([]error, 16)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.validate("CreateProjectRequest", map[string]any{"name": "p"})
		}()
	}
	wg.Wait()
	for _, err := range errs {
		assert.NoError(t, err)
	}
}

func TestServer_HandleOpenAPI(t *testing.T) {
	s := &Server{schemas: mustSchemas(t)}
	get := func(headers ...string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, "/openapi.json", nil)
		for i := 0; i+1 < len(headers); i += 2 {
			r.Header.Set(headers[i], headers[i+1])
		}
		w := httptest.NewRecorder()
		require.NoError(t, s.handleOpenAPI(w, r))
		return w
	}

	t.Run("OK", func(t *testing.T) {
		w := get()
		assert.Equal(t, http.StatusOK, w.Code)
		assert.Equal(t, "application/json", w.Header().Get("Content-Type"))
		etag := w.Header().Get("ETag")
		assert.Regexp(t, `^"[0-9a-f]{32}"$`, etag, "a strong ETag")
		assert.True(t, bytes.Equal(openAPIDocument, w.Body.Bytes()))
		var doc map[string]any
		require.NoError(t, json.Unmarshal(w.Body.Bytes(), &doc))
		assert.Equal(t, "3.1.0", doc["openapi"])
	})
	t.Run("NotModified", func(t *testing.T) {
		etag := get().Header().Get("ETag")
		w := get("If-None-Match", etag)
		assert.Equal(t, http.StatusNotModified, w.Code)
		assert.Empty(t, w.Body.Bytes())
		assert.Equal(t, etag, w.Header().Get("ETag"))
	})
	t.Run("OtherETag", func(t *testing.T) {
		w := get("If-None-Match", `"0000"`)
		assert.Equal(t, http.StatusOK, w.Code)
	})
}
