package bedrock

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"path"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	smithydocument "github.com/aws/smithy-go/document"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
)

// OutputTool is the name of the tool a structured output request forces:
// its input schema is the request's schema, and the input the model gives
// it is the answer's Text.
const OutputTool = "output"

// converse is what the Converse and ConverseStream inputs share.
type converse struct {
	system     []types.SystemContentBlock
	messages   []types.Message
	inference  *types.InferenceConfiguration
	tools      *types.ToolConfiguration
	structured bool
	// wrapped says OutputTool's input is {"value": answer}: Bedrock takes
	// only object schemas as a tool's input schema.
	wrapped bool
}

// build turns req into the parts of a Converse request. Problems the
// vendor would refuse anyway (no message, a file type Bedrock does not
// take, an invalid structured output schema) are VALIDATION errors.
func build(req model.Request) (*converse, error) {
	cv := &converse{structured: req.Structured()}
	var err error
	var toolBlocks bool
	if cv.system, cv.messages, toolBlocks, err = messages(req.Messages); err != nil {
		return nil, err
	}
	if len(cv.messages) == 0 {
		return nil, canvas.Errorf(canvas.EINVALID, "Bedrock needs at least one user or assistant message.")
	}
	if req.Temperature != nil || req.TopP != nil || req.MaxTokens != nil {
		cv.inference = &types.InferenceConfiguration{}
		if req.Temperature != nil {
			cv.inference.Temperature = aws.Float32(float32(*req.Temperature))
		}
		if req.TopP != nil {
			cv.inference.TopP = aws.Float32(float32(*req.TopP))
		}
		if req.MaxTokens != nil {
			cv.inference.MaxTokens = aws.Int32(int32(min(max(*req.MaxTokens, 0), math.MaxInt32)))
		}
	}
	if cv.tools, cv.wrapped, err = toolConfig(req, toolBlocks); err != nil {
		return nil, err
	}
	return cv, nil
}

// messages returns the system blocks and the conversation of msgs, and
// whether the conversation holds tool uses or results. System messages
// become system blocks; user, function (and unknown) roles user messages;
// an assistant message's ToolCalls toolUse blocks; a RoleTool message a
// toolResult block in a user message. Consecutive messages of one role are
// merged, as Bedrock demands alternation. Files go with a user message: the
// files of any other message in a user message right after it.
func messages(msgs []model.Message) ([]types.SystemContentBlock, []types.Message, bool, error) {
	var (
		system     []types.SystemContentBlock
		out        []types.Message
		toolBlocks bool
	)
	names := make(map[string]bool)
	add := func(role types.ConversationRole, blocks ...types.ContentBlock) {
		if len(blocks) == 0 {
			return
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = append(out[n-1].Content, blocks...)
			return
		}
		out = append(out, types.Message{Role: role, Content: blocks})
	}
	for _, m := range msgs {
		files, err := fileBlocks(m.Files, names)
		if err != nil {
			return nil, nil, false, err
		}
		switch m.Role {
		case canvas.RoleSystem:
			if strings.TrimSpace(m.Content) != "" {
				system = append(system, &types.SystemContentBlockMemberText{Value: m.Content})
			}
			add(types.ConversationRoleUser, files...)
		case canvas.RoleAssistant:
			blocks := textBlocks(m.Content)
			for _, tc := range m.ToolCalls {
				input, err := jsonDocument(model.Arguments(string(tc.Arguments)))
				if err != nil {
					return nil, nil, false, canvas.Errorf(canvas.EINVALID, "The arguments of tool call %q are not JSON.", tc.ID)
				}
				blocks = append(blocks, &types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{
					ToolUseId: aws.String(tc.ID), Name: aws.String(tc.Name), Input: document.NewLazyDocument(input),
				}})
				toolBlocks = true
			}
			add(types.ConversationRoleAssistant, blocks...)
			add(types.ConversationRoleUser, files...)
		case model.RoleTool:
			result := types.ToolResultBlock{ToolUseId: aws.String(m.ToolCallID), Content: []types.ToolResultContentBlock{}}
			if m.Content != "" {
				result.Content = append(result.Content, &types.ToolResultContentBlockMemberText{Value: m.Content})
			}
			add(types.ConversationRoleUser, &types.ContentBlockMemberToolResult{Value: result})
			add(types.ConversationRoleUser, files...)
			toolBlocks = true
		default:
			add(types.ConversationRoleUser, append(textBlocks(m.Content), files...)...)
		}
	}
	return system, out, toolBlocks, nil
}

// textBlocks is a text block of s, or none when s is blank (Bedrock refuses
// blank text blocks).
func textBlocks(s string) []types.ContentBlock {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	return []types.ContentBlock{&types.ContentBlockMemberText{Value: s}}
}

// Formats Bedrock takes as image and document blocks, by media type.
var (
	imageFormats = map[string]types.ImageFormat{
		"image/png":  types.ImageFormatPng,
		"image/jpeg": types.ImageFormatJpeg,
		"image/jpg":  types.ImageFormatJpeg,
		"image/gif":  types.ImageFormatGif,
		"image/webp": types.ImageFormatWebp,
	}
	documentFormats = map[string]types.DocumentFormat{
		"application/pdf":    types.DocumentFormatPdf,
		"text/csv":           types.DocumentFormatCsv,
		"application/msword": types.DocumentFormatDoc,
		"application/vnd.openxmlformats-officedocument.wordprocessingml.document": types.DocumentFormatDocx,
		"application/vnd.ms-excel": types.DocumentFormatXls,
		"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": types.DocumentFormatXlsx,
		"text/html":     types.DocumentFormatHtml,
		"text/plain":    types.DocumentFormatTxt,
		"text/markdown": types.DocumentFormatMd,
	}
)

// fileBlocks returns the blocks of files: an image block for a PNG, JPEG,
// GIF or WebP image (Bedrock has no other form for image bytes), a
// document block for a PDF or another document format Bedrock reads, named
// by documentName. Any other file is a VALIDATION error at its variable.
func fileBlocks(files []model.File, names map[string]bool) ([]types.ContentBlock, error) {
	var blocks []types.ContentBlock
	for _, f := range files {
		if format, ok := imageFormats[f.MIMEType]; ok {
			blocks = append(blocks, &types.ContentBlockMemberImage{Value: types.ImageBlock{
				Format: format, Source: &types.ImageSourceMemberBytes{Value: f.Data},
			}})
			continue
		}
		if format, ok := documentFormats[f.MIMEType]; ok {
			blocks = append(blocks, &types.ContentBlockMemberDocument{Value: types.DocumentBlock{
				Format: format, Name: aws.String(documentName(f.Name, names)), Source: &types.DocumentSourceMemberBytes{Value: f.Data},
			}})
			continue
		}
		return nil, canvas.Invalid("Bedrock does not accept a file of this type.", canvas.Detail{
			Path: variablePath(f.Variable),
			Message: fmt.Sprintf("a file of type %s cannot be sent to Bedrock, which takes PNG, JPEG, GIF and WebP images "+
				"and PDF, CSV, DOC, DOCX, XLS, XLSX, HTML, plain text and Markdown documents", f.MIMEType),
		})
	}
	return blocks, nil
}

// maxDocumentName bounds the length of a document's name.
const maxDocumentName = 100

// documentName returns a name Bedrock accepts for a document called name:
// the file name without its extension, keeping ASCII letters and digits,
// hyphens, parentheses and square brackets, every other run of characters
// written as one space; "document" when nothing is left. A name already
// used in the request gets a number, " (2)", " (3)"..., since the names of
// a request's documents must differ.
func documentName(name string, used map[string]bool) string {
	base := path.Base(strings.ReplaceAll(name, `\`, "/"))
	if ext := path.Ext(base); ext != "" && ext != base {
		base = strings.TrimSuffix(base, ext)
	}
	var b strings.Builder
	space := false
	for _, r := range base {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9',
			r == '-', r == '(', r == ')', r == '[', r == ']':
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
		default:
			space = true
		}
		if b.Len() >= maxDocumentName {
			break
		}
	}
	n := b.String()
	if len(n) > maxDocumentName {
		n = strings.TrimSpace(n[:maxDocumentName])
	}
	if n == "" {
		n = "document"
	}
	unique := n
	for i := 2; used[unique]; i++ {
		unique = n + " (" + strconv.Itoa(i) + ")"
	}
	used[unique] = true
	return unique
}

// variablePath is the JSON pointer of a variable in a run request.
func variablePath(name string) string {
	return "/json/variables/" + strings.ReplaceAll(strings.ReplaceAll(name, "~", "~0"), "/", "~1")
}

// toolConfig returns the tool configuration of req, nil when it declares
// no tool.
//
// Every function becomes a toolSpec whose inputSchema is its parameters
// (an empty object schema when it has none). Tool choice "auto" is
// Bedrock's auto, "required" its any, a function its tool. Bedrock has no
// "none": the tools are then left out of the request, unless the
// conversation already holds tool uses or results, which Bedrock accepts
// only with a tool configuration; they are then declared with no choice,
// and whether the model calls one is the model's.
//
// Structured output adds the tool OutputTool with the request's schema and
// forces it, or, when functions are declared and no one function is
// chosen, forces a call of any tool (a function or OutputTool): the
// model's final answer is then the input it gives OutputTool. A schema
// whose type is not "object" is wrapped, as Bedrock takes only object
// schemas: OutputTool's input is then {"value": answer} (wrapped true).
func toolConfig(req model.Request, toolBlocks bool) (cfg *types.ToolConfiguration, wrapped bool, err error) {
	mode := ""
	if req.ToolChoice != nil {
		mode = req.ToolChoice.Mode
	}
	fns := req.Tools
	if mode == canvas.ToolChoiceNone && !toolBlocks {
		fns = nil
	}
	structured := req.Structured()
	cfg = &types.ToolConfiguration{}
	for _, f := range fns {
		if structured && f.Name == OutputTool {
			return nil, false, canvas.Errorf(canvas.EINVALID, "On Bedrock, structured output is the tool %q: no function may have that name.", OutputTool)
		}
		params := f.Parameters
		if len(bytes.TrimSpace(params)) == 0 || string(bytes.TrimSpace(params)) == "null" {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		schema, err := jsonDocument(params)
		if err != nil {
			return nil, false, canvas.Errorf(canvas.EINVALID, "The parameters of function %q are not a JSON Schema.", f.Name)
		}
		spec := types.ToolSpecification{Name: aws.String(f.Name), InputSchema: &types.ToolInputSchemaMemberJson{Value: document.NewLazyDocument(schema)}}
		if f.Description != "" {
			spec.Description = aws.String(f.Description)
		}
		cfg.Tools = append(cfg.Tools, &types.ToolMemberToolSpec{Value: spec})
	}
	chooseFunction := func() types.ToolChoice {
		return &types.ToolChoiceMemberTool{Value: types.SpecificToolChoice{Name: aws.String(req.ToolChoice.Name)}}
	}
	if structured {
		if err := model.ValidateSchema(req.StructuredOutput.Schema); err != nil {
			return nil, false, err
		}
		schema, err := jsonDocument(req.StructuredOutput.Schema)
		if err != nil {
			return nil, false, err
		}
		if obj, _ := schema.(map[string]any); obj == nil || obj["type"] != "object" {
			wrapped = true
			schema = map[string]any{"type": "object", "properties": map[string]any{"value": schema}, "required": []any{"value"}}
		}
		cfg.Tools = append(cfg.Tools, &types.ToolMemberToolSpec{Value: types.ToolSpecification{
			Name:        aws.String(OutputTool),
			Description: aws.String("Give the answer as this tool's input."),
			InputSchema: &types.ToolInputSchemaMemberJson{Value: document.NewLazyDocument(schema)},
		}})
		switch {
		case mode == canvas.ToolChoiceFunction:
			cfg.ToolChoice = chooseFunction()
		case len(fns) > 0 && mode != canvas.ToolChoiceNone:
			cfg.ToolChoice = &types.ToolChoiceMemberAny{}
		default:
			cfg.ToolChoice = &types.ToolChoiceMemberTool{Value: types.SpecificToolChoice{Name: aws.String(OutputTool)}}
		}
		return cfg, wrapped, nil
	}
	if len(cfg.Tools) == 0 {
		return nil, false, nil
	}
	switch mode {
	case canvas.ToolChoiceAuto:
		cfg.ToolChoice = &types.ToolChoiceMemberAuto{}
	case canvas.ToolChoiceRequired:
		cfg.ToolChoice = &types.ToolChoiceMemberAny{}
	case canvas.ToolChoiceFunction:
		cfg.ToolChoice = chooseFunction()
	}
	return cfg, false, nil
}

// jsonDocument decodes one JSON value into the Go values a Bedrock document
// is written from, numbers kept exactly as written.
func jsonDocument(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return documentNumbers(v), nil
}

// documentNumbers replaces every json.Number of v with a document number:
// the document encoder writes a json.Number as a string.
func documentNumbers(v any) any {
	switch t := v.(type) {
	case json.Number:
		return smithydocument.Number(t)
	case map[string]any:
		for k, e := range t {
			t[k] = documentNumbers(e)
		}
	case []any:
		for i, e := range t {
			t[i] = documentNumbers(e)
		}
	}
	return v
}
