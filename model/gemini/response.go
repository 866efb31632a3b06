package gemini

import (
	"encoding/json"
	"strings"

	"google.golang.org/genai"

	"github.com/promptcanvas/promptcanvas/model"
)

// accumulator gathers the responses of one call (one for Complete, each
// streamed chunk for Stream) into a Result.
type accumulator struct {
	text    strings.Builder
	calls   []model.ToolCall
	usage   *genai.GenerateContentResponseUsageMetadata
	finish  genai.FinishReason
	model   string
	blocked bool
}

// add takes in res and returns the chunks it carries: the text of each
// text part of the first candidate (thoughts left out) and one delta per
// function call, whole. A call without an id gets a deterministic one
// ("call_<index>").
func (a *accumulator) add(res *genai.GenerateContentResponse) []model.Chunk {
	if res == nil {
		return nil
	}
	if res.ModelVersion != "" {
		a.model = res.ModelVersion
	}
	if res.UsageMetadata != nil {
		a.usage = res.UsageMetadata // a running total: the last one counts
	}
	if len(res.Candidates) == 0 || res.Candidates[0] == nil {
		if pf := res.PromptFeedback; pf != nil && pf.BlockReason != "" {
			a.blocked = true
		}
		return nil
	}
	cand := res.Candidates[0]
	if cand.FinishReason != "" {
		a.finish = cand.FinishReason
	}
	if cand.Content == nil {
		return nil
	}
	var chunks []model.Chunk
	for _, p := range cand.Content.Parts {
		switch {
		case p == nil || p.Thought:
		case p.FunctionCall != nil:
			fc := p.FunctionCall
			id := fc.ID
			if id == "" {
				id = syntheticCallID(len(a.calls))
			}
			args := "{}"
			if fc.Args != nil {
				if b, err := json.Marshal(fc.Args); err == nil {
					args = string(b)
				}
			}
			call := model.ToolCall{ID: id, Name: fc.Name, Arguments: model.Arguments(args)}
			chunks = append(chunks, model.Chunk{ToolCall: &model.ToolCallDelta{
				Index: len(a.calls), ID: id, Name: fc.Name, Arguments: string(call.Arguments)}})
			a.calls = append(a.calls, call)
		case p.Text != "":
			a.text.WriteString(p.Text)
			chunks = append(chunks, model.Chunk{Text: p.Text})
		}
	}
	return chunks
}

// result returns the Result of what was added. Output tokens count the
// candidates' tokens and the thinking tokens, which Gemini bills as
// output.
func (a *accumulator) result(req model.Request) *model.Result {
	out := &model.Result{
		Text:         a.text.String(),
		ToolCalls:    a.calls,
		Model:        a.model,
		FinishReason: a.finishReason(),
	}
	if out.Model == "" {
		out.Model = req.Model
	}
	if u := a.usage; u != nil {
		out.Usage = model.Usage{
			InputTokens:  int(u.PromptTokenCount),
			OutputTokens: int(u.CandidatesTokenCount + u.ThoughtsTokenCount),
		}
	}
	return out
}

// finishReason normalizes Gemini's finish reason: "tool_calls" when the
// answer calls functions, "stop", "length", "content_filter" for every
// safety, recitation and block reason, else Gemini's reason lowercased.
func (a *accumulator) finishReason() string {
	switch a.finish {
	case "", genai.FinishReasonStop, genai.FinishReasonUnspecified:
		switch {
		case len(a.calls) > 0:
			return model.FinishToolCalls
		case a.blocked:
			return "content_filter"
		}
		return "stop"
	case genai.FinishReasonMaxTokens:
		return "length"
	case genai.FinishReasonSafety, genai.FinishReasonRecitation, genai.FinishReasonBlocklist,
		genai.FinishReasonProhibitedContent, genai.FinishReasonSPII, genai.FinishReasonImageSafety,
		genai.FinishReasonImageProhibitedContent, genai.FinishReasonImageRecitation:
		return "content_filter"
	}
	return strings.ToLower(string(a.finish))
}
