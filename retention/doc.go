// Package retention purges the ended background records that nobody needs
// any more: finished queue jobs, webhook delivery log rows (with their
// attempts), completion and task runs, and workflow runs (with their
// steps), each kind once it is older than its own retention. Records that
// have not ended (a queued or running job, a pending delivery, a run that
// is still going or paused) are never purged, whatever their age.
//
// The purge is itself a durable queue job of kind JobKind. Schedule makes
// sure one is queued (at start-up; it is idempotent across restarts and
// processes), and Handle, its handler, deletes in small batches, each its
// own short write transaction so that no other writer waits long, then
// queues the next purge an Interval later. A purge that crashes is claimed
// again like any job; one whose chain was broken is queued again at the
// next start-up.
package retention
