package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/webhook"
	"github.com/promptcanvas/promptcanvas/workflow"
)

// consoleScreenshot is where the Events tab's screenshot is written when
// CANVAS_UPDATE_SCREENSHOT=1, relative to the server package.
const consoleScreenshot = "../docs/console.png"

// receivedRequest is one request a recordingReceiver got.
type receivedRequest struct {
	Path   string
	Header http.Header
	Body   []byte
}

// recordingReceiver is a real local webhook endpoint that answers 200 and
// keeps every request.
type recordingReceiver struct {
	URL string
	mu  sync.Mutex
	got []receivedRequest
}

func newRecordingReceiver(t *testing.T) *recordingReceiver {
	t.Helper()
	rr := &recordingReceiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rr.mu.Lock()
		rr.got = append(rr.got, receivedRequest{Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
		rr.mu.Unlock()
		_, _ = io.WriteString(w, "thanks")
	}))
	t.Cleanup(srv.Close)
	rr.URL = srv.URL
	return rr
}

// Requests returns a copy of what was received so far.
func (rr *recordingReceiver) Requests() []receivedRequest {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	return append([]receivedRequest(nil), rr.got...)
}

// findChromium returns the browser to drive: /usr/bin/chromium when present,
// else one on PATH. Every browser test starts with it. Without a browser the
// test is skipped, loudly: the skip reason names the missing browser and how
// to install it, and is also written to standard error (which go test shows
// with -v, or when run in the package's directory without arguments).
// Under CI=true a missing browser is a failure.
func findChromium(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	const missing = "no Chromium found (looked for /usr/bin/chromium, /usr/bin/chromium-browser, and chromium, " +
		"chromium-browser or google-chrome on PATH)"
	if os.Getenv("CI") == "true" {
		t.Fatal(missing + "; CI installs it with apt-get (see .ci/run)")
	}
	msg := "SKIPPED BROWSER TEST " + t.Name() + ": " + missing + ". The console is NOT tested. " +
		"Install it (Debian/Ubuntu: apt-get install chromium) and run the tests again; under CI=true this is a failure."
	fmt.Fprintln(os.Stderr, msg)
	t.Skip(msg)
	return ""
}

// newBrowser starts a headless Chromium with a fresh profile and returns
// one tab of it, which records every error the page logs; everything is
// closed by t.Cleanup.
func newBrowser(t *testing.T, execPath string) *browserTab {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(execPath),
		chromedp.NoSandbox,
		chromedp.Headless,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1200, 1000),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancelTab := chromedp.NewContext(allocCtx)
	t.Cleanup(cancelTab)
	// The deadline only stops a stuck browser from hanging the suite.
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(cancel)

	b := &browserTab{ctx: ctx}
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				b.mu.Lock()
				b.errors = append(b.errors, m.String()+" "+m.URL)
				b.mu.Unlock()
			}
		}
	}()
	return b
}

// browserTab is one browser tab of a test.
type browserTab struct {
	ctx context.Context
	mu  sync.Mutex
	// errors are the console errors and uncaught exceptions of the page,
	// Content-Security-Policy violations included.
	errors []string
}

// Errors returns the page's console errors so far.
func (b *browserTab) Errors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.errors...)
}

// Do runs steps in the tab and stops test t when one fails.
func (b *browserTab) Do(t *testing.T, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	require.NoError(t, chromedp.Do(b.ctx, steps...))
}

// browserRun runs one action that reads something, and stops test t when
// it fails.
func browserRun[T any](t *testing.T, b *browserTab, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(b.ctx, a)
	require.NoError(t, err)
	return v
}

// headerInput selects an input of the n-th row (from 1) of the headers table.
func headerInput(n int, class string) string {
	return `#events-headers-body tr:nth-child(` + strconv.Itoa(n) + `) .` + class
}

// TestConsole_EventsTab drives the console in a real browser: sign in,
// open an application's Events tab, enable it with the URL of a real
// receiver and two fixed headers, Test Request, Save, reload.
func TestConsole_EventsTab(t *testing.T) {
	execPath := findChromium(t)
	e := newTestEnv(t, withDeliveries(false))
	receiver := newRecordingReceiver(t)

	created := e.Do(http.MethodPost, "/applications", e.Admin, map[string]any{"name": "Orders"})
	require.Equal(t, http.StatusCreated, created.Status, "%s", created.Body)
	app := created.Map(t)
	appID, _ := app["id"].(string)
	secret, _ := app["secret"].(string)
	require.NotEmpty(t, appID)
	require.True(t, strings.HasPrefix(secret, "whsec_"), "create shows the secret once")
	hookURL := receiver.URL + "/hooks/orders"

	b := newBrowser(t, execPath)
	b.Do(t,
		chromedp.Navigate(e.URL+"/console"),
		chromedp.WaitVisible(chromedp.CSS(`#api-key`)),
		chromedp.SendKeys(chromedp.CSS(`#api-key`), e.Admin),
		chromedp.Click(chromedp.CSS(`#sign-in-button`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="canvases-count"]`)),
		chromedp.Click(chromedp.CSS(`#nav-applications`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="application-link-`+appID+`"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="application-link-`+appID+`"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#tab-events`)),
		chromedp.Click(chromedp.CSS(`#tab-events`)),
		chromedp.WaitVisible(chromedp.CSS(`#events-url`)),
		chromedp.Click(chromedp.CSS(`#events-enabled`)),
		chromedp.SendKeys(chromedp.CSS(`#events-url`), hookURL),
		chromedp.Click(chromedp.CSS(`#add-header`)),
		chromedp.Click(chromedp.CSS(`#add-header`)),
		chromedp.SendKeys(chromedp.CSS(headerInput(1, "header-name")), "Authorization"),
		chromedp.SendKeys(chromedp.CSS(headerInput(1, "header-value")), "Bearer receiver-token"),
		chromedp.SendKeys(chromedp.CSS(headerInput(2, "header-name")), "X-Tenant"),
		chromedp.SendKeys(chromedp.CSS(headerInput(2, "header-value")), "acme"),
		chromedp.Click(chromedp.CSS(`#test-request`)),
		chromedp.WaitVisible(chromedp.CSS(`#test-result[data-status="success"], #test-result[data-status="failure"]`)),
	)
	testResult := browserRun(t, b, chromedp.Text(chromedp.CSS(`#test-result`)))
	status := browserRun(t, b, chromedp.AttributeValue(chromedp.CSS(`#test-result`), "data-status"))
	require.Equal(t, "success", status.Value, "Test Request result: %s", testResult)
	assert.Contains(t, testResult, "status 200")

	if os.Getenv("CANVAS_UPDATE_SCREENSHOT") == "1" {
		png := browserRun(t, b, chromedp.FullScreenshot(100))
		require.NoError(t, os.WriteFile(filepath.Clean(consoleScreenshot), png, 0o644))
	}

	b.Do(t,
		chromedp.Click(chromedp.CSS(`#save-events`)),
		chromedp.WaitVisible(chromedp.CSS(`#save-result[data-state="saved"], #save-result[data-state="error"]`)),
	)
	saveState := browserRun(t, b, chromedp.AttributeValue(chromedp.CSS(`#save-result`), "data-state"))
	require.Equal(t, "saved", saveState.Value, "Save result: %s", browserRun(t, b, chromedp.Text(chromedp.CSS(`#save-result`))))

	t.Run("ReceiverGotSignedTestRequest", func(t *testing.T) {
		got := receiver.Requests()
		require.Len(t, got, 1, "Test Request sends one notification now")
		r := got[0]
		assert.Equal(t, "/hooks/orders", r.Path)
		assert.Equal(t, "Bearer receiver-token", r.Header.Get("Authorization"))
		assert.Equal(t, "acme", r.Header.Get("X-Tenant"))
		assert.Equal(t, "application/json", r.Header.Get("Content-Type"))
		assert.NotEmpty(t, r.Header.Get("webhook-id"))
		wh, err := standardwebhooks.NewWebhook(secret)
		require.NoError(t, err)
		assert.NoError(t, wh.Verify(r.Body, r.Header), "the signature verifies with the application's secret")
		assert.Contains(t, string(r.Body), `"webhook.test"`)
	})

	t.Run("SettingsSurviveReload", func(t *testing.T) {
		b.Do(t,
			chromedp.Reload(),
			chromedp.WaitVisible(chromedp.CSS(`#events-url`)),
		)
		assert.Equal(t, hookURL, browserRun(t, b, chromedp.Value(chromedp.CSS(`#events-url`))))
		assert.True(t, browserRun(t, b, chromedp.Evaluate[bool](`document.getElementById("events-enabled").checked`)))
		headers := browserRun(t, b, chromedp.Evaluate[[][]string](`[...document.querySelectorAll("#events-headers-body tr")]
			.map(tr => [tr.querySelector(".header-name").value, tr.querySelector(".header-value").value])`))
		assert.Equal(t, [][]string{{"Authorization", "Bearer receiver-token"}, {"X-Tenant", "acme"}}, headers)

		stored := e.Do(http.MethodGet, "/applications/"+appID, e.Admin, nil)
		require.Equal(t, http.StatusOK, stored.Status)
		events, _ := stored.Map(t)["events"].(map[string]any)
		assert.Equal(t, true, events["enabled"])
		assert.Equal(t, hookURL, events["url"])
		assert.Equal(t, true, events["hasSecret"])
	})

	t.Run("SignOutForgetsKey", func(t *testing.T) {
		b.Do(t,
			chromedp.Click(chromedp.CSS(`#sign-out`)),
			chromedp.WaitVisible(chromedp.CSS(`#api-key`)),
		)
		stored := browserRun(t, b, chromedp.Evaluate[string](`sessionStorage.getItem("promptcanvas.apiKey") || ""`))
		assert.Empty(t, stored)
	})

	assert.Empty(t, b.Errors(), "the page logs no errors")
}

// TestConsole_Views drives the rest of the console in a real browser: a
// new application created from the form shows its secret once, its
// Deliveries tab renders, and the read-only views lead from the canvases
// list to an environment's publication history.
func TestConsole_Views(t *testing.T) {
	execPath := findChromium(t)
	e := newTestEnv(t, withDeliveries(false))
	ec := mustEnvCanvas(t, e, 2)
	ec.mustPublish(t, "production", 1)
	ec.mustPublish(t, "production", 2)

	b := newBrowser(t, execPath)
	b.Do(t,
		chromedp.Navigate(e.URL+"/console"),
		chromedp.WaitVisible(chromedp.CSS(`#api-key`)),
		chromedp.SendKeys(chromedp.CSS(`#api-key`), e.Admin),
		chromedp.Click(chromedp.CSS(`#sign-in-button`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="canvases-count"]`)),
		chromedp.Click(chromedp.CSS(`#nav-applications`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="applications-table-empty"]`)),
	)

	t.Run("NewApplication", func(t *testing.T) {
		b.Do(t,
			chromedp.Click(chromedp.CSS(`#new-application`)),
			chromedp.WaitVisible(chromedp.CSS(`#new-name`)),
			chromedp.SendKeys(chromedp.CSS(`#new-name`), "Support"),
			chromedp.SetValue(chromedp.CSS(`#new-canvas`), ec.Canvas.ID),
			chromedp.Click(chromedp.CSS(`#create-application`)),
			chromedp.WaitVisible(chromedp.CSS(`#secret-value`)),
		)
		secret := browserRun(t, b, chromedp.Text(chromedp.CSS(`#secret-value`)))
		assert.True(t, strings.HasPrefix(secret, "whsec_"), secret)

		list := e.Do(http.MethodGet, "/applications", e.Admin, nil)
		require.Equal(t, http.StatusOK, list.Status)
		var apps []map[string]any
		list.JSON(t, &apps)
		require.Len(t, apps, 1)
		assert.Equal(t, "Support", apps[0]["name"])
		assert.Equal(t, ec.Canvas.ID, apps[0]["promptId"])

		b.Do(t,
			chromedp.Click(chromedp.CSS(`#tab-deliveries`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="deliveries-empty"], [data-testid="deliveries-table"]`)),
			chromedp.Click(chromedp.CSS(`#nav-applications`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="applications-table"]`)),
		)
		row := browserRun(t, b, chromedp.Text(chromedp.CSS(`[data-testid="applications-table"] tbody tr`)))
		assert.Contains(t, row, "Support bot", "the list names the application's canvas")
		assert.Contains(t, row, "production")
	})

	t.Run("Settings", func(t *testing.T) {
		b.Do(t,
			chromedp.Click(chromedp.CSS(`[data-testid="applications-table"] tbody tr a`)),
			chromedp.WaitVisible(chromedp.CSS(`#settings-name`)),
		)
		browserRun(t, b, chromedp.Evaluate[string](`document.getElementById("settings-name").value = ""`))
		browserRun(t, b, chromedp.Evaluate[string](`document.getElementById("settings-environment").value = ""`))
		b.Do(t,
			chromedp.SendKeys(chromedp.CSS(`#settings-name`), "Support desk"),
			chromedp.SendKeys(chromedp.CSS(`#settings-environment`), "staging"),
			chromedp.Click(chromedp.CSS(`#save-settings`)),
			chromedp.WaitVisible(chromedp.CSS(`#settings-result[data-state]`)),
		)
		state := browserRun(t, b, chromedp.AttributeValue(chromedp.CSS(`#settings-result`), "data-state"))
		require.Equal(t, "saved", state.Value, browserRun(t, b, chromedp.Text(chromedp.CSS(`#settings-result`))))

		list := e.Do(http.MethodGet, "/applications", e.Admin, nil)
		require.Equal(t, http.StatusOK, list.Status)
		var apps []map[string]any
		list.JSON(t, &apps)
		require.Len(t, apps, 1)
		assert.Equal(t, "Support desk", apps[0]["name"])
		assert.Equal(t, "staging", apps[0]["environmentName"])
		assert.Equal(t, ec.Canvas.ID, apps[0]["promptId"])
	})

	t.Run("Deliveries", func(t *testing.T) {
		receiver := newRecordingReceiver(t)
		created := e.Do(http.MethodPost, "/applications", e.Admin, map[string]any{"name": "Billing",
			"events": map[string]any{"enabled": true, "url": receiver.URL, "headers": []any{}}})
		require.Equal(t, http.StatusCreated, created.Status, "%s", created.Body)
		appID, _ := created.Map(t)["id"].(string)
		startDeliveries(t, e.Store)
		o, err := webhook.NewOutgoing(e.Workspace.ID, "ref", webhook.Delivery{URL: receiver.URL, ApplicationID: appID,
			Event: webhook.Event{Type: webhook.EventCompletionSucceeded, Timestamp: time.Now().UTC(), Data: json.RawMessage(`{"id":"r1"}`)}})
		require.NoError(t, err)
		require.NoError(t, e.Store.CreateDeliveries(context.Background(), []webhook.Outgoing{o}))
		require.Eventually(t, func() bool { return len(receiver.Requests()) == 1 }, 10*time.Second, 10*time.Millisecond)
		d := o.Delivery
		require.Eventually(t, func() bool {
			r := e.Do(http.MethodGet, "/webhooks/deliveries/"+d.ID, e.Admin, nil)
			return r.Status == http.StatusOK && r.Map(t)["status"] == webhook.StatusSucceeded
		}, 10*time.Second, 10*time.Millisecond)

		row := `[data-testid="delivery-` + d.ID + `"]`
		b.Do(t,
			chromedp.Navigate(e.URL+"/console#/applications/"+appID+"/deliveries"),
			chromedp.WaitVisible(chromedp.CSS(row)),
			chromedp.Click(chromedp.CSS(`[data-testid="attempts-`+d.ID+`"]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="attempts-table"]`)),
		)
		assert.Contains(t, browserRun(t, b, chromedp.Text(chromedp.CSS(row))), "completion.succeeded")
		assert.Contains(t, browserRun(t, b, chromedp.Text(chromedp.CSS(row))), "succeeded")
		attempt := browserRun(t, b, chromedp.Text(chromedp.CSS(`[data-testid="attempts-table"] tbody tr`)))
		assert.Contains(t, attempt, "200")
		assert.Contains(t, attempt, "thanks", "the start of the response body")

		b.Do(t, chromedp.Click(chromedp.CSS(`[data-testid="redeliver-`+d.ID+`"]`)))
		require.Eventually(t, func() bool { return len(receiver.Requests()) == 2 }, 10*time.Second, 10*time.Millisecond)
		got := receiver.Requests()
		assert.Equal(t, got[0].Header.Get("webhook-id"), got[1].Header.Get("webhook-id"), "a redelivery keeps the webhook-id")
	})

	t.Run("PublicationHistory", func(t *testing.T) {
		b.Do(t,
			chromedp.Click(chromedp.CSS(`#nav-canvases`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="canvas-link-`+ec.Canvas.ID+`"]`)),
			chromedp.Click(chromedp.CSS(`[data-testid="canvas-link-`+ec.Canvas.ID+`"]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="versions-table"]`)),
			chromedp.Click(chromedp.CSS(`[data-testid="environment-link-production"]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="history-table"]`)),
		)
		rows := browserRun(t, b, chromedp.Evaluate[[]string](`[...document.querySelectorAll('[data-testid="history-table"] tbody tr')].map(tr => tr.cells[1].textContent + "|" + tr.cells[5].textContent)`))
		assert.Equal(t, []string{"v2|active", "v1|"}, rows, "newest first, the active one marked")
	})

	// This server runs no completions: the canvas page's question for its
	// versions' run totals is answered 404, which the browser logs, and
	// the page shows the costs as dashes.
	var unexpected []string
	for _, msg := range b.Errors() {
		if !strings.Contains(msg, "status of 404 (Not Found)") || !strings.Contains(msg, "/v2/chat/completions?canvasId="+ec.Canvas.ID+"&totals=true") {
			unexpected = append(unexpected, msg)
		}
	}
	assert.Empty(t, unexpected, "the page logs no other errors")
}

// TestConsole_Serve checks the console's files and their security headers
// without a browser.
func TestConsole_Serve(t *testing.T) {
	e := newTestEnv(t)
	get := func(t *testing.T, path string, header ...string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, e.URL+path, nil)
		require.NoError(t, err)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	assertSecurityHeaders := func(t *testing.T, resp *http.Response) {
		t.Helper()
		csp := resp.Header.Get("Content-Security-Policy")
		assert.Contains(t, csp, "default-src 'self'")
		assert.Contains(t, csp, "frame-ancestors 'none'")
		assert.NotContains(t, csp, "unsafe-inline")
		assert.Equal(t, "DENY", resp.Header.Get("X-Frame-Options"))
		assert.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"))
		assert.Equal(t, "no-referrer", resp.Header.Get("Referrer-Policy"))
	}

	t.Run("OK", func(t *testing.T) {
		resp := get(t, "/console")
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"))
		assertSecurityHeaders(t, resp)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		assert.Contains(t, string(body), `<script type="module" src="/console/app.js"></script>`)
		assert.NotContains(t, string(body), "<script>", "no inline script")
	})
	t.Run("Files", func(t *testing.T) {
		for path, ct := range map[string]string{
			"/console/app.js":      "text/javascript; charset=utf-8",
			"/console/console.css": "text/css; charset=utf-8",
		} {
			resp := get(t, path)
			require.Equal(t, http.StatusOK, resp.StatusCode, path)
			assert.Equal(t, ct, resp.Header.Get("Content-Type"), path)
			assertSecurityHeaders(t, resp)
		}
	})
	t.Run("NotModified", func(t *testing.T) {
		etag := get(t, "/console/app.js").Header.Get("ETag")
		require.NotEmpty(t, etag)
		resp := get(t, "/console/app.js", "If-None-Match", etag)
		assert.Equal(t, http.StatusNotModified, resp.StatusCode)
	})
	t.Run("NotFound", func(t *testing.T) {
		for _, path := range []string{"/console/missing.js", "/console/index.html"} {
			resp := get(t, path)
			assert.Equal(t, http.StatusNotFound, resp.StatusCode, path)
			assertSecurityHeaders(t, resp)
		}
	})
}

// TestConsole_WorkflowRuns drives the runs views in a real browser: a
// canvas lists its runs, a run waiting for review is opened and approved
// with a comment and shows itself completed with its output; a run that
// requires action is resumed with JSON input, and another is cancelled.
func TestConsole_WorkflowRuns(t *testing.T) {
	execPath := findChromium(t)
	e := newWorkflowEnv(t)
	c := mustWorkflowCanvas(t, e)
	review := e.start(t, c.mustVersion(t, e, reviewSpec), map[string]any{"name": "Ada"})["id"].(string)
	e.waitStatus(t, review, workflow.StatusWaitingForReview)

	b := newBrowser(t, execPath)
	link := `[data-testid="run-link-` + review + `"]`
	b.Do(t,
		chromedp.Navigate(e.URL+"/console#/canvases/"+c.ID),
		chromedp.WaitVisible(chromedp.CSS(`#api-key`)),
		chromedp.SendKeys(chromedp.CSS(`#api-key`), e.Editor),
		chromedp.Click(chromedp.CSS(`#sign-in-button`)),
		chromedp.WaitVisible(chromedp.CSS(link)),
	)
	row := browserRun(t, b, chromedp.Evaluate[string](`document.querySelector('[data-testid="run-link-`+review+`"]').closest("tr").textContent`))
	assert.Contains(t, row, workflow.StatusWaitingForReview)
	assert.Contains(t, row, "a preview", "the surface that started it, in words")
	assert.NotContains(t, row, workflow.EnvCraftPreview)

	t.Run("ApproveReview", func(t *testing.T) {
		b.Do(t,
			chromedp.Click(chromedp.CSS(link)),
			chromedp.WaitVisible(chromedp.CSS(`#run-approve`)),
			chromedp.SendKeys(chromedp.CSS(`#run-comment`), "Looks good"),
			chromedp.Click(chromedp.CSS(`#run-approve`)),
			chromedp.WaitVisible(chromedp.CSS(`#run-status[data-status="completed"]`)),
		)
		assert.Equal(t, "Published: Draft for Ada", browserRun(t, b, chromedp.Text(chromedp.CSS(`#run-output`))))
		assert.Equal(t, "a preview", pageText(t, b, `[data-testid="run-surface"]`))
		assert.Equal(t, "Flows", pageText(t, b, `[data-testid="run-canvas"]`), "the canvas by its title")
		assert.Regexp(t, `^#\d+ `, pageText(t, b, `[data-testid="run-version"]`), "the version by its number")
		stepRows := browserRun(t, b, chromedp.Evaluate[[]string](`[...document.querySelectorAll('[data-testid="steps-table"] tbody tr')]
			.map(tr => tr.cells[0].querySelector(".mono").textContent + "|" + tr.cells[2].textContent)`))
		assert.Equal(t, []string{"start|completed", "draft|completed", "check|completed", "published|completed", "revise|skipped"},
			stepRows, "the steps in order with their statuses")
		assert.Zero(t, browserRun(t, b, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="run-actions"]').length`)),
			"an ended run offers no action")
		assert.NotContains(t, browserRun(t, b, chromedp.Evaluate[string](`document.querySelector('[data-testid="run"]').innerText`)), "null",
			"an ended run shows no stray null where its actions were")

		run := e.waitStatus(t, review, workflow.StatusCompleted)
		check := steps(t, run)["check"]["output"].(map[string]any)
		assert.Equal(t, map[string]any{"approved": true, "comment": "Looks good"}, check, "the comment reached the review")
	})

	t.Run("ResumeAction", func(t *testing.T) {
		id := e.start(t, c.mustVersion(t, e, actionSpec), map[string]any{"name": "Ada"})["id"].(string)
		e.waitStatus(t, id, workflow.StatusRequiresAction)
		b.Do(t,
			chromedp.Navigate(e.URL+"/console#/runs/"+id),
			chromedp.WaitVisible(chromedp.CSS(`#run-resume`)),
			chromedp.SetValue(chromedp.CSS(`#run-resume-input`), `{"answer": 42}`),
			chromedp.Click(chromedp.CSS(`#run-resume`)),
			chromedp.WaitVisible(chromedp.CSS(`#run-status[data-status="completed"]`)),
		)
		var out map[string]any
		require.NoError(t, json.Unmarshal([]byte(browserRun(t, b, chromedp.Text(chromedp.CSS(`#run-output`)))), &out))
		assert.Equal(t, map[string]any{"answer": float64(42)}, out)
	})

	t.Run("Cancel", func(t *testing.T) {
		id := e.start(t, c.mustVersion(t, e, actionSpec), map[string]any{"name": "Ada"})["id"].(string)
		e.waitStatus(t, id, workflow.StatusRequiresAction)
		b.Do(t,
			chromedp.Navigate(e.URL+"/console#/runs/"+id),
			chromedp.WaitVisible(chromedp.CSS(`#run-cancel`)),
			chromedp.Click(chromedp.CSS(`#run-cancel`)),
			chromedp.WaitVisible(chromedp.CSS(`#run-status[data-status="cancelled"]`)),
		)
		assert.Contains(t, browserRun(t, b, chromedp.Text(chromedp.CSS(`[data-testid="run-error"]`))), canvas.ECANCELLED)
		assert.Equal(t, workflow.StatusCancelled, e.waitStatus(t, id, workflow.StatusCancelled)["status"])
	})

	t.Run("ListByStatus", func(t *testing.T) {
		b.Do(t,
			chromedp.Click(chromedp.CSS(`[data-testid="run-canvas-link"]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="runs-table"]`)),
			chromedp.SetValue(chromedp.CSS(`#runs-status`), workflow.StatusCancelled),
		)
		browserRun(t, b, chromedp.Evaluate[bool](`document.getElementById("runs-status").dispatchEvent(new Event("change"))`))
		b.Do(t, chromedp.WaitNotPresent(chromedp.CSS(link)))
		statuses := browserRun(t, b, chromedp.Evaluate[[]string](`[...document.querySelectorAll('[data-testid="runs-table"] tbody tr')].map(tr => tr.cells[1].querySelector(".badge").textContent)`))
		assert.Equal(t, []string{workflow.StatusCancelled}, statuses, "only the cancelled run")
	})

	assert.Empty(t, b.Errors(), "the page logs no errors")
}

// TestConsole_ProtectedEnvironment: promoting to a production protected
// after the page was shown is refused with the reason, and the page offers
// a publication request instead; once reloaded, the environment shows its
// protection, takes requests, and lists the pending one.
func TestConsole_ProtectedEnvironment(t *testing.T) {
	execPath := findChromium(t)
	e := newTestEnv(t)
	ec := mustEnvCanvas(t, e, 2)
	ec.mustPublish(t, "production", 1)
	r := e.Do(http.MethodGet, "/environment?resourceType=prompt&resourceId="+ec.Canvas.ID, e.Viewer, nil)
	var envs []map[string]any
	r.JSON(t, &envs)

	b := newBrowser(t, execPath)
	b.Do(t,
		chromedp.Navigate(e.URL+"/console"),
		chromedp.WaitVisible(chromedp.CSS(`#api-key`)),
		chromedp.SendKeys(chromedp.CSS(`#api-key`), e.Editor),
		chromedp.Click(chromedp.CSS(`#sign-in-button`)),
		chromedp.WaitVisible(chromedp.CSS(`#nav-canvases`)),
		chromedp.Navigate(e.URL+"/console#/canvases/"+ec.Canvas.ID+"/environments"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="env-production-publish"]`)),
	)
	protect(t, e, envs[0]["id"].(string), map[string]any{"protected": true, "requiredApprovals": 2})
	b.Do(t,
		chromedp.SetValue(chromedp.CSS(`[data-testid="env-production-version"]`), ec.Versions[1].ID),
		chromedp.Click(chromedp.CSS(`[data-testid="env-production-publish"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="env-production-request"]`)),
	)
	assert.Contains(t, browserRun(t, b, chromedp.Text(chromedp.CSS(`[data-testid="environments-result"] [data-testid="error"]`))),
		"POST /publication-requests")
	b.Do(t,
		chromedp.Click(chromedp.CSS(`[data-testid="env-production-request"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="environments-result"] [data-state="saved"]`)),
	)
	assert.Contains(t, browserRun(t, b, chromedp.Text(chromedp.CSS(`[data-testid="environments-result"]`))),
		"Requested the publication of v2 to production")
	assert.Contains(t, browserRun(t, b, chromedp.Text(chromedp.CSS(`[data-testid="env-production-protected"]`))), "protected: 2 approvals")
	assert.Contains(t, pageText(t, b, `[data-testid="env-production-requests"]`), "v2 requested by")
	assert.Contains(t, pageText(t, b, `[data-testid="env-production-requests"]`), "0 of 2 approvals")
	assert.Equal(t, "Request publication", pageText(t, b, `[data-testid="env-production-request"]`), "a protected environment takes requests")
	list := e.Do(http.MethodGet, "/publication-requests?status=pending", e.Viewer, nil)
	require.Equal(t, http.StatusOK, list.Status)
	var page struct {
		Data []map[string]any `json:"data"`
	}
	list.JSON(t, &page)
	require.Len(t, page.Data, 1)
	assert.Equal(t, ec.Versions[1].ID, page.Data[0]["versionId"])
	served := e.Do(http.MethodGet, "/environment/version?resourceType=prompt&resourceId="+ec.Canvas.ID+"&envName=production", e.Viewer, nil)
	assert.Equal(t, ec.Versions[0].ID, served.Map(t)["id"], "production serves what it did")
	// The browser logs the answers that were not 2xx (the refused publish,
	// and the applications this server has no service for); nothing else.
	for _, msg := range b.Errors() {
		assert.Contains(t, msg, "Failed to load resource", "the page logs no script error")
	}
}
