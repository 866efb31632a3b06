package clienttest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/client"
	"github.com/promptcanvas/promptcanvas/client/wire"
)

// TestClient_AuditEvents reads the audit log through the client: a
// credential's creation is there, by the caller, without its key, and the
// filters select it.
func TestClient_AuditEvents(t *testing.T) {
	ts := startServer(t)
	c := ts.Client(t)
	ctx := context.Background()
	start := time.Now().Add(-time.Minute)
	key := "sk-ant-audit-client-9Xw2"
	cred, err := c.CreateCredential(ctx, wire.CreateCredentialParams{Name: "claude", Provider: wire.ProviderAnthropic, APIKey: &key})
	require.NoError(t, err)

	page, err := c.ListAuditEvents(ctx, client.AuditFilter{ResourceType: "credential", ResourceID: cred.ID, Since: start})
	require.NoError(t, err)
	require.Len(t, page.Data, 1)
	e := page.Data[0]
	assert.Equal(t, "credential.create", e.Action)
	assert.Equal(t, "apiKey", e.Actor.Type)
	assert.Equal(t, "null", string(e.Before), "nothing before a creation")
	assert.Contains(t, string(e.After), `"name":"claude"`)
	assert.NotContains(t, string(e.After), key)
	assert.Len(t, e.Hash, 64)

	page, err = c.ListAuditEvents(ctx, client.AuditFilter{ResourceID: cred.ID, Until: start})
	require.NoError(t, err)
	assert.Empty(t, page.Data)
}
