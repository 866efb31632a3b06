// Package openai is the model.Provider for every endpoint speaking the
// OpenAI chat completions API: OpenAI itself, Azure OpenAI, and compatible
// servers (Ollama, vLLM, LM Studio, hosted compatible APIs). It is a
// package of its own so that only the programs that use it link the OpenAI
// client library.
//
// An embedder registers its factories by the credential providers they
// serve:
//
//	model.Kinds{
//		canvas.ProviderOpenAI:           openai.Factory,
//		canvas.ProviderOpenAICompatible: openai.CompatibleFactory,
//		canvas.ProviderAzureOpenAI:      openai.AzureFactory,
//	}
//
// A provider built from a credential makes one attempt per call; the
// model.Caller retries, bounds the time and the concurrency. New with
// Options that name no credential builds the server-wide back end instead,
// registered in a model.Registry as cmd/canvasd does when
// CANVAS_OPENAI_BASE_URL is set.
package openai
