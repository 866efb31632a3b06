package model_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
)

// Example_render renders a version's messages, appends the request's own
// message and runs them on the offline echo model.
func Example_render() {
	msgs := []canvas.Message{{Role: canvas.RoleSystem, Content: "Write a {{ tone }} haiku about {{topic}}.", Index: 0}}
	defs := []canvas.Variable{
		{Name: "topic", Type: canvas.VariableText, Required: true},
		{Name: "tone", Type: canvas.VariableText},
	}
	rendered, err := model.Render(msgs, defs, map[string]any{"topic": "{{owls}}"})
	if err != nil {
		fmt.Println(err)
		return
	}

	registry := model.NewRegistry(model.NewEcho(model.EchoOptions{}))
	provider, err := registry.Resolve("echo")
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := provider.Stream(context.Background(), model.Request{
		Model:    "echo",
		Messages: model.WithUserMessages(rendered, "Make it short."),
	}, func(c model.Chunk) error {
		fmt.Printf("%q\n", c.Text)
		return nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Text)
	// Output:
	// "Write"
	// " a"
	// "  haiku"
	// " about"
	// " {{owls}}."
	// "\nMake"
	// " it"
	// " short."
	// Write a  haiku about {{owls}}.
	// Make it short.
}

// Example_missingVariables shows the one VALIDATION error that names every
// missing required variable.
func Example_missingVariables() {
	defs := []canvas.Variable{
		{Name: "topic", Type: canvas.VariableText, Required: true},
		{Name: "audience", Type: canvas.VariableText, Required: true},
	}
	_, err := model.Render(nil, defs, nil)
	fmt.Println(canvas.ErrorCode(err), canvas.ErrorMessage(err))
	for _, d := range canvas.ErrorDetails(err) {
		fmt.Println(d.Path, d.Message)
	}
	// Output:
	// VALIDATION Missing required variables: topic, audience.
	// /json/variables/topic required variable has no value
	// /json/variables/audience required variable has no value
}

// ExampleSchema_Validate checks a model's structured output.
func ExampleSchema_Validate() {
	schema, err := model.CompileSchema(json.RawMessage(`{"type": "object", "required": ["answer"]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(schema.Validate(`{"answer": 42}`))
	err = schema.Validate(`{"reply": 42}`)
	fmt.Println(canvas.ErrorCode(err), canvas.ErrorDetails(err)[0].Path)
	// Output:
	// <nil>
	// PROVIDER_ERROR /output
}
