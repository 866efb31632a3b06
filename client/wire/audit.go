package wire

import (
	"encoding/json"
	"time"
)

// AuditActor is who made a change: an API key by its id, a JWT user by
// its sub, or the system.
type AuditActor struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

// AuditEvent is one change of the workspace's audit log (GET
// /audit-events). Hash is the hex SHA-256 over PrevHash and the event;
// Before and After are the resource's JSON, secrets redacted, null when
// there was none.
type AuditEvent struct {
	ID           string          `json:"id"`
	Seq          int64           `json:"seq"`
	Time         time.Time       `json:"time"`
	WorkspaceID  string          `json:"workspaceId"`
	ProjectID    *string         `json:"projectId"`
	Actor        AuditActor      `json:"actor"`
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
