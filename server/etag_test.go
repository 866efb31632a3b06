package server_test

import (
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mustTagged reads path as the viewer, requires a 200 with an ETag, and
// returns the ETag.
func mustTagged(t *testing.T, e *testEnv, path string) string {
	t.Helper()
	res := e.Do("GET", path, e.Viewer, nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	etag := res.Header.Get("ETag")
	require.NotEmpty(t, etag)
	return etag
}

func TestConditionalRead_EnvironmentVersion(t *testing.T) {
	e := newTestEnv(t)
	ec := mustEnvCanvas(t, e, 2)
	ec.mustPublish(t, "production", 1)
	path := "/environment/version?" + ec.target("production")
	first := mustTagged(t, e, path)

	t.Run("NotModified", func(t *testing.T) {
		for _, inm := range []string{first, `"nope", ` + first, "W/" + first, "*"} {
			res := e.Do("GET", path, e.Viewer, nil, "If-None-Match", inm)
			assert.Equal(t, http.StatusNotModified, res.Status, "If-None-Match: %s", inm)
			assert.Equal(t, first, res.Header.Get("ETag"))
			assert.Empty(t, res.Body)
		}
	})

	t.Run("OtherTagIsOK", func(t *testing.T) {
		res := e.Do("GET", path, e.Viewer, nil, "If-None-Match", `"0123456789abcdef0123456789abcdef"`)
		require.Equal(t, http.StatusOK, res.Status)
		assert.Equal(t, ec.Versions[0].ID, res.Map(t)["id"])
	})

	t.Run("StableWhenNothingServedChanges", func(t *testing.T) {
		ec.mustCreateEnv(t, "staging")
		ec.mustPublish(t, "staging", 2)
		mustEnvCanvas(t, e, 1)
		assert.Equal(t, first, mustTagged(t, e, path))
	})

	t.Run("ChangesOnPublishEditAndRollback", func(t *testing.T) {
		ec.mustPublish(t, "production", 2)
		published := mustTagged(t, e, path)
		assert.NotEqual(t, first, published)

		res := e.Do("PATCH", "/prompt-version/"+ec.Versions[1].ID, e.Editor, map[string]any{"content": "Edited {{name}}"})
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
		edited := mustTagged(t, e, path)
		assert.NotEqual(t, published, edited)

		ec.mustPublish(t, "production", 1)
		rolledBack := mustTagged(t, e, path)
		assert.NotEqual(t, edited, rolledBack)
		res = e.Do("GET", path, e.Viewer, nil, "If-None-Match", edited)
		require.Equal(t, http.StatusOK, res.Status)
		assert.Equal(t, ec.Versions[0].ID, res.Map(t)["id"])
	})

	t.Run("ErrorsBeforeConditions", func(t *testing.T) {
		res := e.Do("GET", "/environment/version?"+ec.target("nowhere"), e.Viewer, nil, "If-None-Match", "*")
		assert.Equal(t, http.StatusNotFound, res.Status)
	})
}

func TestConditionalRead_CanvasAndVersion(t *testing.T) {
	e := newTestEnv(t)
	ec := mustEnvCanvas(t, e, 1)
	for _, path := range []string{"/prompt/" + ec.Canvas.ID, "/prompt-version/" + ec.Versions[0].ID} {
		t.Run(path, func(t *testing.T) {
			etag := mustTagged(t, e, path)
			res := e.Do("GET", path, e.Viewer, nil, "If-None-Match", etag)
			assert.Equal(t, http.StatusNotModified, res.Status)
			assert.Equal(t, etag, res.Header.Get("ETag"))
			assert.Empty(t, res.Body)
		})
	}
	t.Run("ChangesOnEdit", func(t *testing.T) {
		path := "/prompt/" + ec.Canvas.ID
		before := mustTagged(t, e, path)
		res := e.Do("PATCH", path, e.Editor, map[string]any{"title": "Renamed"})
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
		assert.NotEqual(t, before, mustTagged(t, e, path))
	})
}

func TestLongPoll_EnvironmentVersion(t *testing.T) {
	e := newTestEnv(t, fastWatch)
	ec := mustEnvCanvas(t, e, 2)
	ec.mustCreateEnv(t, "staging")
	ec.mustPublish(t, "staging", 1)
	path := "/environment/version?" + ec.target("staging")
	etag := mustTagged(t, e, path)

	t.Run("TimesOutNotModified", func(t *testing.T) {
		res := e.Do("GET", path+"&wait=200ms", e.Viewer, nil, "If-None-Match", etag)
		assert.Equal(t, http.StatusNotModified, res.Status)
		assert.Equal(t, etag, res.Header.Get("ETag"))
	})

	t.Run("WithoutMatchAnswersAtOnce", func(t *testing.T) {
		res := e.Do("GET", path+"&wait=30", e.Viewer, nil)
		assert.Equal(t, http.StatusOK, res.Status)
	})

	t.Run("PublishWakes", func(t *testing.T) {
		var wg sync.WaitGroup
		var res *testResponse
		wg.Go(func() { res = e.Do("GET", path+"&wait=30s", e.Viewer, nil, "If-None-Match", etag) })
		ec.mustPublish(t, "staging", 2)
		wg.Wait()
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
		assert.Equal(t, ec.Versions[1].ID, res.Map(t)["id"])
		assert.NotEqual(t, etag, res.Header.Get("ETag"))
	})

	t.Run("DeleteIsNotFound", func(t *testing.T) {
		current := mustTagged(t, e, path)
		envID := e.mustEnvID(t, ec, "staging")
		var wg sync.WaitGroup
		var res *testResponse
		wg.Go(func() { res = e.Do("GET", path+"&wait=30s", e.Viewer, nil, "If-None-Match", current) })
		require.Equal(t, http.StatusNoContent, e.Do("DELETE", "/environment/"+envID, e.Editor, nil).Status)
		wg.Wait()
		assert.Equal(t, http.StatusNotFound, res.Status)
	})

	t.Run("BadWait", func(t *testing.T) {
		res := e.Do("GET", "/environment/version?"+ec.target("production")+"&wait=soon", e.Viewer, nil)
		assert.Equal(t, http.StatusUnprocessableEntity, res.Status)
	})
}

// mustEnvID returns the id of ec's environment name.
func (e *testEnv) mustEnvID(t *testing.T, ec *envCanvas, name string) string {
	t.Helper()
	res := e.Do("GET", "/environment?resourceType=prompt&resourceId="+ec.Canvas.ID, e.Viewer, nil)
	require.Equal(t, http.StatusOK, res.Status)
	var envs []struct{ ID, Name string }
	res.JSON(t, &envs)
	for _, x := range envs {
		if x.Name == name {
			return x.ID
		}
	}
	require.FailNow(t, "no environment "+name)
	return ""
}
