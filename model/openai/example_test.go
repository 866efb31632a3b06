package openai_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/model/openai"
)

// Example registers an OpenAI-compatible endpoint (here a stand-in for a
// local server such as Ollama) for the models named llama..., beside the
// offline echo model, and calls it.
func Example() {
	endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id": "c1", "object": "chat.completion", "model": "llama3",
			"choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello, Ada."}, "finish_reason": "stop"}],
			"usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}}`)
	}))
	defer endpoint.Close()

	local, err := openai.New(openai.Options{Name: "local", BaseURL: endpoint.URL})
	if err != nil {
		fmt.Println(err)
		return
	}
	registry := model.NewRegistry(model.NewEcho(model.EchoOptions{}))
	registry.RegisterPrefix("llama", local)

	provider, err := registry.Resolve("llama3")
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := provider.Complete(context.Background(), model.Request{Model: "llama3",
		Messages: []model.Message{{Role: canvas.RoleUser, Content: "Greet Ada."}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: %s (%d tokens in, %d out)\n", provider.Name(), res.Text, res.Usage.InputTokens, res.Usage.OutputTokens)
	// Output: local: Hello, Ada. (5 tokens in, 3 out)
}

// ExampleCompatibleFactory builds the provider of a workspace's
// openai-compatible credential (here a stand-in for a local Ollama, which
// needs no key) and asks it for a tool call.
func ExampleCompatibleFactory() {
	endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id": "c1", "object": "chat.completion", "model": "llama3.1",
			"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
				"tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Oslo\"}"}}]}}],
			"usage": {"prompt_tokens": 20, "completion_tokens": 9, "total_tokens": 29}}`)
	}))
	defer endpoint.Close()

	kinds := model.Kinds{canvas.ProviderOpenAICompatible: openai.CompatibleFactory}
	provider, err := kinds[canvas.ProviderOpenAICompatible](model.Credential{
		Name: "local ollama", Provider: canvas.ProviderOpenAICompatible, BaseURL: endpoint.URL + "/v1"})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := provider.Complete(context.Background(), model.Request{Model: "llama3.1",
		Messages: []model.Message{{Role: canvas.RoleUser, Content: "Weather in Oslo?"}},
		Tools:    []canvas.Function{{Name: "get_weather", Parameters: []byte(`{"type": "object", "properties": {"city": {"type": "string"}}}`)}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	call := res.ToolCalls[0]
	fmt.Printf("%s: %s %s (%s)\n", provider.Name(), call.Name, call.Arguments, res.FinishReason)
	// Output: openai-compatible: get_weather {"city":"Oslo"} (tool_calls)
}
