// Package openai is the model.Provider for any endpoint speaking the
// OpenAI chat completions API (OpenAI itself, Ollama, vLLM, LM Studio,
// ...). It is a package of its own so that only the programs that
// configure it link the OpenAI client library: register it in a
// model.Registry, as cmd/canvasd does when CANVAS_OPENAI_BASE_URL is set.
package openai
