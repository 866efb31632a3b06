package queue

// EnqueueWaker is implemented by a Store shared by several processes that
// learns when any of them commits a job (store/postgres does, with LISTEN
// and NOTIFY). A Worker whose Store implements it subscribes while it
// runs: a job enqueued by another process wakes every lane at once, as
// Notify does for a job enqueued in this process, instead of waiting for
// the next poll. Polling goes on regardless, so a lost wake-up costs at
// most one PollInterval.
type EnqueueWaker interface {
	// WakeOnEnqueue calls wake after each commit of a job by any process
	// on the store, until stop is called. wake must not block; it may be
	// called from any goroutine, also for a commit of this process, and
	// more often than jobs were enqueued (after a reconnection, when some
	// commits may have gone unseen).
	WakeOnEnqueue(wake func()) (stop func())
}
