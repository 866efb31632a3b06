package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/audit"
	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/store"
)

// events returns every event of the workspace, in the order of the chain.
func (f *fixture) events(workspaceID string) []*audit.Event {
	f.t.Helper()
	var out []*audit.Event
	require.NoError(f.t, audit.Walk(f.ctx, f.s, workspaceID, 7, func(e *audit.Event) error {
		out = append(out, e)
		return nil
	}))
	return out
}

// verify checks every chain of the store and returns the verifier.
func (f *fixture) verify() *audit.Verifier {
	f.t.Helper()
	var v audit.Verifier
	require.NoError(f.t, audit.Walk(f.ctx, f.s, "", 100, func(e *audit.Event) error { v.Add(e); return nil }))
	return &v
}

// as returns the fixture's context with a principal and a request's
// origin, as the server gives the store.
func (f *fixture) as(keyID, requestID string) context.Context {
	ctx := canvas.NewContext(f.ctx, &canvas.Principal{WorkspaceID: f.ws.ID, KeyID: keyID, Role: canvas.RoleAdmin})
	return audit.WithOrigin(ctx, audit.Origin{RequestID: requestID, RemoteAddr: "192.0.2.7"})
}

func testAudit(t *testing.T, newStore func(t *testing.T) store.Store) {
	run(t, newStore, "ChangesAreChained", func(t *testing.T, f *fixture) {
		p := f.Project("p")
		ctx := f.as("key-1", "req-1")
		c := &canvas.Canvas{Title: "Support", WorkspaceID: f.ws.ID, ProjectID: &p.ID, InferencesPercentage: "0",
			LayoutVersion: canvas.LayoutV2, CreatedBy: "key:key-1"}
		require.NoError(t, f.s.CreateCanvas(ctx, c))
		title := "Helpdesk"
		_, err := f.s.UpdateCanvas(f.as("key-2", "req-2"), canvas.UpdateCanvasParams{WorkspaceID: f.ws.ID, ID: c.ID,
			Update: canvas.CanvasUpdate{Title: &title}, By: "key:key-2"})
		require.NoError(t, err)
		v := f.Version(c, "Hello")
		f.Publish(v, "production")
		require.NoError(t, f.s.DeleteCanvas(ctx, canvas.DeleteCanvasParams{WorkspaceID: f.ws.ID, ID: c.ID, By: "key:key-1"}))

		events := f.events(f.ws.ID)
		var actions []string
		for i, e := range events {
			actions = append(actions, e.Action)
			assert.Equal(t, int64(i+1), e.Seq)
			assert.Equal(t, e.ComputeHash(), e.Hash)
			if i > 0 {
				assert.Equal(t, events[i-1].Hash, e.PrevHash)
			}
		}
		assert.Equal(t, []string{"project.create", "prompt.create", "prompt.update", "prompt-version.create",
			"environment.publish", "prompt.delete"}, actions)
		create, update, publish, del := events[1], events[2], events[4], events[5]
		assert.Equal(t, audit.Actor{Type: audit.ActorAPIKey, ID: "key-1"}, create.Actor)
		assert.Equal(t, "req-1", create.RequestID)
		assert.Equal(t, "192.0.2.7", create.RemoteAddr)
		assert.Equal(t, &p.ID, create.ProjectID, "a canvas's event belongs to its project")
		assert.Nil(t, create.Before)
		assert.Equal(t, "prompt", create.ResourceType)
		assert.Equal(t, c.ID, create.ResourceID)
		assert.Equal(t, audit.Actor{Type: audit.ActorAPIKey, ID: "key-2"}, update.Actor)
		assert.Equal(t, "Support", member(t, update.Before, "title"))
		assert.Equal(t, "Helpdesk", member(t, update.After, "title"))
		assert.Equal(t, audit.Actor{Type: audit.ActorSystem, ID: audit.ActorSystem}, publish.Actor,
			"a change without a principal is the system's")
		assert.Equal(t, "environment", publish.ResourceType)
		assert.Nil(t, publish.Before, "production is made by its first publish")
		assert.Equal(t, v.ID, member(t, publish.After, "activeVersionId"))
		assert.Equal(t, "Helpdesk", member(t, del.Before, "title"))
		assert.Nil(t, del.After, "a deleted canvas is gone")
		assert.True(t, time.Since(del.Time) < time.Hour)

		vf := f.verify()
		assert.Empty(t, vf.Breaks)
		assert.Equal(t, len(events), vf.Events)
		assert.Equal(t, del.Hash, vf.Heads[f.ws.ID])
	})

	run(t, newStore, "FailedChangeLeavesNoEvent", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		f.Env(c, "staging")
		n := len(f.events(f.ws.ID))
		title := "x"
		_, err := f.s.UpdateCanvas(f.ctx, canvas.UpdateCanvasParams{WorkspaceID: f.ws.ID, ID: "00000000-0000-0000-0000-000000000000",
			Update: canvas.CanvasUpdate{Title: &title}, By: "alice"})
		requireCode(t, canvas.ENOTFOUND, err)
		requireCode(t, canvas.ECONFLICT, f.s.CreateEnvironment(f.ctx, &env.Environment{Name: "staging",
			ResourceType: env.ResourcePrompt, ResourceID: c.ID, WorkspaceID: f.ws.ID, CreatedBy: "alice"}))
		assert.Len(t, f.events(f.ws.ID), n, "a change that failed left no event")
	})

	run(t, newStore, "SecretsAreRedacted", func(t *testing.T, f *fixture) {
		c := f.Canvas("c", nil, "alice")
		f.Application(c, "https://example.com/hook", "whsec_c2VjcmV0LXRoYXQtbXVzdC1ub3QtbGVhaw")
		f.Credential("claude", "anthropic", nil, "kek-1")
		var all strings.Builder
		for _, e := range f.events(f.ws.ID) {
			fmt.Fprintf(&all, "%s %s\n", e.Before, e.After)
		}
		text := all.String()
		assert.NotContains(t, text, "whsec_c2VjcmV0LXRoYXQtbXVzdC1ub3QtbGVhaw")
		assert.NotContains(t, text, "nonce-12byte", "no sealed material")
		assert.Contains(t, text, "claude", "what is not secret is kept")
		assert.Contains(t, text, `"x-team":"[redacted]"`, "header values are redacted, their names kept")
	})

	run(t, newStore, "DisabledSubscriptionIsTheSystems", func(t *testing.T, f *fixture) {
		a := f.Application(nil, "https://example.com/hook", "whsec_c2VjcmV0")
		require.NoError(t, f.s.RecordSubscriptionOutcome(f.ctx, a.ID, false, false, ""))
		require.NoError(t, f.s.RecordSubscriptionOutcome(f.ctx, a.ID, true, false, ""))
		n := len(f.events(f.ws.ID))
		require.NoError(t, f.s.RecordSubscriptionOutcome(f.ctx, a.ID, false, true, "receiver answered 410 Gone"))
		events := f.events(f.ws.ID)
		require.Len(t, events, n+1, "counting failures changes no configuration; disabling does")
		e := events[n]
		assert.Equal(t, "application.disable-subscription", e.Action)
		assert.Equal(t, audit.ActorSystem, e.Actor.Type)
		assert.Equal(t, a.ID, e.ResourceID)
		assert.Contains(t, string(e.After), "410 Gone")
		assert.Empty(t, f.verify().Breaks)
	})

	run(t, newStore, "ConcurrentChangesKeepOneChain", func(t *testing.T, f *fixture) {
		other := f.Workspace("other")
		var wg sync.WaitGroup
		const writers, each = 8, 5
		errs := make(chan error, writers*each)
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ws := f.ws.ID
				if w%2 == 1 {
					ws = other.ID
				}
				for i := range each {
					c := &canvas.Canvas{Title: fmt.Sprintf("c%d-%d", w, i), WorkspaceID: ws, InferencesPercentage: "0",
						LayoutVersion: canvas.LayoutV2, CreatedBy: "alice"}
					errs <- f.s.CreateCanvas(f.ctx, c)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		v := f.verify()
		assert.Empty(t, v.Breaks, "every chain is whole")
		assert.Equal(t, writers*each, v.Events)
		assert.Equal(t, 2, v.Workspaces, "one chain per workspace")
		assert.Len(t, f.events(other.ID), writers*each/2)
	})

	run(t, newStore, "Filters", func(t *testing.T, f *fixture) {
		a := f.Canvas("a", nil, "alice")
		cut := f.Cutoff()
		title := "b"
		_, err := f.s.UpdateCanvas(f.as("key-9", "r"), canvas.UpdateCanvasParams{WorkspaceID: f.ws.ID, ID: a.ID,
			Update: canvas.CanvasUpdate{Title: &title}, By: "key:key-9"})
		require.NoError(t, err)
		f.Canvas("c", nil, "alice")
		list := func(flt audit.Filter) ([]string, int) {
			flt.WorkspaceID = f.ws.ID
			if flt.Limit == 0 {
				flt.Limit = 10
			}
			items, total, err := f.s.ListAuditEvents(f.ctx, flt)
			require.NoError(t, err)
			var got []string
			for _, e := range items {
				got = append(got, e.Action+" "+e.ResourceID)
			}
			return got, total
		}
		got, total := list(audit.Filter{ResourceID: a.ID})
		assert.Equal(t, []string{"prompt.update " + a.ID, "prompt.create " + a.ID}, got, "newest first")
		assert.Equal(t, 2, total)
		got, _ = list(audit.Filter{Actor: "key-9"})
		assert.Equal(t, []string{"prompt.update " + a.ID}, got)
		_, total = list(audit.Filter{Action: "prompt.create", ResourceType: "prompt"})
		assert.Equal(t, 2, total)
		_, total = list(audit.Filter{Since: &cut})
		assert.Equal(t, 2, total)
		_, total = list(audit.Filter{Until: &cut})
		assert.Equal(t, 1, total)
		got, total = list(audit.Filter{Limit: 1, Offset: 1})
		assert.Len(t, got, 1)
		assert.Equal(t, 3, total)
		_, total = list(audit.Filter{ResourceType: "credential"})
		assert.Zero(t, total)
	})

	run(t, newStore, "PurgeKeepsAnUnbrokenTail", func(t *testing.T, f *fixture) {
		for i := range 5 {
			f.Canvas(fmt.Sprintf("old%d", i), nil, "alice")
		}
		cut := f.Cutoff()
		f.Canvas("new", nil, "alice")
		batches := purgeAll(t, 2, func(limit int) (int, error) { return f.s.PurgeAuditEvents(f.ctx, cut, limit) })
		assert.Equal(t, 5, sum(batches))
		events := f.events(f.ws.ID)
		require.Len(t, events, 1)
		assert.Equal(t, int64(6), events[0].Seq)
		f.Canvas("newer", nil, "alice")
		v := f.verify()
		assert.Empty(t, v.Breaks, "verifying starts from the first event kept")
		assert.Equal(t, 2, v.Events)

		// A chain's last event is never purged, so that the next one
		// follows it.
		later := f.Cutoff()
		purgeAll(t, 10, func(limit int) (int, error) { return f.s.PurgeAuditEvents(f.ctx, later, limit) })
		events = f.events(f.ws.ID)
		require.Len(t, events, 1)
		assert.Equal(t, int64(7), events[0].Seq)
	})
}

// member returns a member of a JSON object.
func member(t *testing.T, raw json.RawMessage, name string) any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(raw, &m), "%s", raw)
	return m[name]
}

// sum adds ns.
func sum(ns []int) int {
	total := 0
	for _, n := range ns {
		total += n
	}
	return total
}
