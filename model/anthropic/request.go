package anthropic

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
)

// buildParams returns the Messages API parameters of req and how to read
// its structured output back. Problems the API would refuse and the
// project can name (a malformed schema, a file the API does not take) are
// VALIDATION errors, found before anything is sent.
func buildParams(req model.Request) (sdk.MessageNewParams, *outputTool, error) {
	params := sdk.MessageNewParams{Model: sdk.Model(req.Model), MaxTokens: DefaultMaxTokens}
	if req.MaxTokens != nil {
		params.MaxTokens = int64(*req.MaxTokens)
	}
	var err error
	if params.System, params.Messages, err = messages(req.Messages); err != nil {
		return params, nil, err
	}
	out := &outputTool{}
	if params.Tools, params.ToolChoice, err = tools(req, out); err != nil {
		return params, nil, err
	}
	return params, out, nil
}

// messages returns the system prompt and the conversation of msgs. System
// messages, wherever they stand, make the system prompt. User and
// function messages are user text; an assistant's tool calls are tool_use
// blocks after its text; a tool message is a tool_result block answering
// its call in a user message. Files follow their message's text as image
// and document blocks, in a user message of their own after a system or
// assistant message, whose content cannot hold them. Consecutive messages
// of one role are merged, since the API requires the roles to alternate;
// in a merged user message the tool results come first, as the API
// requires; empty text is left out, since the API refuses it.
func messages(msgs []model.Message) ([]sdk.TextBlockParam, []sdk.MessageParam, error) {
	var system []sdk.TextBlockParam
	var out []sdk.MessageParam
	add := func(assistant bool, blocks ...sdk.ContentBlockParamUnion) {
		if len(blocks) == 0 {
			return
		}
		if n := len(out); n > 0 {
			if last := out[n-1]; assistant && last.OfAssistant != nil {
				last.OfAssistant.Content = append(last.OfAssistant.Content, blocks...)
				return
			} else if !assistant && last.OfUser != nil {
				last.OfUser.Content = append(last.OfUser.Content, blocks...)
				return
			}
		}
		if assistant {
			out = append(out, sdk.NewAssistantMessage(blocks...))
		} else {
			out = append(out, sdk.NewUserMessage(blocks...))
		}
	}
	for _, m := range msgs {
		files, err := fileBlocks(m.Files)
		if err != nil {
			return nil, nil, err
		}
		switch m.Role {
		case canvas.RoleSystem:
			if m.Content != "" {
				system = append(system, sdk.TextBlockParam{Text: m.Content})
			}
			add(false, files...)
		case canvas.RoleAssistant:
			blocks := textBlock(m.Content)
			for _, c := range m.ToolCalls {
				blocks = append(blocks, sdk.NewToolUseBlock(c.ID, model.Arguments(string(c.Arguments)), c.Name))
			}
			add(true, blocks...)
			add(false, files...)
		case model.RoleTool:
			add(false, append([]sdk.ContentBlockParamUnion{toolResult(m)}, files...)...)
		default:
			add(false, append(textBlock(m.Content), files...)...)
		}
	}
	for _, m := range out {
		if m.OfUser != nil {
			slices.SortStableFunc(m.OfUser.Content, func(a, b sdk.ContentBlockParamUnion) int {
				return toolResultFirst(a) - toolResultFirst(b)
			})
		}
	}
	return system, out, nil
}

// toolResultFirst orders tool_result blocks before the others.
func toolResultFirst(b sdk.ContentBlockParamUnion) int {
	if b.OfToolResult != nil {
		return 0
	}
	return 1
}

// textBlock returns a text block of s, or none when s is empty.
func textBlock(s string) []sdk.ContentBlockParamUnion {
	if s == "" {
		return nil
	}
	return []sdk.ContentBlockParamUnion{sdk.NewTextBlock(s)}
}

// toolResult returns the tool_result block of a tool message: its content
// as text, none when it is empty.
func toolResult(m model.Message) sdk.ContentBlockParamUnion {
	b := sdk.ToolResultBlockParam{ToolUseID: m.ToolCallID}
	if m.Content != "" {
		b.Content = []sdk.ToolResultBlockParamContentUnion{{OfText: &sdk.TextBlockParam{Text: m.Content}}}
	}
	return sdk.ContentBlockParamUnion{OfToolResult: &b}
}

// imageTypes are the media types the API takes as base64 images.
var imageTypes = map[string]bool{"image/jpeg": true, "image/png": true, "image/gif": true, "image/webp": true}

// fileBlocks returns the blocks of resolved files: a base64 image block
// for an image, a base64 document block titled with the file's name for a
// PDF. Any other file is a VALIDATION error at its variable: the API takes
// nothing else inline (text files are already in the message's text).
func fileBlocks(files []model.File) ([]sdk.ContentBlockParamUnion, error) {
	var blocks []sdk.ContentBlockParamUnion
	for _, f := range files {
		data := base64.StdEncoding.EncodeToString(f.Data)
		switch {
		case f.Image && imageTypes[f.MIMEType]:
			blocks = append(blocks, sdk.NewImageBlockBase64(f.MIMEType, data))
		case f.MIMEType == "application/pdf":
			doc := sdk.DocumentBlockParam{Source: sdk.DocumentBlockParamSourceUnion{OfBase64: &sdk.Base64PDFSourceParam{Data: data}}}
			if f.Name != "" {
				doc.Title = sdk.String(f.Name)
			}
			blocks = append(blocks, sdk.ContentBlockParamUnion{OfDocument: &doc})
		default:
			msg := fmt.Sprintf("Anthropic models take images (JPEG, PNG, GIF, WebP) from multimodal variables and PDF documents, not %s", f.MIMEType)
			return nil, canvas.Invalid("A file cannot be sent to the model.",
				canvas.Detail{Path: variablePath(f.Variable), Message: msg})
		}
	}
	return blocks, nil
}

// variablePath is the JSON pointer of a request's variable.
func variablePath(name string) string {
	name = strings.ReplaceAll(strings.ReplaceAll(name, "~", "~0"), "/", "~1")
	return "/json/variables/" + name
}

// tools returns the tools and tool choice of req. Each function becomes a
// custom tool whose input_schema is its parameters (an empty object schema
// when it has none). With structured output the forced tool named
// OutputTool joins them (see outputTool); the choice then forces it, or
// any tool when the model may call the functions too. No tools, no choice:
// the API refuses a choice without tools.
func tools(req model.Request, out *outputTool) ([]sdk.ToolUnionParam, sdk.ToolChoiceUnionParam, error) {
	var list []sdk.ToolUnionParam
	var choice sdk.ToolChoiceUnionParam
	for i, f := range req.Tools {
		if req.Structured() && f.Name == OutputTool {
			return nil, choice, canvas.Errorf(canvas.EINVALID,
				"The function name %q is reserved for structured output on Anthropic models.", OutputTool)
		}
		schema, err := inputSchema(f.Parameters)
		if err != nil {
			return nil, choice, canvas.Invalid("A function's parameters cannot be sent to the model.",
				canvas.Detail{Path: fmt.Sprintf("/json/configuration/functions/%d/parameters", i), Message: err.Error()})
		}
		t := &sdk.ToolParam{Name: f.Name, InputSchema: schema}
		if f.Description != "" {
			t.Description = sdk.String(f.Description)
		}
		list = append(list, sdk.ToolUnionParam{OfTool: t})
	}
	mode := ""
	if req.ToolChoice != nil {
		mode = req.ToolChoice.Mode
	}
	if req.Structured() {
		t, err := out.tool(req.StructuredOutput.Schema)
		if err != nil {
			return nil, choice, err
		}
		functions := len(list) > 0
		list = append(list, sdk.ToolUnionParam{OfTool: t})
		switch {
		case mode == canvas.ToolChoiceFunction:
			choice.OfTool = &sdk.ToolChoiceToolParam{Name: req.ToolChoice.Name}
		case functions && mode != canvas.ToolChoiceNone:
			choice.OfAny = &sdk.ToolChoiceAnyParam{}
		default:
			choice.OfTool = &sdk.ToolChoiceToolParam{Name: OutputTool}
		}
		return list, choice, nil
	}
	if len(list) == 0 {
		return nil, choice, nil
	}
	switch mode {
	case canvas.ToolChoiceAuto:
		choice.OfAuto = &sdk.ToolChoiceAutoParam{}
	case canvas.ToolChoiceRequired:
		choice.OfAny = &sdk.ToolChoiceAnyParam{}
	case canvas.ToolChoiceNone:
		choice.OfNone = &sdk.ToolChoiceNoneParam{}
	case canvas.ToolChoiceFunction:
		choice.OfTool = &sdk.ToolChoiceToolParam{Name: req.ToolChoice.Name}
	}
	return list, choice, nil
}

// inputSchema returns a tool's input_schema from a JSON Schema of an
// object: its keywords as written (numbers and nesting kept), "type"
// always "object". Empty parameters are an object without properties.
func inputSchema(raw json.RawMessage) (sdk.ToolInputSchemaParam, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return sdk.ToolInputSchemaParam{Properties: map[string]any{}}, nil
	}
	var keywords map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keywords); err != nil || keywords == nil {
		return sdk.ToolInputSchemaParam{}, fmt.Errorf("must be a JSON Schema object")
	}
	if t, ok := keywords["type"]; ok && string(bytes.TrimSpace(t)) != `"object"` {
		return sdk.ToolInputSchemaParam{}, fmt.Errorf(`must describe an object ("type": "object")`)
	}
	delete(keywords, "type")
	extra := make(map[string]any, len(keywords))
	for k, v := range keywords {
		extra[k] = v
	}
	return sdk.ToolInputSchemaParam{ExtraFields: extra}, nil
}
