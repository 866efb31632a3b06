package canvas

import (
	"context"
	"strconv"
	"strings"
)

// MaxActorIDs bounds how many actor ids one Actors call names.
const MaxActorIDs = 100

// ActorName is an actor id as recorded in createdBy, updatedBy and
// deletedBy, and the name to show for it.
type ActorName struct {
	ID string `json:"id"`
	// Name is the API key's name for "key:<id>" of a named key of the
	// caller's workspace, the caller's own display name for the caller's
	// own actor id, and the id itself otherwise.
	Name string `json:"name"`
}

// Actors returns the names to show for actor ids, in the order given,
// each id once. A key of the principal's workspace is named by its name
// (revoked or not); the principal's own actor id by the principal's name
// (a JWT's name or e-mail claim); any other id, a key of another
// workspace included, by itself, since the server keeps no names for
// users. It requires the viewer role. No id, more than MaxActorIDs ids or
// a blank id is VALIDATION.
func (s *Service) Actors(ctx context.Context, ids []string) ([]ActorName, error) {
	p, err := Authorize(ctx, RoleViewer)
	if err != nil {
		return nil, err
	}
	var v validator
	switch {
	case len(ids) == 0:
		v.add("/query/id", "must name at least one actor id")
	case len(ids) > MaxActorIDs:
		v.add("/query/id", "must name at most %d actor ids, not %d", MaxActorIDs, len(ids))
	}
	for i, id := range ids {
		if strings.TrimSpace(id) == "" {
			v.add("/query/id/"+strconv.Itoa(i), "must not be blank")
		}
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	out := make([]ActorName, 0, len(ids))
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		name, err := s.actorName(ctx, p, id)
		if err != nil {
			return nil, err
		}
		out = append(out, ActorName{ID: id, Name: name})
	}
	return out, nil
}

func (s *Service) actorName(ctx context.Context, p *Principal, id string) (string, error) {
	if id == p.Actor() && p.Name != "" {
		return p.Name, nil
	}
	keyID, ok := strings.CutPrefix(id, "key:")
	if !ok || !isUUIDString(keyID) {
		return id, nil
	}
	key, err := s.store.GetAPIKey(ctx, p.WorkspaceID, strings.ToLower(keyID))
	switch {
	case ErrorCode(err) == ENOTFOUND:
		return id, nil
	case err != nil:
		return "", err
	case key.Name == "":
		return id, nil
	}
	return key.Name, nil
}
