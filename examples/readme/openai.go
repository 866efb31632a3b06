package main

import (
	"context"
	"fmt"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// callOpenAI is docs/api.md's OpenAI-compatible entry point: the canvas
// run through the official OpenAI client, its variables in
// prompt_variables.
func callOpenAI(ctx context.Context, baseURL, key, canvasID string) error {
	// README: openai
	client := openai.NewClient(option.WithBaseURL(baseURL+"/openai/v1/"), option.WithAPIKey(key))
	res, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model:    "canvas:" + canvasID, // the version in production; canvas:<id>@v3 names a version
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hi")},
	}, option.WithJSONSet("prompt_variables", map[string]any{"name": "Ada"}))
	if err != nil {
		return err
	}
	fmt.Println(res.Choices[0].Message.Content)
	// README: end
	return nil
}
