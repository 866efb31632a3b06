package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/server"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sse "github.com/tmaxmax/go-sse"
)

// fastWatch makes the watch poll and beat often, so tests do not wait.
func fastWatch(_ testing.TB, _ *sqlite.DB, o *server.Options) {
	o.Watch = server.WatchOptions{PollInterval: 20 * time.Millisecond, Heartbeat: 50 * time.Millisecond,
		Recheck: time.Nanosecond}
}

// watchEvent is one event of a watch stream.
type watchEvent struct {
	ID, Type      string
	EnvName       string `json:"envName"`
	ETag          string `json:"etag"`
	PublicationID string `json:"publicationId"`
	VersionID     string `json:"versionId"`
	Code          string `json:"code"`
}

// watchStream is an open GET /environment/watch.
type watchStream struct {
	events chan watchEvent
	cancel context.CancelFunc
}

// openWatch opens a watch of ec's environments as token, resuming after
// lastID when it is not empty, and requires a 200 event stream.
func openWatch(t *testing.T, ec *envCanvas, token, lastID string, envNames ...string) *watchStream {
	t.Helper()
	q := "resourceType=prompt&resourceId=" + ec.Canvas.ID
	for _, n := range envNames {
		q += "&envName=" + n
	}
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", ec.e.URL+"/environment/watch?"+q, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	validateExchange(t, req, nil, &testResponse{Status: resp.StatusCode, Header: resp.Header})
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	ws := &watchStream{events: make(chan watchEvent, 64), cancel: cancel}
	go func() {
		defer resp.Body.Close()
		defer close(ws.events)
		for ev, err := range sse.Read(resp.Body, nil) {
			if err != nil {
				return
			}
			we := watchEvent{ID: ev.LastEventID, Type: ev.Type}
			if json.Unmarshal([]byte(ev.Data), &we) != nil {
				return
			}
			ws.events <- we
		}
	}()
	t.Cleanup(cancel)
	return ws
}

// next returns the stream's next event.
func (ws *watchStream) next(t *testing.T) watchEvent {
	t.Helper()
	select {
	case ev, ok := <-ws.events:
		require.True(t, ok, "the stream ended")
		return ev
	case <-time.After(10 * time.Second):
		require.FailNow(t, "no event")
	}
	return watchEvent{}
}

func TestEnvironment_Watch(t *testing.T) {
	e := newTestEnv(t, fastWatch)
	ec := mustEnvCanvas(t, e, 3)
	ec.mustPublish(t, "production", 1)
	prodPath := "/environment/version?" + ec.target("production")

	ws := openWatch(t, ec, e.Viewer, "", "production", "staging")
	ev := ws.next(t)
	assert.Equal(t, "version", ev.Type)
	assert.Equal(t, "production", ev.EnvName)
	assert.Equal(t, ec.Versions[0].ID, ev.VersionID)
	assert.NotEmpty(t, ev.PublicationID)
	assert.Equal(t, mustTagged(t, e, prodPath), ev.ETag)
	ev = ws.next(t)
	assert.Equal(t, "gone", ev.Type)
	assert.Equal(t, "staging", ev.EnvName)
	assert.Equal(t, canvas.ENOTFOUND, ev.Code)

	var last watchEvent
	t.Run("Publish", func(t *testing.T) {
		pub := ec.mustPublish(t, "production", 2)
		ev := ws.next(t)
		assert.Equal(t, "version", ev.Type)
		assert.Equal(t, ec.Versions[1].ID, ev.VersionID)
		assert.Equal(t, pub["publicationId"], ev.PublicationID)
		assert.Equal(t, mustTagged(t, e, prodPath), ev.ETag)
	})

	t.Run("CreateAndPublishCustom", func(t *testing.T) {
		ec.mustCreateEnv(t, "staging")
		ec.mustPublish(t, "staging", 3)
		ev := ws.next(t)
		assert.Equal(t, "staging", ev.EnvName)
		assert.Equal(t, ec.Versions[2].ID, ev.VersionID)
	})

	t.Run("PromoteThroughVersionUpdate", func(t *testing.T) {
		res := e.Do("PATCH", "/prompt-version/"+ec.Versions[2].ID, e.Editor, map[string]any{"promoted": true})
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
		// Promoting changes production and also the served staging version's
		// promoted flag: both are reported, in any order.
		got := map[string]watchEvent{}
		for len(got) < 2 {
			ev := ws.next(t)
			got[ev.EnvName] = ev
		}
		assert.Equal(t, ec.Versions[2].ID, got["production"].VersionID)
		last = got["staging"]
		if got["production"].ID > last.ID {
			last = got["production"]
		}
	})

	t.Run("EditOfServedVersion", func(t *testing.T) {
		res := e.Do("PATCH", "/prompt-version/"+ec.Versions[2].ID, e.Editor, map[string]any{"content": "New {{name}}"})
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
		// Both environments serve the edited version: events come until
		// each carries the tag a read answers now (a promotion just before
		// committed twice, its publication and then the version's update).
		want := map[string]string{"production": mustTagged(t, e, prodPath),
			"staging": mustTagged(t, e, "/environment/version?"+ec.target("staging"))}
		got := map[string]watchEvent{}
		for got["production"].ETag != want["production"] || got["staging"].ETag != want["staging"] {
			ev := ws.next(t)
			got[ev.EnvName] = ev
			last = ev
		}
		assert.Equal(t, want["production"], got["production"].ETag)
	})

	t.Run("ResumeSendsOnlyWhatChanged", func(t *testing.T) {
		ws.cancel()
		ec.mustPublish(t, "staging", 1) // missed while disconnected
		resumed := openWatch(t, ec, e.Viewer, last.ID, "production", "staging")
		ev := resumed.next(t)
		assert.Equal(t, "staging", ev.EnvName, "production did not change and is not sent again")
		assert.Equal(t, ec.Versions[0].ID, ev.VersionID)
		ec.mustPublish(t, "production", 2)
		ev = resumed.next(t)
		assert.Equal(t, "production", ev.EnvName)
		assert.Equal(t, ec.Versions[1].ID, ev.VersionID)
		assert.Contains(t, ev.ID, "production=")
		assert.Contains(t, ev.ID, "staging=")

		t.Run("EnvironmentDeleted", func(t *testing.T) {
			envID := e.mustEnvID(t, ec, "staging")
			require.Equal(t, http.StatusNoContent, e.Do("DELETE", "/environment/"+envID, e.Editor, nil).Status)
			ev := resumed.next(t)
			assert.Equal(t, "gone", ev.Type)
			assert.Equal(t, "staging", ev.EnvName)
		})

		t.Run("CanvasDeleted", func(t *testing.T) {
			require.Equal(t, http.StatusNoContent, e.Do("DELETE", "/prompt/"+ec.Canvas.ID, e.Editor, nil).Status)
			ev := resumed.next(t)
			assert.Equal(t, "gone", ev.Type)
			assert.Equal(t, "production", ev.EnvName)
		})
	})
}

func TestEnvironment_WatchHeartbeat(t *testing.T) {
	e := newTestEnv(t, fastWatch)
	ec := mustEnvCanvas(t, e, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET",
		e.URL+"/environment/watch?resourceType=prompt&resourceId="+ec.Canvas.ID+"&envName=production", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+e.Viewer)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	sc := bufio.NewScanner(resp.Body)
	beats := 0
	for beats < 2 && sc.Scan() {
		if strings.HasPrefix(sc.Text(), ":") {
			beats++
		}
	}
	assert.Equal(t, 2, beats)
}

func TestEnvironment_WatchErrors(t *testing.T) {
	e := newTestEnv(t, fastWatch)
	ec := mustEnvCanvas(t, e, 1)
	other := &canvas.Workspace{Name: "other"}
	require.NoError(t, e.Store.CreateWorkspace(context.Background(), other))
	base := "/environment/watch?resourceType=prompt&resourceId=" + ec.Canvas.ID
	tests := []struct {
		name, path, token string
		status            int
	}{
		{"Unauthorized", base + "&envName=production", "", http.StatusUnauthorized},
		{"OtherWorkspace", base + "&envName=production", e.KeyIn(other.ID, canvas.RoleAdmin), http.StatusNotFound},
		{"OtherProject", base + "&envName=production", e.Key(canvas.RoleViewer, "6f1c2a3e-7d5b-4c8a-9e0f-1a2b3c4d5e6f"), http.StatusForbidden},
		{"BadName", base + "&envName=Not_Valid", e.Viewer, http.StatusBadRequest},
		{"NoName", base, e.Viewer, http.StatusUnprocessableEntity},
		{"BadCanvasID", "/environment/watch?resourceType=prompt&resourceId=x&envName=production", e.Viewer, http.StatusUnprocessableEntity},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := e.Do("GET", tt.path, tt.token, nil)
			assert.Equal(t, tt.status, res.Status, "%s", res.Body)
		})
	}
}

// TestEnvironment_WatchRevoked ends a stream whose key lost its access: the
// next change is not sent.
func TestEnvironment_WatchRevoked(t *testing.T) {
	e := newTestEnv(t, fastWatch)
	ec := mustEnvCanvas(t, e, 2)
	ec.mustPublish(t, "production", 1)
	token, key := canvas.NewAPIKey(e.Workspace.ID, canvas.RoleViewer, nil)
	require.NoError(t, e.Store.CreateAPIKey(context.Background(), key))
	ws := openWatch(t, ec, token, "", "production")
	assert.Equal(t, ec.Versions[0].ID, ws.next(t).VersionID)

	require.NoError(t, e.Store.RevokeAPIKey(context.Background(), key.ID))
	ec.mustPublish(t, "production", 2)
	select {
	case ev, ok := <-ws.events:
		assert.False(t, ok, "the stream ends instead of sending %+v", ev)
	case <-time.After(10 * time.Second):
		require.FailNow(t, "the stream did not end")
	}
}
