package webhook

import (
	"context"
	"encoding/json"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// reachApplication returns nil when the principal may reach application a:
// an application follows the rule of its canvas (canvas.ReachableResource).
// An application without a canvas (no promptId) is reachable only by
// principals without project restriction: it belongs to no project.
func reachApplication(ctx context.Context, canvases canvas.Store, p *canvas.Principal, a *Application) error {
	if !p.Restricted() {
		return nil
	}
	if canvases == nil {
		return canvas.ErrOutsideProjects()
	}
	return canvas.ReachableResource(ctx, canvases, p, deref(a.PromptID), "")
}

// CanvasID returns the canvas the delivery's event is about: its data's
// canvasId (completions, workflow runs) or promptId (publications,
// generations), or "" when it names none (tasks, Test Requests). The
// delivery log shows a delivery to the principals that reach that canvas.
func (d *LoggedDelivery) CanvasID() string {
	return EventCanvasID(d.Event)
}

// EventCanvasID returns the canvas an encoded Event is about, as
// LoggedDelivery.CanvasID does.
func EventCanvasID(event json.RawMessage) string {
	var ev struct {
		Data struct {
			CanvasID string `json:"canvasId"`
			PromptID string `json:"promptId"`
		} `json:"data"`
	}
	if json.Unmarshal(event, &ev) != nil {
		return ""
	}
	if ev.Data.CanvasID != "" {
		return ev.Data.CanvasID
	}
	return ev.Data.PromptID
}

// reachDelivery returns nil when the principal may reach delivery d: a
// delivery follows the rule of the canvas its event is about
// (canvas.ReachableResource); one whose event names no canvas is reachable
// only by principals without project restriction.
func reachDelivery(ctx context.Context, canvases canvas.Store, p *canvas.Principal, d *LoggedDelivery) error {
	if !p.Restricted() {
		return nil
	}
	if canvases == nil {
		return canvas.ErrOutsideProjects()
	}
	return canvas.ReachableResource(ctx, canvases, p, d.CanvasID(), "")
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
