package openai

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
)

// params builds the chat completion parameters of req.
//
// Roles map one to one; a function message is sent with the name
// "function", since versions do not record one, and an unknown role is sent
// as user. An assistant message with ToolCalls carries them as tool_calls
// (its content left out when empty), and a message of model.RoleTool is a
// tool message answering its ToolCallID. A user message with Files is sent
// as a text part followed by one part per file (see fileParts); the files
// of any other message, whose content OpenAI takes as text only, are sent
// in an extra user message right after it.
//
// Tools are sent as function tools and ToolChoice as tool_choice (left out
// when no tool is declared). The structured output schema and the tools'
// parameters are checked first, so that an invalid one never reaches the
// back end.
func (p *Provider) params(req model.Request) (oai.ChatCompletionNewParams, error) {
	name := req.Model
	if p.deployment != "" {
		name = p.deployment
	}
	params := oai.ChatCompletionNewParams{
		Model:    shared.ChatModel(name),
		Messages: make([]oai.ChatCompletionMessageParamUnion, 0, len(req.Messages)),
	}
	for _, m := range req.Messages {
		switch m.Role {
		case canvas.RoleSystem:
			params.Messages = append(params.Messages, oai.SystemMessage(m.Content))
		case canvas.RoleAssistant:
			params.Messages = append(params.Messages, assistantMessage(m))
		case canvas.RoleFunction:
			params.Messages = append(params.Messages, oai.ChatCompletionMessageParamUnion{
				OfFunction: &oai.ChatCompletionFunctionMessageParam{Content: oai.String(m.Content), Name: "function"},
			})
		case model.RoleTool:
			params.Messages = append(params.Messages, oai.ToolMessage(m.Content, m.ToolCallID))
		default:
			if len(m.Files) > 0 {
				parts := append([]oai.ChatCompletionContentPartUnionParam{oai.TextContentPart(m.Content)}, fileParts(m.Files)...)
				params.Messages = append(params.Messages, oai.UserMessage(parts))
				continue
			}
			params.Messages = append(params.Messages, oai.UserMessage(m.Content))
		}
		if len(m.Files) > 0 {
			// Only user messages carry parts other than text: the files of
			// any other message follow it in a user message of their own.
			params.Messages = append(params.Messages, oai.UserMessage(fileParts(m.Files)))
		}
	}
	if req.Temperature != nil {
		params.Temperature = oai.Float(*req.Temperature)
	}
	if req.TopP != nil {
		params.TopP = oai.Float(*req.TopP)
	}
	if req.MaxTokens != nil {
		if p.maxCompletionTokens || p.reasoningByName && reasoningModel(req.Model) {
			params.MaxCompletionTokens = oai.Int(int64(*req.MaxTokens))
		} else {
			params.MaxTokens = oai.Int(int64(*req.MaxTokens))
		}
	}
	if req.Structured() {
		if err := model.ValidateSchema(req.StructuredOutput.Schema); err != nil {
			return params, err
		}
		params.ResponseFormat = oai.ChatCompletionNewParamsResponseFormatUnion{
			OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
				JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{
					Name:   "output",
					Schema: json.RawMessage(req.StructuredOutput.Schema),
				},
			},
		}
	}
	if len(req.Tools) > 0 {
		tools, err := functionTools(req.Tools)
		if err != nil {
			return params, err
		}
		params.Tools = tools
		if req.ToolChoice != nil {
			choice, err := toolChoice(*req.ToolChoice)
			if err != nil {
				return params, err
			}
			params.ToolChoice = choice
		}
	}
	return params, nil
}

// reasoningModel reports whether an OpenAI model takes
// max_completion_tokens only: the o-series and gpt-5 families.
func reasoningModel(name string) bool {
	for _, prefix := range []string{"o1", "o3", "o4", "gpt-5"} {
		if strings.HasPrefix(name, prefix) {
			return true
		}
	}
	return false
}

// assistantMessage is m as an assistant message, with its tool calls.
func assistantMessage(m model.Message) oai.ChatCompletionMessageParamUnion {
	if len(m.ToolCalls) == 0 {
		return oai.AssistantMessage(m.Content)
	}
	a := &oai.ChatCompletionAssistantMessageParam{ToolCalls: make([]oai.ChatCompletionMessageToolCallUnionParam, len(m.ToolCalls))}
	if m.Content != "" {
		a.Content.OfString = oai.String(m.Content)
	}
	for i, tc := range m.ToolCalls {
		args := string(tc.Arguments)
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		a.ToolCalls[i] = oai.ChatCompletionMessageToolCallUnionParam{OfFunction: &oai.ChatCompletionMessageFunctionToolCallParam{
			ID: tc.ID, Function: oai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: args},
		}}
	}
	return oai.ChatCompletionMessageParamUnion{OfAssistant: a}
}

// functionTools returns fns as function tools. A function without
// parameters takes none: it is sent with an empty object schema.
func functionTools(fns []canvas.Function) ([]oai.ChatCompletionToolUnionParam, error) {
	tools := make([]oai.ChatCompletionToolUnionParam, len(fns))
	for i, f := range fns {
		def := shared.FunctionDefinitionParam{Name: f.Name}
		if f.Description != "" {
			def.Description = oai.String(f.Description)
		}
		params, err := parameters(f)
		if err != nil {
			return nil, err
		}
		def.Parameters = params
		tools[i] = oai.ChatCompletionFunctionTool(def)
	}
	return tools, nil
}

// parameters returns the parameters schema of f, each member kept as
// written (numbers included); an empty or null one is the schema of an
// empty object.
func parameters(f canvas.Function) (shared.FunctionParameters, error) {
	raw := bytes.TrimSpace(f.Parameters)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return shared.FunctionParameters{"type": "object", "properties": map[string]any{}}, nil
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil || members == nil {
		return nil, canvas.Invalid(fmt.Sprintf("The parameters of function %q are not a JSON Schema object.", f.Name),
			canvas.Detail{Path: "/json/configuration/functions", Message: fmt.Sprintf("parameters of %q must be a JSON object", f.Name)})
	}
	params := make(shared.FunctionParameters, len(members))
	for k, v := range members {
		params[k] = v
	}
	return params, nil
}

// toolChoice returns c as OpenAI's tool_choice: "auto", "none" or
// "required", or a named function.
func toolChoice(c canvas.ToolChoice) (oai.ChatCompletionToolChoiceOptionUnionParam, error) {
	switch c.Mode {
	case canvas.ToolChoiceAuto, canvas.ToolChoiceNone, canvas.ToolChoiceRequired:
		return oai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: oai.String(c.Mode)}, nil
	case canvas.ToolChoiceFunction:
		return oai.ToolChoiceOptionFunctionToolChoice(oai.ChatCompletionNamedToolChoiceFunctionParam{Name: c.Name}), nil
	}
	return oai.ChatCompletionToolChoiceOptionUnionParam{}, canvas.Invalid(fmt.Sprintf("Tool choice %q is not one OpenAI knows.", c.Mode),
		canvas.Detail{Path: "/json/configuration/toolChoice", Message: `must be "auto", "none", "required" or {"name": ...}`})
}

// fileParts returns the content parts of files: an image_url part with a
// base64 data: URL for an image, a file part {filename, file_data} with a
// base64 data: URL for any other file.
func fileParts(files []model.File) []oai.ChatCompletionContentPartUnionParam {
	parts := make([]oai.ChatCompletionContentPartUnionParam, 0, len(files))
	for _, f := range files {
		data := "data:" + f.MIMEType + ";base64," + base64.StdEncoding.EncodeToString(f.Data)
		if f.Image {
			parts = append(parts, oai.ImageContentPart(oai.ChatCompletionContentPartImageImageURLParam{URL: data}))
			continue
		}
		parts = append(parts, oai.FileContentPart(oai.ChatCompletionContentPartFileFileParam{
			Filename: oai.String(f.Name), FileData: oai.String(data)}))
	}
	return parts
}
