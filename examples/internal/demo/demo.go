package demo

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
)

// UserID is the user the examples act as.
const UserID = "ada"

// Demo is a bootstrapped store in a temporary directory, and the queue
// workers run on it. Close stops the workers, closes the store and removes
// the directory.
type Demo struct {
	// DB is the store, a new database file in Dir.
	DB *sqlite.DB
	// Dir is the temporary directory, for any other files an example keeps.
	Dir string
	// Workspace is the default workspace Bootstrap created.
	Workspace *canvas.Workspace
	// AdminToken is the admin API key Bootstrap created, for calls over
	// HTTP.
	AdminToken string

	stops []func() error
}

// Open creates a temporary directory named after name, opens a SQLite store
// in it and bootstraps it as canvasd does on its first start: the default
// workspace and an admin API key. It returns ctx with the caller the
// services act for in-process, a Principal in the context: user UserID of
// the default workspace, in role.
func Open(ctx context.Context, name string, role canvas.Role) (_ *Demo, _ context.Context, err error) {
	dir, err := os.MkdirTemp("", "canvas-"+name)
	if err != nil {
		return nil, nil, err
	}
	d := &Demo{Dir: dir}
	defer func() {
		if err != nil {
			err = errors.Join(err, d.Close())
		}
	}()
	if d.DB, err = sqlite.Open(ctx, filepath.Join(dir, "canvas.db")); err != nil {
		return nil, nil, err
	}
	if _, d.AdminToken, err = canvas.Bootstrap(ctx, d.DB, ""); err != nil {
		return nil, nil, err
	}
	if d.Workspace, err = d.DB.GetWorkspaceByName(ctx, canvas.DefaultWorkspaceName); err != nil {
		return nil, nil, err
	}
	ctx = canvas.NewContext(ctx, &canvas.Principal{WorkspaceID: d.Workspace.ID, UserID: UserID, Role: role})
	return d, ctx, nil
}

// RunWorker runs w in the background until Close, which stops it and waits
// for it to shut down before the store closes. Register w's handlers first.
func (d *Demo) RunWorker(ctx context.Context, w *queue.Worker) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	d.stops = append(d.stops, func() error {
		cancel()
		return <-done
	})
}

// Close stops the workers, closes the store and removes the directory.
func (d *Demo) Close() error {
	var errs []error
	for _, stop := range d.stops {
		errs = append(errs, stop())
	}
	d.stops = nil
	if d.DB != nil {
		errs = append(errs, d.DB.Close())
	}
	errs = append(errs, os.RemoveAll(d.Dir))
	return errors.Join(errs...)
}
