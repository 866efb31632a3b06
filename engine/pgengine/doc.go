// Package pgengine opens an engine.Engine on a PostgreSQL database that
// several processes share. It is a package of its own so that a program
// that embeds the engine on SQLite does not link the PostgreSQL driver:
// only programs that import pgengine (cmd/canvasd) do.
package pgengine
