package bedrock_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/model/bedrock"
)

// Test keys: an access key pair with a session token, and a Bedrock API
// key.
const (
	accessKeyID  = "AKIDEXAMPLE"
	secretKey    = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
	sessionToken = "FwoGZXIvYXdzEXAMPLETOKEN"
	bedrockKey   = "ABSKQmVkcm9ja0FQSUtleS1leGFtcGxl"
	testModel    = "anthropic.claude-sonnet-4-5-20250929-v1:0"
)

// credential returns a Bedrock credential for the fake, signed with the
// test access keys.
func credential(f *fakeBedrock) model.Credential {
	return model.Credential{
		ID: "cred-1", WorkspaceID: "ws-1", Name: "aws", Provider: canvas.ProviderBedrock,
		APIKey:   accessKeyID + ":" + secretKey + ":" + sessionToken,
		BaseURL:  f.URL(),
		Settings: model.Settings{Region: "us-west-2", Headers: map[string]string{"X-Team": "canvas"}},
	}
}

// mustBedrock returns a provider for c calling f.
func mustBedrock(t *testing.T, f *fakeBedrock, c model.Credential) *bedrock.Provider {
	t.Helper()
	p, err := bedrock.New(bedrock.Options{Credential: c, HTTPClient: f.srv.Client()})
	require.NoError(t, err)
	return p
}

func ptr[T any](v T) *T { return &v }

func userRequest(content string) model.Request {
	return model.Request{Model: testModel, Messages: []model.Message{{Role: canvas.RoleUser, Content: content}}}
}

func TestNew(t *testing.T) {
	ok := model.Credential{Provider: canvas.ProviderBedrock, APIKey: accessKeyID + ":" + secretKey,
		Settings: model.Settings{Region: "eu-central-1"}}
	tests := []struct {
		name   string
		edit   func(c *model.Credential)
		path   string
		inText string
	}{
		{"NoRegion", func(c *model.Credential) { c.Settings.Region = "" }, "/json/settings/region", "settings.region"},
		{"BadRegion", func(c *model.Credential) { c.Settings.Region = "US East" }, "/json/settings/region", "region"},
		{"NoKey", func(c *model.Credential) { c.APIKey = " " }, "/json/apiKey", "apiKey"},
		{"EmptySecret", func(c *model.Credential) { c.APIKey = accessKeyID + ":" }, "/json/apiKey", "apiKey"},
		{"FourParts", func(c *model.Credential) { c.APIKey = "a:b:c:d" }, "/json/apiKey", "apiKey"},
		{"BaseURLNotHTTP", func(c *model.Credential) { c.BaseURL = "ftp://example.com" }, "/json/baseUrl", "base URL"},
		{"BaseURLRelative", func(c *model.Credential) { c.BaseURL = "/bedrock" }, "/json/baseUrl", "base URL"},
		{"APIKeyOverHTTP", func(c *model.Credential) { c.APIKey = bedrockKey; c.BaseURL = "http://localhost:1" }, "/json/baseUrl", "https"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ok
			tt.edit(&c)
			_, err := bedrock.New(bedrock.Options{Credential: c})
			require.Error(t, err)
			var e *canvas.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, canvas.EINVALID, e.Code)
			assert.Contains(t, e.Message, tt.inText)
			require.Len(t, e.Details, 1)
			assert.Equal(t, tt.path, e.Details[0].Path)
			assert.NotContains(t, err.Error(), secretKey)
		})
	}
	t.Run("Factory", func(t *testing.T) {
		for _, key := range []string{accessKeyID + ":" + secretKey, accessKeyID + ":" + secretKey + ":" + sessionToken, bedrockKey} {
			c := ok
			c.APIKey = key
			p, err := bedrock.Factory(c)
			require.NoError(t, err)
			assert.Equal(t, canvas.ProviderBedrock, p.Name())
		}
	})
}

func TestProvider_Complete(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		// The SDK must not read the environment: neither keys nor a
		// bearer token nor an endpoint set there are used.
		t.Setenv("AWS_BEARER_TOKEN_BEDROCK", "env-token")
		t.Setenv("AWS_ACCESS_KEY_ID", "AKIDFROMENV")
		t.Setenv("AWS_SECRET_ACCESS_KEY", "env-secret")
		t.Setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", "http://127.0.0.1:1")
		t.Setenv("AWS_MAX_ATTEMPTS", "5")
		fake := newFakeBedrock(t, &fakeBedrock{Blocks: []block{{Text: []string{"Hi", " there"}}}}, false)
		p := mustBedrock(t, fake, credential(fake))

		res, err := p.Complete(context.Background(), model.Request{
			Model: testModel,
			Messages: []model.Message{
				{Role: canvas.RoleSystem, Content: "You are terse."},
				{Role: canvas.RoleUser, Content: "Say hi."},
				{Role: canvas.RoleFunction, Content: "(function output)"},
				{Role: canvas.RoleAssistant, Content: "Hello."},
				{Role: canvas.RoleSystem, Content: "Answer in English."},
				{Role: canvas.RoleUser, Content: "Again."},
			},
			Temperature: ptr(0.25), MaxTokens: ptr(64), TopP: ptr(0.5),
		})
		require.NoError(t, err)
		assert.Equal(t, &model.Result{Text: "Hi there", Usage: model.Usage{InputTokens: fakeInputTokens, OutputTokens: fakeOutputTokens},
			Model: testModel, FinishReason: "stop"}, res)

		reqs := fake.Requests()
		require.Len(t, reqs, 1)
		r := reqs[0]
		assert.Equal(t, "/model/"+strings.ReplaceAll(testModel, ":", "%3A")+"/converse", r.Path)
		assert.Equal(t, testModel, r.ModelID)
		assert.Equal(t, mustJSON(t, `{
			"system": [{"text": "You are terse."}, {"text": "Answer in English."}],
			"messages": [
				{"role": "user", "content": [{"text": "Say hi."}, {"text": "(function output)"}]},
				{"role": "assistant", "content": [{"text": "Hello."}]},
				{"role": "user", "content": [{"text": "Again."}]}
			],
			"inferenceConfig": {"maxTokens": 64, "temperature": 0.25, "topP": 0.5}
		}`), any(r.Body))

		auth := r.Header.Get("Authorization")
		date := r.Header.Get("X-Amz-Date") // 20060102T150405Z
		require.Len(t, date, 16)
		scope := "Credential=" + accessKeyID + "/" + date[:8] + "/us-west-2/bedrock/aws4_request"
		assert.True(t, strings.HasPrefix(auth, "AWS4-HMAC-SHA256 "+scope+", SignedHeaders="), auth)
		assert.Contains(t, auth, "x-team")
		assert.NotContains(t, auth, secretKey)
		assert.Equal(t, sessionToken, r.Header.Get("X-Amz-Security-Token"))
		assert.Equal(t, "canvas", r.Header.Get("X-Team"))
		assert.Equal(t, "application/json", r.Header.Get("Content-Type"))
	})
	t.Run("BedrockAPIKey", func(t *testing.T) {
		t.Setenv("AWS_BEARER_TOKEN_BEDROCK", "env-token")
		fake := newFakeBedrock(t, &fakeBedrock{Blocks: []block{{Text: []string{"ok"}}}}, true)
		c := credential(fake)
		c.APIKey = bedrockKey
		p := mustBedrock(t, fake, c)

		res, err := p.Complete(context.Background(), userRequest("hi"))
		require.NoError(t, err)
		assert.Equal(t, "ok", res.Text)
		reqs := fake.Requests()
		require.Len(t, reqs, 1)
		assert.Equal(t, "Bearer "+bedrockKey, reqs[0].Header.Get("Authorization"))
		assert.Empty(t, reqs[0].Header.Get("X-Amz-Security-Token"))
		assert.Equal(t, "canvas", reqs[0].Header.Get("X-Team"))
	})
	t.Run("NoMessage", func(t *testing.T) {
		fake := newFakeBedrock(t, &fakeBedrock{}, false)
		p := mustBedrock(t, fake, credential(fake))
		_, err := p.Complete(context.Background(), model.Request{Model: testModel,
			Messages: []model.Message{{Role: canvas.RoleSystem, Content: "Only a system prompt."}}})
		assert.Equal(t, canvas.EINVALID, canvas.ErrorCode(err))
		assert.Empty(t, fake.Requests())
	})
}

// toolRequest declares two functions, one without parameters, and carries
// a tool loop: the assistant's call and the tool's answer.
func toolRequest(choice *canvas.ToolChoice) model.Request {
	return model.Request{
		Model: testModel,
		Messages: []model.Message{
			{Role: canvas.RoleUser, Content: "Weather in Paris?"},
			{Role: canvas.RoleAssistant, ToolCalls: []model.ToolCall{
				{ID: "tooluse_1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris","days":10000000000000001}`)},
			}},
			{Role: model.RoleTool, ToolCallID: "tooluse_1", Content: `{"temp": 21}`},
			{Role: canvas.RoleUser, Content: "And now?"},
		},
		Tools: []canvas.Function{
			{Name: "get_weather", Description: "Weather of a city", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer","maximum":7}},"required":["city"]}`)},
			{Name: "now"},
		},
		ToolChoice: choice,
	}
}

const toolSpecs = `[
	{"toolSpec": {"name": "get_weather", "description": "Weather of a city", "inputSchema": {"json":
		{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer","maximum":7}},"required":["city"]}}}},
	{"toolSpec": {"name": "now", "inputSchema": {"json": {"type":"object","properties":{}}}}}
]`

func TestProvider_Tools(t *testing.T) {
	t.Run("Request", func(t *testing.T) {
		fake := newFakeBedrock(t, &fakeBedrock{Blocks: []block{{Text: []string{"ok"}}}}, false)
		p := mustBedrock(t, fake, credential(fake))
		_, err := p.Complete(context.Background(), toolRequest(nil))
		require.NoError(t, err)
		body := fake.Requests()[0].Body
		assert.Equal(t, mustJSON(t, `[
			{"role": "user", "content": [{"text": "Weather in Paris?"}]},
			{"role": "assistant", "content": [{"toolUse": {"toolUseId": "tooluse_1", "name": "get_weather", "input": {"city": "Paris", "days": 10000000000000001}}}]},
			{"role": "user", "content": [
				{"toolResult": {"toolUseId": "tooluse_1", "content": [{"text": "{\"temp\": 21}"}]}},
				{"text": "And now?"}
			]}
		]`), body["messages"])
		assert.Equal(t, mustJSON(t, `{"tools": `+toolSpecs+`}`), body["toolConfig"])
	})
	t.Run("Choice", func(t *testing.T) {
		tests := []struct {
			name   string
			choice *canvas.ToolChoice
			want   string
		}{
			{"Auto", &canvas.ToolChoice{Mode: canvas.ToolChoiceAuto}, `{"tools": ` + toolSpecs + `, "toolChoice": {"auto": {}}}`},
			{"Required", &canvas.ToolChoice{Mode: canvas.ToolChoiceRequired}, `{"tools": ` + toolSpecs + `, "toolChoice": {"any": {}}}`},
			{"Function", &canvas.ToolChoice{Mode: canvas.ToolChoiceFunction, Name: "now"}, `{"tools": ` + toolSpecs + `, "toolChoice": {"tool": {"name": "now"}}}`},
			// The history holds tool blocks: Bedrock needs the tools
			// declared, and has no "none".
			{"NoneWithToolHistory", &canvas.ToolChoice{Mode: canvas.ToolChoiceNone}, `{"tools": ` + toolSpecs + `}`},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				fake := newFakeBedrock(t, &fakeBedrock{Blocks: []block{{Text: []string{"ok"}}}}, false)
				p := mustBedrock(t, fake, credential(fake))
				_, err := p.Complete(context.Background(), toolRequest(tt.choice))
				require.NoError(t, err)
				assert.Equal(t, mustJSON(t, tt.want), fake.Requests()[0].Body["toolConfig"])
			})
		}
		t.Run("None", func(t *testing.T) {
			fake := newFakeBedrock(t, &fakeBedrock{Blocks: []block{{Text: []string{"ok"}}}}, false)
			p := mustBedrock(t, fake, credential(fake))
			req := toolRequest(&canvas.ToolChoice{Mode: canvas.ToolChoiceNone})
			req.Messages = req.Messages[:1]
			_, err := p.Complete(context.Background(), req)
			require.NoError(t, err)
			assert.NotContains(t, fake.Requests()[0].Body, "toolConfig")
		})
	})
	answer := []block{
		{Text: []string{"Let me ", "check."}},
		{ToolUseID: "tooluse_a", Name: "get_weather", Input: []string{`{"ci`, `ty": "Paris"}`}},
		{ToolUseID: "tooluse_b", Name: "now", Input: nil},
	}
	wantCalls := []model.ToolCall{
		{ID: "tooluse_a", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)},
		{ID: "tooluse_b", Name: "now", Arguments: json.RawMessage(`{}`)},
	}
	t.Run("Calls", func(t *testing.T) {
		fake := newFakeBedrock(t, &fakeBedrock{Blocks: answer}, false)
		p := mustBedrock(t, fake, credential(fake))
		res, err := p.Complete(context.Background(), toolRequest(nil))
		require.NoError(t, err)
		assert.Equal(t, "Let me check.", res.Text)
		assert.Equal(t, model.FinishToolCalls, res.FinishReason)
		assert.Equal(t, wantCalls, res.ToolCalls)
	})
	t.Run("StreamedCalls", func(t *testing.T) {
		fake := newFakeBedrock(t, &fakeBedrock{Blocks: answer}, false)
		p := mustBedrock(t, fake, credential(fake))
		var chunks []model.Chunk
		res, err := p.Stream(context.Background(), toolRequest(nil), func(c model.Chunk) error {
			chunks = append(chunks, c)
			return nil
		})
		require.NoError(t, err)
		assert.Equal(t, []model.Chunk{
			{Text: "Let me "}, {Text: "check."},
			{ToolCall: &model.ToolCallDelta{Index: 0, ID: "tooluse_a", Name: "get_weather"}},
			{ToolCall: &model.ToolCallDelta{Index: 0, Arguments: `{"ci`}},
			{ToolCall: &model.ToolCallDelta{Index: 0, Arguments: `ty": "Paris"}`}},
			{ToolCall: &model.ToolCallDelta{Index: 1, ID: "tooluse_b", Name: "now"}},
		}, chunks)
		assert.Equal(t, "Let me check.", res.Text)
		assert.Equal(t, model.FinishToolCalls, res.FinishReason)
		assert.Equal(t, []model.ToolCall{
			{ID: "tooluse_a", Name: "get_weather", Arguments: json.RawMessage(`{"city": "Paris"}`)},
			{ID: "tooluse_b", Name: "now", Arguments: json.RawMessage(`{}`)},
		}, res.ToolCalls)
		assert.Equal(t, model.Usage{InputTokens: fakeInputTokens, OutputTokens: fakeOutputTokens}, res.Usage)
		assert.True(t, strings.HasSuffix(fake.Requests()[0].Path, "/converse-stream"))
		assert.Equal(t, mustJSON(t, `{"tools": `+toolSpecs+`}`), fake.Requests()[0].Body["toolConfig"])
	})
}

func TestProvider_StructuredOutput(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"score":{"type":"number"}},"required":["score"]}`)
	structured := func() model.Request {
		req := userRequest("Rate it.")
		req.StructuredOutput = &canvas.StructuredOutput{Enabled: true, Schema: schema}
		return req
	}
	outputTool := func(schema string) string {
		return `{"toolSpec": {"name": "output", "description": "Give the answer as this tool's input.", "inputSchema": {"json": ` + schema + `}}}`
	}
	t.Run("Complete", func(t *testing.T) {
		fake := newFakeBedrock(t, &fakeBedrock{Blocks: []block{{ToolUseID: "t1", Name: "output", Input: []string{`{"score": 0.5}`}}}}, false)
		p := mustBedrock(t, fake, credential(fake))
		res, err := p.Complete(context.Background(), structured())
		require.NoError(t, err)
		assert.JSONEq(t, `{"score": 0.5}`, res.Text)
		assert.Equal(t, "stop", res.FinishReason)
		assert.Empty(t, res.ToolCalls)
		assert.Equal(t, mustJSON(t, `{"tools": [`+outputTool(string(schema))+`], "toolChoice": {"tool": {"name": "output"}}}`),
			fake.Requests()[0].Body["toolConfig"])
	})
	t.Run("Stream", func(t *testing.T) {
		fake := newFakeBedrock(t, &fakeBedrock{Blocks: []block{{ToolUseID: "t1", Name: "output", Input: []string{`{"sco`, `re": 0.5}`}}}}, false)
		p := mustBedrock(t, fake, credential(fake))
		var text strings.Builder
		res, err := p.Stream(context.Background(), structured(), func(c model.Chunk) error {
			assert.Nil(t, c.ToolCall)
			text.WriteString(c.Text)
			return nil
		})
		require.NoError(t, err)
		assert.Equal(t, `{"score": 0.5}`, res.Text)
		assert.Equal(t, res.Text, text.String())
		assert.Equal(t, "stop", res.FinishReason)
	})
	t.Run("ArraySchemaWrapped", func(t *testing.T) {
		fake := newFakeBedrock(t, &fakeBedrock{Blocks: []block{{ToolUseID: "t1", Name: "output", Input: []string{`{"value": `, `["a", "b"]}`}}}}, false)
		p := mustBedrock(t, fake, credential(fake))
		req := userRequest("List.")
		req.StructuredOutput = &canvas.StructuredOutput{Enabled: true, Schema: json.RawMessage(`{"type":"array","items":{"type":"string"}}`)}
		var text strings.Builder
		res, err := p.Stream(context.Background(), req, func(c model.Chunk) error {
			text.WriteString(c.Text)
			return nil
		})
		require.NoError(t, err)
		assert.Equal(t, `["a", "b"]`, res.Text)
		assert.Equal(t, res.Text, text.String())
		assert.Equal(t, mustJSON(t, `{"tools": [`+outputTool(`{"type":"object","properties":{"value":{"type":"array","items":{"type":"string"}}},"required":["value"]}`)+`],
			"toolChoice": {"tool": {"name": "output"}}}`), fake.Requests()[0].Body["toolConfig"])
	})
	t.Run("WithFunctions", func(t *testing.T) {
		fake := newFakeBedrock(t, &fakeBedrock{Blocks: []block{{ToolUseID: "t1", Name: "now"}}}, false)
		p := mustBedrock(t, fake, credential(fake))
		req := structured()
		req.Tools = []canvas.Function{{Name: "now"}}
		res, err := p.Complete(context.Background(), req)
		require.NoError(t, err)
		assert.Equal(t, model.FinishToolCalls, res.FinishReason)
		assert.Equal(t, []model.ToolCall{{ID: "t1", Name: "now", Arguments: json.RawMessage(`{}`)}}, res.ToolCalls)
		assert.Equal(t, mustJSON(t, `{"tools": [{"toolSpec": {"name": "now", "inputSchema": {"json": {"type":"object","properties":{}}}}}, `+
			outputTool(string(schema))+`], "toolChoice": {"any": {}}}`), fake.Requests()[0].Body["toolConfig"])
	})
	t.Run("InvalidSchema", func(t *testing.T) {
		fake := newFakeBedrock(t, &fakeBedrock{}, false)
		p := mustBedrock(t, fake, credential(fake))
		req := userRequest("x")
		req.StructuredOutput = &canvas.StructuredOutput{Enabled: true, Schema: json.RawMessage(`{"type": 12}`)}
		_, err := p.Complete(context.Background(), req)
		assert.Equal(t, canvas.EINVALID, canvas.ErrorCode(err))
		assert.Empty(t, fake.Requests())
	})
}

func TestProvider_Files(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\nfake image")
	pdf := []byte("%PDF-1.7 fake")
	t.Run("OK", func(t *testing.T) {
		fake := newFakeBedrock(t, &fakeBedrock{Blocks: []block{{Text: []string{"seen"}}}}, false)
		p := mustBedrock(t, fake, credential(fake))
		_, err := p.Complete(context.Background(), model.Request{Model: testModel, Messages: []model.Message{
			{Role: canvas.RoleSystem, Content: "Read the files.", Files: []model.File{
				{Variable: "policy", Name: "policy.pdf", MIMEType: "application/pdf", Data: pdf},
			}},
			{Role: canvas.RoleUser, Content: "[file name=Q3 report_final.v2.pdf ...] and a photo", Files: []model.File{
				{Variable: "report", Name: "Q3 report_final.v2.pdf", MIMEType: "application/pdf", Data: pdf},
				{Variable: "photo", Name: "cat.png", MIMEType: "image/png", Data: png, Image: true},
				{Variable: "again", Name: "../policy.pdf", MIMEType: "application/pdf", Data: pdf},
			}},
		}})
		require.NoError(t, err)
		b64 := base64.StdEncoding.EncodeToString
		assert.Equal(t, mustJSON(t, `[{"role": "user", "content": [
			{"document": {"format": "pdf", "name": "policy", "source": {"bytes": "`+b64(pdf)+`"}}},
			{"text": "[file name=Q3 report_final.v2.pdf ...] and a photo"},
			{"document": {"format": "pdf", "name": "Q3 report final v2", "source": {"bytes": "`+b64(pdf)+`"}}},
			{"image": {"format": "png", "source": {"bytes": "`+b64(png)+`"}}},
			{"document": {"format": "pdf", "name": "policy (2)", "source": {"bytes": "`+b64(pdf)+`"}}}
		]}]`), fake.Requests()[0].Body["messages"])
		assert.Equal(t, mustJSON(t, `[{"text": "Read the files."}]`), fake.Requests()[0].Body["system"])
	})
	t.Run("Unsupported", func(t *testing.T) {
		fake := newFakeBedrock(t, &fakeBedrock{}, false)
		p := mustBedrock(t, fake, credential(fake))
		_, err := p.Complete(context.Background(), model.Request{Model: testModel, Messages: []model.Message{
			{Role: canvas.RoleUser, Content: "x", Files: []model.File{{Variable: "clip", Name: "a.zip", MIMEType: "application/zip", Data: []byte("PK")}}},
		}})
		var e *canvas.Error
		require.ErrorAs(t, err, &e)
		assert.Equal(t, canvas.EINVALID, e.Code)
		require.Len(t, e.Details, 1)
		assert.Equal(t, "/json/variables/clip", e.Details[0].Path)
		assert.Contains(t, e.Details[0].Message, "application/zip")
		assert.Empty(t, fake.Requests())
	})
}

func TestProvider_Stream(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		fake := newFakeBedrock(t, &fakeBedrock{Blocks: []block{{Text: []string{"Hi", " there"}}}, StopReason: "max_tokens"}, false)
		p := mustBedrock(t, fake, credential(fake))
		var chunks []model.Chunk
		res, err := p.Stream(context.Background(), userRequest("Say hi."), func(c model.Chunk) error {
			chunks = append(chunks, c)
			return nil
		})
		require.NoError(t, err)
		assert.Equal(t, []model.Chunk{{Text: "Hi"}, {Text: " there"}}, chunks)
		assert.Equal(t, &model.Result{Text: "Hi there", Usage: model.Usage{InputTokens: fakeInputTokens, OutputTokens: fakeOutputTokens},
			Model: testModel, FinishReason: "length"}, res)

		r := fake.Requests()[0]
		assert.Equal(t, "/model/"+strings.ReplaceAll(testModel, ":", "%3A")+"/converse-stream", r.Path)
		assert.Equal(t, mustJSON(t, `{"messages": [{"role": "user", "content": [{"text": "Say hi."}]}]}`), any(r.Body))
		assert.True(t, strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential="+accessKeyID+"/"))
	})
	t.Run("EmitError", func(t *testing.T) {
		fake := newFakeBedrock(t, &fakeBedrock{Blocks: []block{{Text: []string{"a", "b", "c"}}}}, false)
		p := mustBedrock(t, fake, credential(fake))
		stop := errors.New("client went away")
		n := 0
		_, err := p.Stream(context.Background(), userRequest("x"), func(model.Chunk) error {
			n++
			return stop
		})
		assert.Same(t, stop, err)
		assert.Equal(t, 1, n)
	})
	t.Run("Exception", func(t *testing.T) {
		fake := newFakeBedrock(t, &fakeBedrock{Blocks: []block{{Text: []string{"a", "b"}}}, StreamException: "throttlingException"}, false)
		p := mustBedrock(t, fake, credential(fake))
		var got []string
		_, err := p.Stream(context.Background(), userRequest("x"), func(c model.Chunk) error {
			got = append(got, c.Text)
			return nil
		})
		assert.Equal(t, []string{"a"}, got)
		ve := assertVendorError(t, err, 429, "ThrottlingException")
		assert.True(t, ve.Retryable())
		assert.Len(t, fake.Requests(), 1)
	})
}

// assertVendorError checks that err is a PROVIDER_ERROR naming status and
// code but not the vendor's message, and returns its VendorError.
func assertVendorError(t *testing.T, err error, status int, code string) *model.VendorError {
	t.Helper()
	require.Error(t, err)
	var e *canvas.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, canvas.EPROVIDER, e.Code)
	assert.Contains(t, e.Message, `"bedrock"`)
	assert.Contains(t, e.Message, code)
	assert.NotContains(t, e.Message, "secret detail")
	var ve *model.VendorError
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, status, ve.Status)
	assert.Equal(t, code, ve.Code)
	return ve
}

func TestProvider_Errors(t *testing.T) {
	tests := []struct {
		name      string
		fail      vendorError
		retryable bool
		after     time.Duration
	}{
		{"Validation", vendorError{Status: 400, Type: "ValidationException"}, false, 0},
		{"AccessDenied", vendorError{Status: 403, Type: "AccessDeniedException"}, false, 0},
		{"Throttled", vendorError{Status: 429, Type: "ThrottlingException", RetryAfter: "7"}, true, 7 * time.Second},
		{"Internal", vendorError{Status: 500, Type: "InternalServerException"}, true, 0},
		{"Unavailable", vendorError{Status: 503, Type: "ServiceUnavailableException", RetryAfter: "2"}, true, 2 * time.Second},
	}
	for _, tt := range tests {
		for _, stream := range []bool{false, true} {
			name := tt.name
			if stream {
				name += "Stream"
			}
			t.Run(name, func(t *testing.T) {
				fake := newFakeBedrock(t, &fakeBedrock{Fail: []vendorError{tt.fail, tt.fail, tt.fail}, Blocks: []block{{Text: []string{"ok"}}}}, false)
				p := mustBedrock(t, fake, credential(fake))
				var err error
				if stream {
					_, err = p.Stream(context.Background(), userRequest("x"), func(model.Chunk) error { return nil })
				} else {
					_, err = p.Complete(context.Background(), userRequest("x"))
				}
				ve := assertVendorError(t, err, tt.fail.Status, tt.fail.Type)
				assert.Equal(t, tt.retryable, ve.Retryable())
				assert.Equal(t, tt.after, ve.RetryAfter)
				assert.NotContains(t, err.Error(), secretKey)
				assert.Len(t, fake.Requests(), 1, "the SDK must not retry")
			})
		}
	}
	t.Run("Unreachable", func(t *testing.T) {
		fake := newFakeBedrock(t, &fakeBedrock{}, false)
		c := credential(fake)
		c.BaseURL = "http://127.0.0.1:1"
		p := mustBedrock(t, fake, c)
		_, err := p.Complete(context.Background(), userRequest("x"))
		var ve *model.VendorError
		require.ErrorAs(t, err, &ve)
		assert.Equal(t, 0, ve.Status)
		assert.Equal(t, canvas.EPROVIDER, canvas.ErrorCode(err))
	})
}

func TestProvider_Cancel(t *testing.T) {
	for _, stream := range []bool{false, true} {
		name := "Complete"
		if stream {
			name = "Stream"
		}
		t.Run(name, func(t *testing.T) {
			fake := newFakeBedrock(t, &fakeBedrock{Hang: true, Blocks: []block{{Text: []string{"a", "b"}}}}, false)
			p := mustBedrock(t, fake, credential(fake))
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(100*time.Millisecond, cancel)
			start := time.Now()
			var err error
			if stream {
				_, err = p.Stream(ctx, userRequest("x"), func(model.Chunk) error { return nil })
			} else {
				_, err = p.Complete(ctx, userRequest("x"))
			}
			assert.Equal(t, canvas.EPROVIDER, canvas.ErrorCode(err))
			assert.ErrorIs(t, err, context.Canceled)
			assert.Less(t, time.Since(start), 5*time.Second)
		})
	}
}
