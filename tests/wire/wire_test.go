// Package wiretest proves that the client module's wire types and the
// domain types the server encodes and decodes are the same JSON: every
// field the server writes is read into the wire type and written back
// unchanged, and every field the client sends is one the server reads.
package wiretest

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/audit"
	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/client/wire"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/credential"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/experiment"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/testcase"
	"github.com/promptcanvas/promptcanvas/vault"
	"github.com/promptcanvas/promptcanvas/webhook"
	"github.com/promptcanvas/promptcanvas/workflow"
)

// fill sets every settable field of the value v points to, at any depth
// (pointers allocated, one element per slice and map), so that its JSON has
// every member its type can write.
func fill(v reflect.Value, depth int) {
	if depth > 8 {
		return
	}
	switch v.Type() {
	case reflect.TypeFor[time.Time]():
		v.Set(reflect.ValueOf(time.Date(2026, 11, 27, 21, 35, 6, 123456000, time.UTC)))
		return
	case reflect.TypeFor[json.RawMessage]():
		v.SetBytes([]byte(`{"raw":[1,"two",true]}`))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("s")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(7)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(7)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(0.5)
	case reflect.Interface:
		v.Set(reflect.ValueOf("any"))
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(p.Elem(), depth+1)
		v.Set(p)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0), depth+1)
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k := reflect.New(v.Type().Key()).Elem()
		k.SetString("extraKey")
		e := reflect.New(v.Type().Elem()).Elem()
		fill(e, depth+1)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				fill(f, depth+1)
			}
		}
	}
}

// filled returns a *T with every field set.
func filled[T any]() *T {
	v := new(T)
	fill(reflect.ValueOf(v).Elem(), 0)
	return v
}

// roundTrip encodes from, decodes the JSON into a new *To refusing unknown
// members, encodes that again and reports a difference of the two
// documents.
func roundTrip[To any](t *testing.T, from any) {
	t.Helper()
	first, err := json.Marshal(from)
	if err != nil {
		t.Fatal(err)
	}
	to := new(To)
	dec := json.NewDecoder(bytes.NewReader(first))
	dec.DisallowUnknownFields()
	if err := dec.Decode(to); err != nil {
		t.Fatalf("%T does not read %T's JSON: %v\n%s", to, from, err, first)
	}
	second, err := json.Marshal(to)
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	if err := json.Unmarshal(first, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(second, &b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("%T loses or adds members of %T's JSON:\n%T: %s\n%T: %s", to, from, from, first, to, second)
	}
}

// TestWire_Answers: the wire type of each answer reads every member the
// server writes for the domain type, and writes back the same JSON.
func TestWire_Answers(t *testing.T) {
	for name, check := range map[string]func(*testing.T){
		"Project":         func(t *testing.T) { roundTrip[wire.Project](t, filled[canvas.Project]()) },
		"Canvas":          func(t *testing.T) { roundTrip[wire.Canvas](t, filled[canvas.Canvas]()) },
		"Version":         func(t *testing.T) { roundTrip[wire.Version](t, filled[canvas.Version]()) },
		"Message":         func(t *testing.T) { roundTrip[wire.Message](t, filled[canvas.Message]()) },
		"ResolvedVersion": func(t *testing.T) { roundTrip[wire.Version](t, filled[env.ResolvedVersion]()) },
		"Dependent":       func(t *testing.T) { roundTrip[wire.Dependent](t, filled[canvas.Dependent]()) },
		"Environment":     func(t *testing.T) { roundTrip[wire.Environment](t, filled[env.Environment]()) },
		"Publication":     func(t *testing.T) { roundTrip[wire.Publication](t, filled[env.Publication]()) },
		"VersionDiff":     func(t *testing.T) { roundTrip[wire.VersionDiff](t, filled[canvas.VersionDiff]()) },
		"PublicationRequest": func(t *testing.T) {
			roundTrip[wire.PublicationRequest](t, filled[env.PublicationRequest]())
		},
		"AuditEvent":            func(t *testing.T) { roundTrip[wire.AuditEvent](t, filled[audit.Event]()) },
		"Run":                   func(t *testing.T) { roundTrip[wire.Run](t, filled[completion.Run]()) },
		"Feedback":              func(t *testing.T) { roundTrip[wire.Feedback](t, filled[completion.Feedback]()) },
		"SplitStats":            func(t *testing.T) { roundTrip[wire.SplitStats](t, filled[env.SplitStats]()) },
		"Response":              func(t *testing.T) { roundTrip[wire.Response](t, filled[completion.Response]()) },
		"RunTotals":             func(t *testing.T) { roundTrip[wire.RunTotals](t, filled[completion.Totals]()) },
		"Upload":                func(t *testing.T) { roundTrip[wire.Upload](t, filled[vault.Upload]()) },
		"File":                  func(t *testing.T) { roundTrip[wire.File](t, filled[vault.File]()) },
		"TestCase":              func(t *testing.T) { roundTrip[wire.TestCase](t, filled[testcase.TestCase]()) },
		"RunTestCaseResult":     func(t *testing.T) { roundTrip[wire.RunTestCaseResult](t, filled[testcase.RunResult]()) },
		"Generation":            func(t *testing.T) { roundTrip[wire.Generation](t, filled[testcase.Generation]()) },
		"WorkflowRun":           func(t *testing.T) { roundTrip[wire.WorkflowRun](t, filled[workflow.View]()) },
		"WorkflowRunSummary":    func(t *testing.T) { roundTrip[wire.WorkflowRunSummary](t, filled[workflow.Summary]()) },
		"Application":           func(t *testing.T) { roundTrip[wire.Application](t, filled[webhook.Application]()) },
		"ApplicationWithSecret": func(t *testing.T) { roundTrip[wire.ApplicationWithSecret](t, filled[webhook.ApplicationWithSecret]()) },
		"LoggedDelivery":        func(t *testing.T) { roundTrip[wire.LoggedDelivery](t, filled[webhook.LoggedDelivery]()) },
		"Credential":            func(t *testing.T) { roundTrip[wire.Credential](t, filled[credential.Credential]()) },
		"ModelPrice":            func(t *testing.T) { roundTrip[wire.ModelPrice](t, filled[credential.ModelPrice]()) },
		"Experiment": func(t *testing.T) {
			// The server answers evaluators without their sealed
			// secret, which only the store keeps.
			x := filled[experiment.Experiment]()
			for i := range x.Request.Evaluators {
				x.Request.Evaluators[i].Sealed = nil
			}
			roundTrip[wire.Experiment](t, x)
		},
		"ExperimentResult": func(t *testing.T) { roundTrip[wire.ExperimentResult](t, filled[experiment.Result]()) },
		"Comparison":       func(t *testing.T) { roundTrip[wire.Comparison](t, filled[experiment.Comparison]()) },
	} {
		t.Run(name, check)
	}
}

// TestWire_Requests: every member the client sends in a request body is
// one the server's params type reads, and none is lost.
func TestWire_Requests(t *testing.T) {
	for name, check := range map[string]func(*testing.T){
		"CreateProject": func(t *testing.T) { roundTrip[canvas.CreateProjectParams](t, filled[wire.CreateProjectRequest]()) },
		"CreateCanvas":  func(t *testing.T) { roundTrip[canvas.CreateCanvasParams](t, filled[wire.CreateCanvasParams]()) },
		"CreateVersion": func(t *testing.T) {
			p := filled[wire.CreateVersionParams]()
			// A tool choice is a mode or {"name"}, not any JSON.
			p.Configuration.ToolChoice = json.RawMessage(`{"name":"s"}`)
			// A fallback's credential name is the prompt files', not the API's.
			p.Configuration.Fallbacks[0].Credential = ""
			roundTrip[canvas.CreateVersionParams](t, p)
		},
		"CreateMessage":     func(t *testing.T) { roundTrip[canvas.CreateMessageParams](t, filled[wire.CreateMessageParams]()) },
		"CreateFile":        func(t *testing.T) { roundTrip[vault.CreateFileParams](t, filled[wire.CreateFileRequest]()) },
		"CreateTestCase":    func(t *testing.T) { roundTrip[testcase.CreateParams](t, filled[wire.CreateTestCaseParams]()) },
		"ReviewWorkflowRun": func(t *testing.T) { roundTrip[workflow.ReviewParams](t, filled[wire.ReviewParams]()) },
		"ResumeWorkflowRun": func(t *testing.T) { roundTrip[workflow.ResumeParams](t, filled[wire.ResumeParams]()) },
		"CreateApplication": func(t *testing.T) {
			roundTrip[webhook.CreateApplicationParams](t, filled[wire.CreateApplicationParams]())
		},
		"Settings": func(t *testing.T) { roundTrip[completion.Settings](t, filled[wire.Settings]()) },
		"CreateCredential": func(t *testing.T) {
			roundTrip[credential.CreateParams](t, filled[wire.CreateCredentialParams]())
		},
		"SetModelPrice": func(t *testing.T) { roundTrip[credential.SetPriceParams](t, filled[wire.SetModelPriceParams]()) },
		"StartExperiment": func(t *testing.T) {
			roundTrip[experiment.Request](t, filled[wire.ExperimentRequest]())
		},
		"Annotation": func(t *testing.T) { roundTrip[experiment.AnnotationParams](t, filled[wire.AnnotationRequest]()) },
	} {
		t.Run(name, check)
	}
}

// TestWire_Constants: the wire package's codes and names are the domain's.
func TestWire_Constants(t *testing.T) {
	for _, c := range []struct{ wire, domain string }{
		{wire.CodeConflict, canvas.ECONFLICT},
		{wire.CodeForbidden, canvas.EFORBIDDEN},
		{wire.CodeInternal, canvas.EINTERNAL},
		{wire.CodeInvalid, canvas.EINVALID},
		{wire.CodeBadRequest, canvas.EBADREQUEST},
		{wire.CodeInvalidEnvName, canvas.EINVALIDENVNAME},
		{wire.CodeInvalidCompatDate, canvas.EINVALIDCOMPATDATE},
		{wire.CodeNotFound, canvas.ENOTFOUND},
		{wire.CodeMethodNotAllowed, canvas.EMETHODNOTALLOWED},
		{wire.CodePayloadTooLarge, canvas.EPAYLOADTOOLARGE},
		{wire.CodeHeadersTooLarge, canvas.EHEADERSTOOLARGE},
		{wire.CodeRateLimited, canvas.ERATELIMITED},
		{wire.CodeUnauthorized, canvas.EUNAUTHORIZED},
		{wire.CodeProvider, canvas.EPROVIDER},
		{wire.CodeTimeout, canvas.ETIMEOUT},
		{wire.CodeCancelled, canvas.ECANCELLED},
		{wire.CodeRejected, canvas.EREJECTED},
		{wire.CodeNoOutput, canvas.ENOOUTPUT},
		{wire.CodeApprovalRequired, canvas.EAPPROVALREQUIRED},
		{wire.ExperimentQueued, experiment.StatusQueued},
		{wire.ExperimentRunning, experiment.StatusRunning},
		{wire.ExperimentCompleted, experiment.StatusCompleted},
		{wire.ExperimentFailed, experiment.StatusFailed},
		{wire.ExperimentCancelled, experiment.StatusCancelled},
		{wire.ChangeRegression, experiment.ChangeRegression},
		{wire.ChangeImprovement, experiment.ChangeImprovement},
		{wire.ChangeUnchanged, experiment.ChangeUnchanged},
		{wire.RoleSystem, canvas.RoleSystem},
		{wire.RoleUser, canvas.RoleUser},
		{wire.RoleAssistant, canvas.RoleAssistant},
		{wire.RoleFunction, canvas.RoleFunction},
		{wire.RoleTool, model.RoleTool},
		{wire.ProviderOpenAI, canvas.ProviderOpenAI},
		{wire.ProviderAzureOpenAI, canvas.ProviderAzureOpenAI},
		{wire.ProviderOpenAICompatible, canvas.ProviderOpenAICompatible},
		{wire.ProviderAnthropic, canvas.ProviderAnthropic},
		{wire.ProviderGemini, canvas.ProviderGemini},
		{wire.ProviderBedrock, canvas.ProviderBedrock},
		{wire.FinishToolCalls, model.FinishToolCalls},
		{wire.VariableText, canvas.VariableText},
		{wire.VariableNumber, canvas.VariableNumber},
		{wire.VariableBoolean, canvas.VariableBoolean},
		{wire.VariableJSON, canvas.VariableJSON},
		{wire.VariableFile, canvas.VariableFile},
		{wire.ResourcePrompt, env.ResourcePrompt},
		{wire.Production, env.Production},
		{wire.ChangeAdded, canvas.ChangeAdded},
		{wire.ChangeRemoved, canvas.ChangeRemoved},
		{wire.ChangeChanged, canvas.ChangeChanged},
		{wire.RequestPending, env.RequestPending},
		{wire.RequestPublished, env.RequestPublished},
		{wire.RequestRejected, env.RequestRejected},
		{wire.RequestWithdrawn, env.RequestWithdrawn},
		{wire.KindCompletion, completion.KindCompletion},
		{wire.KindTask, completion.KindTask},
		{wire.KindWorkflow, completion.KindWorkflow},
		{wire.StatusQueued, completion.StatusQueued},
		{wire.StatusRunning, completion.StatusRunning},
		{wire.StatusCompleted, completion.StatusCompleted},
		{wire.StatusFailed, completion.StatusFailed},
		{wire.ResponseObject, completion.ResponseObject},
		{wire.ChunkObject, completion.ChunkObject},
		{wire.AsyncObject, completion.AsyncObject},
		{wire.GenerationInitializing, testcase.GenerationInitializing},
		{wire.GenerationRunning, testcase.GenerationRunning},
		{wire.GenerationCompleted, testcase.GenerationCompleted},
		{wire.GenerationFailed, testcase.GenerationFailed},
		{wire.GenerationAborted, testcase.GenerationAborted},
		{wire.WorkflowPending, workflow.StatusPending},
		{wire.WorkflowRunning, workflow.StatusRunning},
		{wire.WorkflowCompleted, workflow.StatusCompleted},
		{wire.WorkflowFailed, workflow.StatusFailed},
		{wire.WorkflowRequiresAction, workflow.StatusRequiresAction},
		{wire.WorkflowCancelled, workflow.StatusCancelled},
		{wire.WorkflowTimeout, workflow.StatusTimeout},
		{wire.WorkflowWaitingForReview, workflow.StatusWaitingForReview},
		{wire.DeliveryPending, webhook.StatusPending},
		{wire.DeliverySucceeded, webhook.StatusSucceeded},
		{wire.DeliveryFailed, webhook.StatusFailed},
	} {
		if c.wire != c.domain {
			t.Errorf("wire has %q where the domain has %q", c.wire, c.domain)
		}
	}
}
