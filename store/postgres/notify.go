package postgres

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/promptcanvas/promptcanvas/queue"
)

// Compile-time check that DB wakes workers of other processes.
var _ queue.EnqueueWaker = (*DB)(nil)

// jobsChannel is the notification channel of committed jobs: a
// transaction that writes a job due now (or makes one due again) issues
// pg_notify on it, which Postgres delivers at the commit, once per
// transaction, to every listening session.
const jobsChannel = "canvas_jobs"

// notifyJob makes tx notify jobsChannel at its commit, once however many
// jobs it writes.
func notifyJob(ctx context.Context, tx *Tx) error {
	if tx.notified {
		return nil
	}
	if _, err := tx.Exec(ctx, `SELECT pg_notify($1, '')`, jobsChannel); err != nil {
		return err
	}
	tx.notified = true
	return nil
}

// WakeOnEnqueue calls wake after every commit of a due job by any process
// on the database, until stop is called; see queue.EnqueueWaker. The
// store's one listening connection is opened on the first call.
func (db *DB) WakeOnEnqueue(wake func()) (stop func()) { return db.listener.subscribe(wake) }

// listenRetry is how long the listener waits before it reconnects after
// its connection failed.
const listenRetry = time.Second

// listener holds one connection, outside the pool, that LISTENs on
// jobsChannel and calls every subscriber's wake for each notification. It
// reconnects after a failure and then wakes everyone, since commits may
// have gone unseen meanwhile.
type listener struct {
	cfg *pgx.ConnConfig

	mu      sync.Mutex
	subs    map[int]func()
	next    int
	started bool
	closed  bool
	cancel  context.CancelFunc
	done    chan struct{}
}

func newListener(cfg *pgx.ConnConfig) *listener {
	return &listener{cfg: cfg.Copy(), subs: map[int]func(){}, done: make(chan struct{})}
}

// subscribe adds wake and starts the listening loop on the first call.
func (l *listener) subscribe(wake func()) (stop func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	id := l.next
	l.next++
	l.subs[id] = wake
	if !l.started && !l.closed {
		l.started = true
		ctx, cancel := context.WithCancel(context.Background())
		l.cancel = cancel
		go l.run(ctx)
	}
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		delete(l.subs, id)
	}
}

// wakeAll calls every subscriber's wake.
func (l *listener) wakeAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, wake := range l.subs {
		wake()
	}
}

// run listens until ctx ends, reconnecting after each failure.
func (l *listener) run(ctx context.Context) {
	defer close(l.done)
	for ctx.Err() == nil {
		l.listen(ctx)
		select {
		case <-ctx.Done():
		case <-time.After(listenRetry):
		}
	}
}

// listen connects, LISTENs and wakes the subscribers for every
// notification until the connection fails or ctx ends.
func (l *listener) listen(ctx context.Context) {
	conn, err := pgx.ConnectConfig(ctx, l.cfg)
	if err != nil {
		return
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		conn.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, `LISTEN `+jobsChannel); err != nil {
		return
	}
	l.wakeAll() // what was committed while no one listened
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return
		}
		l.wakeAll()
	}
}

// close stops the loop, when it runs, and waits for it.
func (l *listener) close() {
	l.mu.Lock()
	l.closed = true
	started, cancel := l.started, l.cancel
	l.mu.Unlock()
	if started {
		cancel()
		<-l.done
	}
}
