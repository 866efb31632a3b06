package experiment_test

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/engine"
	"github.com/promptcanvas/promptcanvas/experiment"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/testcase"
)

// randomSecret returns a new signing secret.
func randomSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return "whsec_" + base64.StdEncoding.EncodeToString(b)
}

// secretTraces returns the forms in which a secret could be found in a
// file: itself, its hex, and the middle of its standard and URL-safe
// base64 at each alignment it may have inside a longer encoded value.
func secretTraces(secret string) [][]byte {
	out := [][]byte{[]byte(secret), []byte(hex.EncodeToString([]byte(secret)))}
	for shift := range 3 {
		b := append(bytes.Repeat([]byte{'x'}, shift), secret...)
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
			s := enc.EncodeToString(b)
			out = append(out, []byte(s[4:len(s)-4]))
		}
	}
	return out
}

// requireNoSecretOnDisk fails when a file of the database (the database,
// its WAL and shared memory) holds a trace of a secret, and returns how
// many files it read.
func requireNoSecretOnDisk(t *testing.T, dir string, secrets ...string) int {
	t.Helper()
	n := 0
	for _, name := range []string{engine.DatabaseFile, engine.DatabaseFile + "-wal", engine.DatabaseFile + "-shm"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if os.IsNotExist(err) {
			continue
		}
		require.NoError(t, err)
		n++
		for _, secret := range secrets {
			for _, trace := range secretTraces(secret) {
				assert.False(t, bytes.Contains(data, trace), "%s holds the secret %q as %q", name, secret, trace)
			}
		}
	}
	return n
}

// TestExperiment_WebhookSecretsSealed stores a saved webhook evaluator
// and an experiment with an inline one: no file of the database holds
// either secret, no read shows one, and the experiment signs each
// evaluator's requests with its own secret.
func TestExperiment_WebhookSecretsSealed(t *testing.T) {
	t.Parallel()
	w := openWorld(t, "")
	c, v1, _ := w.canvasOf(t)
	inline, saved := newHook(t), newHookSigned(t, randomSecret())

	created, err := w.e.Experiments.CreateEvaluator(w.ctx, experiment.CreateEvaluatorParams{PromptID: c.ID,
		Evaluator: experiment.Evaluator{Name: "saved", Type: experiment.TypeWebhook, URL: saved.url, Secret: saved.secret}})
	require.NoError(t, err)
	assert.Equal(t, saved.secret, created.Secret, "the answer to the creation shows the secret")
	assert.Nil(t, created.Sealed)
	generated, err := w.e.Experiments.CreateEvaluator(w.ctx, experiment.CreateEvaluatorParams{PromptID: c.ID,
		Evaluator: experiment.Evaluator{Name: "generated", Type: experiment.TypeWebhook, URL: saved.url}})
	require.NoError(t, err)
	require.NotEmpty(t, generated.Secret, "a new secret, shown once")

	x, err := w.e.Experiments.Start(w.ctx, experiment.Request{PromptID: c.ID, VersionIDs: []string{v1.ID},
		Evaluators: []experiment.Evaluator{{ID: created.ID}, inline.evaluator()}})
	require.NoError(t, err)
	got := w.wait(t, x.ID)
	require.Equal(t, experiment.StatusCompleted, got.Status, "%+v", got.Error)
	for name, h := range map[string]*hook{"inline": inline, "saved": saved} {
		ids, bad := h.received()
		assert.Zero(t, bad, "%s: every request is signed with the evaluator's secret", name)
		assert.Len(t, ids, len(cases), "%s: one request a case", name)
	}
	results, _, err := w.e.Experiments.Results(w.ctx, experiment.ResultsQuery{ExperimentID: x.ID, Limit: 100})
	require.NoError(t, err)
	for _, r := range results {
		for _, sc := range r.Scores {
			assert.Nil(t, sc.Error, "%s: %+v", sc.Evaluator, sc.Error)
		}
	}

	for _, ev := range got.Request.Evaluators {
		assert.Empty(t, ev.Secret, "a read shows no secret")
		assert.Nil(t, ev.Sealed)
	}
	list, _, err := w.e.Experiments.ListEvaluators(w.ctx, experiment.EvaluatorQuery{PromptID: c.ID, Limit: 10})
	require.NoError(t, err)
	require.Len(t, list, 2)
	for _, ev := range list {
		assert.Empty(t, ev.Secret)
		assert.Nil(t, ev.Sealed)
	}

	secrets := []string{inline.secret, saved.secret, generated.Secret}
	assert.Equal(t, 3, requireNoSecretOnDisk(t, w.dir, secrets...), "the WAL is read while the engine runs")
	require.NoError(t, w.e.Close())
	assert.GreaterOrEqual(t, requireNoSecretOnDisk(t, w.dir, secrets...), 1)
}

// TestExperiment_ClearSecretsOfEarlierRows runs the webhook evaluators of
// rows an earlier release stored with their secrets in clear: a saved
// evaluator, and a queued experiment. Both still sign, and ResealSecrets
// leaves no secret in clear.
func TestExperiment_ClearSecretsOfEarlierRows(t *testing.T) {
	t.Parallel()
	w := openWorld(t, "")
	c, v1, _ := w.canvasOf(t)
	queuedHook, savedHook := newHook(t), newHookSigned(t, randomSecret())
	p := canvas.PrincipalFrom(w.ctx)
	tcs, err := w.e.Store.ListTestCases(w.ctx, testcase.Filter{WorkspaceID: p.WorkspaceID, PromptID: c.ID})
	require.NoError(t, err)
	var caseIDs []string
	for _, tc := range tcs {
		caseIDs = append(caseIDs, tc.ID)
	}

	legacy := &experiment.SavedEvaluator{WorkspaceID: p.WorkspaceID, PromptID: c.ID, CreatedBy: "ada",
		Evaluator: experiment.Evaluator{Name: "saved", Type: experiment.TypeWebhook, URL: savedHook.url,
			Secret: savedHook.secret}}
	require.NoError(t, w.e.Store.CreateEvaluator(w.ctx, legacy))
	queued := &experiment.Experiment{WorkspaceID: p.WorkspaceID, PromptID: c.ID, TestCaseIDs: caseIDs,
		Request: experiment.Request{PromptID: c.ID, VersionIDs: []string{v1.ID}, Repetitions: 1,
			Evaluators: []experiment.Evaluator{queuedHook.evaluator()}},
		Versions: []experiment.Version{{VersionID: v1.ID}}, Progress: experiment.Progress{Total: len(cases)},
		CreatedBy: "ada", Runner: experiment.Runner{UserID: "ada", Projects: []string{}}}
	require.NoError(t, w.e.Store.CreateExperiment(w.ctx, queued, &queue.Job{WorkspaceID: p.WorkspaceID,
		Kind: experiment.JobKindRun, MaxAttempts: 3}))
	x, err := w.e.Experiments.Start(w.ctx, experiment.Request{PromptID: c.ID, VersionIDs: []string{v1.ID},
		Evaluators: []experiment.Evaluator{{ID: legacy.ID}}})
	require.NoError(t, err)

	for id, h := range map[string]*hook{queued.ID: queuedHook, x.ID: savedHook} {
		got := w.wait(t, id)
		require.Equal(t, experiment.StatusCompleted, got.Status, "%+v", got.Error)
		ids, bad := h.received()
		assert.Zero(t, bad, "signed with the secret stored in clear")
		assert.Len(t, ids, len(cases))
	}

	n, err := w.e.Experiments.ResealSecrets(w.ctx)
	require.NoError(t, err)
	assert.Equal(t, 2, n, "the saved evaluator and the queued experiment; the new experiment is sealed already")
	sealedEvs, err := w.e.Store.SealedEvaluators(w.ctx, "", "", 10)
	require.NoError(t, err)
	require.Len(t, sealedEvs, 1)
	assert.Empty(t, sealedEvs[0].Secret, "no secret in clear")
	require.NotNil(t, sealedEvs[0].Sealed)
	exps, err := w.e.Store.SealedExperiments(w.ctx, "", "", 10)
	require.NoError(t, err)
	require.Len(t, exps, 2)
	for _, e := range exps {
		require.Len(t, e.Request.Evaluators, 1)
		assert.Empty(t, e.Request.Evaluators[0].Secret, "no secret in clear")
		assert.NotNil(t, e.Request.Evaluators[0].Sealed)
	}
	n, err = w.e.Experiments.ResealSecrets(w.ctx)
	require.NoError(t, err)
	assert.Zero(t, n, "every secret is sealed under the current key")

	again, err := w.e.Experiments.Start(w.ctx, experiment.Request{PromptID: c.ID, VersionIDs: []string{v1.ID},
		Evaluators: []experiment.Evaluator{{ID: legacy.ID}}})
	require.NoError(t, err)
	got := w.wait(t, again.ID)
	require.Equal(t, experiment.StatusCompleted, got.Status, "%+v", got.Error)
	_, bad := savedHook.received()
	assert.Zero(t, bad, "the re-sealed secret still signs")
}
