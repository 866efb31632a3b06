package webhook_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/promptcanvas/promptcanvas/webhook"
)

func TestEventCanvasID(t *testing.T) {
	for _, tt := range []struct {
		name, event, want string
	}{
		{"Completion", `{"type":"completion.succeeded","data":{"id":"r1","canvasId":"c1"}}`, "c1"},
		{"Publication", `{"type":"publication.created","data":{"promptId":"c2"}}`, "c2"},
		{"CanvasWins", `{"data":{"canvasId":"c1","promptId":"c2"}}`, "c1"},
		{"EmptyCanvasFallsBack", `{"data":{"canvasId":"","promptId":"c2"}}`, "c2"},
		{"Task", `{"type":"task.succeeded","data":{"id":"t1"}}`, ""},
		{"NotAString", `{"data":{"canvasId":5}}`, ""},
		{"NotJSON", `not json`, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, webhook.EventCanvasID(json.RawMessage(tt.event)))
		})
	}
}
