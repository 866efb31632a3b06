package server_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/server"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/promptcanvas/promptcanvas/testcase"
	"github.com/promptcanvas/promptcanvas/webhook"
)

// appEnv is a test server with applications, the completion service and
// the notifier wired as canvasd wires them: publications and completions
// of an application notify its subscription.
type appEnv struct {
	*testEnv
	Notifier    *webhook.Notifier
	Completions *completion.Service
	Generations *testcase.GenerationService
	worker      atomic.Pointer[queue.Worker]
}

func newAppEnv(t *testing.T) *appEnv {
	t.Helper()
	ae := &appEnv{}
	ae.testEnv = newTestEnv(t, func(t testing.TB, db *sqlite.DB, o *server.Options) {
		ae.Notifier = webhook.NewNotifier(webhook.NotifierOptions{Store: db, Notify: ae.notify})
		o.Environments = env.NewService(env.Options{Store: db, Canvases: db, Changes: db, Notify: ae.notify,
			Event: &env.PublicationEvent{Type: webhook.EventPublicationCreated,
				Job: func(ws string, pub *env.Publication) (*queue.Job, error) {
					return ae.Notifier.CanvasEventJob(ws, pub.PromptID, pub.PublicationID, webhook.EventPublicationCreated, pub)
				}}})
		o.Canvases = canvas.NewService(canvas.Options{Store: db, Promoter: o.Environments})
		ae.Completions = completion.NewService(completion.Options{Store: db, Canvases: db, Environments: o.Environments,
			Models: model.NewCaller(model.Options{}), Notify: ae.notify,
			Notifier: ae.Notifier})
		o.Completions = ae.Completions
		o.TestCases = testcase.NewService(testcase.Options{Store: db, Canvases: db, Generations: db})
		ae.Generations = testcase.NewGenerationService(testcase.GenerationOptions{TestCases: o.TestCases, Store: db,
			Runner: ae.Completions, Notify: ae.notify, FinishedJob: func(g *testcase.Generation) (*queue.Job, error) {
				return ae.Notifier.CanvasEventJob(g.WorkspaceID, g.PromptID, g.ID, webhook.EventGenerationCompleted, g)
			}})
		o.Generations = ae.Generations
		o.Applications = webhook.NewApplicationService(webhook.ApplicationOptions{Store: db, Canvases: db})
	})
	return ae
}

func (ae *appEnv) notify() {
	if w := ae.worker.Load(); w != nil {
		w.Notify()
	}
}

// deliverer delivers as canvasd does: subscription deliveries read their
// subscription (enabled, live secrets) at send time.
func (ae *appEnv) deliverer() *webhook.Deliverer {
	return &webhook.Deliverer{Sender: webhook.NewSender(webhook.SenderOptions{AllowPrivateNetworks: true}),
		Subscriptions: ae.Store, Schedule: []time.Duration{10 * time.Millisecond}}
}

// StartWorker runs a worker with the completion, delivery and fan-out
// handlers until the test ends.
func (ae *appEnv) StartWorker(t *testing.T) {
	t.Helper()
	w := queue.NewWorker(ae.Store, queue.WorkerOptions{PollInterval: 20 * time.Millisecond,
		Backoff: func(int) time.Duration { return 10 * time.Millisecond }})
	for _, kind := range completion.JobKinds() {
		w.Handle(kind, ae.Completions.HandleJob)
	}
	w.Handle(webhook.JobKind, ae.deliverer().Handle)
	w.Handle(webhook.JobKindFanout, ae.Notifier.HandleFanout)
	w.Handle(webhook.JobKindCanvasEvent, ae.Notifier.HandleCanvasEvent)
	w.Handle(testcase.JobKindGenerate, ae.Generations.HandleJob)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	ae.worker.Store(w)
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
}

// queuedDeliveries claims every queued delivery job, with no worker
// running, and returns them with their deliveries.
func (ae *appEnv) queuedDeliveries(t *testing.T) ([]*queue.Job, []webhook.Delivery) {
	t.Helper()
	// Canvas events (a publication's outbox job) turn into their
	// deliveries first, as the worker would turn them.
	events, err := ae.Store.ClaimJobs(context.Background(), "test", []string{webhook.JobKindCanvasEvent}, 100, time.Minute)
	require.NoError(t, err)
	for _, j := range events {
		require.NoError(t, ae.Notifier.HandleCanvasEvent(context.Background(), j))
		require.NoError(t, ae.Store.CompleteJob(context.Background(), j.ID, "test"))
	}
	jobs, err := ae.Store.ClaimJobs(context.Background(), "test", []string{webhook.JobKind}, 100, time.Minute)
	require.NoError(t, err)
	ds := make([]webhook.Delivery, len(jobs))
	for i, j := range jobs {
		require.NoError(t, json.Unmarshal(j.Payload, &ds[i]))
	}
	return jobs, ds
}

// signedReceiver is a webhook endpoint that keeps each request's headers
// and raw body, for signatures to be verified.
type signedReceiver struct {
	URL string
	got chan signedRequest
}

type signedRequest struct {
	Header http.Header
	Body   []byte
}

func (r signedRequest) event(t *testing.T) (typ string, data map[string]any) {
	t.Helper()
	var ev struct {
		Type string         `json:"type"`
		Data map[string]any `json:"data"`
	}
	require.NoError(t, json.Unmarshal(r.Body, &ev))
	return ev.Type, ev.Data
}

// verify checks the request's signature with the standard-webhooks library.
func (r signedRequest) verify(secret string) error {
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return err
	}
	return wh.Verify(r.Body, r.Header)
}

func newSignedReceiver(t *testing.T) *signedReceiver {
	t.Helper()
	s := &signedReceiver{got: make(chan signedRequest, 16)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.got <- signedRequest{Header: r.Header.Clone(), Body: body}
	}))
	t.Cleanup(srv.Close)
	s.URL = srv.URL + "/hook"
	return s
}

func (s *signedReceiver) next(t *testing.T) signedRequest {
	t.Helper()
	select {
	case r := <-s.got:
		return r
	case <-time.After(10 * time.Second):
		require.FailNow(t, "no webhook notification arrived")
		return signedRequest{}
	}
}

// mustApplication creates an application through the API and returns it
// with its one-time secret.
func mustApplication(t *testing.T, e *testEnv, body map[string]any) (app map[string]any, secret string) {
	t.Helper()
	app = mustCreate(t, e, "/applications", e.Admin, body)
	secret, _ = app["secret"].(string)
	require.True(t, strings.HasPrefix(secret, "whsec_"), "secret %q", secret)
	return app, secret
}

func TestApplication_Create(t *testing.T) {
	e := newAppEnv(t)
	ec := mustEnvCanvas(t, e.testEnv, 1)

	t.Run("OK", func(t *testing.T) {
		app, secret := mustApplication(t, e.testEnv, map[string]any{"name": "Support", "promptId": ec.Canvas.ID,
			"events": map[string]any{"enabled": true, "url": "https://example.com/hook",
				"headers": []map[string]string{{"name": "x-b", "value": "1"}, {"name": "x-a", "value": "2"}}}})
		key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
		require.NoError(t, err)
		assert.Len(t, key, 32)
		assert.Equal(t, "production", app["environmentName"])
		events := app["events"].(map[string]any)
		assert.Equal(t, true, events["hasSecret"])
		assert.Equal(t, []any{map[string]any{"name": "x-b", "value": "1"}, map[string]any{"name": "x-a", "value": "2"}}, events["headers"])

		got := e.Do(http.MethodGet, "/applications/"+app["id"].(string), e.Viewer, nil)
		require.Equal(t, http.StatusOK, got.Status)
		assert.NotContains(t, got.Map(t), "secret", "the secret is shown once")
		assert.NotContains(t, string(got.Body), secret)
		list := e.Do(http.MethodGet, "/applications", e.Viewer, nil)
		require.Equal(t, http.StatusOK, list.Status)
		assert.Contains(t, string(list.Body), app["id"].(string))
		assert.NotContains(t, string(list.Body), secret)
	})
	t.Run("HeadersObjectKeepsOrder", func(t *testing.T) {
		app, _ := mustApplication(t, e.testEnv, map[string]any{"name": "Obj",
			"events": map[string]any{"headers": json.RawMessage(`{"x-z": "1", "x-a": "2", "x-m": "3"}`)}})
		hs := app["events"].(map[string]any)["headers"].([]any)
		require.Len(t, hs, 3)
		assert.Equal(t, []string{"x-z", "x-a", "x-m"}, []string{hs[0].(map[string]any)["name"].(string),
			hs[1].(map[string]any)["name"].(string), hs[2].(map[string]any)["name"].(string)})
	})
	t.Run("Forbidden", func(t *testing.T) {
		for _, token := range []string{e.Editor, e.Viewer} {
			r := e.Do(http.MethodPost, "/applications", token, map[string]any{"name": "x"})
			assert.Equal(t, http.StatusForbidden, r.Status)
		}
	})
	t.Run("Validation", func(t *testing.T) {
		cases := map[string]struct {
			body   map[string]any
			status int
		}{
			"NoName":          {map[string]any{"name": ""}, http.StatusUnprocessableEntity},
			"LongName":        {map[string]any{"name": strings.Repeat("n", 257)}, http.StatusUnprocessableEntity},
			"NotHTTP":         {map[string]any{"name": "a", "events": map[string]any{"url": "ftp://example.com/x"}}, http.StatusUnprocessableEntity},
			"UnknownEvent":    {map[string]any{"name": "a", "events": map[string]any{"eventTypes": []string{"nope"}}}, http.StatusUnprocessableEntity},
			"ReservedHeader":  {map[string]any{"name": "a", "events": map[string]any{"headers": map[string]string{"webhook-id": "x"}}}, http.StatusUnprocessableEntity},
			"BadHeaderName":   {map[string]any{"name": "a", "events": map[string]any{"headers": map[string]string{"bad name": "x"}}}, http.StatusUnprocessableEntity},
			"BadEnvName":      {map[string]any{"name": "a", "environmentName": "Not Valid"}, http.StatusBadRequest},
			"UnknownCanvas":   {map[string]any{"name": "a", "promptId": "11111111-1111-4111-8111-111111111111"}, http.StatusNotFound},
			"PromptNotAUUID":  {map[string]any{"name": "a", "promptId": "nope"}, http.StatusUnprocessableEntity},
			"UnknownProperty": {map[string]any{"name": "a", "extra": 1, "events": map[string]any{"extra": 1}}, http.StatusUnprocessableEntity},
			"Secret":          {map[string]any{"name": "a", "events": map[string]any{"secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}}, http.StatusUnprocessableEntity},
		}
		for name, c := range cases {
			t.Run(name, func(t *testing.T) {
				r := e.Do(http.MethodPost, "/applications", e.Admin, c.body)
				assert.Equal(t, c.status, r.Status, "%s", r.Body)
			})
		}
	})
	t.Run("ForbiddenCanvas", func(t *testing.T) {
		admin := e.Key(canvas.RoleAdmin, "11111111-1111-4111-8111-111111111111")
		r := e.Do(http.MethodPost, "/applications", admin, map[string]any{"name": "a", "promptId": ec.Canvas.ID})
		assert.Equal(t, http.StatusForbidden, r.Status)
	})
}

func TestApplication_Update(t *testing.T) {
	e := newAppEnv(t)
	ec := mustEnvCanvas(t, e.testEnv, 1)
	app, _ := mustApplication(t, e.testEnv, map[string]any{"name": "A", "promptId": ec.Canvas.ID,
		"events": map[string]any{"url": "https://example.com/a", "headers": map[string]string{"x-a": "1"}}})
	path := "/applications/" + app["id"].(string)

	t.Run("OK", func(t *testing.T) {
		r := e.Do(http.MethodPatch, path, e.Admin, map[string]any{"name": "B", "environmentName": "staging",
			"events": map[string]any{"enabled": true, "eventTypes": []string{"publication.created"}}})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		got := r.Map(t)
		assert.Equal(t, "B", got["name"])
		assert.Equal(t, "staging", got["environmentName"])
		events := got["events"].(map[string]any)
		assert.Equal(t, true, events["enabled"])
		assert.Equal(t, "https://example.com/a", events["url"], "fields not given are kept")
		assert.Len(t, events["headers"], 1)
		assert.Equal(t, []any{"publication.created"}, events["eventTypes"])
		assert.Equal(t, ec.Canvas.ID, got["promptId"])

		r = e.Do(http.MethodPatch, path, e.Admin, map[string]any{"promptId": nil})
		require.Equal(t, http.StatusOK, r.Status)
		assert.Nil(t, r.Map(t)["promptId"])
	})
	t.Run("EnablingClearsDisabled", func(t *testing.T) {
		id := app["id"].(string)
		require.NoError(t, e.Store.RecordSubscriptionOutcome(context.Background(), id, false, true, "receiver answered 410 Gone"))
		events := e.Do(http.MethodGet, path, e.Viewer, nil).Map(t)["events"].(map[string]any)
		assert.Equal(t, false, events["enabled"])
		assert.Equal(t, "receiver answered 410 Gone", events["disabledReason"])
		assert.NotNil(t, events["disabledAt"])
		assert.EqualValues(t, 1, events["consecutiveFailures"])

		r := e.Do(http.MethodPatch, path, e.Admin, map[string]any{"events": map[string]any{"enabled": true}})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		events = r.Map(t)["events"].(map[string]any)
		assert.Equal(t, true, events["enabled"])
		assert.Nil(t, events["disabledReason"])
		assert.Nil(t, events["disabledAt"])
		assert.EqualValues(t, 0, events["consecutiveFailures"])
	})
	t.Run("NotFound", func(t *testing.T) {
		r := e.Do(http.MethodPatch, "/applications/11111111-1111-4111-8111-111111111111", e.Admin, map[string]any{"name": "x"})
		assert.Equal(t, http.StatusNotFound, r.Status)
		other := &canvas.Workspace{Name: "other"}
		require.NoError(t, e.Store.CreateWorkspace(context.Background(), other))
		r = e.Do(http.MethodGet, path, e.KeyIn(other.ID, canvas.RoleAdmin), nil)
		assert.Equal(t, http.StatusNotFound, r.Status)
	})
	t.Run("Forbidden", func(t *testing.T) {
		for _, token := range []string{e.Editor, e.Viewer} {
			assert.Equal(t, http.StatusForbidden, e.Do(http.MethodPatch, path, token, map[string]any{"name": "x"}).Status)
			assert.Equal(t, http.StatusForbidden, e.Do(http.MethodDelete, path, token, nil).Status)
			assert.Equal(t, http.StatusForbidden, e.Do(http.MethodPost, path+"/events/rotate-secret", token, nil).Status)
		}
	})
	t.Run("Validation", func(t *testing.T) {
		r := e.Do(http.MethodPatch, path, e.Admin, map[string]any{"events": map[string]any{"url": "not a url"}})
		assert.Equal(t, http.StatusUnprocessableEntity, r.Status)
		r = e.Do(http.MethodPatch, path, e.Admin, map[string]any{"environmentName": "latest"})
		assert.Equal(t, http.StatusBadRequest, r.Status)
	})
	t.Run("Delete", func(t *testing.T) {
		require.Equal(t, http.StatusNoContent, e.Do(http.MethodDelete, path, e.Admin, nil).Status)
		assert.Equal(t, http.StatusNotFound, e.Do(http.MethodGet, path, e.Viewer, nil).Status)
		assert.Equal(t, http.StatusNotFound, e.Do(http.MethodDelete, path, e.Admin, nil).Status)
	})
}

// publish publishes a version of the canvas to production through the API.
func publish(t *testing.T, e *testEnv, canvasID, versionID string) {
	t.Helper()
	r := e.Do(http.MethodPost, "/environment/publish", e.Editor, map[string]any{"resourceType": "prompt",
		"resourceId": canvasID, "envName": "production", "versionId": versionID})
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
}

func TestApplication_PublicationCreated(t *testing.T) {
	e := newAppEnv(t)
	ec := mustEnvCanvas(t, e.testEnv, 1)
	recv := newSignedReceiver(t)
	subscribed, secret := mustApplication(t, e.testEnv, map[string]any{"name": "on", "promptId": ec.Canvas.ID,
		"events": map[string]any{"enabled": true, "url": recv.URL, "headers": map[string]string{"x-first": "1", "x-second": "2"}}})
	filtered, _ := mustApplication(t, e.testEnv, map[string]any{"name": "filtered", "promptId": ec.Canvas.ID,
		"events": map[string]any{"enabled": true, "url": recv.URL, "eventTypes": []string{"completion.succeeded"}}})
	disabled, _ := mustApplication(t, e.testEnv, map[string]any{"name": "off", "promptId": ec.Canvas.ID,
		"events": map[string]any{"enabled": false, "url": recv.URL}})

	publish(t, e.testEnv, ec.Canvas.ID, ec.Versions[0].ID)
	jobs, ds := e.queuedDeliveries(t)
	require.Len(t, ds, 1, "the filtered and the disabled subscriptions get nothing")
	assert.Equal(t, subscribed["id"], ds[0].ApplicationID)
	assert.NotContains(t, []any{filtered["id"], disabled["id"]}, ds[0].ApplicationID)
	assert.Equal(t, webhook.EventPublicationCreated, ds[0].Event.Type)

	require.NoError(t, e.deliverer().Handle(context.Background(), jobs[0]))
	got := recv.next(t)
	require.NoError(t, got.verify(secret))
	assert.Equal(t, "1", got.Header.Get("x-first"))
	assert.Equal(t, "2", got.Header.Get("x-second"))
	assert.Equal(t, ds[0].ID, got.Header.Get("webhook-id"))
	typ, data := got.event(t)
	assert.Equal(t, webhook.EventPublicationCreated, typ)
	assert.Equal(t, ec.Versions[0].ID, data["versionId"])
	assert.Equal(t, "production", data["environmentName"])
}

func TestApplication_RotateSecret(t *testing.T) {
	e := newAppEnv(t)
	ec := mustEnvCanvas(t, e.testEnv, 1)
	recv := newSignedReceiver(t)
	app, old := mustApplication(t, e.testEnv, map[string]any{"name": "on", "promptId": ec.Canvas.ID,
		"events": map[string]any{"enabled": true, "url": recv.URL}})

	r := e.Do(http.MethodPost, "/applications/"+app["id"].(string)+"/events/rotate-secret", e.Admin, nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	rotated := r.Map(t)
	fresh := rotated["secret"].(string)
	require.True(t, strings.HasPrefix(fresh, "whsec_"))
	assert.NotEqual(t, old, fresh)
	assert.NotContains(t, string(e.Do(http.MethodGet, "/applications/"+app["id"].(string), e.Admin, nil).Body), fresh)

	publish(t, e.testEnv, ec.Canvas.ID, ec.Versions[0].ID)
	jobs, _ := e.queuedDeliveries(t)
	require.Len(t, jobs, 1)
	require.NoError(t, e.deliverer().Handle(context.Background(), jobs[0]))
	got := recv.next(t)
	assert.Len(t, strings.Fields(got.Header.Get("webhook-signature")), 2, "one signature per live secret")
	assert.NoError(t, got.verify(old), "the previous secret still verifies during the overlap")
	assert.NoError(t, got.verify(fresh), "the new secret verifies")

	r = e.Do(http.MethodPost, "/applications/11111111-1111-4111-8111-111111111111/events/rotate-secret", e.Admin, nil)
	assert.Equal(t, http.StatusNotFound, r.Status)
}

func TestApplication_Completion(t *testing.T) {
	e := newAppEnv(t)
	ec := mustEnvCanvas(t, e.testEnv, 2)
	publish(t, e.testEnv, ec.Canvas.ID, ec.Versions[1].ID)
	_, _ = e.queuedDeliveries(t) // none: no application yet
	recv := newSignedReceiver(t)
	app, secret := mustApplication(t, e.testEnv, map[string]any{"name": "on", "promptId": ec.Canvas.ID,
		"events": map[string]any{"enabled": true, "url": recv.URL,
			"headers": []map[string]string{{"name": "x-tenant", "value": "fixed"}, {"name": "x-order", "value": "a"}, {"name": "x-order", "value": "a2"}}}})
	appID := app["id"].(string)

	t.Run("Sync", func(t *testing.T) {
		r := e.Do(http.MethodPost, "/v2/chat/completions", e.Editor, map[string]any{"canvas_id": ec.Canvas.ID,
			"application_id": appID, "variables": map[string]any{"name": "Ada"}})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		jobs, ds := e.queuedDeliveries(t)
		require.Len(t, ds, 1, "the notification is written with the run")
		require.NoError(t, e.deliverer().Handle(context.Background(), jobs[0]))
		got := recv.next(t)
		require.NoError(t, got.verify(secret))
		typ, data := got.event(t)
		assert.Equal(t, webhook.EventCompletionSucceeded, typ)
		assert.Equal(t, ec.Versions[1].ID, data["versionId"], "the version production serves")
		assert.Equal(t, "production", data["environmentName"])
	})
	t.Run("AsyncWithWebhookURL", func(t *testing.T) {
		e.StartWorker(t)
		direct := newSignedReceiver(t)
		r := e.Do(http.MethodPost, "/v2/chat/completions", e.Editor, map[string]any{"canvas_id": ec.Canvas.ID,
			"application_id": appID, "variables": map[string]any{"name": "Ada"}, "webhook_url": direct.URL},
			"x-svc-forward-x-order", "b")
		require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)

		sub := recv.next(t)
		require.NoError(t, sub.verify(secret), "the subscription's delivery is signed")
		typ, _ := sub.event(t)
		assert.Equal(t, webhook.EventCompletionSucceeded, typ)
		assert.Equal(t, "fixed", sub.Header.Get("x-tenant"))
		assert.Equal(t, []string{"a", "a2"}, sub.Header.Values("x-order"),
			"fixed headers in their order; forwarded ones go to the request's webhook_url only")

		hook := direct.next(t)
		typ, data := hook.event(t)
		assert.Equal(t, webhook.EventCompletionSucceeded, typ)
		assert.Equal(t, r.Map(t)["id"], data["id"])
		assert.Empty(t, hook.Header.Get("webhook-signature"), "a per-request webhook_url has no secret")
		assert.Equal(t, []string{"b"}, hook.Header.Values("x-order"))
	})
	t.Run("NotFound", func(t *testing.T) {
		r := e.Do(http.MethodPost, "/v2/chat/completions", e.Editor, map[string]any{"canvas_id": ec.Canvas.ID,
			"application_id": "11111111-1111-4111-8111-111111111111"})
		assert.Equal(t, http.StatusNotFound, r.Status)
		other := &canvas.Workspace{Name: "other"}
		require.NoError(t, e.Store.CreateWorkspace(context.Background(), other))
		r = e.Do(http.MethodPost, "/v2/chat/completions", e.KeyIn(other.ID, canvas.RoleEditor), map[string]any{
			"canvas_id": ec.Canvas.ID, "application_id": appID})
		assert.Equal(t, http.StatusNotFound, r.Status)
	})
	t.Run("Validation", func(t *testing.T) {
		other := mustEnvCanvas(t, e.testEnv, 1)
		r := e.Do(http.MethodPost, "/v2/chat/completions", e.Editor, map[string]any{"canvas_id": other.Canvas.ID,
			"application_id": appID})
		assert.Equal(t, http.StatusUnprocessableEntity, r.Status, "canvas_id is not the application's")
		bare, _ := mustApplication(t, e.testEnv, map[string]any{"name": "no canvas"})
		r = e.Do(http.MethodPost, "/v2/chat/completions", e.Editor, map[string]any{"canvas_id": ec.Canvas.ID,
			"application_id": bare["id"]})
		assert.Equal(t, http.StatusUnprocessableEntity, r.Status, "the application has no canvas")
	})
}

func TestApplication_GenerationCompleted(t *testing.T) {
	e := newAppEnv(t)
	ec := mustEnvCanvas(t, e.testEnv, 1)
	recv := newSignedReceiver(t)
	_, secret := mustApplication(t, e.testEnv, map[string]any{"name": "on", "promptId": ec.Canvas.ID,
		"events": map[string]any{"enabled": true, "url": recv.URL, "eventTypes": []string{"generation.completed"}}})
	tc := mustCreate(t, e.testEnv, "/test-case", e.Editor, map[string]any{"promptId": ec.Canvas.ID,
		"variables": map[string]any{"name": "Ada"}})
	e.StartWorker(t)
	r := e.Do(http.MethodPost, "/test-case/"+tc["id"].(string)+"/run", e.Editor, map[string]any{"promptVersionId": ec.Versions[0].ID})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)

	got := recv.next(t)
	require.NoError(t, got.verify(secret))
	typ, data := got.event(t)
	assert.Equal(t, webhook.EventGenerationCompleted, typ)
	assert.Equal(t, r.Map(t)["generationId"], data["id"])
	assert.Equal(t, testcase.GenerationCompleted, data["status"])
}
