// Package gemini is the model.Provider of Google's Gemini models, on the
// Gemini API or on Vertex AI, through google.golang.org/genai. It is a
// package of its own so that only the programs that use it link Google's
// client library: an embedder registers it as
//
//	model.Kinds{canvas.ProviderGemini: gemini.Factory}
//
// and every workspace credential of provider "gemini" is then served by a
// Provider built from it (see New for the backends and keys it accepts).
package gemini
