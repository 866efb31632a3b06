package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/promptcanvas/promptcanvas/client/wire"
)

// Completions and tasks.

// Complete runs a canvas and waits for the answer (req's Stream and Async
// are ignored). A workflow version that pauses for review or action
// returns an *AcceptedError naming the run.
func (c *Client) Complete(ctx context.Context, req wire.CompletionRequest, opts ...CallOption) (*wire.Response, error) {
	req.Stream, req.Async = false, false
	var raw json.RawMessage
	resp, err := c.call(ctx, request{method: http.MethodPost, path: "/v2/chat/completions",
		body: req, out: &raw}, opts...)
	if err != nil {
		return nil, err
	}
	if resp.status == http.StatusAccepted {
		var a wire.Accepted
		if err := json.Unmarshal(raw, &a); err != nil {
			return nil, err
		}
		return nil, &AcceptedError{Accepted: a}
	}
	var out wire.Response
	return &out, json.Unmarshal(raw, &out)
}

// AcceptedError is returned by Complete when the server accepted the run
// without finishing it (a workflow that paused): read it later by its id.
type AcceptedError struct {
	Accepted wire.Accepted
}

func (e *AcceptedError) Error() string {
	return fmt.Sprintf("client: run %s was accepted with status %s", e.Accepted.ID, e.Accepted.Status)
}

// CompleteAsync queues a completion (req's Async is set): GetCompletion
// reads it later, and WebhookURL, when set, is notified when it ends.
func (c *Client) CompleteAsync(ctx context.Context, req wire.CompletionRequest, opts ...CallOption) (*wire.Accepted, error) {
	req.Stream, req.Async = false, true
	var out wire.Accepted
	return &out, c.write(ctx, http.MethodPost, "/v2/chat/completions", req, &out, opts)
}

// CompleteStream runs a canvas (req's Stream is set) and calls onText with
// each piece of the answer's text as it is streamed; chunks without text
// (pieces of tool calls, the last chunk with the finish reason, usage and
// cost) are not passed on. An error event of the stream is returned as an
// *Error. Streams are not retried.
func (c *Client) CompleteStream(ctx context.Context, req wire.CompletionRequest, onText func(string) error, opts ...CallOption) error {
	req.Stream, req.Async = true, false
	var co callOptions
	for _, o := range opts {
		o(&co)
	}
	payload, err := json.Marshal(req)
	if err != nil {
		return err
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/v2/chat/completions", strings.NewReader(string(payload)))
	if err != nil {
		return err
	}
	c.setHeaders(hr, co.header)
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "text/event-stream")
	resp, err := c.hc.Do(hr)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		r := &response{status: resp.StatusCode, header: resp.Header, body: b}
		if resp.StatusCode >= 400 {
			return decodeError(r)
		}
		return &AcceptedError{Accepted: func() (a wire.Accepted) { _ = json.Unmarshal(b, &a); return a }()}
	}
	return readEvents(resp.Body, func(ev event) error {
		switch {
		case ev.name == "error":
			return decodeError(&response{status: http.StatusBadGateway, header: resp.Header, body: []byte(ev.data)})
		case ev.data == "[DONE]":
			return errStop
		}
		var chunk wire.Chunk
		if err := json.Unmarshal([]byte(ev.data), &chunk); err != nil {
			return err
		}
		for _, ch := range chunk.Choices {
			// A piece of a tool call, and the last chunk, carry no text.
			if ch.Delta.Content.Text == "" {
				continue
			}
			if err := onText(ch.Delta.Content.Text); err != nil {
				return err
			}
		}
		return nil
	})
}

// GetCompletion reads a completion run: its status and, once finished, its
// result or error.
func (c *Client) GetCompletion(ctx context.Context, id string) (*wire.Run, error) {
	var out wire.Run
	return &out, c.get(ctx, "/v2/chat/completions/"+esc(id), nil, &out)
}

// SetFeedback records an end user's feedback on a completion run (a score
// from 0 to 1 and an optional comment), or replaces it: one per run.
func (c *Client) SetFeedback(ctx context.Context, runID string, req wire.FeedbackRequest, opts ...CallOption) (*wire.Feedback, error) {
	var out wire.Feedback
	return &out, c.write(ctx, http.MethodPost, "/v2/chat/completions/"+esc(runID)+"/feedback", req, &out, opts)
}

// CreateTask queues a task.
func (c *Client) CreateTask(ctx context.Context, req wire.TaskRequest, opts ...CallOption) (*wire.Accepted, error) {
	var out wire.Accepted
	return &out, c.write(ctx, http.MethodPost, "/v1/tasks", req, &out, opts)
}

// GetTask reads a task run.
func (c *Client) GetTask(ctx context.Context, id string) (*wire.Run, error) {
	var out wire.Run
	return &out, c.get(ctx, "/v1/tasks/"+esc(id), nil, &out)
}

// Files.

// CompatibilityDate is the x-compatibility-date the file calls send.
const CompatibilityDate = "2025-01-01"

func fileHeader() CallOption { return WithHeader("x-compatibility-date", CompatibilityDate) }

// CreateFile asks for an upload URL for a new file.
func (c *Client) CreateFile(ctx context.Context, fileName string, opts ...CallOption) (*wire.Upload, error) {
	var out wire.Upload
	return &out, c.write(ctx, http.MethodPost, "/v3/files", wire.CreateFileRequest{FileName: fileName}, &out,
		append([]CallOption{fileHeader()}, opts...))
}

// UploadFile sends the bytes of a file to its upload URL (which needs no
// token; a relative one is resolved against the base URL) and returns the
// file's metadata.
func (c *Client) UploadFile(ctx context.Context, up *wire.Upload, contentType string, content []byte) (*wire.File, error) {
	u, err := url.Parse(up.UploadURL)
	if err != nil {
		return nil, fmt.Errorf("client: upload URL: %w", err)
	}
	if !u.IsAbs() {
		base, _ := url.Parse(c.base + "/")
		u = base.ResolveReference(u)
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPut, u.String(), strings.NewReader(string(content)))
	if err != nil {
		return nil, err
	}
	hr.Header.Set("Content-Type", contentType)
	resp, err := c.hc.Do(hr)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 400 {
		return nil, decodeError(&response{status: resp.StatusCode, header: resp.Header, body: b})
	}
	var f wire.File
	return &f, json.Unmarshal(b, &f)
}

// GetFile reads a file's metadata.
func (c *Client) GetFile(ctx context.Context, id string) (*wire.File, error) {
	var out wire.File
	_, err := c.call(ctx, request{method: http.MethodGet, path: "/v3/files/" + esc(id), out: &out}, fileHeader())
	return &out, err
}

// Test cases.

// CreateTestCase creates a test case of a canvas.
func (c *Client) CreateTestCase(ctx context.Context, params wire.CreateTestCaseParams, opts ...CallOption) (*wire.TestCase, error) {
	var out wire.TestCase
	return &out, c.write(ctx, http.MethodPost, "/test-case", params, &out, opts)
}

// GetTestCase reads a test case.
func (c *Client) GetTestCase(ctx context.Context, id string) (*wire.TestCase, error) {
	var out wire.TestCase
	return &out, c.get(ctx, "/test-case/"+esc(id), nil, &out)
}

// ListTestCases lists a canvas' test cases.
func (c *Client) ListTestCases(ctx context.Context, canvasID string) ([]*wire.TestCase, error) {
	var out []*wire.TestCase
	return out, c.get(ctx, "/test-case", url.Values{"promptId": {canvasID}}, &out)
}

// ListTags lists a canvas' test case tags.
func (c *Client) ListTags(ctx context.Context, canvasID string) ([]*wire.Tag, error) {
	var out []*wire.Tag
	return out, c.get(ctx, "/test-case-tags", url.Values{"promptId": {canvasID}}, &out)
}

// DeleteTestCase deletes a test case.
func (c *Client) DeleteTestCase(ctx context.Context, id string, opts ...CallOption) error {
	return c.write(ctx, http.MethodDelete, "/test-case/"+esc(id), nil, nil, opts)
}

// RunTestCase runs a test case against a version; the generation it
// starts is read with GetGeneration.
func (c *Client) RunTestCase(ctx context.Context, id, versionID string, opts ...CallOption) (*wire.RunTestCaseResult, error) {
	var out wire.RunTestCaseResult
	return &out, c.write(ctx, http.MethodPost, "/test-case/"+esc(id)+"/run",
		wire.RunTestCaseRequest{PromptVersionID: versionID}, &out, opts)
}

// GetGeneration reads a test case generation.
func (c *Client) GetGeneration(ctx context.Context, id string) (*wire.Generation, error) {
	var out wire.Generation
	return &out, c.get(ctx, "/test-case/generations/"+esc(id), nil, &out)
}

// Workflow runs.

// GetWorkflowRun reads a workflow run with its steps and graph.
func (c *Client) GetWorkflowRun(ctx context.Context, id string) (*wire.WorkflowRun, error) {
	var out wire.WorkflowRun
	return &out, c.get(ctx, "/workflow/runs/"+esc(id), nil, &out)
}

// CancelWorkflowRun cancels a run; a run that already ended is CONFLICT.
func (c *Client) CancelWorkflowRun(ctx context.Context, id string, opts ...CallOption) (*wire.WorkflowRun, error) {
	var out wire.WorkflowRun
	return &out, c.write(ctx, http.MethodPost, "/workflow/runs/"+esc(id)+"/cancel", nil, &out, opts)
}

// ReviewWorkflowRun answers a run waiting for review.
func (c *Client) ReviewWorkflowRun(ctx context.Context, id string, params wire.ReviewParams, opts ...CallOption) (*wire.WorkflowRun, error) {
	var out wire.WorkflowRun
	return &out, c.write(ctx, http.MethodPost, "/workflow/runs/"+esc(id)+"/review", params, &out, opts)
}

// ResumeWorkflowRun gives input to a run that requires action.
func (c *Client) ResumeWorkflowRun(ctx context.Context, id string, params wire.ResumeParams, opts ...CallOption) (*wire.WorkflowRun, error) {
	var out wire.WorkflowRun
	return &out, c.write(ctx, http.MethodPost, "/workflow/runs/"+esc(id)+"/resume", params, &out, opts)
}

// Applications and deliveries.

// CreateApplication creates an application; the answer is the only time
// its signing secret is shown.
func (c *Client) CreateApplication(ctx context.Context, params wire.CreateApplicationParams, opts ...CallOption) (*wire.ApplicationWithSecret, error) {
	var out wire.ApplicationWithSecret
	return &out, c.write(ctx, http.MethodPost, "/applications", params, &out, opts)
}

// GetApplication reads an application.
func (c *Client) GetApplication(ctx context.Context, id string) (*wire.Application, error) {
	var out wire.Application
	return &out, c.get(ctx, "/applications/"+esc(id), nil, &out)
}

// ListApplications lists the workspace's applications.
func (c *Client) ListApplications(ctx context.Context) ([]*wire.Application, error) {
	var out []*wire.Application
	return out, c.get(ctx, "/applications", nil, &out)
}

// UpdateApplication changes the fields patch names (name, promptId,
// environmentName, events); a null promptId clears it.
func (c *Client) UpdateApplication(ctx context.Context, id string, patch map[string]any, opts ...CallOption) (*wire.Application, error) {
	var out wire.Application
	return &out, c.write(ctx, http.MethodPatch, "/applications/"+esc(id), patch, &out, opts)
}

// DeleteApplication deletes an application.
func (c *Client) DeleteApplication(ctx context.Context, id string, opts ...CallOption) error {
	return c.write(ctx, http.MethodDelete, "/applications/"+esc(id), nil, nil, opts)
}

// DeliveryFilter selects a page of the delivery log; empty fields do not
// filter, and a zero Limit takes the server's default.
type DeliveryFilter struct {
	ApplicationID string
	Status        string
	EventType     string
	Limit         int
	Offset        int
}

// ListDeliveries reads one page of the webhook delivery log, newest first.
func (c *Client) ListDeliveries(ctx context.Context, f DeliveryFilter) (*wire.Page[*wire.LoggedDelivery], error) {
	q := url.Values{}
	setIf(q, "applicationId", f.ApplicationID)
	setIf(q, "status", f.Status)
	setIf(q, "eventType", f.EventType)
	if f.Limit > 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	if f.Offset > 0 {
		q.Set("offset", strconv.Itoa(f.Offset))
	}
	var out wire.Page[*wire.LoggedDelivery]
	return &out, c.get(ctx, "/webhooks/deliveries", q, &out)
}

// GetDelivery reads one delivery with its attempts.
func (c *Client) GetDelivery(ctx context.Context, id string) (*wire.LoggedDelivery, error) {
	var out wire.LoggedDelivery
	return &out, c.get(ctx, "/webhooks/deliveries/"+esc(id), nil, &out)
}

// Redeliver sends a delivery again.
func (c *Client) Redeliver(ctx context.Context, id string, opts ...CallOption) (*wire.LoggedDelivery, error) {
	var out wire.LoggedDelivery
	return &out, c.write(ctx, http.MethodPost, "/webhooks/deliveries/"+esc(id)+"/redeliver", nil, &out, opts)
}
