package main

import (
	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/client/wire"
)

// The files of export and import (client/promptfile) hold the client's
// wire types, which encode as the domain's do; these convert between them.

// fileConfiguration returns c as a file keeps it.
func fileConfiguration(c canvas.Configuration) wire.Configuration {
	out := wire.Configuration{Model: c.Model, Type: c.Type, Temperature: c.Temperature, MaxTokens: c.MaxTokens,
		TopP: c.TopP, Extra: c.Extra}
	if so := c.StructuredOutput; so != nil {
		out.StructuredOutput = &wire.StructuredOutput{Enabled: so.Enabled, Schema: so.Schema}
	}
	return out
}

// canvasConfiguration returns a file's configuration as the domain's.
func canvasConfiguration(c wire.Configuration) canvas.Configuration {
	out := canvas.Configuration{Model: c.Model, Type: c.Type, Temperature: c.Temperature, MaxTokens: c.MaxTokens,
		TopP: c.TopP, Extra: c.Extra}
	if so := c.StructuredOutput; so != nil {
		out.StructuredOutput = &canvas.StructuredOutput{Enabled: so.Enabled, Schema: so.Schema}
	}
	return out
}

// fileVariables returns vs as a file keeps them, never nil.
func fileVariables(vs []canvas.Variable) []wire.Variable {
	out := make([]wire.Variable, 0, len(vs))
	for _, v := range vs {
		out = append(out, wire.Variable{Name: v.Name, Type: v.Type, Required: v.Required, Description: v.Description,
			ProcessingOptions: wire.ProcessingOptions{AllowMultimodal: v.ProcessingOptions.AllowMultimodal}})
	}
	return out
}

// canvasVariables returns a file's variables as the domain's, never nil.
func canvasVariables(vs []wire.Variable) []canvas.Variable {
	out := make([]canvas.Variable, 0, len(vs))
	for _, v := range vs {
		out = append(out, canvas.Variable{Name: v.Name, Type: v.Type, Required: v.Required, Description: v.Description,
			ProcessingOptions: canvas.ProcessingOptions{AllowMultimodal: v.ProcessingOptions.AllowMultimodal}})
	}
	return out
}
