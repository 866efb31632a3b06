package webhook

import (
	"context"

	"github.com/promptcanvas/promptcanvas/queue"
)

// CanvasEventJobIfTaken is CanvasEventJob when an application of the
// canvas takes events of type typ (Takes), and returns no job otherwise, so
// that an event no one can receive costs no storage. Called inside the
// transaction that records the event (a PublishOutbox), on a store with
// one writer, it sees every subscription committed before the event: a
// subscription created afterwards does not receive it.
func (n *Notifier) CanvasEventJobIfTaken(ctx context.Context, workspaceID, canvasID, refID, typ string, data any) (*queue.Job, error) {
	apps, err := n.store.ListApplications(ctx, workspaceID, canvasID)
	if err != nil {
		return nil, err
	}
	for _, a := range apps {
		if Takes(a, typ) {
			return n.CanvasEventJob(workspaceID, canvasID, refID, typ, data)
		}
	}
	return nil, nil
}
