package server

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/client/wire"
	"github.com/promptcanvas/promptcanvas/env"
)

// maxWatchedEnvironments bounds the envName parameters of one watch.
const maxWatchedEnvironments = 20

// handleEnvironmentVersion serves the version an environment publishes, in
// full, with its ETag; If-None-Match naming that ETag is 304. With
// resolve=true the body adds resolvedMessages and includes
// (env.ResolvedVersion); the ETag, the same either way, covers the
// versions included. With wait (a
// duration such as 30s, or seconds; at most MaxLongPoll) and an
// If-None-Match that matches, the request is held until what the
// environment serves changes (then 200 with the new version, or 404 when it
// serves nothing any more) or the wait elapses (then 304).
func (s *Server) handleEnvironmentVersion(w http.ResponseWriter, r *http.Request) error {
	q := newQuery(r)
	canvasID, envName := environmentQuery(q)
	wait := waitParam(q)
	resolve := q.Bool("resolve", false)
	key := assignmentKeyQuery(q)
	if err := q.Err(); err != nil {
		return err
	}
	params := env.ActiveVersionParams{CanvasID: canvasID, EnvName: envName, Resolve: resolve, AssignmentKey: key}
	sv, err := s.environments.ActiveVersionServed(r.Context(), params)
	if err != nil {
		return err
	}
	if wait <= 0 || !ifNoneMatch(r, sv.ETag) {
		writeTagged(w, r, sv.JSON, sv.ETag)
		return nil
	}
	p := canvas.PrincipalFrom(r.Context())
	name, err := env.CheckPublishName(envName)
	if err != nil {
		return err
	}
	signal := make(chan struct{}, 1)
	cancel := s.watch.subscribe(watchKey{workspaceID: p.WorkspaceID, userID: p.UserID, canvasID: canvasID,
		envName: name, assignmentKey: key}, signal)
	defer cancel()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		// Read again after subscribing, so that a change made between the
		// first read and the subscription is not missed.
		sv, err = s.environments.ActiveVersionServed(r.Context(), params)
		if err != nil {
			return err
		}
		if !ifNoneMatch(r, sv.ETag) {
			writeTagged(w, r, sv.JSON, sv.ETag)
			return nil
		}
		select {
		case <-signal:
		case <-timer.C:
			writeTagged(w, r, sv.JSON, sv.ETag)
			return nil
		case <-s.watchStop:
			writeTagged(w, r, sv.JSON, sv.ETag)
			return nil
		case <-r.Context().Done():
			return nil
		}
	}
}

// waitParam reads the long-poll wait: a Go duration ("30s") or a number of
// seconds, clamped to MaxLongPoll; zero when absent.
func waitParam(q *query) time.Duration {
	raw := q.values.Get("wait")
	if raw == "" {
		return 0
	}
	d, err := time.ParseDuration(raw)
	if err != nil {
		n, nerr := strconv.ParseFloat(raw, 64)
		if nerr != nil {
			q.fail("wait", "must be a duration such as 30s, or a number of seconds")
			return 0
		}
		d = time.Duration(n * float64(time.Second))
	}
	if d < 0 {
		q.fail("wait", "must not be negative")
		return 0
	}
	return min(d, MaxLongPoll)
}

// handleEnvironmentWatch streams server-sent events about what the named
// environments of one canvas serve:
//
//	GET /environment/watch?resourceType=prompt&resourceId=ID&envName=production&envName=staging
//
// Each change is an event "version" (data: envName, etag, publicationId,
// versionId) or "gone" (data: envName, code, message: the environment or
// the canvas was deleted, or nothing is published). Every event's id is the
// state of the whole stream, "name=tag;name=tag" in the order asked ("-"
// for gone), so a client that reconnects with Last-Event-ID is sent only
// the environments whose state differs from it; without it, the current
// state of every environment is sent first. A comment line is sent every
// heartbeat. The caller needs the viewer role and access to the canvas,
// checked when the stream opens and again, at most every
// WatchOptions.Recheck, before a change or a heartbeat is sent.
func (s *Server) handleEnvironmentWatch(w http.ResponseWriter, r *http.Request) error {
	q := newQuery(r)
	q.Enum("resourceType", true, env.ResourcePrompt)
	canvasID := q.UUID("resourceId", true)
	key := assignmentKeyQuery(q)
	rawNames := q.values["envName"]
	if len(rawNames) == 0 {
		q.fail("envName", "is required")
	} else if len(rawNames) > maxWatchedEnvironments {
		q.fail("envName", "may be given at most "+strconv.Itoa(maxWatchedEnvironments)+" times")
	}
	if err := q.Err(); err != nil {
		return err
	}
	p, err := canvas.Authorize(r.Context(), canvas.RoleViewer)
	if err != nil {
		return err
	}
	var names []string
	for _, raw := range rawNames {
		name, err := env.CheckPublishName(raw)
		if err != nil {
			return err
		}
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	if _, err := s.canvases.GetCanvas(r.Context(), canvasID); err != nil {
		return err
	}

	signal := make(chan struct{}, 1)
	keys := make([]watchKey, len(names))
	for i, name := range names {
		keys[i] = watchKey{workspaceID: p.WorkspaceID, userID: p.UserID, canvasID: canvasID, envName: name,
			assignmentKey: key}
		defer s.watch.subscribe(keys[i], signal)()
	}
	// The first states are read after subscribing, as the caller, so that
	// nothing between the read and the subscription is missed.
	sent := parseWatchID(r.Header.Get("Last-Event-ID"))
	current := make(map[string]string, len(names))
	states := make([]watchState, len(names))
	for i, name := range names {
		st, err := readWatchState(r.Context(), s.environments, keys[i])
		if err != nil {
			return err
		}
		states[i] = st
		current[name] = sent[name]
	}

	sw := &eventWriter{w: w, rc: http.NewResponseController(w)}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if err := sw.write("retry: 1000\n\n"); err != nil {
		return nil
	}
	send := func(name string, st watchState) error {
		current[name] = stateTag(st)
		id := watchID(names, current)
		if st.Gone {
			data, _ := json.Marshal(wire.WatchGoneEvent{EnvName: name, Code: st.Code, Message: st.Message})
			return sw.event(id, "gone", data)
		}
		data, _ := json.Marshal(wire.WatchVersionEvent{EnvName: name, ETag: st.ETag, PublicationID: st.PublicationID,
			VersionID: st.VersionID})
		return sw.event(id, "version", data)
	}
	for i, name := range names {
		if tag, ok := sent[name]; ok && tag == stateTag(states[i]) {
			continue
		}
		if err := send(name, states[i]); err != nil {
			return nil
		}
	}

	heartbeat := time.NewTicker(s.heartbeat)
	defer heartbeat.Stop()
	checked := time.Now()
	allowed := func() bool {
		if time.Since(checked) < s.watchRecheck {
			return true
		}
		checked = time.Now()
		return s.stillAllowed(r, canvasID, names[0])
	}
	for {
		select {
		case <-r.Context().Done():
			return nil
		case <-s.watchStop:
			return nil
		case <-heartbeat.C:
			if !allowed() {
				return nil
			}
			if err := sw.write(": heartbeat\n\n"); err != nil {
				return nil
			}
		case <-signal:
			if !allowed() {
				return nil
			}
			for i, name := range names {
				st, known := s.watch.state(keys[i])
				if !known || stateTag(st) == current[name] {
					continue
				}
				if err := send(name, st); err != nil {
					return nil
				}
			}
		}
	}
}

// stillAllowed authenticates the stream's request again and checks that
// its principal may still read the canvas, before a change is sent: a
// revoked key or a lost project access ends the stream. Both reads are
// served by the freshness-checked caches while nothing changed.
func (s *Server) stillAllowed(r *http.Request, canvasID, envName string) bool {
	p, err := s.auth.Authenticate(r)
	if err != nil {
		return false
	}
	ctx := canvas.NewContext(r.Context(), p)
	_, err = s.environments.ActiveVersionServed(ctx, env.ActiveVersionParams{CanvasID: canvasID, EnvName: envName})
	switch canvas.ErrorCode(err) {
	case canvas.EUNAUTHORIZED, canvas.EFORBIDDEN:
		return false
	}
	return true
}

// stateTag is a state's part of an event id: the ETag without its quotes,
// or "-" when the environment serves nothing.
func stateTag(st watchState) string {
	if st.Gone {
		return "-"
	}
	return strings.Trim(st.ETag, `"`)
}

// watchID is the event id of a stream's state: name=tag pairs joined by
// ";", in the order the names were asked, skipping names not sent yet.
func watchID(names []string, tags map[string]string) string {
	var b strings.Builder
	for _, name := range names {
		tag := tags[name]
		if tag == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(';')
		}
		b.WriteString(name)
		b.WriteByte('=')
		b.WriteString(tag)
	}
	return b.String()
}

// parseWatchID reads a Last-Event-ID written by watchID; anything it cannot
// read is ignored, which only means that state is sent again.
func parseWatchID(id string) map[string]string {
	tags := make(map[string]string)
	for _, part := range strings.Split(id, ";") {
		name, tag, ok := strings.Cut(part, "=")
		if ok && name != "" && tag != "" {
			tags[name] = tag
		}
	}
	return tags
}

// eventWriter writes server-sent events and flushes each one.
type eventWriter struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

func (sw *eventWriter) write(s string) error {
	if _, err := sw.w.Write([]byte(s)); err != nil {
		return err
	}
	return sw.rc.Flush()
}

func (sw *eventWriter) event(id, name string, data []byte) error {
	return sw.write("id: " + id + "\nevent: " + name + "\ndata: " + string(data) + "\n\n")
}
