package wire

// Me is the caller as GET /me answers it. ActorID is how records name it
// (a key as "key:ID", a JWT user by its sub); UserID and KeyID say which
// it is. Projects is nil for every project of the workspace.
type Me struct {
	WorkspaceID string   `json:"workspaceId"`
	ActorID     string   `json:"actorId"`
	UserID      *string  `json:"userId"`
	KeyID       *string  `json:"keyId"`
	Name        string   `json:"name"`
	Role        string   `json:"role"`
	Projects    []string `json:"projects"`
}
