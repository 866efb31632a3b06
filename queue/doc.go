// Package queue is the durable job queue behind the Store: every piece of
// background work (async completions, tasks, webhook deliveries, test-case
// generations, workflow runs) is a Job row, claimed by a Worker with a lease
// that a heartbeat extends.
//
// A job that serves a record is written in the same transaction as that
// record, so an acknowledged request always has its job. A worker that
// crashes stops heartbeating; once its lease expires the job is claimed
// again, so no accepted work is lost. Handlers therefore run at least once
// and must be idempotent: they check the state of the record they serve
// before acting.
package queue
