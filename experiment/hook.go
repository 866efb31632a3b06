package experiment

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/google/uuid"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/testcase"
	"github.com/promptcanvas/promptcanvas/webhook"
)

// maxHookAnswer bounds the answer of a webhook evaluator that is read.
const maxHookAnswer = 64 << 10

// HookRequest is the body a webhook evaluator receives.
type HookRequest struct {
	ExperimentID   string             `json:"experimentId"`
	Evaluator      string             `json:"evaluator"`
	VersionID      string             `json:"versionId"`
	Repetition     int                `json:"repetition"`
	TestCase       *testcase.TestCase `json:"testCase"`
	Output         string             `json:"output"`
	ExpectedOutput *string            `json:"expectedOutput"`
}

// HookAnswer is what a webhook evaluator answers: its verdict, a score
// from 0 to 1 (1 or 0 by the verdict when absent) and why.
type HookAnswer struct {
	Score  *float64 `json:"score"`
	Passed *bool    `json:"passed"`
	Reason string   `json:"reason"`
}

// hook posts the result to ev's endpoint, signed with ev's secret, within
// ev's timeout, and reads its verdict. Any failure (no answer, a status
// other than 2xx, an answer without a verdict) is the score's error, not a
// failure of the case. The webhook-id is the same for every try of the
// same result, so a receiver can tell a repeat.
func (s *Service) hook(ctx context.Context, ev *Evaluator, tc *testcase.TestCase, r *Result, output string) Score {
	var sc Score
	body, err := json.Marshal(HookRequest{ExperimentID: r.ExperimentID, Evaluator: ev.Name, VersionID: r.VersionID,
		Repetition: r.Repetition, TestCase: tc, Output: output, ExpectedOutput: tc.ExpectedOutput})
	if err != nil {
		sc.Error = errorOf(err)
		return sc
	}
	ctx, cancel := context.WithTimeout(ctx, ev.timeout())
	defer cancel()
	id := uuid.NewSHA1(uuid.NameSpaceOID, []byte(r.ExperimentID+"/"+r.TestCaseID+"/"+r.VersionID+"/"+
		strconv.Itoa(r.Repetition)+"/"+ev.Name)).String()
	a := s.sender.Post(ctx, webhook.Call{ID: "msg_" + id, URL: ev.URL, Secrets: []string{ev.Secret}, Body: body,
		MaxAnswer: maxHookAnswer})
	if !a.OK() {
		sc.Error = &Error{Code: canvas.EPROVIDER, Message: "The webhook evaluator failed: " + a.Err.Error()}
		return sc
	}
	var answer HookAnswer
	if err := json.Unmarshal(a.ResponseBody, &answer); err != nil || answer.Passed == nil ||
		answer.Score != nil && (*answer.Score < 0 || *answer.Score > 1) {
		sc.Error = &Error{Code: canvas.EPROVIDER,
			Message: "The webhook evaluator did not answer {score (0 to 1), passed, reason}."}
		return sc
	}
	score := 0.0
	if *answer.Passed {
		score = 1
	}
	if answer.Score != nil {
		score = *answer.Score
	}
	sc.Score, sc.Passed, sc.Reason = &score, answer.Passed, answer.Reason
	return sc
}
