package server

import (
	"container/list"
	"context"
	"math"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/engine"
	"github.com/promptcanvas/promptcanvas/queue"
)

// Limits bounds how fast callers may use the server and how much background
// work a workspace may leave waiting. A zero field turns its limit off; the
// zero Limits limits nothing. Every refusal is 429 RATE_LIMITED with
// Retry-After.
type Limits struct {
	// PerKey is the sustained rate, in requests per second, of one
	// credential: an API key, or a JWT's user in its workspace. PerKeyBurst
	// is how many requests may come at once (at least 1).
	PerKey      float64
	PerKeyBurst int
	// FailedAuthPerAddr is the sustained rate, per second, of failed
	// authentications from one client address, FailedAuthBurst how many
	// may fail at once (at least 1). Once they are spent, the address's
	// requests are refused before their token is checked.
	FailedAuthPerAddr float64
	FailedAuthBurst   int
	// MaxTracked bounds how many credentials and how many addresses have a
	// limiter each; past it the least recently seen is forgotten (and
	// starts afresh when seen again). Zero means DefaultMaxTracked.
	MaxTracked int
	// MaxQueuedPerWorkspace bounds the model work (asynchronous
	// completions and tasks, workflow runs, test case generations) a
	// workspace may have waiting in the queue: while it has that many, a
	// request that would add more is refused.
	MaxQueuedPerWorkspace int
	// MaxQueueDelay bounds how long new model work should wait to start:
	// while the queue predicts (queuedelay.go) that work queued now would
	// wait longer than this before a worker, in any replica, takes it, a
	// request that would add model work is refused, since the server is not
	// keeping up with what it has accepted. It needs a ModelWork that
	// reports the due model jobs.
	MaxQueueDelay time.Duration
	// ModelWork reads the model work (asynchronous completions and tasks,
	// workflow runs, test case generations) in the queue and this process's
	// model lane, which the two bounds above count. Nil takes the Engine;
	// without either, neither bound applies.
	ModelWork ModelWork
}

// ModelWork reads the queue's model work for Limits; *engine.Engine is
// one.
type ModelWork interface {
	// QueuedModelWork counts the model jobs of workspaceID waiting in the
	// queue, whenever they are due.
	QueuedModelWork(ctx context.Context, workspaceID string) (int, error)
	// DueModelWork reads the model jobs due in the queue, every process's;
	// ok is false when the queue does not report them.
	DueModelWork(ctx context.Context) (due queue.Due, ok bool, err error)
	// ModelLoad reads this process's model lane: its slots, the jobs it
	// runs, and how long its recent jobs took.
	ModelLoad() queue.LaneLoad
}

var _ ModelWork = (*engine.Engine)(nil)

// DefaultLimits are generous limits for a server facing the network:
// 200 requests per second per credential (bursts of 400), enough for a
// back end serving its users' requests through one key; 1 failed
// authentication per second per address (bursts of 20); 10,000 queued
// runs per workspace; no new model work while work queued now would wait
// more than DefaultMaxQueueDelay to start.
var DefaultLimits = Limits{PerKey: 200, PerKeyBurst: 400, FailedAuthPerAddr: 1, FailedAuthBurst: 20,
	MaxQueuedPerWorkspace: 10000, MaxQueueDelay: DefaultMaxQueueDelay}

// DefaultMaxTracked is how many credentials, and how many addresses, have
// a limiter each unless Limits.MaxTracked says otherwise.
const DefaultMaxTracked = 10000

// backlogRetryAfter is the Retry-After of a request refused because its
// workspace's queue is full: about how long a few queued runs take.
const backlogRetryAfter = 5 * time.Second

// backlogRoutes are the routes that always add model work to the queue;
// admit applies the queue's bounds to them. POST /v2/chat/completions adds
// some only when asynchronous, which its body says: its handler applies
// the bounds then (admitModelWork). A synchronous request holds its caller
// until its run ends, so its caller's connections bound it.
var backlogRoutes = map[string]bool{
	"POST /v1/tasks":           true,
	"POST /test-case/{id}/run": true,
	"POST /test-case/run":      true,
	"POST /workflow/runs":      true,
}

// unmeteredRoutes are the routes the per-key rate does not count: reading
// the version an environment serves (and its conditional and long-polled
// forms, answered 304) is the hot path of every program that fetches its
// prompt per request, and costs a cached authentication and a cached read
// (freshcache), no write and no model work. Connections (--max-connections)
// and the long poll's bound still limit it, and failed authentications are
// still counted per address.
var unmeteredRoutes = map[string]bool{
	"GET /environment/version": true,
}

// limiter holds the server's rate limiters.
type limiter struct {
	limits Limits
	keys   *limiterSet
	addrs  *limiterSet
	delay  queueDelay
	now    func() time.Time
}

func newLimiter(l Limits) *limiter {
	if l.MaxTracked <= 0 {
		l.MaxTracked = DefaultMaxTracked
	}
	return &limiter{limits: l, now: time.Now,
		keys:  newLimiterSet(rate.Limit(l.PerKey), max(1, l.PerKeyBurst), l.MaxTracked),
		addrs: newLimiterSet(rate.Limit(l.FailedAuthPerAddr), max(1, l.FailedAuthBurst), l.MaxTracked)}
}

// admit authenticates the request of the route pattern and applies the
// limits: an address that spent its failed authentications is refused
// before its token is checked, a credential past its rate is refused (but
// on the unmeteredRoutes), and
// a route that adds model work is refused while its workspace's queue is
// full or the queue would start it too late. An admitted request of such a
// route counts as model work being queued until the caller calls release
// (queuedelay.go).
func (s *Server) admit(r *http.Request, pattern string) (p *canvas.Principal, release func(), err error) {
	release = func() {}
	addr := clientAddr(r)
	if s.limits.limits.FailedAuthPerAddr > 0 {
		if wait := s.limits.addrs.waitFor(addr, s.limits.now()); wait > 0 {
			return nil, release, canvas.RateLimited(wait, "Too many failed authentications from this address.")
		}
	}
	p, err = s.auth.Authenticate(r)
	if err != nil {
		if s.limits.limits.FailedAuthPerAddr > 0 && canvas.ErrorCode(err) == canvas.EUNAUTHORIZED {
			s.limits.addrs.take(addr, s.limits.now())
		}
		return nil, release, err
	}
	if s.limits.limits.PerKey > 0 && !unmeteredRoutes[pattern] {
		if wait := s.limits.keys.take(rateKey(p), s.limits.now()); wait > 0 {
			return nil, release, canvas.RateLimited(wait, "Too many requests with this credential.")
		}
	}
	if backlogRoutes[pattern] {
		if release, err = s.admitModelWork(r.Context(), p); err != nil {
			return nil, release, err
		}
	}
	return p, release, nil
}

// admitModelWork applies the queue's bounds to a request of p that adds
// model work (checkModelWork) and, admitted, counts it as model work being
// queued until release is called.
func (s *Server) admitModelWork(ctx context.Context, p *canvas.Principal) (release func(), err error) {
	if err := s.checkModelWork(ctx, p); err != nil {
		return func() {}, err
	}
	return s.limits.delay.admitted(), nil
}

// checkModelWork refuses model work of p while p's workspace has
// MaxQueuedPerWorkspace runs waiting, or while work queued now would start
// too late.
func (s *Server) checkModelWork(ctx context.Context, p *canvas.Principal) error {
	l := s.limits.limits
	if l.ModelWork == nil {
		return nil
	}
	if l.MaxQueuedPerWorkspace > 0 {
		if err := s.checkBacklog(ctx, p.WorkspaceID); err != nil {
			return err
		}
	}
	if l.MaxQueueDelay > 0 {
		return s.checkQueueDelay(ctx)
	}
	return nil
}

// checkBacklog refuses new model work while the workspace has
// MaxQueuedPerWorkspace runs waiting.
func (s *Server) checkBacklog(ctx context.Context, workspaceID string) error {
	n, err := s.limits.limits.ModelWork.QueuedModelWork(ctx, workspaceID)
	if err != nil {
		return err
	}
	if n >= s.limits.limits.MaxQueuedPerWorkspace {
		return canvas.RateLimited(backlogRetryAfter, "This workspace has too much work waiting; try again later.")
	}
	return nil
}

// rateKey names the API key or user of p for its rate limit.
func rateKey(p *canvas.Principal) string {
	if p.KeyID != "" {
		return "key:" + p.KeyID
	}
	return "user:" + p.WorkspaceID + ":" + p.UserID
}

// clientAddr is the request's client IP address: the peer of the
// connection. Forwarding headers are not trusted, since any client can
// send them.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// retryAfterSeconds formats d for the Retry-After header: whole seconds,
// rounded up, at least 1.
func retryAfterSeconds(d time.Duration) string {
	return strconv.Itoa(max(1, int(math.Ceil(d.Seconds()))))
}

// limiterSet is a token bucket per name, at most max of them: the least
// recently used is forgotten first.
type limiterSet struct {
	limit rate.Limit
	burst int
	max   int

	mu    sync.Mutex
	byKey map[string]*list.Element
	lru   *list.List // of *limiterEntry, most recently used first
}

type limiterEntry struct {
	name string
	lim  *rate.Limiter
}

func newLimiterSet(limit rate.Limit, burst, max int) *limiterSet {
	return &limiterSet{limit: limit, burst: burst, max: max, byKey: map[string]*list.Element{}, lru: list.New()}
}

// get returns name's limiter, creating it (and forgetting the least
// recently used one when the set is full).
func (ls *limiterSet) get(name string) *rate.Limiter {
	if el, ok := ls.byKey[name]; ok {
		ls.lru.MoveToFront(el)
		return el.Value.(*limiterEntry).lim
	}
	if ls.lru.Len() >= ls.max {
		oldest := ls.lru.Back()
		ls.lru.Remove(oldest)
		delete(ls.byKey, oldest.Value.(*limiterEntry).name)
	}
	e := &limiterEntry{name: name, lim: rate.NewLimiter(ls.limit, ls.burst)}
	ls.byKey[name] = ls.lru.PushFront(e)
	return e.lim
}

// take spends one of name's tokens and returns zero, or, when none is
// left, spends nothing and returns how long until one is.
func (ls *limiterSet) take(name string, now time.Time) time.Duration {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	res := ls.get(name).ReserveN(now, 1)
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return d
	}
	return 0
}

// waitFor returns how long until name has a token, spending nothing; zero
// when it has one.
func (ls *limiterSet) waitFor(name string, now time.Time) time.Duration {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	el, ok := ls.byKey[name]
	if !ok {
		return 0
	}
	tokens := el.Value.(*limiterEntry).lim.TokensAt(now)
	if tokens >= 1 {
		return 0
	}
	return time.Duration((1 - tokens) / float64(ls.limit) * float64(time.Second))
}

// len returns how many limiters the set holds.
func (ls *limiterSet) len() int {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.lru.Len()
}
