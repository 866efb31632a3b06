package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/idempotency"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// idemEnv is a server with one idempotent test route, POST /test/run,
// whose handler counts its runs and answers as the request body asks:
// {"status": 500} fails, {"invalid": true} is 422, {"stream": true}
// streams, {"panic": true} panics, {"wait": true} blocks until release is
// closed; anything else is 202 {"id": "run-N"}.
type idemEnv struct {
	t       *testing.T
	url     string
	db      *sqlite.DB
	now     atomic.Pointer[time.Time]
	runs    atomic.Int64
	started chan struct{}
	release chan struct{}
	keys    map[string]string // workspace name -> editor token
}

func newIdemEnv(t *testing.T) *idemEnv {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "canvas.db"))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	e := &idemEnv{t: t, db: db, started: make(chan struct{}, 1), release: make(chan struct{}), keys: map[string]string{}}
	start := time.Now().UTC()
	e.now.Store(&start)
	db.Now = func() time.Time { return *e.now.Load() }
	s, err := newServer(Options{Store: db, Canvases: canvas.NewService(canvas.Options{Store: db}), Environments: env.NewService(env.Options{Store: db, Canvases: db, Changes: db}),
		Auth:        NewAuthenticator(AuthOptions{Store: db, Changes: db}),
		Idempotency: idempotency.NewService(idempotency.Options{Store: db, Now: db.Now})})
	require.NoError(t, err)
	s.route("POST /test/run", s.idempotent(e.handle))
	srv := httptest.NewServer(s.middleware(s.mux))
	t.Cleanup(srv.Close)
	e.url = srv.URL
	for _, name := range []string{"acme", "other"} {
		ws := &canvas.Workspace{Name: name}
		require.NoError(t, db.CreateWorkspace(ctx, ws))
		token, key := canvas.NewAPIKey(ws.ID, canvas.RoleEditor, nil)
		require.NoError(t, db.CreateAPIKey(ctx, key))
		e.keys[name] = token
	}
	return e
}

func (e *idemEnv) handle(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Status  int  `json:"status"`
		Invalid bool `json:"invalid"`
		Stream  bool `json:"stream"`
		Panic   bool `json:"panic"`
		Wait    bool `json:"wait"`
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	_ = json.Unmarshal(body, &in)
	n := e.runs.Add(1)
	switch {
	case in.Status >= 500:
		return fmt.Errorf("run %d failed", n)
	case in.Invalid:
		return canvas.Invalid("Bad input.", canvas.Detail{Path: "/json/invalid", Message: "run " + fmt.Sprint(n)})
	case in.Panic:
		panic("handler panicked")
	case in.Stream:
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fmt.Fprintf(w, "data: run-%d\n\n", n)
		return nil
	case in.Wait:
		e.started <- struct{}{}
		<-e.release
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"id": fmt.Sprintf("run-%d", n)})
	return nil
}

type idemResponse struct {
	status int
	header http.Header
	body   string
}

// post sends body to /test/run as workspace ws with the key (none when
// empty).
func (e *idemEnv) post(ws, key, body string) idemResponse {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.url+"/test/run", strings.NewReader(body))
	require.NoError(e.t, err)
	req.Header.Set("Authorization", "Bearer "+e.keys[ws])
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set(idempotency.Header, key)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(e.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(e.t, err)
	return idemResponse{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

func errorCode(t *testing.T, r idemResponse) string {
	t.Helper()
	var body struct{ Code string }
	require.NoError(t, json.Unmarshal([]byte(r.body), &body), r.body)
	return body.Code
}

func TestServer_Idempotent(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		e := newIdemEnv(t)
		first := e.post("acme", "k1", `{"prompt":"hi","n":1}`)
		require.Equal(t, http.StatusAccepted, first.status, first.body)
		assert.Empty(t, first.header.Get("Idempotent-Replayed"))
		again := e.post("acme", "k1", "{\n  \"n\": 1, \"prompt\": \"hi\"\n}")
		assert.Equal(t, http.StatusAccepted, again.status)
		assert.Equal(t, first.body, again.body, "the first answer, byte for byte")
		assert.Equal(t, "application/json", again.header.Get("Content-Type"))
		assert.Equal(t, "true", again.header.Get("Idempotent-Replayed"))
		assert.Equal(t, int64(1), e.runs.Load(), "the retry did not run")
	})
	t.Run("NoKeyRunsEveryTime", func(t *testing.T) {
		t.Parallel()
		e := newIdemEnv(t)
		a, b := e.post("acme", "", `{}`), e.post("acme", "", `{}`)
		assert.NotEqual(t, a.body, b.body)
		assert.Equal(t, int64(2), e.runs.Load())
	})
	t.Run("DifferentBodyConflict", func(t *testing.T) {
		t.Parallel()
		e := newIdemEnv(t)
		require.Equal(t, http.StatusAccepted, e.post("acme", "k1", `{"n":1}`).status)
		r := e.post("acme", "k1", `{"n":2}`)
		assert.Equal(t, http.StatusConflict, r.status)
		assert.Equal(t, canvas.ECONFLICT, errorCode(t, r))
		assert.Contains(t, r.body, "different request")
		assert.Empty(t, r.header.Get("Retry-After"), "waiting does not help")
		assert.Equal(t, int64(1), e.runs.Load())
	})
	t.Run("WorkspacesIndependent", func(t *testing.T) {
		t.Parallel()
		e := newIdemEnv(t)
		a, b := e.post("acme", "k1", `{}`), e.post("other", "k1", `{}`)
		assert.Equal(t, http.StatusAccepted, b.status)
		assert.NotEqual(t, a.body, b.body)
		assert.Equal(t, int64(2), e.runs.Load())
	})
	t.Run("InProgressConflict", func(t *testing.T) {
		t.Parallel()
		e := newIdemEnv(t)
		var wg sync.WaitGroup
		var first idemResponse
		wg.Go(func() { first = e.post("acme", "k1", `{"wait":true}`) })
		<-e.started
		r := e.post("acme", "k1", `{"wait":true}`)
		assert.Equal(t, http.StatusConflict, r.status)
		assert.Contains(t, r.body, "in progress")
		assert.Equal(t, strconv.Itoa(int(idempotency.DefaultOwnerLease/time.Second)), r.header.Get("Retry-After"),
			"the holder's lease, renewed at the store's still clock, has all of it left")
		close(e.release)
		wg.Wait()
		assert.Equal(t, http.StatusAccepted, first.status)
		assert.Equal(t, first.body, e.post("acme", "k1", `{"wait":true}`).body)
		assert.Equal(t, int64(1), e.runs.Load())
	})
	t.Run("ServerErrorReleases", func(t *testing.T) {
		t.Parallel()
		e := newIdemEnv(t)
		r := e.post("acme", "k1", `{"status":500}`)
		assert.Equal(t, http.StatusInternalServerError, r.status)
		r = e.post("acme", "k1", `{"status":500}`)
		assert.Equal(t, http.StatusInternalServerError, r.status)
		assert.Empty(t, r.header.Get("Idempotent-Replayed"))
		assert.Equal(t, int64(2), e.runs.Load(), "a 5xx is not kept: the retry ran")
	})
	t.Run("ClientErrorKept", func(t *testing.T) {
		t.Parallel()
		e := newIdemEnv(t)
		first := e.post("acme", "k1", `{"invalid":true}`)
		require.Equal(t, http.StatusUnprocessableEntity, first.status)
		again := e.post("acme", "k1", `{"invalid":true}`)
		assert.Equal(t, http.StatusUnprocessableEntity, again.status)
		assert.Equal(t, first.body, again.body)
		assert.Equal(t, int64(1), e.runs.Load())
	})
	t.Run("StreamNotKept", func(t *testing.T) {
		t.Parallel()
		e := newIdemEnv(t)
		a := e.post("acme", "k1", `{"stream":true}`)
		b := e.post("acme", "k1", `{"stream":true}`)
		assert.Equal(t, "data: run-1\n\n", a.body)
		assert.Equal(t, "data: run-2\n\n", b.body, "a stream runs again")
	})
	t.Run("PanicReleases", func(t *testing.T) {
		t.Parallel()
		e := newIdemEnv(t)
		assert.Equal(t, http.StatusInternalServerError, e.post("acme", "k1", `{"panic":true}`).status)
		assert.Equal(t, http.StatusInternalServerError, e.post("acme", "k1", `{"panic":true}`).status)
		assert.Equal(t, int64(2), e.runs.Load())
	})
	t.Run("ExpiredKeyRunsAgain", func(t *testing.T) {
		t.Parallel()
		e := newIdemEnv(t)
		first := e.post("acme", "k1", `{}`)
		later := e.now.Load().Add(idempotency.TTL - time.Minute)
		e.now.Store(&later)
		assert.Equal(t, first.body, e.post("acme", "k1", `{}`).body)
		later = later.Add(time.Minute)
		e.now.Store(&later)
		r := e.post("acme", "k1", `{}`)
		assert.Equal(t, http.StatusAccepted, r.status)
		assert.NotEqual(t, first.body, r.body, "after 24 hours the key is new")
		assert.Equal(t, int64(2), e.runs.Load())
	})
	t.Run("InvalidKey", func(t *testing.T) {
		t.Parallel()
		e := newIdemEnv(t)
		r := e.post("acme", strings.Repeat("k", idempotency.MaxKeyLength+1), `{}`)
		assert.Equal(t, http.StatusUnprocessableEntity, r.status)
		assert.Equal(t, canvas.EINVALID, errorCode(t, r))
		assert.Zero(t, e.runs.Load())
	})
}

func TestCaptureWriter_Overflow(t *testing.T) {
	rec := httptest.NewRecorder()
	cw := &captureWriter{ResponseWriter: rec}
	cw.Header().Set("Content-Type", "application/json")
	big := bytes.Repeat([]byte("x"), maxReplayBody)
	_, err := cw.Write(big)
	require.NoError(t, err)
	assert.True(t, cw.keepable())
	_, err = cw.Write([]byte("y"))
	require.NoError(t, err)
	assert.False(t, cw.keepable(), "an answer past the limit is not kept")
	assert.Equal(t, maxReplayBody+1, rec.Body.Len(), "but it is sent whole")
}
