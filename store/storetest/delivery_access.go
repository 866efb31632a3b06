package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/store"
	"github.com/promptcanvas/promptcanvas/webhook"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// eventDelivery enqueues a delivery of an event whose data is data and
// returns its webhook-id.
func (f *fixture) eventDelivery(eventType string, data any) string {
	f.t.Helper()
	raw, err := json.Marshal(data)
	require.NoError(f.t, err)
	o, err := webhook.NewOutgoing(f.ws.ID, "ref", webhook.Delivery{URL: "https://example.com/hook",
		Event: webhook.Event{Type: eventType, Timestamp: time.Unix(1700000000, 0).UTC(), Data: raw}})
	require.NoError(f.t, err)
	require.NoError(f.t, f.s.CreateDeliveries(f.ctx, []webhook.Outgoing{o}))
	return o.Delivery.ID
}

func testDeliveryAccess(t *testing.T, newStore func(t *testing.T) store.Store) {
	run(t, newStore, "ByProjectAndDraft", func(t *testing.T, f *fixture) {
		p1, p2 := f.Project("p1"), f.Project("p2")
		c1, c2 := f.Canvas("one", p1, "alice"), f.Canvas("two", p2, "alice")
		draft := f.Canvas("draft", nil, "bob")
		gone := f.Canvas("gone", p1, "alice")
		completion := f.eventDelivery(webhook.EventCompletionSucceeded, map[string]any{"id": "r1", "canvasId": c1.ID})
		publication := f.eventDelivery(webhook.EventPublicationCreated, map[string]any{"promptId": c2.ID})
		drafted := f.eventDelivery(webhook.EventCompletionSucceeded, map[string]any{"canvasId": draft.ID})
		f.eventDelivery(webhook.EventCompletionSucceeded, map[string]any{"canvasId": gone.ID})
		f.eventDelivery(webhook.EventTaskSucceeded, map[string]any{"id": "t1"})
		require.NoError(t, f.s.DeleteCanvas(f.ctx, canvas.DeleteCanvasParams{WorkspaceID: f.ws.ID, ID: gone.ID, By: "alice"}))
		other := f.Workspace("other")

		list := func(scope canvas.Scope, filter webhook.DeliveryFilter) ([]string, int) {
			t.Helper()
			filter.WorkspaceID, filter.Limit = scope.WorkspaceID, 100
			page, err := f.s.ListReachableDeliveries(f.ctx, filter, scope)
			require.NoError(t, err)
			var ids []string
			for _, d := range page.Items {
				ids = append(ids, d.ID)
			}
			return ids, page.Total
		}
		ids, total := list(canvas.Scope{WorkspaceID: f.ws.ID, Projects: []string{p1.ID}}, webhook.DeliveryFilter{})
		assert.Equal(t, []string{completion}, ids)
		assert.Equal(t, 1, total)
		ids, _ = list(canvas.Scope{WorkspaceID: f.ws.ID, Projects: []string{p1.ID, p2.ID}, UserID: "bob"}, webhook.DeliveryFilter{})
		assert.Equal(t, []string{drafted, publication, completion}, ids, "newest first, drafts of the user included")
		ids, _ = list(canvas.Scope{WorkspaceID: f.ws.ID, UserID: "bob"}, webhook.DeliveryFilter{})
		assert.Equal(t, []string{drafted, publication, completion}, ids,
			"nil projects reach every project; a deleted canvas and a task reach none")
		ids, total = list(canvas.Scope{WorkspaceID: f.ws.ID, Projects: []string{}}, webhook.DeliveryFilter{})
		assert.Empty(t, ids)
		assert.Zero(t, total)
		ids, _ = list(canvas.Scope{WorkspaceID: f.ws.ID, Projects: []string{p2.ID}},
			webhook.DeliveryFilter{EventType: webhook.EventCompletionSucceeded})
		assert.Empty(t, ids, "filters apply too")
		ids, _ = list(canvas.Scope{WorkspaceID: other.ID}, webhook.DeliveryFilter{})
		assert.Empty(t, ids, "another workspace")
	})
}
