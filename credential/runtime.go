package credential

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
)

// UsedInterval is how often at most Used writes a credential's lastUsedAt:
// a credential that serves many calls a minute costs one short write a
// minute.
const UsedInterval = time.Minute

// listBatch is the page size List reads a workspace's credentials in.
const listBatch = 500

// List returns every live credential of workspaceID, oldest first, for the
// model caller (model.Credentials); it reads no Principal.
func (s *Service) List(ctx context.Context, workspaceID string) ([]model.CredentialInfo, error) {
	return s.infos.Get(ctx, workspaceID, func(ctx context.Context) ([]model.CredentialInfo, error) {
		out := []model.CredentialInfo{}
		for offset := 0; ; offset += listBatch {
			page, total, err := s.store.ListCredentials(ctx, ListParams{WorkspaceID: workspaceID,
				Limit: listBatch, Offset: offset})
			if err != nil {
				return nil, err
			}
			for _, r := range page {
				out = append(out, model.CredentialInfo{ID: r.ID, Name: r.Name, Provider: r.Provider,
					ProjectIDs: r.ProjectIDs, CreatedAt: r.CreatedAt})
			}
			if len(page) == 0 || offset+len(page) >= total {
				return out, nil
			}
		}
	})
}

// Open returns the credential id of workspaceID with its key unsealed, and
// when it last changed, for the model caller (model.Credentials); it reads
// no Principal. A credential that is not a live one of the workspace is
// NOT_FOUND; a key that does not open (sealed for another row, under a key
// the ring lacks) is INTERNAL, its cause logged, never the key.
func (s *Service) Open(ctx context.Context, workspaceID, id string) (*model.Credential, time.Time, error) {
	r, err := s.records.Get(ctx, [2]string{workspaceID, id}, func(ctx context.Context) (*Record, error) {
		return s.store.GetCredential(ctx, workspaceID, id)
	})
	if err != nil {
		return nil, time.Time{}, err
	}
	c := &model.Credential{ID: r.ID, WorkspaceID: r.WorkspaceID, Name: r.Name, Provider: r.Provider,
		Settings: r.Settings}
	if r.BaseURL != nil {
		c.BaseURL = *r.BaseURL
	}
	if r.Settings.Headers != nil { // the cached record is shared
		c.Settings.Headers = make(map[string]string, len(r.Settings.Headers))
		for k, v := range r.Settings.Headers {
			c.Settings.Headers[k] = v
		}
	}
	if r.Sealed != nil {
		if s.keys == nil {
			return nil, time.Time{}, errNoKeys()
		}
		key, err := s.keys.Open(r.WorkspaceID, r.ID, *r.Sealed)
		if err != nil {
			return nil, time.Time{}, &canvas.Error{Code: canvas.EINTERNAL,
				Message: fmt.Sprintf("The key of credential %s cannot be opened.", r.ID), Err: err}
		}
		c.APIKey = string(key)
	}
	return c, r.UpdatedAt, nil
}

// Used records that the credential served a call: its lastUsedAt is
// written at most once per UsedInterval by this process, in a short write
// of its own whose failure is logged and not the call's.
func (s *Service) Used(ctx context.Context, workspaceID, id string) {
	now := s.now()
	k := [2]string{workspaceID, id}
	s.usedMu.Lock()
	last, ok := s.used[k]
	if ok && now.Sub(last) < UsedInterval {
		s.usedMu.Unlock()
		return
	}
	s.used[k] = now
	if len(s.used) > 100_000 { // forget the credentials idle for long
		for key, t := range s.used {
			if now.Sub(t) >= UsedInterval {
				delete(s.used, key)
			}
		}
	}
	s.usedMu.Unlock()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := s.store.TouchCredential(ctx, workspaceID, id, now); err != nil && canvas.ErrorCode(err) != canvas.ENOTFOUND {
		s.logger.WarnContext(ctx, "credential lastUsedAt not recorded", slog.String("credentialId", id),
			slog.Any("error", err))
	}
}

// rotateBatch is how many credentials a rotation re-seals per read.
const rotateBatch = 100

// RotateKey re-seals the key of every live credential of every workspace
// that is not sealed under the key ring's current key, in batches, and
// returns how many it re-sealed. A credential changed meanwhile (its key
// rotated through the API, so sealed under the current key already) is
// left as it is. It reads no Principal: it is the operator's (canvasd
// secrets rotate-key). A key that does not open stops it with an error
// naming the credential; what was re-sealed stays re-sealed, and running
// it again resumes.
func (s *Service) RotateKey(ctx context.Context) (int, error) {
	if s.keys == nil {
		return 0, errNoKeys()
	}
	current := s.keys.Current()
	n, after := 0, ""
	for {
		batch, err := s.store.SealedCredentials(ctx, current, after, rotateBatch)
		if err != nil {
			return n, err
		}
		if len(batch) == 0 {
			return n, nil
		}
		for _, r := range batch {
			after = r.ID
			key, err := s.keys.Open(r.WorkspaceID, r.ID, *r.Sealed)
			if err != nil {
				return n, fmt.Errorf("credential %s of workspace %s (key %s): %w", r.ID, r.WorkspaceID, r.Sealed.KeyID, err)
			}
			sealed, err := s.keys.Seal(r.WorkspaceID, r.ID, key)
			clear(key)
			if err != nil {
				return n, err
			}
			ok, err := s.store.ResealCredential(ctx, r.WorkspaceID, r.ID, *r.Sealed, sealed)
			if err != nil {
				return n, err
			}
			if ok {
				n++
			}
		}
	}
}

// Unknown returns the ids among ids that are not live credentials of
// workspaceID, in their order: the check of a canvas's allowedCredentials
// (canvas.CredentialChecker). It reads no Principal.
func (s *Service) Unknown(ctx context.Context, workspaceID string, ids []string) ([]string, error) {
	infos, err := s.List(ctx, workspaceID)
	if err != nil {
		return nil, err
	}
	known := make(map[string]bool, len(infos))
	for _, ci := range infos {
		known[ci.ID] = true
	}
	var out []string
	for _, id := range ids {
		if !known[id] {
			out = append(out, id)
		}
	}
	return out, nil
}

var _ canvas.CredentialChecker = (*Service)(nil)
