package canvas

import (
	"context"
	"fmt"
)

// Bootstrap makes a new database usable: when it holds no workspace, it
// creates the workspace DefaultWorkspaceName and an admin API key in it, and
// returns created true with the key's token, which is shown now or never.
// The token is the given one when it is not empty (it must be a UUID, as
// every API key is), else a random one. A database that already holds a
// workspace is left alone, and so is one that another process bootstraps at
// the same moment: created is then false.
func Bootstrap(ctx context.Context, store Store, token string) (created bool, adminToken string, err error) {
	if token != "" && !IsAPIKeyToken(token) {
		return false, "", Invalid("The bootstrap API key must be a UUID.",
			Detail{Path: "/bootstrapApiKey", Message: "must be a UUID"})
	}
	all, err := store.ListWorkspaces(ctx)
	if err != nil {
		return false, "", fmt.Errorf("bootstrap: list workspaces: %w", err)
	} else if len(all) > 0 {
		return false, "", nil
	}
	ws := &Workspace{Name: DefaultWorkspaceName}
	if err := store.CreateWorkspace(ctx, ws); ErrorCode(err) == ECONFLICT {
		return false, "", nil
	} else if err != nil {
		return false, "", fmt.Errorf("bootstrap: create workspace: %w", err)
	}
	var key *APIKey
	if token != "" {
		adminToken, key = NewAPIKeyWithToken(token, ws.ID, RoleAdmin, nil)
	} else {
		adminToken, key = NewAPIKey(ws.ID, RoleAdmin, nil)
	}
	if err := store.CreateAPIKey(ctx, key); err != nil {
		return false, "", fmt.Errorf("bootstrap: create admin key: %w", err)
	}
	return true, adminToken, nil
}
