// Package workflow runs multi-step workflows: a workflow version's
// specification (nodes with actions and ports, edges between ports) is
// compiled into a directed acyclic graph when the version is saved, and each
// run of it executes the graph node by node, durably.
//
// A run is a Run record with one Step per node. Steps run in topological
// order, independent branches in parallel (bounded); every change of a
// step's state is written to the Store as it happens, and the run's status
// follows the transition table of status.go, enforced in one place
// (Next). Execution is a queue job (JobKindRun): after a crash or a restart
// the job is claimed again and the run goes on from the steps that had not
// completed. A run pauses in waiting-for-review at a review node and in
// requires-action at an action node, and continues when the Service's
// Review or Resume is called. Every run has a deadline (the spec's
// timeoutSeconds, DefaultTimeout when it has none); past it the run ends in
// timeout and the step in flight is cancelled.
//
// Actions are registered in a Registry: the built-in input, llm, template,
// condition, review, action and output (Builtins), plus whatever an embedder
// registers. docs/workflows.md documents the specification format and the
// status transitions.
package workflow
