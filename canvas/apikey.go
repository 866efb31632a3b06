package canvas

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/google/uuid"
)

// NewAPIKey returns a new key of the workspace with the given role and
// project restriction, and the token that authenticates as it. The token is
// a random UUID; only its hash is kept in the key, so the token must be shown
// to its owner now or never.
func NewAPIKey(workspaceID string, role Role, projects []string) (token string, key *APIKey) {
	return NewAPIKeyWithToken(uuid.NewString(), workspaceID, role, projects)
}

// NewAPIKeyWithToken is NewAPIKey with a token chosen by the caller, for a
// bootstrap key given in configuration.
func NewAPIKeyWithToken(token, workspaceID string, role Role, projects []string) (string, *APIKey) {
	token = strings.ToLower(token)
	return token, &APIKey{
		ID:          uuid.NewString(),
		WorkspaceID: workspaceID,
		Role:        role,
		Projects:    projects,
		Hash:        HashToken(token),
	}
}

// HashToken returns the stored form of an API key token: the hex SHA-256 of
// its lowercase text. A UUID token carries 122 random bits, so a fast hash
// is enough; no salt or key stretching is needed.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(strings.ToLower(token)))
	return hex.EncodeToString(sum[:])
}

// IsAPIKeyToken reports whether a bearer token has the UUID form of an API
// key; any other token is read as a JWT.
func IsAPIKeyToken(token string) bool {
	if len(token) != 36 {
		return false
	}
	_, err := uuid.Parse(token)
	return err == nil
}
