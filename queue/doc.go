// Package queue is the durable job queue behind the Store: every piece of
// background work (async completions, tasks, webhook deliveries, test-case
// generations, workflow runs) is a Job row, claimed by a Worker with a lease
// that a heartbeat extends, and run in the Worker's lane for its kind.
//
// A job that serves a record is written in the same transaction as that
// record, so an acknowledged request always has its job. A worker that
// crashes stops heartbeating; once its lease expires the job is claimed
// again, so no accepted work is lost. Handlers therefore run at least once
// and must be idempotent: they check the state of the record they serve
// before acting.
//
// # Lanes
//
// A Worker's slots are split into lanes, each with its own concurrency and
// its own claim loop that claims only the lane's kinds, so that a lane full
// of slow jobs (deliveries waiting on a receiver's timeout) never delays
// the jobs of another (completions). Every worker has LaneModel
// (completions, tasks, generations, workflow runs), LaneDelivery (webhook
// deliveries and fan-outs) and LaneMaintenance (purge, file expiry,
// workflow deadlines), of concurrency DefaultModelConcurrency,
// DefaultDeliveryConcurrency and DefaultMaintenanceConcurrency unless
// WorkerOptions.Lanes sets it, and LaneDefault, of concurrency
// WorkerOptions.Concurrency; WorkerOptions.Lanes may declare more.
// HandleIn registers a kind in a lane and Handle in LaneDefault; a kind
// belongs to one lane, and naming a lane the worker lacks panics. Only the
// lanes that have a kind claim. Notify wakes every lane; Cancel and the
// shutdown cover the jobs of all lanes.
//
// # Leases and heartbeats
//
// ClaimJobs leases due jobs to one owner until now+Lease and counts the
// claim as an attempt; two workers never hold the same job. While a handler
// runs, the worker extends the lease every Heartbeat. When the store
// answers a heartbeat with CONFLICT or NOT_FOUND the lease is lost (the job
// was cancelled with CancelJobs, or its lease expired and another worker
// claimed it): the handler's context is cancelled and its outcome is
// dropped. A running job whose lease expired after its MaxAttempts-th claim
// is failed ("lease expired after N attempts") instead of being claimed
// again, so a job that crashes every worker does not loop forever.
//
// # Outcomes and backoff
//
// A handler returning nil completes the job. Permanent(err) fails it at
// once. Any other error retries it: after RetryAfter's delay when the error
// carries one, otherwise after WorkerOptions.Backoff(attempt), by default
// exponential with full jitter (a random delay up to 1s*2^(attempt-1),
// capped at 10 minutes). A job whose attempts have reached MaxAttempts is
// failed instead of retried. A panicking handler is recovered and counts as
// a retryable error; the panic is logged at ERROR with the job's id, kind,
// attempt and stack. Every failure's message is kept in Job.LastError.
//
// # Shutdown
//
// Worker.Run returns once its context is done and the jobs of all its
// lanes are settled: it stops claiming, waits up to ShutdownTimeout for running handlers to
// return, then cancels the contexts of those still running and releases
// their jobs (ReleaseJob), which are due again at once and are not charged
// an attempt. Handlers must honour their context. Worker.Notify, called
// after an in-process enqueue, makes the worker claim at once instead of
// at its next poll.
package queue
