// Package anthropic is the model.Provider of Anthropic's Messages API
// (Claude models), on the official Go SDK. It is a package of its own so
// that only the programs that register it link that SDK: an embedder adds
// model.Kinds{canvas.ProviderAnthropic: anthropic.Factory} to the kinds it
// serves, and every workspace credential of provider "anthropic" is then
// called through it.
//
// A request's system messages become the system prompt, its tools custom
// tools, its structured output the input of a forced tool (OutputTool),
// and its files image and document blocks. The API version the SDK speaks
// (SamplingRemoved) refuses temperature and top_p: they are sent only when
// the credential's apiVersion setting names an earlier version, and left
// out otherwise. A provider makes one attempt per call and reads no
// environment variable: the Caller retries, bounds time and concurrency,
// and falls back.
package anthropic
