package sqlite

import (
	"context"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/env"
)

// benchCanvas opens a database in a temp dir with one workspace, one canvas
// and n versions of it.
func benchCanvas(b *testing.B, n int) (*DB, *canvas.Canvas, []*canvas.Version) {
	b.Helper()
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	ws := &canvas.Workspace{Name: "bench"}
	if err := db.CreateWorkspace(ctx, ws); err != nil {
		b.Fatal(err)
	}
	c := &canvas.Canvas{Title: "bench", WorkspaceID: ws.ID, CreatedBy: "bench"}
	if err := db.CreateCanvas(ctx, c); err != nil {
		b.Fatal(err)
	}
	versions := make([]*canvas.Version, n)
	for i := range versions {
		versions[i] = &canvas.Version{PromptID: c.ID, WorkspaceID: ws.ID, Title: "v", CreatedBy: "bench",
			Messages: []canvas.Message{{Role: canvas.RoleSystem, Content: "Hello {{name}}"}}}
		if err := db.CreateVersion(ctx, versions[i]); err != nil {
			b.Fatal(err)
		}
	}
	return db, c, versions
}

// activeCount returns how many active publications the environment has.
func activeCount(b *testing.B, db *DB, envID string) int {
	b.Helper()
	var n int
	if err := db.read.QueryRow(`SELECT COUNT(*) FROM publications WHERE environment_id = ? AND is_active`, envID).Scan(&n); err != nil {
		b.Fatal(err)
	}
	return n
}

// BenchmarkListPublications reads a history page of an environment with
// 100,000 publications, at the start and deep in the history: reading by Seq
// range makes both cost the same.
func BenchmarkListPublications(b *testing.B) {
	const total = 100_000
	ctx := context.Background()
	db, c, versions := benchCanvas(b, 2)
	prod, err := db.FindEnvironment(ctx, env.FindEnvironmentParams{WorkspaceID: c.WorkspaceID, CanvasID: c.ID,
		Name: env.Production})
	if err != nil {
		b.Fatal(err)
	}
	// Setup writes the history directly in one transaction; Publish would
	// take one commit per entry.
	tx, err := db.beginWrite(ctx)
	if err != nil {
		b.Fatal(err)
	}
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO publications (id, environment_id, version_id, seq, is_active,
		published_at, published_by, unpublished_at) VALUES (?, ?, ?, ?, ?, ?, 'bench', ?)`)
	if err != nil {
		b.Fatal(err)
	}
	now := formatTime(tx.now)
	for seq := 1; seq <= total; seq++ {
		active, unpublished := seq == total, any(now)
		if active {
			unpublished = nil
		}
		if _, err := stmt.ExecContext(ctx, db.NewID(), prod.ID, versions[seq%2].ID, seq, active, now, unpublished); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE environments SET last_seq = ? WHERE id = ?`, total, prod.ID); err != nil {
		b.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name   string
		offset int
	}{{"first-page", 0}, {"offset-99900", 99_900}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				page, n, err := db.ListPublications(ctx, c.WorkspaceID, prod.ID, 20, bc.offset)
				if err != nil || n != total || len(page) != 20 {
					b.Fatalf("page of %d, total %d, err %v", len(page), n, err)
				}
			}
		})
	}
}

// BenchmarkPublish measures publishes per second with 8 concurrent
// publishers, beside the ceiling of the same disk: one minimal write commit
// per operation. Durability is the production setting (synchronous=FULL).
func BenchmarkPublish(b *testing.B) {
	const publishers = 8
	ctx := context.Background()
	parallel := func(b *testing.B, op func(worker int) error) {
		b.SetParallelism(max(1, publishers/runtimeProcs()))
		var workers atomic.Int64
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			worker := int(workers.Add(1) - 1)
			for pb.Next() {
				if err := op(worker); err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
	}

	b.Run("commit-ceiling", func(b *testing.B) {
		db, c, _ := benchCanvas(b, 0)
		parallel(b, func(int) error {
			tx, err := db.beginWrite(ctx)
			if err != nil {
				return err
			}
			defer tx.Rollback()
			if _, err := tx.ExecContext(ctx, `UPDATE canvases SET version_seq = version_seq + 1 WHERE id = ?`, c.ID); err != nil {
				return err
			}
			return tx.Commit()
		})
	})
	b.Run("publish-8", func(b *testing.B) {
		db, c, versions := benchCanvas(b, 4*publishers)
		var n atomic.Int64
		parallel(b, func(int) error {
			v := versions[int(n.Add(1))%len(versions)]
			_, _, err := db.Publish(ctx, env.PublishParams{WorkspaceID: c.WorkspaceID, CanvasID: c.ID,
				EnvName: env.Production, VersionID: v.ID, By: "bench"})
			return err
		})
		b.StopTimer()
		prod, err := db.FindEnvironment(ctx, env.FindEnvironmentParams{WorkspaceID: c.WorkspaceID, CanvasID: c.ID,
			Name: env.Production})
		if err != nil {
			b.Fatal(err)
		}
		if got := activeCount(b, db, prod.ID); got != 1 {
			b.Fatalf("%d active publications, want exactly 1", got)
		}
	})
}

func runtimeProcs() int { return runtime.GOMAXPROCS(0) }
