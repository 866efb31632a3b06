package webhook_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/promptcanvas/promptcanvas/webhook"
)

// Example shows one delivery attempt to a receiver: forwarded request
// headers arrive without their x-svc-forward- prefix, next to the
// webhook-id that stays the same on every attempt.
func Example() {
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Println(r.Header.Get("Authorization"), r.Header.Get("Webhook-Id"), r.Header.Get("Content-Type"))
		fmt.Println(string(body))
	}))
	defer receiver.Close()

	request := http.Header{"X-Svc-Forward-Authorization": {"Bearer secret-token"}}
	d := &webhook.Delivery{
		ID:      "msg_2f9",
		URL:     receiver.URL,
		Headers: webhook.ForwardedHeaders(request),
		Event: webhook.Event{Type: webhook.EventTaskSucceeded, Timestamp: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
			Data: json.RawMessage(`{"id":"t1","status":"completed"}`)},
	}
	// Loopback is refused unless private networks are allowed.
	sender := webhook.NewSender(webhook.SenderOptions{AllowPrivateNetworks: true})
	a := sender.Send(context.Background(), d)
	fmt.Println(a.Status, a.OK())
	// Output:
	// Bearer secret-token msg_2f9 application/json
	// {"type":"task.succeeded","timestamp":"2026-01-02T03:04:05Z","data":{"id":"t1","status":"completed"}}
	// 200 true
}

// ExampleSign signs a message the way a receiver verifies it with a
// Standard Webhooks library.
func ExampleSign() {
	sig, err := webhook.Sign("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek", "1614265330",
		[]byte(`{"test": 2432232314}`))
	fmt.Println(sig, err)
	// Output: v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE= <nil>
}

// ExampleNotifier_CanvasEventJob wires publication.created through the
// outbox: each publication commits with a webhook.canvas_event job, which
// the queue worker turns into the deliveries to the subscriptions of the
// canvas' applications.
func ExampleNotifier_CanvasEventJob() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "webhook-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	db, err := sqlite.Open(ctx, filepath.Join(dir, "canvas.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	received := make(chan string, 1)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev webhook.Event
		_ = json.NewDecoder(r.Body).Decode(&ev)
		select {
		case received <- ev.Type:
		default:
		}
	}))
	defer receiver.Close()

	ws := &canvas.Workspace{Name: "acme"}
	if err := db.CreateWorkspace(ctx, ws); err != nil {
		log.Fatal(err)
	}
	ctx = canvas.NewContext(ctx, &canvas.Principal{WorkspaceID: ws.ID, UserID: "ada", Role: canvas.RoleEditor})
	c, err := canvas.NewService(canvas.Options{Store: db}).CreateCanvas(ctx, canvas.CreateCanvasParams{Title: "Greeter"})
	if err != nil {
		log.Fatal(err)
	}
	v, err := canvas.NewService(canvas.Options{Store: db}).CreateVersion(ctx, canvas.CreateVersionParams{PromptID: c.ID,
		Message: &canvas.MessageInput{Content: "Say hi."}})
	if err != nil {
		log.Fatal(err)
	}
	app := &webhook.Application{WorkspaceID: ws.ID, Name: "greeter", PromptID: &c.ID, EnvironmentName: env.Production,
		CreatedBy: "ada", Events: webhook.Subscription{Enabled: true, URL: receiver.URL}}
	if err := db.CreateApplication(ctx, app, webhook.NewSecret()); err != nil {
		log.Fatal(err)
	}

	worker := queue.NewWorker(db, queue.WorkerOptions{})
	notifier := webhook.NewNotifier(webhook.NotifierOptions{Store: db, Notify: worker.Notify})
	// Loopback is refused unless private networks are allowed.
	deliverer := &webhook.Deliverer{Sender: webhook.NewSender(webhook.SenderOptions{AllowPrivateNetworks: true}),
		Log: db, Subscriptions: db}
	worker.Handle(webhook.JobKindCanvasEvent, notifier.HandleCanvasEvent)
	worker.Handle(webhook.JobKind, deliverer.Handle)
	envs := env.NewService(env.Options{Store: db, Canvases: db, Changes: db, Notify: worker.Notify,
		Event: &env.PublicationEvent{Type: webhook.EventPublicationCreated,
			Job: func(workspaceID string, pub *env.Publication) (*queue.Job, error) {
				return notifier.CanvasEventJob(workspaceID, pub.PromptID, pub.PublicationID, webhook.EventPublicationCreated, pub)
			}}})

	if _, _, err := envs.Publish(ctx, env.PublishVersionParams{CanvasID: c.ID, EnvName: env.Production, VersionID: v.ID}); err != nil {
		log.Fatal(err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- worker.Run(runCtx) }()
	fmt.Println(<-received)
	stop()
	if err := <-done; err != nil {
		log.Fatal(err)
	}
	// Output: publication.created
}
