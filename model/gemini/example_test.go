package gemini_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/model/gemini"
)

// Example builds the provider of a workspace's Gemini credential through
// the factory an embedder registers (here against a stand-in for the
// Gemini API) and calls it.
func Example() {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"candidates": [{"content": {"role": "model", "parts": [{"text": "Hello, Ada."}]}, "finishReason": "STOP"}],
			"usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 3}, "modelVersion": "gemini-2.5-flash"}`)
	}))
	defer api.Close()

	kinds := model.Kinds{canvas.ProviderGemini: gemini.Factory}
	provider, err := kinds[canvas.ProviderGemini](model.Credential{
		Name: "team", Provider: canvas.ProviderGemini, APIKey: "AIza...", BaseURL: api.URL,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := provider.Complete(context.Background(), model.Request{Model: "gemini-2.5-flash",
		Messages: []model.Message{{Role: canvas.RoleUser, Content: "Greet Ada."}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: %s (%d tokens in, %d out, %s)\n", res.Model, res.Text, res.Usage.InputTokens, res.Usage.OutputTokens, res.FinishReason)
	// Output: gemini-2.5-flash: Hello, Ada. (5 tokens in, 3 out, stop)
}
