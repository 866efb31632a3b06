// Package canvas is the root domain package of Prompt Canvas. It owns the core
// types (Canvas, Version, Message, Variable, Configuration), workspaces,
// projects and API keys, the one error type with its codes, and the Principal
// that every request carries in its context.Context.
//
// Other domain packages import canvas; canvas imports none of them, nor any
// store or transport. Persistence is reached through the small Store
// interface declared here, which store/sqlite implements.
package canvas
