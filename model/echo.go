package model

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode"
)

// EchoModel is the model name of the built-in offline provider.
const EchoModel = "echo"

// EchoOptions configure the echo provider. The zero value streams without
// pauses.
type EchoOptions struct {
	// Delay is the pause before each chunk after the first, to make streams
	// observable in tests and demos.
	Delay time.Duration
}

// Echo is the offline model provider: it needs no network and answers
// deterministically with the contents of the request's messages, in order,
// joined by "\n". It streams that answer word by word (each chunk is a word
// with the blanks before it), counts input tokens as the words of the
// messages and output tokens as the chunks, and finishes with "stop".
//
// Files reach echo resolved (FileResolver.Resolve): each one appears in its
// answer as the marker "[file name=<name> type=<mime> size=<n>]" that stands
// in the message text, a text file followed by its content; the bytes of
// the message's other Files are not echoed.
type Echo struct {
	opts EchoOptions
}

var _ Provider = (*Echo)(nil)

// NewEcho returns the echo provider.
func NewEcho(opts EchoOptions) *Echo { return &Echo{opts: opts} }

// Name returns "echo".
func (e *Echo) Name() string { return EchoModel }

// Complete returns the echo answer in one piece.
func (e *Echo) Complete(ctx context.Context, req Request) (*Result, error) {
	return e.Stream(ctx, req, nil)
}

// Stream emits the echo answer chunk by chunk. It stops with ctx's error,
// wrapped, as soon as ctx is done, and with emit's error when emit fails; a
// nil emit only collects the answer.
func (e *Echo) Stream(ctx context.Context, req Request, emit func(Chunk) error) (*Result, error) {
	contents := make([]string, len(req.Messages))
	input := 0
	for i, m := range req.Messages {
		contents[i] = m.Content
		input += len(strings.FieldsFunc(m.Content, unicode.IsSpace))
	}
	answer := strings.Join(contents, "\n")
	model := req.Model
	if model == "" {
		model = EchoModel
	}

	chunks := 0
	for rest := answer; rest != ""; chunks++ {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("echo: %w", err)
		}
		if chunks > 0 && e.opts.Delay > 0 {
			t := time.NewTimer(e.opts.Delay)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil, fmt.Errorf("echo: %w", ctx.Err())
			case <-t.C:
			}
		}
		var piece string
		piece, rest = nextWord(rest)
		if emit != nil {
			if err := emit(Chunk{Text: piece}); err != nil {
				return nil, err
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("echo: %w", err)
	}
	return &Result{
		Text:         answer,
		Usage:        Usage{InputTokens: input, OutputTokens: chunks},
		Model:        model,
		FinishReason: "stop",
	}, nil
}

// nextWord splits s after its first word, keeping the blanks before the word
// with it, so that the pieces joined give s back.
func nextWord(s string) (word, rest string) {
	i := strings.IndexFunc(s, func(r rune) bool { return !unicode.IsSpace(r) })
	if i < 0 {
		return s, ""
	}
	j := strings.IndexFunc(s[i:], unicode.IsSpace)
	if j < 0 {
		return s, ""
	}
	return s[:i+j], s[i+j:]
}
