package bedrock_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/model/bedrock"
)

// Example registers the Bedrock factory, as a server binary does, opens a
// provider for a credential (here pointed at a stand-in for Bedrock's
// regional endpoint) and calls Converse.
func Example() {
	endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"output": {"message": {"role": "assistant", "content": [{"text": "Hello, Ada."}]}},
			"stopReason": "end_turn", "usage": {"inputTokens": 5, "outputTokens": 3, "totalTokens": 8}}`)
	}))
	defer endpoint.Close()

	kinds := model.Kinds{canvas.ProviderBedrock: bedrock.Factory}
	provider, err := kinds[canvas.ProviderBedrock](model.Credential{
		Provider: canvas.ProviderBedrock,
		APIKey:   "AKIDEXAMPLE:wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
		BaseURL:  endpoint.URL,
		Settings: model.Settings{Region: "us-east-1"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := provider.Complete(context.Background(), model.Request{Model: "amazon.nova-lite-v1:0",
		Messages: []model.Message{{Role: canvas.RoleUser, Content: "Greet Ada."}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: %s (%s, %d tokens in, %d out)\n", provider.Name(), res.Text, res.FinishReason, res.Usage.InputTokens, res.Usage.OutputTokens)
	// Output: bedrock: Hello, Ada. (stop, 5 tokens in, 3 out)
}
