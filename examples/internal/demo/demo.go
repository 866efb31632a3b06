package demo

import (
	"context"
	"errors"
	"os"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/engine"
)

// UserID is the user the examples act as.
const UserID = "ada"

// Demo is an Engine over a new data directory in a temporary directory,
// bootstrapped, with its background work running. Close stops the work,
// closes the store and removes the directory.
type Demo struct {
	*engine.Engine
	// Dir is the temporary data directory.
	Dir string
	// Workspace is the default workspace Bootstrap created.
	Workspace *canvas.Workspace
	// AdminToken is the admin API key Bootstrap created, for calls over
	// HTTP.
	AdminToken string

	done chan error
}

// Open creates a temporary directory named after name, opens an Engine on
// it with opts (engine.OpenSQLite) and bootstraps it as canvasd does on its
// first start: the default workspace and an admin API key. The engine's
// background work runs until Close. Open returns ctx with the caller the
// services act for in-process, a Principal in the context: user UserID of
// the default workspace, in role.
func Open(ctx context.Context, name string, role canvas.Role, opts engine.Options) (_ *Demo, _ context.Context, err error) {
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
	if d.Engine, err = engine.OpenSQLite(ctx, dir, opts); err != nil {
		return nil, nil, err
	}
	if _, d.AdminToken, err = d.Bootstrap(ctx, ""); err != nil {
		return nil, nil, err
	}
	ws, err := d.Store.GetWorkspaceByName(ctx, canvas.DefaultWorkspaceName)
	if err != nil {
		return nil, nil, err
	}
	d.Workspace = ws
	d.done = make(chan error, 1)
	runCtx := context.WithoutCancel(ctx)
	go func() { d.done <- d.Run(runCtx) }()
	ctx = canvas.NewContext(ctx, &canvas.Principal{WorkspaceID: ws.ID, UserID: UserID, Role: role})
	return d, ctx, nil
}

// Close stops the background work, waiting for it, closes the store and
// removes the directory.
func (d *Demo) Close() error {
	var errs []error
	if d.Engine != nil {
		errs = append(errs, d.Engine.Close())
	}
	if d.done != nil {
		errs = append(errs, <-d.done)
		d.done = nil
	}
	errs = append(errs, os.RemoveAll(d.Dir))
	return errors.Join(errs...)
}
