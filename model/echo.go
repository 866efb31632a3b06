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
//
// Tools: so that tool loops run without a vendor, echo calls a declared
// function (Request.Tools) when the prompt asks for one, unless ToolChoice
// is "none":
//   - ToolChoice {name} calls that function (if declared);
//   - otherwise the last user message asking "call <name>" ("call" in any
//     case, then the name of a declared function as a word of its own)
//     calls that function, the first asked for when it asks for several;
//   - otherwise ToolChoice "required" calls the first declared function.
//
// The call's arguments are the first JSON object written after the
// function's name in the last user message, compacted; without one, an
// object holding each required property of the function's parameters
// schema set to its const, its first enum value, or the zero value of its
// type ("" / 0 / false / [] / {}; null for a property without a type). The
// answer is then Result{ToolCalls: [{ID: EchoCallID, Name, Arguments}],
// FinishReason: "tool_calls"} without text, streamed as two tool-call
// deltas (the id and name, then the arguments), which are its output
// tokens.
//
// When the last message is a tool message (RoleTool) echo answers text
// instead, ending the loop: one line per trailing tool message,
// "<name> returned: <content>", naming the function of the call it answers.
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
	input := 0
	for _, m := range req.Messages {
		input += len(strings.FieldsFunc(m.Content, unicode.IsSpace))
	}
	res := &Result{Model: req.Model, FinishReason: "stop"}
	if res.Model == "" {
		res.Model = EchoModel
	}

	var next func() (Chunk, bool)
	text, results := echoToolResults(req.Messages)
	if call := echoToolCall(req); call != nil && !results {
		res.ToolCalls = []ToolCall{*call}
		res.FinishReason = FinishToolCalls
		deltas := []Chunk{
			{ToolCall: &ToolCallDelta{ID: call.ID, Name: call.Name}},
			{ToolCall: &ToolCallDelta{Arguments: string(call.Arguments)}},
		}
		next = func() (Chunk, bool) {
			if len(deltas) == 0 {
				return Chunk{}, false
			}
			c := deltas[0]
			deltas = deltas[1:]
			return c, true
		}
	} else {
		if !results {
			contents := make([]string, len(req.Messages))
			for i, m := range req.Messages {
				contents[i] = m.Content
			}
			text = strings.Join(contents, "\n")
		}
		res.Text = text
		rest := text
		next = func() (Chunk, bool) {
			if rest == "" {
				return Chunk{}, false
			}
			var piece string
			piece, rest = nextWord(rest)
			return Chunk{Text: piece}, true
		}
	}

	chunks := 0
	for ; ; chunks++ {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("echo: %w", err)
		}
		c, ok := next()
		if !ok {
			break
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
		if emit != nil {
			if err := emit(c); err != nil {
				return nil, err
			}
		}
	}
	res.Usage = Usage{InputTokens: input, OutputTokens: chunks}
	return res, nil
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
