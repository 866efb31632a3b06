package webhook

import (
	"context"

	"github.com/promptcanvas/promptcanvas/queue"
)

// Target is who hears of a run (a completion, a task, a workflow run): the
// webhook URL given with it, sent the headers forwarded from its request,
// and the subscription of its application.
type Target struct {
	// URL is the run's webhook URL; empty sends nothing there.
	URL string
	// Headers go with the delivery to URL.
	Headers []Header
	// ApplicationID names the application whose subscription is told too,
	// when it takes the event; empty tells none.
	ApplicationID string
	// DeliveryID is the webhook-id of the delivery to URL; empty gets a
	// new one.
	DeliveryID string
}

// Reaches reports whether RunJob may return a job for to: to has a URL,
// or an application and n is not nil. Callers ask it before building an
// event that no one would receive.
func (n *Notifier) Reaches(to Target) bool {
	return to.URL != "" || (to.ApplicationID != "" && n != nil)
}

// RunJob returns the one job that tells to of ev on behalf of the run
// refID: the delivery to to.URL and those to the application's
// subscription, bundled when there are several (Bundle); nil when there
// is none. A nil Notifier delivers to the URL only. The caller writes the
// job in the transaction that records the change ev reports.
func (n *Notifier) RunJob(ctx context.Context, workspaceID, refID string, to Target, ev Event) (*queue.Job, error) {
	var jobs []*queue.Job
	if to.URL != "" {
		j, err := NewJob(workspaceID, refID, Delivery{ID: to.DeliveryID, URL: to.URL, Headers: to.Headers, Event: ev})
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, j)
	}
	if to.ApplicationID != "" && n != nil {
		appJobs, err := n.ApplicationJobs(ctx, workspaceID, to.ApplicationID, refID, ev)
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, appJobs...)
	}
	return Bundle(workspaceID, refID, jobs)
}
