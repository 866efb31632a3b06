package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/client"
	"github.com/promptcanvas/promptcanvas/client/wire"
)

// The tests here need no Prompt Canvas server: they check what the client
// sends and how it reads answers over real HTTP. The tests against a real
// server live in the main module (tests/client).

// fastRetries are Options that retry without waiting long.
func fastRetries(opts client.Options) client.Options {
	opts.MinBackoff, opts.MaxBackoff = time.Millisecond, 5*time.Millisecond
	return opts
}

// mustClient returns a client of h served over loopback.
func mustClient(t *testing.T, h http.Handler, opts client.Options) *client.Client {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// closedURL returns the URL of a loopback port nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close()
	return url
}

func TestNew(t *testing.T) {
	for _, bad := range []string{"", "localhost:8080", "ftp://x", "http://"} {
		if _, err := client.New(bad, client.Options{}); err == nil {
			t.Errorf("New(%q) accepted a base URL that is not absolute http(s)", bad)
		}
	}
	if _, err := client.New("http://127.0.0.1:8080/", client.Options{}); err != nil {
		t.Errorf("New with a trailing slash: %v", err)
	}
}

func TestClient_Error(t *testing.T) {
	t.Run("ErrorBody", func(t *testing.T) {
		c := mustClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnprocessableEntity)
			_ = json.NewEncoder(w).Encode(wire.ErrorBody{Code: wire.CodeInvalid, Message: "Request body failed validation.",
				Details: []wire.Detail{{Path: "/json/title", Message: "is too long"}}, RequestID: "req-1"})
		}), client.Options{})
		_, err := c.CreateCanvas(context.Background(), wire.CreateCanvasParams{Title: "x"})
		var e *client.Error
		if !errors.As(err, &e) {
			t.Fatalf("err = %v, want an *Error", err)
		}
		want := client.Error{StatusCode: http.StatusUnprocessableEntity, Code: wire.CodeInvalid,
			Message: "Request body failed validation.", RequestID: "req-1"}
		if e.StatusCode != want.StatusCode || e.Code != want.Code || e.Message != want.Message || e.RequestID != want.RequestID {
			t.Errorf("Error = %+v, want %+v", *e, want)
		}
		if len(e.Details) != 1 || e.Details[0].Path != "/json/title" {
			t.Errorf("Details = %+v", e.Details)
		}
		if client.StatusCode(err) != http.StatusUnprocessableEntity || client.ErrorCode(err) != wire.CodeInvalid {
			t.Errorf("StatusCode, ErrorCode = %d, %q", client.StatusCode(err), client.ErrorCode(err))
		}
	})

	t.Run("NoErrorBody", func(t *testing.T) {
		c := mustClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Request-Id", "from-header")
			http.Error(w, "not json", http.StatusNotFound)
		}), client.Options{})
		_, err := c.GetCanvas(context.Background(), "c1")
		var e *client.Error
		if !errors.As(err, &e) {
			t.Fatalf("err = %v, want an *Error", err)
		}
		if e.Code != wire.CodeNotFound || e.Message != "Not Found" || e.RequestID != "from-header" {
			t.Errorf("Error = %+v, want the code of a 404 and the header's request id", *e)
		}
	})

	t.Run("ConnectionRefused", func(t *testing.T) {
		c, err := client.New(closedURL(t), client.Options{MaxRetries: -1})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.ListProjects(context.Background())
		if err == nil {
			t.Fatal("a request to a closed port succeeded")
		}
		var e *client.Error
		if errors.As(err, &e) || client.StatusCode(err) != 0 || client.ErrorCode(err) != "" {
			t.Errorf("a connection error is reported as a server answer: %v", err)
		}
	})
}

// failing answers the first failures requests with status and
// Retry-After: 0, then 200 with an empty JSON object; it counts requests.
type failing struct {
	status   int
	failures int32
	seen     atomic.Int32
}

func (f *failing) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if f.seen.Add(1) <= f.failures {
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(f.status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{}`)
}

func TestClient_Retry(t *testing.T) {
	ctx := context.Background()
	for _, status := range []int{http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout} {
		t.Run("GetRetried"+http.StatusText(status), func(t *testing.T) {
			f := &failing{status: status, failures: 2}
			c := mustClient(t, f, fastRetries(client.Options{}))
			if _, err := c.GetCanvas(ctx, "c1"); err != nil {
				t.Fatal(err)
			}
			if got := f.seen.Load(); got != 3 {
				t.Errorf("requests = %d, want 3", got)
			}
		})
	}

	for _, tc := range []struct {
		name string
		opts []client.CallOption
		want int32
	}{
		{"WriteNotRetried", nil, 1},
		{"WriteWithKeyRetried", []client.CallOption{client.WithIdempotencyKey("k1")}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &failing{status: http.StatusServiceUnavailable, failures: 1}
			c := mustClient(t, f, fastRetries(client.Options{}))
			_, _ = c.CreateProject(ctx, "p", tc.opts...)
			if got := f.seen.Load(); got != tc.want {
				t.Errorf("requests = %d, want %d", got, tc.want)
			}
		})
	}

	t.Run("GivesUp", func(t *testing.T) {
		f := &failing{status: http.StatusServiceUnavailable, failures: 100}
		c := mustClient(t, f, fastRetries(client.Options{}))
		_, err := c.ListProjects(ctx)
		if client.StatusCode(err) != http.StatusServiceUnavailable {
			t.Errorf("err = %v, want the last 503", err)
		}
		if got := f.seen.Load(); got != 1+client.DefaultMaxRetries {
			t.Errorf("requests = %d, want %d", got, 1+client.DefaultMaxRetries)
		}
	})

	t.Run("Disabled", func(t *testing.T) {
		f := &failing{status: http.StatusServiceUnavailable, failures: 100}
		c := mustClient(t, f, fastRetries(client.Options{MaxRetries: -1}))
		_, _ = c.ListProjects(ctx)
		if got := f.seen.Load(); got != 1 {
			t.Errorf("requests = %d, want 1", got)
		}
	})

	t.Run("ContextEndsRetryAfter", func(t *testing.T) {
		var seen atomic.Int32
		c := mustClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			seen.Add(1)
			w.Header().Set("Retry-After", "30")
			w.WriteHeader(http.StatusServiceUnavailable)
		}), client.Options{})
		cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		_, err := c.ListProjects(cctx)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want the context's deadline: Retry-After is honoured within the context", err)
		}
		if got := seen.Load(); got != 1 {
			t.Errorf("requests = %d, want 1", got)
		}
	})
}

// recorder answers 200 with answer and keeps the last request's method,
// path, headers and body.
type recorder struct {
	answer string
	method string
	path   string
	header http.Header
	body   []byte
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec.method, rec.path, rec.header = r.Method, r.URL.RequestURI(), r.Header
	rec.body, _ = io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, rec.answer)
}

func TestClient_Requests(t *testing.T) {
	ctx := context.Background()
	project := "p1"
	for _, tc := range []struct {
		name   string
		call   func(c *client.Client) error
		method string
		path   string
		body   string
	}{
		{"CreateCanvasOmitsDefaults", func(c *client.Client) error {
			_, err := c.CreateCanvas(ctx, wire.CreateCanvasParams{Title: "Greeter", ProjectID: &project})
			return err
		}, "POST", "/prompt", `{"projectId":"p1","title":"Greeter"}`},
		{"CompleteAsyncSetsAsync", func(c *client.Client) error {
			_, err := c.CompleteAsync(ctx, wire.CompletionRequest{CanvasID: "c1", Stream: true})
			return err
		}, "POST", "/v2/chat/completions", `{"async":true,"canvas_id":"c1"}`},
		{"PublishNamesThePrompt", func(c *client.Client) error {
			_, err := c.Publish(ctx, client.PublishParams{CanvasID: "c1", EnvName: "production", VersionID: "v1"})
			return err
		}, "POST", "/environment/publish", `{"envName":"production","resourceId":"c1","resourceType":"prompt","versionId":"v1"}`},
		{"HistoryQuery", func(c *client.Client) error {
			_, err := c.History(ctx, client.HistoryParams{CanvasID: "c/1", EnvName: "production", Limit: 5})
			return err
		}, "GET", "/environment/versions?envName=production&limit=5&resourceId=c%2F1&resourceType=prompt", ""},
		{"GetCanvasEscapesTheID", func(c *client.Client) error {
			_, err := c.GetCanvas(ctx, "a/b")
			return err
		}, "GET", "/prompt/a%2Fb", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{answer: `{}`}
			c := mustClient(t, rec, client.Options{Token: "t0k", UserAgent: "tests/1"})
			if err := tc.call(c); err != nil {
				t.Fatal(err)
			}
			if rec.method != tc.method || rec.path != tc.path {
				t.Errorf("sent %s %s, want %s %s", rec.method, rec.path, tc.method, tc.path)
			}
			if tc.body != "" && !sameJSON(t, rec.body, []byte(tc.body)) {
				t.Errorf("body = %s, want %s", rec.body, tc.body)
			}
			if got := rec.header.Get("Authorization"); got != "Bearer t0k" {
				t.Errorf("Authorization = %q", got)
			}
			if got := rec.header.Get("User-Agent"); got != "tests/1" {
				t.Errorf("User-Agent = %q", got)
			}
		})
	}
}

// sameJSON reports whether a and b are the same JSON value.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	xs, _ := json.Marshal(x)
	ys, _ := json.Marshal(y)
	return string(xs) == string(ys)
}
