// Package engine is the one entry point for programs that embed Prompt
// Canvas: Open builds every service (canvases, environments, completions,
// workflows, test cases, generations, files, applications, deliveries) over
// one Store, with the queue worker that does their background work, in an
// order the caller never has to know. OpenSQLite opens the embedded
// default, a data directory holding a SQLite database and the uploaded
// files, and holds the directory while it is open, so that one process
// serves it (OpenSQLiteBeside opens it for tools beside that process);
// engine/pgengine opens a PostgreSQL database that several processes
// share, the uploaded files kept in it, so that only the programs that use
// PostgreSQL link its driver.
//
// Run does the background work (asynchronous completions and tasks, test
// case generations, workflow runs, webhook deliveries, the purge of ended
// records) until its context ends; Close stops it and releases what Open
// acquired. The services are safe for concurrent use and read the caller
// from their context (canvas.NewContext), as the HTTP server does for each
// request.
package engine
