// Package demo is the set-up the example programs share, so that each of
// them shows only its walk-through: an Engine over a new data directory in
// a temporary directory (engine.OpenSQLite), bootstrapped as canvasd
// bootstraps a new database, with its background work running, and a
// caller put in the context.
package demo
