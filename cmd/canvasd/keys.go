package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/store"
)

// stringList is a flag that may be repeated.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// keysCreate creates an API key and prints its token alone on the first
// line of stdout. The workspace is created when missing; every project must
// exist in it.
func keysCreate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var (
		cfg       config
		workspace string
		role      string
		name      string
		projects  stringList
	)
	fs := newFlagSet("canvasd keys create", stderr)
	cfg.dataFlag(fs, getenv)
	fs.StringVar(&workspace, "workspace", "", "`name` of the workspace (created when missing)")
	fs.StringVar(&role, "role", "", "`role` of the key: viewer, editor or admin")
	fs.Var(&projects, "project", "restrict the key to this project `id` (repeatable; default all projects)")
	fs.StringVar(&name, "name", "", "a `name` that tells the key apart (\"ci\", \"Ada's laptop\"); optional")
	if err := noPositional(fs, args, stderr); err != nil {
		return err
	}
	named := false
	fs.Visit(func(f *flag.Flag) { named = named || f.Name == "name" })
	if named {
		var problem string
		if name, problem = canvas.KeyName(name); problem != "" {
			fmt.Fprintf(stderr, "canvasd keys create: --name %s\n", problem)
			return errUsage
		}
	}
	workspace = strings.TrimSpace(workspace)
	if workspace == "" {
		fmt.Fprintln(stderr, "canvasd keys create: --workspace is required")
		return errUsage
	}
	if !canvas.Role(role).Valid() {
		fmt.Fprintf(stderr, "canvasd keys create: --role must be viewer, editor or admin, not %q\n", role)
		return errUsage
	}

	db, err := cfg.openStore(ctx, true)
	if err != nil {
		return err
	}
	defer db.Close()
	ws, err := ensureWorkspace(ctx, db, workspace)
	if err != nil {
		return err
	}
	var restrict []string
	for _, id := range projects {
		if slices.Contains(restrict, id) {
			continue
		}
		if _, err := db.GetProject(ctx, ws.ID, id); canvas.ErrorCode(err) == canvas.ENOTFOUND {
			return fmt.Errorf("project %q not found in workspace %q", id, ws.Name)
		} else if err != nil {
			return err
		}
		restrict = append(restrict, id)
	}
	token, key := canvas.NewAPIKey(ws.ID, canvas.Role(role), restrict)
	key.Name = name
	if err := db.CreateAPIKey(ctx, key); err != nil {
		return fmt.Errorf("create key: %w", err)
	}
	fmt.Fprintln(stdout, token)
	label := key.ID
	if key.Name != "" {
		label = fmt.Sprintf("%s (%q)", key.ID, key.Name)
	}
	fmt.Fprintf(stderr, "created API key %s in workspace %q with role %s; the token above is shown only once\n",
		label, ws.Name, key.Role)
	return nil
}

// ensureWorkspace returns the workspace with that name, creating it when
// missing, also when another process creates it at the same moment.
func ensureWorkspace(ctx context.Context, db store.Store, name string) (*canvas.Workspace, error) {
	ws, err := db.GetWorkspaceByName(ctx, name)
	if canvas.ErrorCode(err) != canvas.ENOTFOUND {
		return ws, err
	}
	ws = &canvas.Workspace{Name: name}
	if err := db.CreateWorkspace(ctx, ws); canvas.ErrorCode(err) == canvas.ECONFLICT {
		return db.GetWorkspaceByName(ctx, name)
	} else if err != nil {
		return nil, fmt.Errorf("create workspace: %w", err)
	}
	return ws, nil
}

// keysList prints every API key as a table, oldest first.
func keysList(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var (
		cfg       config
		workspace string
	)
	fs := newFlagSet("canvasd keys list", stderr)
	cfg.dataFlag(fs, getenv)
	fs.StringVar(&workspace, "workspace", "", "list only the keys of the workspace with this `name`")
	if err := noPositional(fs, args, stderr); err != nil {
		return err
	}
	db, err := cfg.openStore(ctx, false)
	if err != nil {
		return err
	}
	defer db.Close()

	all, err := db.ListWorkspaces(ctx)
	if err != nil {
		return err
	}
	names := make(map[string]string, len(all))
	var wsID string
	for _, w := range all {
		names[w.ID] = w.Name
		if w.Name == workspace {
			wsID = w.ID
		}
	}
	if workspace != "" && wsID == "" {
		return fmt.Errorf("workspace %q not found", workspace)
	}
	list, err := db.ListAPIKeys(ctx, wsID)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tWORKSPACE\tROLE\tPROJECTS\tCREATED\tREVOKED")
	for _, k := range list {
		projects := "all"
		if k.Projects != nil {
			projects = strings.Join(k.Projects, ",")
		}
		revoked := "-"
		if k.RevokedAt != nil {
			revoked = k.RevokedAt.UTC().Format(time.RFC3339)
		}
		name := k.Name
		if name == "" {
			name = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, name, names[k.WorkspaceID], k.Role, projects,
			k.CreatedAt.UTC().Format(time.RFC3339), revoked)
	}
	return tw.Flush()
}

// keysRevoke revokes the API key with the given id; revoking a revoked key
// is not an error.
func keysRevoke(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var cfg config
	fs := newFlagSet("canvasd keys revoke", stderr)
	cfg.dataFlag(fs, getenv)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		fmt.Fprint(stderr, "canvasd keys revoke: expected one KEY_ID\n\n"+commandUsage("keys revoke"))
		return errUsage
	}
	db, err := cfg.openStore(ctx, false)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.RevokeAPIKey(ctx, pos[0]); canvas.ErrorCode(err) == canvas.ENOTFOUND {
		return fmt.Errorf("API key %q not found", pos[0])
	} else if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "revoked %s\n", pos[0])
	return nil
}

// noPositional parses args and refuses positional arguments.
func noPositional(fs *flag.FlagSet, args []string, stderr io.Writer) error {
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		fmt.Fprintf(stderr, "%s: unexpected argument %q\n", fs.Name(), pos[0])
		return errUsage
	}
	return nil
}
