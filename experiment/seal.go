package experiment

import (
	"context"
	"fmt"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/credential"
)

// Sealer seals webhook evaluators' secrets at rest and opens them:
// credential.KeyRing. A ciphertext is bound to a workspace and an id, and
// opens only with the same two.
type Sealer interface {
	Seal(workspaceID, id string, plaintext []byte) (credential.Sealed, error)
	Open(workspaceID, id string, s credential.Sealed) ([]byte, error)
	// Current returns the id of the key Seal seals under.
	Current() string
}

var _ Sealer = (*credential.KeyRing)(nil)

// SealedSecret is a webhook evaluator's secret as it is stored: sealed with
// AES-256-GCM under a key of the key ring (credential.Sealed). It is never
// shown.
type SealedSecret struct {
	Ciphertext []byte `json:"ciphertext"`
	Nonce      []byte `json:"nonce"`
	KeyID      string `json:"keyId"`
}

// savedSecretID is the id a saved evaluator's secret is sealed for; the
// prefix keeps it apart from a credential's id, which is a bare UUID.
func savedSecretID(evaluatorID string) string { return "evaluator/" + evaluatorID }

// experimentSecretID is the id the secret of an experiment's evaluator
// name is sealed for (names are unique in an experiment).
func experimentSecretID(experimentID, name string) string {
	return "experiment/" + experimentID + "/evaluator/" + name
}

// SecretsKey returns what a row holding evs keeps in its secrets_key_id:
// nil when none holds a secret, the id of the key every secret is sealed
// under, or "" when some secret is in clear or they are sealed under
// different keys (a row canvasd secrets rotate-key re-seals).
func SecretsKey(evs ...Evaluator) *string {
	var key *string
	for _, e := range evs {
		var k string
		switch {
		case e.Sealed != nil:
			k = e.Sealed.KeyID
		case e.Secret != "":
			k = ""
		default:
			continue
		}
		if key != nil && *key != k {
			k = ""
		}
		key = &k
	}
	return key
}

// seal returns e with its secret sealed for id and no clear secret; an
// evaluator without a secret, or already sealed, is returned as it is.
func (s *Service) seal(workspaceID, id string, e Evaluator) (Evaluator, error) {
	if e.Secret == "" {
		return e, nil
	}
	if s.sealer == nil {
		return e, errNoSealer()
	}
	sealed, err := s.sealer.Seal(workspaceID, id, []byte(e.Secret))
	if err != nil {
		return e, err
	}
	e.Sealed, e.Secret = &SealedSecret{Ciphertext: sealed.Ciphertext, Nonce: sealed.Nonce, KeyID: sealed.KeyID}, ""
	return e, nil
}

// open returns e with its secret in clear, opened from its sealed secret
// (bound to id). A secret stored in clear, by a row written before secrets
// were sealed, is returned as it is.
func (s *Service) open(workspaceID, id string, e Evaluator) (Evaluator, error) {
	if e.Sealed == nil {
		return e, nil
	}
	if s.sealer == nil {
		return e, errNoSealer()
	}
	secret, err := s.sealer.Open(workspaceID, id, credential.Sealed{Ciphertext: e.Sealed.Ciphertext,
		Nonce: e.Sealed.Nonce, KeyID: e.Sealed.KeyID})
	if err != nil {
		return e, canvas.Errorf(canvas.EINTERNAL, "The secret of webhook evaluator %q does not open: %v", e.Name, err)
	}
	e.Secret, e.Sealed = string(secret), nil
	return e, nil
}

// errNoSealer is the answer when a secret must be sealed or opened and the
// service has no key ring.
func errNoSealer() error {
	return canvas.Errorf(canvas.ECONFLICT, "This server has no secrets key (--secrets-key-file or "+
		"CANVAS_SECRETS_KEY_FILE), so it cannot store or open a webhook evaluator's secret.")
}

// sealExperiment seals the secret of every webhook evaluator of e (whose
// ID is set) for e: an evaluator copied from a saved one is opened first,
// so that every secret of the experiment is bound to it and sealed under
// the current key.
func (s *Service) sealExperiment(e *Experiment) error {
	for i, ev := range e.Request.Evaluators {
		if ev.Type != TypeWebhook {
			continue
		}
		var err error
		if ev.Sealed != nil {
			if ev, err = s.open(e.WorkspaceID, savedSecretID(ev.ID), ev); err != nil {
				return err
			}
		}
		if ev, err = s.seal(e.WorkspaceID, experimentSecretID(e.ID, ev.Name), ev); err != nil {
			return err
		}
		e.Request.Evaluators[i] = ev
	}
	return nil
}

// openExperiment opens, in memory, the secret of every webhook evaluator
// of e, for its job.
func (s *Service) openExperiment(e *Experiment) error {
	for i, ev := range e.Request.Evaluators {
		if ev.Type != TypeWebhook {
			continue
		}
		ev, err := s.open(e.WorkspaceID, experimentSecretID(e.ID, ev.Name), ev)
		if err != nil {
			return err
		}
		e.Request.Evaluators[i] = ev
	}
	return nil
}

// resealBatch is how many rows ResealSecrets reads at once.
const resealBatch = 100

// ResealSecrets re-seals under the ring's current key the webhook secret
// of every saved evaluator and experiment of every workspace that is in
// clear or sealed under an older key, and returns how many rows it
// re-sealed: the evaluators' part of canvasd secrets rotate-key. It reads
// no Principal. A row changed meanwhile is left to the pass that changed
// it.
func (s *Service) ResealSecrets(ctx context.Context) (int, error) {
	if s.sealer == nil {
		return 0, errNoSealer()
	}
	current := s.sealer.Current()
	n, after := 0, ""
	for {
		batch, err := s.store.SealedEvaluators(ctx, current, after, resealBatch)
		if err != nil {
			return n, err
		}
		if len(batch) == 0 {
			break
		}
		for _, saved := range batch {
			after = saved.ID
			old := SecretsKey(saved.Evaluator)
			if old == nil {
				continue
			}
			id := savedSecretID(saved.ID)
			ev, err := s.open(saved.WorkspaceID, id, saved.Evaluator)
			if err == nil {
				ev, err = s.seal(saved.WorkspaceID, id, ev)
			}
			if err != nil {
				return n, fmt.Errorf("evaluator %s of workspace %s: %w", saved.ID, saved.WorkspaceID, err)
			}
			saved.Evaluator = ev
			ok, err := s.store.ResealEvaluator(ctx, saved, *old)
			if err != nil {
				return n, err
			}
			if ok {
				n++
			}
		}
	}
	after = ""
	for {
		batch, err := s.store.SealedExperiments(ctx, current, after, resealBatch)
		if err != nil {
			return n, err
		}
		if len(batch) == 0 {
			return n, nil
		}
		for _, e := range batch {
			after = e.ID
			old := SecretsKey(e.Request.Evaluators...)
			if old == nil {
				continue
			}
			err := s.openExperiment(e)
			if err == nil {
				err = s.sealExperiment(e)
			}
			if err != nil {
				return n, fmt.Errorf("experiment %s of workspace %s: %w", e.ID, e.WorkspaceID, err)
			}
			ok, err := s.store.ResealExperiment(ctx, e, *old)
			if err != nil {
				return n, err
			}
			if ok {
				n++
			}
		}
	}
}
