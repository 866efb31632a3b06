// Package completion runs a canvas version against a model. It owns the
// pieces that turn a stored version into model output: rendering
// {{variable}} placeholders (Render), the model back ends (Provider) and the
// Registry that picks one per model name, and structured output checks
// (ValidateSchema, ValidateOutput).
//
// Rendering is strict and literal. A declared required variable without a
// value, or a value of the wrong kind, is one VALIDATION error naming every
// offending variable at "/json/variables/<name>". A declared optional variable
// without a value renders as empty, and a placeholder that no definition
// declares and no value supplies is left as written. Values are inserted
// verbatim: a value that itself contains "{{x}}" is never expanded again. A
// JSON null counts as no value. Value kinds: text takes a string; number takes
// a JSON number (or any Go number); boolean takes a bool; json takes any value
// and is inserted as compact JSON; file takes a {"file_url": "..."} object or
// an array of them, each inserted as the marker "[file: <url>]" (several
// separated by "\n") and recorded in the message's FileRefs.
//
// A FileResolver turns those references into model input before a model is
// called: vault:// addresses through a FileOpener (VaultFiles over the
// vault), public URLs through the SSRF-guarded client with a timeout and a
// size limit. Each marker becomes "[file name=<name> type=<mime> size=<n>]";
// text files are inlined after it, images (when the variable allows
// multimodal input) and other files travel as the message's Files. Runs
// store the references, never the bytes.
//
// A Provider answers a Request in one go (Complete) or chunk by chunk
// (Stream). Both are part of the interface because back ends differ: the
// OpenAI-compatible provider calls the non-streaming endpoint for Complete.
// Built in are the offline echo model (NewEcho), deterministic and meant for
// tests and first runs, and an OpenAI-compatible provider (package
// model/openai, which only the programs that configure it link) for any
// endpoint speaking the OpenAI chat API. Embedders register more in their own
// Registry; nothing is registered globally. Every back-end failure is a
// PROVIDER_ERROR (canvas.EPROVIDER) that keeps the cause for the log.
//
// The messages a Request carries are the version's rendered messages in index
// order, followed by the caller's extra messages as user messages
// (WithUserMessages).
//
// Service runs canvases and tasks on top of these pieces: it resolves the
// target version, applies the Settings override, picks the provider, and
// records every execution as a Run in the Store. Sync and streamed runs are
// answered at once and recorded when they end; async runs (and every task)
// are recorded queued together with their queue job in one transaction, and
// HandleJob, registered on a queue.Worker for JobKinds, executes them and
// writes the final state together with the webhook deliveries.
package completion
