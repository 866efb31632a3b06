package clienttest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/client"
	"github.com/promptcanvas/promptcanvas/client/wire"
)

// TestClient_Credentials drives credentials and model prices through the
// client against the real server: the key goes in and never comes back,
// and the price of a model the workspace overrides is the override's.
func TestClient_Credentials(t *testing.T) {
	ts := startServer(t)
	c := ts.Client(t)
	ctx := context.Background()
	key := "sk-ant-client-test-7Q3z"

	cred, err := c.CreateCredential(ctx, wire.CreateCredentialParams{Name: "claude", Provider: wire.ProviderAnthropic,
		APIKey: &key, Settings: &wire.CredentialSettings{MaxConcurrency: 4}})
	require.NoError(t, err)
	require.NotNil(t, cred.KeyHint)
	assert.Equal(t, "…7Q3z", *cred.KeyHint)
	assert.Equal(t, 4, cred.Settings.MaxConcurrency)
	assert.Nil(t, cred.ProjectIDs, "every project")

	got, err := c.GetCredential(ctx, cred.ID)
	require.NoError(t, err)
	assert.Equal(t, cred.ID, got.ID)
	raw, err := json.Marshal(got)
	require.NoError(t, err)
	assert.NotContains(t, string(raw), key, "the key never comes back")

	_, err = c.CreateCredential(ctx, wire.CreateCredentialParams{Name: "claude", Provider: wire.ProviderAnthropic, APIKey: &key})
	assert.Equal(t, wire.CodeConflict, client.ErrorCode(err), "names are unique in a workspace")
	_, err = c.CreateCredential(ctx, wire.CreateCredentialParams{Name: "x", Provider: "mystery"})
	assert.Equal(t, wire.CodeInvalid, client.ErrorCode(err))

	rotated, err := c.UpdateCredential(ctx, cred.ID, map[string]any{"name": "claude-prod", "apiKey": "sk-ant-rotated-9KkA"})
	require.NoError(t, err)
	assert.Equal(t, "claude-prod", rotated.Name)
	assert.Equal(t, "…9KkA", *rotated.KeyHint)

	page, err := c.ListCredentials(ctx, client.ListCredentialsParams{Provider: wire.ProviderAnthropic})
	require.NoError(t, err)
	require.Len(t, page.Data, 1)
	assert.Equal(t, 1, page.Meta.TotalCount)
	page, err = c.ListCredentials(ctx, client.ListCredentialsParams{Provider: wire.ProviderGemini})
	require.NoError(t, err)
	assert.Empty(t, page.Data)

	in, out := 1.5, 2.5
	price, err := c.SetModelPrice(ctx, "claude-sonnet-4-5", wire.SetModelPriceParams{Provider: wire.ProviderAnthropic,
		InputPerMillion: &in, OutputPerMillion: &out})
	require.NoError(t, err)
	assert.Equal(t, "workspace", price.Source)
	models, err := c.ListModels(ctx, wire.ProviderAnthropic, 100, 0)
	require.NoError(t, err)
	found := false
	for _, m := range models.Data {
		if m.Name == "claude-sonnet-4-5" {
			found = true
			assert.Equal(t, 1.5, m.InputPerMillion)
			assert.Equal(t, "workspace", m.Source)
		}
	}
	assert.True(t, found, "the override is listed")
	require.NoError(t, c.DeleteModelPrice(ctx, "claude-sonnet-4-5"))
	assert.Equal(t, wire.CodeNotFound, client.ErrorCode(c.DeleteModelPrice(ctx, "claude-sonnet-4-5")))

	require.NoError(t, c.DeleteCredential(ctx, cred.ID))
	_, err = c.GetCredential(ctx, cred.ID)
	assert.Equal(t, wire.CodeNotFound, client.ErrorCode(err))
}
