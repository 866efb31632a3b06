package engine_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/engine"
	"github.com/promptcanvas/promptcanvas/engine/pgengine"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/internal/pgtest"
)

// The scale-out benchmarks compare, in one run on one machine, SQLite with
// Postgres (one engine) and one Postgres engine with two engines on one
// database (two replicas, in one process here). docs/benchmarks.md holds
// the figures and the command.

// scaleOutSetups are the stores compared: the name of each and the number
// of engines on it.
var scaleOutSetups = []struct {
	name     string
	postgres bool
	engines  int
}{
	{"SQLite", false, 1},
	{"Postgres", true, 1},
	{"Postgres2Replicas", true, 2},
}

// openScaleOut opens the engines of a setup, runs their background work,
// bootstraps the database and returns the engines and a context with an
// editor of the default workspace.
func openScaleOut(b *testing.B, postgres bool, n int) ([]*engine.Engine, context.Context) {
	b.Helper()
	ctx := context.Background()
	var dsn, dir string
	if postgres {
		dsn = pgtest.New(b)
	} else {
		dir = b.TempDir()
	}
	var engines []*engine.Engine
	for range n {
		var e *engine.Engine
		var err error
		if postgres {
			e, err = pgengine.Open(ctx, dsn, engine.Options{})
		} else {
			e, err = engine.OpenSQLite(ctx, dir, engine.Options{})
		}
		if err != nil {
			b.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- e.Run(ctx) }()
		b.Cleanup(func() {
			e.Close()
			<-done
		})
		engines = append(engines, e)
	}
	if _, _, err := engines[0].Bootstrap(ctx, ""); err != nil {
		b.Fatal(err)
	}
	ws, err := engines[0].Store.GetWorkspaceByName(ctx, canvas.DefaultWorkspaceName)
	if err != nil {
		b.Fatal(err)
	}
	return engines, canvas.NewContext(ctx, &canvas.Principal{WorkspaceID: ws.ID, UserID: "ada", Role: canvas.RoleEditor})
}

// newCanvasVersions creates a canvas with two versions.
func newCanvasVersions(b *testing.B, ctx context.Context, e *engine.Engine) (string, [2]string) {
	b.Helper()
	c, err := e.Canvases.CreateCanvas(ctx, canvas.CreateCanvasParams{Title: "Bench"})
	if err != nil {
		b.Fatal(err)
	}
	var vs [2]string
	for i := range vs {
		v, err := e.Canvases.CreateVersion(ctx, canvas.CreateVersionParams{PromptID: c.ID,
			Message: &canvas.MessageInput{Role: canvas.RoleSystem, Content: fmt.Sprintf("Hello %d {{name}}", i)}})
		if err != nil {
			b.Fatal(err)
		}
		vs[i] = v.ID
	}
	return c.ID, vs
}

// BenchmarkScaleOut_Publish publishes from 8 goroutines at once, each to
// the production environment of a canvas of its own, alternating between
// two versions and, with two replicas, between the engines.
func BenchmarkScaleOut_Publish(b *testing.B) {
	for _, s := range scaleOutSetups {
		b.Run(s.name, func(b *testing.B) {
			engines, ctx := openScaleOut(b, s.postgres, s.engines)
			const canvases = 8
			type target struct {
				canvas   string
				versions [2]string
			}
			var targets [canvases]target
			for i := range targets {
				targets[i].canvas, targets[i].versions = newCanvasVersions(b, ctx, engines[0])
			}
			var next atomic.Int64
			// 4 goroutines per core: 8 on two cores, one per canvas.
			b.SetParallelism(4)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				tg := targets[next.Add(1)%canvases]
				i := 0
				for pb.Next() {
					e := engines[i%len(engines)]
					if _, _, err := e.Environments.Publish(ctx, env.PublishVersionParams{CanvasID: tg.canvas,
						EnvName: env.Production, VersionID: tg.versions[i%2]}); err != nil {
						b.Error(err)
						return
					}
					i++
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "publishes/s")
		})
	}
}

// BenchmarkScaleOut_Completion accepts b.N asynchronous completions of the
// echo model, spread over the engines, and waits until every one is done:
// the throughput of the queue, end to end.
func BenchmarkScaleOut_Completion(b *testing.B) {
	for _, s := range scaleOutSetups {
		b.Run(s.name, func(b *testing.B) {
			engines, ctx := openScaleOut(b, s.postgres, s.engines)
			c, vs := newCanvasVersions(b, ctx, engines[0])
			if _, _, err := engines[0].Environments.Publish(ctx, env.PublishVersionParams{CanvasID: c,
				EnvName: env.Production, VersionID: vs[0]}); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			ids := make([]string, b.N)
			for i := range b.N {
				r, err := engines[i%len(engines)].Completions.Run(ctx, completion.RunParams{CanvasID: c, Async: true,
					Variables: map[string]any{"name": "Ada"}})
				if err != nil {
					b.Fatal(err)
				}
				ids[i] = r.ID
			}
			for _, id := range ids {
				for {
					r, err := engines[0].Completions.GetRun(ctx, id)
					if err != nil {
						b.Fatal(err)
					}
					if r.Status == completion.StatusCompleted {
						break
					}
					if r.Status == completion.StatusFailed {
						b.Fatalf("run %s failed", id)
					}
					time.Sleep(time.Millisecond)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "completions/s")
		})
	}
}
