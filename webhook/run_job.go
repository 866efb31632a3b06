package webhook

import "context"

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

// Reaches reports whether RunDeliveries may return a delivery for to: to has a URL,
// or an application and n is not nil. Callers ask it before building an
// event that no one would receive.
func (n *Notifier) Reaches(to Target) bool {
	return to.URL != "" || (to.ApplicationID != "" && n != nil)
}

// RunDeliveries returns the deliveries that tell to of ev on behalf of the
// run refID: the one to to.URL, then those to the application's
// subscription; none when no one is told. A nil Notifier delivers to the
// URL only. The caller writes them in the transaction that records the
// change ev reports.
func (n *Notifier) RunDeliveries(ctx context.Context, workspaceID, refID string, to Target, ev Event) ([]Outgoing, error) {
	var ds []Outgoing
	if to.URL != "" {
		o, err := NewOutgoing(workspaceID, refID, Delivery{ID: to.DeliveryID, URL: to.URL, Headers: to.Headers, Event: ev})
		if err != nil {
			return nil, err
		}
		ds = append(ds, o)
	}
	if to.ApplicationID != "" && n != nil {
		app, err := n.ApplicationDeliveries(ctx, workspaceID, to.ApplicationID, refID, ev)
		if err != nil {
			return nil, err
		}
		ds = append(ds, app...)
	}
	return ds, nil
}
