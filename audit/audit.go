// Package audit is the workspace's audit log: an append-only record of
// every change to its configuration (canvases, versions, messages,
// environments and their policies, publications and their requests,
// credentials, API keys, applications, test cases, experiments and the
// rest), who made it, from where, and what the resource was before and
// after.
//
// The store appends each event in the same transaction as the change it
// records, so that a crash never keeps one without the other, and chains
// the events of a workspace: each event's Hash is SHA-256 over the
// previous event's hash and the event itself (Event.ComputeHash). Editing
// or deleting an event breaks the chain at that point, which Verifier
// finds. Retention may purge the oldest events; verifying then starts from
// the first event kept, whose PrevHash is taken on trust.
//
// What a change is to be recorded with (the request id and the client's
// address) travels in the context (WithOrigin); the actor is the
// principal of the context (canvas.PrincipalFrom).
package audit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// Actor types.
const (
	ActorAPIKey = "apiKey"
	ActorUser   = "user"
	// ActorSystem is a change no principal asked for: the server's own
	// (its first API key at start-up, a command run on the database).
	ActorSystem = "system"
)

// Actor is who made a change: an API key by its id, a JWT user by its
// sub, or the system.
type Actor struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

// ActorOf returns the actor of a principal (ActorSystem for nil).
func ActorOf(p *canvas.Principal) Actor {
	switch {
	case p == nil:
		return Actor{Type: ActorSystem, ID: ActorSystem}
	case p.UserID != "":
		return Actor{Type: ActorUser, ID: p.UserID}
	case p.KeyID != "":
		return Actor{Type: ActorAPIKey, ID: p.KeyID}
	}
	return Actor{Type: ActorSystem, ID: ActorSystem}
}

// Event is one recorded change. Before and After are the resource's JSON
// (secrets redacted) before and after the change: Before is null for a
// creation, After for a deletion.
type Event struct {
	ID           string          `json:"id"`
	Seq          int64           `json:"seq"`
	Time         time.Time       `json:"time"`
	WorkspaceID  string          `json:"workspaceId"`
	ProjectID    *string         `json:"projectId"`
	Actor        Actor           `json:"actor"`
	Action       string          `json:"action"`
	ResourceType string          `json:"resourceType"`
	ResourceID   string          `json:"resourceId"`
	Before       json.RawMessage `json:"before"`
	After        json.RawMessage `json:"after"`
	RequestID    string          `json:"requestId"`
	RemoteAddr   string          `json:"remoteAddr"`
	PrevHash     string          `json:"prevHash"`
	Hash         string          `json:"hash"`
}

// ComputeHash returns the hash the event must carry: the hex SHA-256 of
// its PrevHash, a newline, and the canonical form of every other field
// (a JSON array in a fixed order; the time in RFC 3339, UTC, to the
// microsecond, the precision every store keeps (Precision); Before and
// After byte for byte as stored). Hash itself is not covered.
func (e *Event) ComputeHash() string {
	var b bytes.Buffer
	b.WriteString(e.PrevHash)
	b.WriteByte('\n')
	b.WriteByte('[')
	b.WriteString(strconv.FormatInt(e.Seq, 10))
	for _, s := range []string{e.ID, e.Time.UTC().Truncate(Precision).Format(timeLayout), e.WorkspaceID} {
		b.WriteByte(',')
		writeString(&b, s)
	}
	b.WriteByte(',')
	if e.ProjectID == nil {
		b.WriteString("null")
	} else {
		writeString(&b, *e.ProjectID)
	}
	for _, s := range []string{e.Actor.Type, e.Actor.ID, e.Action, e.ResourceType, e.ResourceID} {
		b.WriteByte(',')
		writeString(&b, s)
	}
	for _, raw := range []json.RawMessage{e.Before, e.After} {
		b.WriteByte(',')
		if len(raw) == 0 {
			b.WriteString("null")
		} else {
			b.Write(raw)
		}
	}
	for _, s := range []string{e.RequestID, e.RemoteAddr} {
		b.WriteByte(',')
		writeString(&b, s)
	}
	b.WriteByte(']')
	sum := sha256.Sum256(b.Bytes())
	return hex.EncodeToString(sum[:])
}

// Precision is the precision of an event's time: the store truncates it
// so, and a copy of the log into another store (canvasd migrate-store)
// keeps every hash.
const Precision = time.Microsecond

// timeLayout is the time's form in the canonical encoding.
const timeLayout = "2006-01-02T15:04:05.000000Z"

// writeString writes s as a JSON string.
func writeString(b *bytes.Buffer, s string) {
	raw, _ := json.Marshal(s) // a string always encodes
	b.Write(raw)
}

// Origin is where a change came from: the request's id and the client's
// address.
type Origin struct {
	RequestID  string
	RemoteAddr string
}

type originKey struct{}

// WithOrigin returns ctx carrying o, for the events of the changes made
// with it.
func WithOrigin(ctx context.Context, o Origin) context.Context {
	return context.WithValue(ctx, originKey{}, o)
}

// OriginFrom returns the origin ctx carries (zero when none).
func OriginFrom(ctx context.Context) Origin {
	o, _ := ctx.Value(originKey{}).(Origin)
	return o
}
