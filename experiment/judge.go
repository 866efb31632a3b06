package experiment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/testcase"
)

// judgeSchema is the structured output an llm-judge answers with.
var judgeSchema = json.RawMessage(`{"type":"object","properties":{"score":{"type":"number","minimum":0,"maximum":1},` +
	`"reason":{"type":"string"}},"required":["score","reason"],"additionalProperties":false}`)

// judge asks ev's model to score output against ev's rubric, on a target
// the canvas may use, and passes it at ev's pass threshold. The judge's
// own call (model, latency, usage, cost) is recorded in the score.
func (s *Service) judge(ctx context.Context, c *canvas.Canvas, ev *Evaluator, tc *testcase.TestCase, output string) Score {
	var sc Score
	t, err := s.models.Target(ctx, canvasScope(c), model.Want{Model: ev.Model, CredentialID: ev.CredentialID})
	if err != nil {
		sc.Error = errorOf(err)
		return sc
	}
	req := model.Request{Model: t.Model, Provider: t.Provider, CredentialID: t.CredentialID,
		Messages:         judgeMessages(ev, tc, output),
		StructuredOutput: &canvas.StructuredOutput{Enabled: true, Schema: judgeSchema}}
	start := time.Now()
	res, err := s.models.Call(ctx, c.WorkspaceID, req, nil)
	if res != nil {
		answered := res.Model
		if answered == "" {
			answered = t.Model
		}
		sc.Judge = &Judge{Model: answered, LatencyMs: time.Since(start).Milliseconds(), Usage: res.Usage, Cost: res.Cost}
	}
	var oe *model.OutputError
	switch {
	case errors.As(err, &oe):
		sc.Error = &Error{Code: canvas.EPROVIDER, Message: "The judge did not answer {score, reason}: " + oe.Error()}
		return sc
	case err != nil:
		sc.Error = errorOf(err)
		return sc
	}
	var answer struct {
		Score  *float64 `json:"score"`
		Reason string   `json:"reason"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(res.Text)), &answer); err != nil || answer.Score == nil {
		sc.Error = &Error{Code: canvas.EPROVIDER, Message: "The judge did not answer {score, reason}."}
		return sc
	}
	score := min(max(*answer.Score, 0), 1)
	passed := score >= ev.passThreshold()
	sc.Score, sc.Passed, sc.Reason = &score, &passed, answer.Reason
	return sc
}

// judgeMessages are the messages a judge is asked: the rubric, then the
// test case's input, its expected output and example answers (the test
// case's answers: good and bad) when it has them, and the answer to judge.
func judgeMessages(ev *Evaluator, tc *testcase.TestCase, output string) []model.Message {
	system := "You are an evaluator. Judge the answer you are given against the rubric below. Answer with JSON " +
		`{"score": a number from 0 (the answer fails the rubric) to 1 (it meets the rubric fully), ` +
		`"reason": one or two sentences on why}.` + "\n\nRubric:\n" + ev.Rubric
	var b strings.Builder
	input, _ := json.Marshal(map[string]any{"variables": tc.Variables, "messages": tc.Messages})
	fmt.Fprintf(&b, "Input of the test case:\n%s\n", input)
	if tc.ExpectedOutput != nil {
		fmt.Fprintf(&b, "\nExpected output:\n%s\n", *tc.ExpectedOutput)
	}
	good, bad := examples(tc.Answers)
	for _, g := range good {
		fmt.Fprintf(&b, "\nAn example of a good answer:\n%s\n", g)
	}
	for _, x := range bad {
		fmt.Fprintf(&b, "\nAn example of a bad answer:\n%s\n", x)
	}
	fmt.Fprintf(&b, "\nThe answer to judge:\n%s", output)
	return []model.Message{{Role: canvas.RoleSystem, Content: system}, {Role: canvas.RoleUser, Content: b.String()}}
}

// examples returns the good and bad answers of a test case's answer sets,
// in the order of their keys; a JSON string is given as its text.
func examples(sets map[string]testcase.AnswerSet) (good, bad []string) {
	keys := make([]string, 0, len(sets))
	for k := range sets {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	text := func(raw json.RawMessage) string {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
		return string(raw)
	}
	for _, k := range keys {
		for _, g := range sets[k].Good {
			good = append(good, text(g))
		}
		for _, x := range sets[k].Bad {
			bad = append(bad, text(x))
		}
	}
	return good, bad
}
