package completion_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/internal/testfiles"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/vault"
)

// fileCanvas creates a canvas in f's first workspace whose promoted version
// reads the file variable "doc", and returns the canvas id and a service
// wired to f's vault.
func fileCanvas(t *testing.T, f *testfiles.Fixture) (string, *completion.Service) {
	t.Helper()
	canvases, envs := canvas.NewService(canvas.Options{Store: f.DB}), env.NewService(env.Options{Store: f.DB, Canvases: f.DB, Changes: f.DB})
	svc := completion.NewService(completion.Options{Store: f.DB, Canvases: f.DB, Environments: envs,
		Models: model.NewCaller(model.Options{Files: model.FileOptions{Vault: model.VaultFiles(f.Vault)}})})
	c, err := canvases.CreateCanvas(f.Ctx, canvas.CreateCanvasParams{Title: "Reader"})
	require.NoError(t, err)
	v, err := canvases.CreateVersion(f.Ctx, canvas.CreateVersionParams{PromptID: c.ID,
		Variables: []canvas.Variable{{Name: "doc", Type: canvas.VariableFile, Required: true}},
		Message:   &canvas.MessageInput{Content: "Summarize {{doc}}"}})
	require.NoError(t, err)
	_, _, err = envs.Publish(f.Ctx, env.PublishVersionParams{CanvasID: c.ID, EnvName: env.Production, VersionID: v.ID})
	require.NoError(t, err)
	return c.ID, svc
}

func TestService_RunFiles(t *testing.T) {
	f := testfiles.New(t)
	canvasID, svc := fileCanvas(t, f)

	t.Run("OK", func(t *testing.T) {
		addr := f.Upload(t, f.Ctx, "report.pdf", "application/pdf", "%PDF-1.7 body")
		run, err := svc.Run(f.Ctx, completion.RunParams{CanvasID: canvasID, Variables: map[string]any{"doc": testfiles.Value(addr)}})
		require.NoError(t, err)
		assert.Equal(t, "Summarize [file name=report.pdf type=application/pdf size=13]", run.Result.Choices[0].Message.Content.Text)

		stored, err := f.DB.GetRun(f.Ctx, f.WS, run.ID)
		require.NoError(t, err)
		require.Len(t, stored.Request.Messages, 1)
		assert.Equal(t, "Summarize [file: "+addr+"]", stored.Request.Messages[0].Content, "runs keep addresses, not files")
		assert.Equal(t, []model.FileRef{{Variable: "doc", URL: addr, Start: 10, End: 10 + len("[file: "+addr+"]")}},
			stored.Request.Messages[0].FileRefs)
	})
	t.Run("NotFound", func(t *testing.T) {
		theirs := f.Upload(t, f.OtherCtx, "theirs.txt", "text/plain", "no")
		for _, async := range []bool{false, true} {
			_, err := svc.Run(f.Ctx, completion.RunParams{CanvasID: canvasID, Async: async,
				Variables: map[string]any{"doc": testfiles.Value(theirs)}})
			testfiles.RequireError(t, err, canvas.ENOTFOUND, "not found")
		}
	})
	t.Run("AsyncDeletedMeanwhile", func(t *testing.T) {
		addr := f.Upload(t, f.Ctx, "gone.txt", "text/plain", "soon gone")
		run, err := svc.Run(f.Ctx, completion.RunParams{CanvasID: canvasID, Async: true,
			Variables: map[string]any{"doc": testfiles.Value(addr)}})
		require.NoError(t, err)
		id, _ := vault.ParseAddress(addr)
		require.NoError(t, f.Vault.DeleteFile(f.Ctx, id))

		job := &queue.Job{WorkspaceID: f.WS, Kind: completion.JobKindCompletion, RefID: run.ID, Attempts: 1, MaxAttempts: 3}
		require.NoError(t, svc.HandleJob(f.Ctx, job))
		done, err := svc.GetRun(f.Ctx, run.ID)
		require.NoError(t, err)
		assert.Equal(t, completion.StatusFailed, done.Status)
		require.NotNil(t, done.Error)
		assert.Equal(t, canvas.ENOTFOUND, done.Error.Code)
	})
	t.Run("AsyncOK", func(t *testing.T) {
		addr := f.Upload(t, f.Ctx, "notes.md", "text/markdown", "# Notes")
		run, err := svc.Run(f.Ctx, completion.RunParams{CanvasID: canvasID, Async: true,
			Variables: map[string]any{"doc": testfiles.Value(addr)}})
		require.NoError(t, err)
		job := &queue.Job{WorkspaceID: f.WS, Kind: completion.JobKindCompletion, RefID: run.ID, Attempts: 1, MaxAttempts: 3}
		require.NoError(t, svc.HandleJob(f.Ctx, job))
		done, err := svc.GetRun(f.Ctx, run.ID)
		require.NoError(t, err)
		require.Equal(t, completion.StatusCompleted, done.Status)
		assert.Equal(t, "Summarize [file name=notes.md type=text/markdown size=7]\n# Notes",
			done.Result.Choices[0].Message.Content.Text)
		assert.False(t, strings.Contains(done.Request.Messages[0].Content, "# Notes"), "the stored request holds no file content")
	})
}
