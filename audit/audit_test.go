package audit_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/audit"
	"github.com/promptcanvas/promptcanvas/canvas"
)

// chain returns n chained events of a workspace.
func chain(ws string, n int) []*audit.Event {
	var out []*audit.Event
	prev := ""
	for i := range n {
		e := &audit.Event{ID: "e" + string(rune('a'+i)), Seq: int64(i + 1), WorkspaceID: ws,
			Time:  time.Date(2026, 11, 28, 4, 0, i, 123456000, time.UTC),
			Actor: audit.Actor{Type: audit.ActorAPIKey, ID: "k"}, Action: "prompt.update", ResourceType: "prompt",
			ResourceID: "c", After: json.RawMessage(`{"title":"t"}`), PrevHash: prev}
		e.Hash = e.ComputeHash()
		prev = e.Hash
		out = append(out, e)
	}
	return out
}

func TestComputeHash_CoversEveryField(t *testing.T) {
	base := chain("w", 1)[0]
	h := base.ComputeHash()
	project := "p"
	for name, edit := range map[string]func(e *audit.Event){
		"seq":      func(e *audit.Event) { e.Seq++ },
		"id":       func(e *audit.Event) { e.ID = "x" },
		"time":     func(e *audit.Event) { e.Time = e.Time.Add(time.Microsecond) },
		"project":  func(e *audit.Event) { e.ProjectID = &project },
		"actor":    func(e *audit.Event) { e.Actor.ID = "other" },
		"action":   func(e *audit.Event) { e.Action = "prompt.delete" },
		"resource": func(e *audit.Event) { e.ResourceID = "d" },
		"before":   func(e *audit.Event) { e.Before = json.RawMessage(`{}`) },
		"after":    func(e *audit.Event) { e.After = json.RawMessage(`{"title":"u"}`) },
		"request":  func(e *audit.Event) { e.RequestID = "r" },
		"address":  func(e *audit.Event) { e.RemoteAddr = "192.0.2.1" },
		"prevHash": func(e *audit.Event) { e.PrevHash = "00" },
	} {
		e := *base
		edit(&e)
		assert.NotEqual(t, h, e.ComputeHash(), name)
	}
	e := *base
	e.Time = e.Time.In(time.FixedZone("x", 3600))
	assert.Equal(t, h, e.ComputeHash(), "the same instant in another zone")
	e.Hash = "anything"
	assert.Equal(t, h, e.ComputeHash(), "the hash does not cover itself")
}

func TestVerifier(t *testing.T) {
	check := func(events ...*audit.Event) *audit.Verifier {
		var v audit.Verifier
		for _, e := range events {
			v.Add(e)
		}
		return &v
	}
	a, b := chain("a", 4), chain("b", 2)
	v := check(append(a, b...)...)
	assert.Empty(t, v.Breaks)
	assert.Equal(t, 6, v.Events)
	assert.Equal(t, 2, v.Workspaces)
	assert.Equal(t, a[3].Hash, v.Heads["a"])

	assert.Empty(t, check(a[2:]...).Breaks, "a purged head: verifying starts from the first kept")

	edited := chain("a", 4)
	edited[1].After = json.RawMessage(`{"title":"forged"}`)
	v = check(edited...)
	require.Len(t, v.Breaks, 1, "one break per chain")
	assert.Equal(t, int64(2), v.Breaks[0].Seq)
	assert.Contains(t, v.Breaks[0].Reason, "edited")

	rehashed := chain("a", 4)
	rehashed[1].After = json.RawMessage(`{"title":"forged"}`)
	rehashed[1].Hash = rehashed[1].ComputeHash()
	v = check(rehashed...)
	require.Len(t, v.Breaks, 1)
	assert.Equal(t, int64(3), v.Breaks[0].Seq, "a rehashed edit breaks the next link")

	v = check(a[0], a[1], a[3])
	require.Len(t, v.Breaks, 1)
	assert.Equal(t, int64(4), v.Breaks[0].Seq)
	assert.Contains(t, v.Breaks[0].Reason, "events 3 to 3 are missing")
}

func TestSnapshot_RedactsSecrets(t *testing.T) {
	raw, err := audit.Snapshot(map[string]any{
		"name":     "claude",
		"apiKey":   "sk-ant-123",
		"settings": map[string]any{"headers": map[string]any{"Authorization": "Bearer t"}, "region": "eu"},
		"events":   map[string]any{"headers": []any{map[string]any{"name": "x-token", "value": "v"}}, "secret": "whsec"},
		"empty":    map[string]any{"secret": ""},
	})
	require.NoError(t, err)
	assert.JSONEq(t, `{"name":"claude","apiKey":"[redacted]",
		"settings":{"headers":{"Authorization":"[redacted]"},"region":"eu"},
		"events":{"headers":[{"name":"x-token","value":"[redacted]"}],"secret":"[redacted]"},
		"empty":{"secret":""}}`, string(raw))

	raw, err = audit.Snapshot(nil)
	require.NoError(t, err)
	assert.Nil(t, raw)
	var none *canvas.Canvas
	raw, err = audit.Snapshot(none)
	require.NoError(t, err)
	assert.Nil(t, raw, "a nil pointer is no resource")
}

func TestActorOf(t *testing.T) {
	assert.Equal(t, audit.Actor{Type: "user", ID: "u"}, audit.ActorOf(&canvas.Principal{UserID: "u", KeyID: "k"}))
	assert.Equal(t, audit.Actor{Type: "apiKey", ID: "k"}, audit.ActorOf(&canvas.Principal{KeyID: "k"}))
	assert.Equal(t, audit.Actor{Type: "system", ID: "system"}, audit.ActorOf(nil))
}
