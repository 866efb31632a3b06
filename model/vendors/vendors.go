// Package vendors registers every model vendor provider of the project at
// once: model/openai (openai, azure-openai and openai-compatible),
// model/anthropic, model/gemini and model/bedrock. A program that runs
// workspace credentials of every vendor (the reference server) registers
// Kinds; an embedder that wants fewer vendor SDKs linked registers the
// factories of the provider packages it imports instead.
package vendors

import (
	"net/http"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/model/anthropic"
	"github.com/promptcanvas/promptcanvas/model/bedrock"
	"github.com/promptcanvas/promptcanvas/model/gemini"
	"github.com/promptcanvas/promptcanvas/model/openai"
)

// Kinds returns the factories of every provider name (canvas.Provider*).
// client, when set, gives the HTTP client a credential's provider makes its
// requests with (a traced transport, a test's trusted certificate); nil,
// or a nil client, leaves each provider its own, whose transport bounds
// the wait for response headers by the credential's timeout.
func Kinds(client func(model.Credential) *http.Client) model.Kinds {
	httpClient := func(c model.Credential) *http.Client {
		if client == nil {
			return nil
		}
		return client(c)
	}
	openAI := func(c model.Credential) (model.Provider, error) {
		// The credential's provider says which of the three it is.
		return openai.New(openai.Options{Credential: c, HTTPClient: httpClient(c)})
	}
	return model.Kinds{
		canvas.ProviderOpenAI:           openAI,
		canvas.ProviderOpenAICompatible: openAI,
		canvas.ProviderAzureOpenAI:      openAI,
		canvas.ProviderAnthropic: func(c model.Credential) (model.Provider, error) {
			return anthropic.New(anthropic.Options{Credential: c, HTTPClient: httpClient(c)})
		},
		canvas.ProviderGemini: func(c model.Credential) (model.Provider, error) {
			return gemini.New(gemini.Options{Credential: c, HTTPClient: httpClient(c)})
		},
		canvas.ProviderBedrock: func(c model.Credential) (model.Provider, error) {
			return bedrock.New(bedrock.Options{Credential: c, HTTPClient: httpClient(c)})
		},
	}
}
