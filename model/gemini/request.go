package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"google.golang.org/genai"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
)

// skipSignature is the thought signature Google documents for a function
// call replayed without the one the model sent: Gemini 3 models refuse a
// replayed call without a signature, and model.ToolCall does not keep it.
var skipSignature = []byte("skip_thought_signature_validator")

// syntheticID matches the ids given to function calls Gemini sent without
// one; they are not sent back.
var syntheticID = regexp.MustCompile(`^call_[0-9]+$`)

// emptyObject is the parameters schema of a function that takes none.
var emptyObject = json.RawMessage(`{"type": "object", "properties": {}}`)

// params returns the contents and configuration of req.
//
// System messages become the system instruction; user and function
// messages user turns, assistant messages model turns (their ToolCalls
// function calls), and tool messages user turns holding the function
// response of the call they answer, named after it (Gemini matches
// responses by name). Consecutive turns of one role are merged. A file
// becomes an inline-data part of a user turn (the files of a system or
// assistant message follow it in a user turn of their own).
func params(req model.Request) ([]*genai.Content, *genai.GenerateContentConfig, error) {
	if strings.TrimSpace(req.Model) == "" {
		return nil, nil, canvas.Errorf(canvas.EINVALID, "A Gemini request needs a model.")
	}
	config := &genai.GenerateContentConfig{
		// A continuation is another request: the Caller makes those.
		AutomaticContinuation: genai.Ptr(false),
	}
	var contents []*genai.Content
	var system []*genai.Part
	names := make(map[string]string) // call id → function name
	for _, m := range req.Messages {
		files, err := fileParts(m.Files)
		if err != nil {
			return nil, nil, err
		}
		switch m.Role {
		case canvas.RoleSystem:
			if m.Content != "" {
				system = append(system, &genai.Part{Text: m.Content})
			}
			contents = appendTurn(contents, genai.RoleUser, files...)
		case canvas.RoleAssistant:
			var parts []*genai.Part
			if m.Content != "" {
				parts = append(parts, &genai.Part{Text: m.Content})
			}
			for i, tc := range m.ToolCalls {
				names[tc.ID] = tc.Name
				part := &genai.Part{FunctionCall: &genai.FunctionCall{Name: tc.Name, Args: object(tc.Arguments)}}
				if !syntheticID.MatchString(tc.ID) {
					part.FunctionCall.ID = tc.ID
				}
				if i == 0 {
					part.ThoughtSignature = skipSignature
				}
				parts = append(parts, part)
			}
			contents = appendTurn(contents, genai.RoleModel, parts...)
			contents = appendTurn(contents, genai.RoleUser, files...)
		case model.RoleTool:
			name, ok := names[m.ToolCallID]
			if !ok {
				return nil, nil, canvas.Errorf(canvas.EINVALID, "The tool message answering %q follows no assistant message that made that call.", m.ToolCallID)
			}
			fr := &genai.FunctionResponse{Name: name, Response: response(m.Content)}
			if !syntheticID.MatchString(m.ToolCallID) {
				fr.ID = m.ToolCallID
			}
			contents = appendTurn(contents, genai.RoleUser, append([]*genai.Part{{FunctionResponse: fr}}, files...)...)
		default: // user, function and any other role
			var parts []*genai.Part
			if m.Content != "" {
				parts = append(parts, &genai.Part{Text: m.Content})
			}
			contents = appendTurn(contents, genai.RoleUser, append(parts, files...)...)
		}
	}
	if len(system) > 0 {
		config.SystemInstruction = &genai.Content{Parts: system}
	}
	if req.Temperature != nil {
		config.Temperature = genai.Ptr(float32(*req.Temperature))
	}
	if req.TopP != nil {
		config.TopP = genai.Ptr(float32(*req.TopP))
	}
	if req.MaxTokens != nil {
		config.MaxOutputTokens = int32(*req.MaxTokens)
	}
	if req.Structured() {
		if err := model.ValidateSchema(req.StructuredOutput.Schema); err != nil {
			return nil, nil, err
		}
		config.ResponseMIMEType = "application/json"
		config.ResponseJsonSchema = json.RawMessage(req.StructuredOutput.Schema)
	}
	if len(req.Tools) > 0 {
		decls := make([]*genai.FunctionDeclaration, 0, len(req.Tools))
		for _, f := range req.Tools {
			schema := f.Parameters
			if t := bytes.TrimSpace(schema); len(t) == 0 || string(t) == "null" {
				schema = emptyObject
			}
			decls = append(decls, &genai.FunctionDeclaration{Name: f.Name, Description: f.Description, ParametersJsonSchema: schema})
		}
		config.Tools = []*genai.Tool{{FunctionDeclarations: decls}}
		if tc := req.ToolChoice; tc != nil {
			fc := &genai.FunctionCallingConfig{}
			switch tc.Mode {
			case canvas.ToolChoiceNone:
				fc.Mode = genai.FunctionCallingConfigModeNone
			case canvas.ToolChoiceRequired:
				fc.Mode = genai.FunctionCallingConfigModeAny
			case canvas.ToolChoiceFunction:
				fc.Mode = genai.FunctionCallingConfigModeAny
				fc.AllowedFunctionNames = []string{tc.Name}
			default:
				fc.Mode = genai.FunctionCallingConfigModeAuto
			}
			config.ToolConfig = &genai.ToolConfig{FunctionCallingConfig: fc}
		}
	}
	return contents, config, nil
}

// appendTurn appends parts to contents as a turn of role, merged into the
// last turn when it has the same role.
func appendTurn(contents []*genai.Content, role string, parts ...*genai.Part) []*genai.Content {
	if len(parts) == 0 {
		return contents
	}
	if n := len(contents); n > 0 && contents[n-1].Role == role {
		contents[n-1].Parts = append(contents[n-1].Parts, parts...)
		return contents
	}
	return append(contents, &genai.Content{Role: role, Parts: parts})
}

// fileParts returns the inline-data parts of files: images, PDFs, audio
// and video, which Gemini reads; any other type is a VALIDATION error.
func fileParts(files []model.File) ([]*genai.Part, error) {
	parts := make([]*genai.Part, 0, len(files))
	for _, f := range files {
		mt := strings.ToLower(f.MIMEType)
		if !strings.HasPrefix(mt, "image/") && !strings.HasPrefix(mt, "audio/") &&
			!strings.HasPrefix(mt, "video/") && mt != "application/pdf" {
			return nil, canvas.Errorf(canvas.EINVALID, "Gemini cannot read the file %q of type %s: send images, PDFs, audio, video or text.", f.Name, f.MIMEType)
		}
		parts = append(parts, &genai.Part{InlineData: &genai.Blob{MIMEType: f.MIMEType, Data: f.Data}})
	}
	return parts, nil
}

// object returns a tool call's arguments as the object Gemini takes;
// numbers keep their text.
func object(raw json.RawMessage) map[string]any {
	var obj map[string]any
	dec := json.NewDecoder(bytes.NewReader(model.Arguments(string(raw))))
	dec.UseNumber()
	if dec.Decode(&obj) != nil || obj == nil {
		return map[string]any{}
	}
	return obj
}

// response returns a tool's answer as the object a function response
// holds: the answer itself when it is a JSON object, else
// {"content": answer}.
func response(content string) map[string]any {
	var obj map[string]any
	dec := json.NewDecoder(strings.NewReader(content))
	dec.UseNumber()
	if err := dec.Decode(&obj); err == nil && obj != nil && !dec.More() {
		return obj
	}
	return map[string]any{"content": content}
}

// syntheticCallID returns the id of the i-th function call of an answer
// that Gemini sent without one.
func syntheticCallID(i int) string { return fmt.Sprintf("call_%d", i) }
