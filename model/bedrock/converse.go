package bedrock

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/promptcanvas/promptcanvas/model"
)

// Complete calls Converse (POST /model/{modelId}/converse).
func (p *Provider) Complete(ctx context.Context, req model.Request) (*model.Result, error) {
	cv, err := build(req)
	if err != nil {
		return nil, err
	}
	out, err := p.client.Converse(ctx, &bedrockruntime.ConverseInput{
		ModelId: aws.String(req.Model), System: cv.system, Messages: cv.messages,
		InferenceConfig: cv.inference, ToolConfig: cv.tools,
	})
	if err != nil {
		return nil, p.failure(ctx, err)
	}
	a := answer{structured: cv.structured, wrapped: cv.wrapped}
	if msg, ok := out.Output.(*types.ConverseOutputMemberMessage); ok {
		for _, b := range msg.Value.Content {
			switch b := b.(type) {
			case *types.ContentBlockMemberText:
				a.text.WriteString(b.Value)
			case *types.ContentBlockMemberToolUse:
				input := ""
				if b.Value.Input != nil {
					raw, err := b.Value.Input.MarshalSmithyDocument()
					if err != nil {
						return nil, p.failure(ctx, err)
					}
					input = string(raw)
				}
				c := a.start(aws.ToString(b.Value.ToolUseId), aws.ToString(b.Value.Name))
				c.input.WriteString(input)
			}
		}
	}
	a.stop = out.StopReason
	a.usage = out.Usage
	return a.result(req), nil
}

// Stream calls ConverseStream (POST /model/{modelId}/converse-stream) and
// emits each text delta, and each piece of a tool call (the first with the
// call's id and name, then pieces of its input JSON). With structured
// output the pieces of OutputTool's input are emitted as text (whole at
// the end when the schema was wrapped); text the model writes beside it is
// emitted too, but the Result's Text is OutputTool's input. An exception
// inside the stream is a PROVIDER_ERROR with the status Bedrock documents
// for it.
func (p *Provider) Stream(ctx context.Context, req model.Request, emit func(model.Chunk) error) (*model.Result, error) {
	cv, err := build(req)
	if err != nil {
		return nil, err
	}
	out, err := p.client.ConverseStream(ctx, &bedrockruntime.ConverseStreamInput{
		ModelId: aws.String(req.Model), System: cv.system, Messages: cv.messages,
		InferenceConfig: cv.inference, ToolConfig: cv.tools,
	})
	if err != nil {
		return nil, p.failure(ctx, err)
	}
	stream := out.GetStream()
	defer stream.Close()
	send := func(c model.Chunk) error {
		if emit == nil {
			return nil
		}
		return emit(c)
	}

	a := answer{structured: cv.structured, wrapped: cv.wrapped}
	blocks := make(map[int32]*call) // tool calls by content block index
	for event := range stream.Events() {
		switch e := event.(type) {
		case *types.ConverseStreamOutputMemberContentBlockStart:
			start, ok := e.Value.Start.(*types.ContentBlockStartMemberToolUse)
			if !ok {
				continue
			}
			c := a.start(aws.ToString(start.Value.ToolUseId), aws.ToString(start.Value.Name))
			blocks[aws.ToInt32(e.Value.ContentBlockIndex)] = c
			if !c.output {
				if err := send(model.Chunk{ToolCall: &model.ToolCallDelta{Index: c.index, ID: c.id, Name: c.name}}); err != nil {
					return nil, err
				}
			}
		case *types.ConverseStreamOutputMemberContentBlockDelta:
			switch d := e.Value.Delta.(type) {
			case *types.ContentBlockDeltaMemberText:
				if d.Value == "" {
					continue
				}
				a.text.WriteString(d.Value)
				if err := send(model.Chunk{Text: d.Value}); err != nil {
					return nil, err
				}
			case *types.ContentBlockDeltaMemberToolUse:
				piece := aws.ToString(d.Value.Input)
				c := blocks[aws.ToInt32(e.Value.ContentBlockIndex)]
				if c == nil || piece == "" {
					continue
				}
				c.input.WriteString(piece)
				chunk := model.Chunk{ToolCall: &model.ToolCallDelta{Index: c.index, Arguments: piece}}
				if c.output {
					if a.wrapped {
						continue // emitted whole, unwrapped, at the end
					}
					chunk = model.Chunk{Text: piece}
				}
				if err := send(chunk); err != nil {
					return nil, err
				}
			}
		case *types.ConverseStreamOutputMemberMessageStop:
			a.stop = e.Value.StopReason
		case *types.ConverseStreamOutputMemberMetadata:
			a.usage = e.Value.Usage
		}
	}
	if err := stream.Err(); err != nil {
		return nil, p.failure(ctx, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, p.failure(ctx, err)
	}
	res := a.result(req)
	if a.wrapped && a.output != nil && res.Text != "" {
		if err := send(model.Chunk{Text: res.Text}); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// answer gathers a response's content, from Converse or from the events of
// ConverseStream.
type answer struct {
	structured bool
	wrapped    bool
	text       strings.Builder
	calls      []*call
	output     *call
	stop       types.StopReason
	usage      *types.TokenUsage
}

// call is one toolUse block of the answer; index counts the function calls
// of the answer (OutputTool's excluded).
type call struct {
	index  int
	id     string
	name   string
	output bool
	input  strings.Builder
}

// start records a toolUse block.
func (a *answer) start(id, name string) *call {
	if a.structured && name == OutputTool && a.output == nil {
		a.output = &call{id: id, name: name, output: true}
		return a.output
	}
	c := &call{index: len(a.calls), id: id, name: name}
	a.calls = append(a.calls, c)
	return c
}

// result is the model.Result of the answer. With structured output, the
// input given to OutputTool is the Text (its "value" when wrapped), when
// the model called it.
func (a *answer) result(req model.Request) *model.Result {
	res := &model.Result{Text: a.text.String(), Model: req.Model}
	if a.output != nil {
		res.Text = a.output.input.String()
		if a.wrapped {
			var v struct {
				Value json.RawMessage `json:"value"`
			}
			if json.Unmarshal([]byte(res.Text), &v) == nil && len(v.Value) > 0 {
				res.Text = string(v.Value)
			}
		}
	}
	for _, c := range a.calls {
		res.ToolCalls = append(res.ToolCalls, model.ToolCall{ID: c.id, Name: c.name, Arguments: model.Arguments(c.input.String())})
	}
	if a.usage != nil {
		res.Usage = model.Usage{InputTokens: int(aws.ToInt32(a.usage.InputTokens)), OutputTokens: int(aws.ToInt32(a.usage.OutputTokens))}
	}
	res.FinishReason = finishReason(a.stop, len(a.calls) > 0)
	return res
}

// finishReason normalizes Bedrock's stop reason. A tool_use stop is
// "tool_calls" when the answer calls a function, "stop" when it only gave
// the structured output.
func finishReason(stop types.StopReason, calls bool) string {
	switch stop {
	case types.StopReasonEndTurn, types.StopReasonStopSequence:
		return "stop"
	case types.StopReasonToolUse:
		if calls {
			return model.FinishToolCalls
		}
		return "stop"
	case types.StopReasonMaxTokens, types.StopReasonModelContextWindowExceeded:
		return "length"
	case types.StopReasonGuardrailIntervened, types.StopReasonContentFiltered:
		return "content_filter"
	}
	return strings.ToLower(string(stop))
}
