package anthropic_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/model/anthropic"
)

// Example registers the Anthropic provider among the kinds an embedder
// serves, builds it from a workspace credential (here pointed at a
// stand-in for the API) and runs a request on Claude.
func Example() {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
			"content": [{"type": "text", "text": "Hello, Ada."}], "stop_reason": "end_turn", "stop_sequence": null,
			"usage": {"input_tokens": 9, "output_tokens": 4}}`)
	}))
	defer api.Close()

	kinds := model.Kinds{canvas.ProviderAnthropic: anthropic.Factory}
	credential := model.Credential{Name: "claude", Provider: canvas.ProviderAnthropic, APIKey: "sk-ant-example", BaseURL: api.URL}
	provider, err := kinds[credential.Provider](credential)
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := provider.Complete(context.Background(), model.Request{Model: "claude-sonnet-4-5", Messages: []model.Message{
		{Role: canvas.RoleSystem, Content: "You greet people by name."},
		{Role: canvas.RoleUser, Content: "Greet Ada."},
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: %s (%d tokens in, %d out, %s)\n", provider.Name(), res.Text, res.Usage.InputTokens, res.Usage.OutputTokens, res.FinishReason)
	// Output: anthropic: Hello, Ada. (9 tokens in, 4 out, stop)
}
