// Package demo is the set-up the example programs share, so that each of
// them shows only its walk-through: a new SQLite store in a temporary
// directory, bootstrapped as canvasd bootstraps a new database, a caller
// put in the context, and a queue worker run around the walk-through.
package demo
