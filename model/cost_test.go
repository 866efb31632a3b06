package model_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/model"
)

func TestCatalogue_Lookup(t *testing.T) {
	c := model.Bundled()
	require.NotEmpty(t, c.Date)
	for model_, want := range map[string]string{
		"gpt-4o":                     "gpt-4o",
		"gpt-4o-mini":                "gpt-4o-mini",
		"gpt-4o-2024-08-06":          "gpt-4o",
		"claude-sonnet-4-5-20250929": "claude-sonnet-4-5",
		"claude-sonnet-4-20250514":   "claude-sonnet-4",
		"us.anthropic.claude-sonnet-4-20250514-v1:0": "anthropic.claude-sonnet-4",
		"amazon.nova-pro-v1:0":                       "amazon.nova-pro-v1",
		"gemini-2.5-flash-lite":                      "gemini-2.5-flash-lite",
		"echo":                                       "echo",
	} {
		p, ok := c.Lookup(model_)
		if assert.True(t, ok, model_) {
			assert.Equal(t, want, p.Name, model_)
		}
	}
	for _, unknown := range []string{"gpt-4", "gpt-4ox", "llama3", ""} {
		_, ok := c.Lookup(unknown)
		assert.False(t, ok, unknown)
	}
	// Every provider has current models in the catalogue.
	seen := map[string]bool{}
	for _, p := range c.All() {
		seen[p.Provider] = true
		assert.Equal(t, model.SourceCatalogue, p.Source)
	}
	for _, provider := range []string{"openai", "anthropic", "gemini", "bedrock", "echo"} {
		assert.True(t, seen[provider], provider)
	}
}

func TestCatalogue_Overlay(t *testing.T) {
	c := model.Bundled()
	over := map[string]model.Price{"claude-sonnet-4-5": {Name: "claude-sonnet-4-5", InputPerMillion: 1, OutputPerMillion: 2, Source: model.SourceWorkspace},
		"my-llama": {Name: "my-llama", InputPerMillion: 0.5, OutputPerMillion: 0.5, Source: model.SourceWorkspace}}
	p, ok := c.Overlay(over, "claude-sonnet-4-5-20250929")
	require.True(t, ok)
	assert.Equal(t, model.SourceWorkspace, p.Source, "an override prices the dated names of its model too")
	p, ok = c.Overlay(over, "gpt-4o")
	require.True(t, ok)
	assert.Equal(t, model.SourceCatalogue, p.Source)
	_, ok = c.Overlay(over, "my-llama")
	assert.True(t, ok)
}

func TestPrice_Cost(t *testing.T) {
	p := model.Price{InputPerMillion: 3, OutputPerMillion: 15}
	assert.Equal(t, model.Cost{Input: 0.000003, Output: 0.00003, Total: 0.000033, Currency: "USD"}, *p.Cost(model.Usage{InputTokens: 1, OutputTokens: 2}))
	var none *model.Cost
	assert.Nil(t, none.Add(nil))
	sum := p.Cost(model.Usage{InputTokens: 1000}).Add(p.Cost(model.Usage{OutputTokens: 1000}))
	assert.Equal(t, model.Cost{Input: 0.003, Output: 0.015, Total: 0.018, Currency: "USD"}, *sum)
}

func TestProviderFor(t *testing.T) {
	for name, want := range map[string]string{
		"claude-sonnet-4-5": "anthropic", "gemini-2.5-pro": "gemini", "gpt-4o": "openai", "o1": "openai",
		"o3-mini": "openai", "o4-mini": "openai", "chatgpt-4o-latest": "openai",
		"anthropic.claude-3-5-haiku-20241022-v1:0": "bedrock", "us.amazon.nova-pro-v1:0": "bedrock",
		"meta.llama3-3-70b-instruct-v1:0": "bedrock", "echo": "", "llama3": "", "o1x": "", "orca": "",
	} {
		assert.Equal(t, want, model.ProviderFor(name), name)
	}
}
