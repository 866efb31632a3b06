package server

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/promptcanvas/promptcanvas/audit"
	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/credential"
	"github.com/promptcanvas/promptcanvas/engine"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/experiment"
	"github.com/promptcanvas/promptcanvas/idempotency"
	"github.com/promptcanvas/promptcanvas/review"
	"github.com/promptcanvas/promptcanvas/testcase"
	"github.com/promptcanvas/promptcanvas/vault"
	"github.com/promptcanvas/promptcanvas/webhook"
	"github.com/promptcanvas/promptcanvas/workflow"
)

// DefaultMaxBodyBytes bounds request bodies unless Options says otherwise.
const DefaultMaxBodyBytes = 4 << 20

// Options wires a Server. Engine, or else Store, Canvases and
// Environments, are required.
type Options struct {
	// Engine provides every service: how canvasd and embedders mount the
	// whole system. It fills the fields below that are nil, and the
	// model work of Limits.
	Engine *engine.Engine

	// Store keeps the Idempotency-Keys of writes.
	Store        idempotency.Store
	Canvases     *canvas.Service
	Environments *env.Service
	// Completions runs canvases and tasks; when nil, the completion and
	// task routes answer NOT_FOUND.
	Completions *completion.Service
	// Files is the file vault; when nil, the /v3/files routes answer
	// NOT_FOUND.
	Files *vault.Service
	// TestCases manages test cases and tags; when nil, the test case and
	// tag routes answer NOT_FOUND.
	TestCases *testcase.Service
	// Generations runs test cases; when nil, the run, generation and
	// execution routes answer NOT_FOUND.
	Generations *testcase.GenerationService
	// Applications manages applications and their webhook subscriptions;
	// when nil, the /applications routes answer NOT_FOUND.
	Applications *webhook.ApplicationService
	// Credentials manages credentials and model prices; when nil, the
	// /credentials and /models routes answer NOT_FOUND.
	Credentials *credential.Service
	// Deliveries serves the webhook delivery log, redelivery and Test
	// Requests; when nil, those routes answer NOT_FOUND.
	Deliveries *webhook.DeliveryService
	// Workflows starts, reads, cancels, reviews and resumes workflow runs;
	// when nil, the /workflow/runs routes answer NOT_FOUND.
	Workflows *workflow.Service
	// Review is the review queue of live runs; when nil, the
	// /review-queue routes answer NOT_FOUND.
	Review *review.Service
	// Experiments runs experiments and keeps saved evaluators; when nil,
	// the /experiments and /evaluators routes answer NOT_FOUND.
	Experiments *experiment.Service
	// Audit reads the audit log; when nil, GET /audit-events answers
	// NOT_FOUND.
	Audit *audit.Service
	// Auth turns a request's bearer token into a principal.
	Auth *Authenticator
	// Ready reports whether the server can serve: GET /healthz answers 500
	// while it fails. Nil takes the Engine's Ping; with neither, /healthz
	// answers while the process does.
	Ready func(ctx context.Context) error
	// Changes is the change signal of the environment watch (watch.go).
	// Nil takes the Engine's; with neither, every watched environment is
	// read again at each poll.
	Changes canvas.ChangeVersioner
	// Logger receives request logs; nil discards them.
	Logger *slog.Logger
	// MaxBodyBytes bounds request bodies (413 beyond); zero means
	// DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// MaxHeaderBytes bounds a request's header block (431 with the error
	// body beyond); zero means DefaultMaxHeaderBytes. It should stay below
	// the http.Server's own MaxHeaderBytes, past which net/http answers
	// 431 itself, in plain text.
	MaxHeaderBytes int
	// Idempotency keeps the Idempotency-Keys of POST requests in the name
	// of this process; nil takes the Engine's, and without an Engine one
	// over Store with the default lease.
	Idempotency *idempotency.Service
	// Limits bounds request rates and queued work (ratelimit.go); the
	// zero value limits nothing.
	Limits Limits
	// Metrics is the registry of the HTTP metrics; nil takes the Engine's,
	// and without an Engine nothing is counted.
	Metrics *prometheus.Registry
	// PublicMetrics serves Metrics at GET /metrics on this handler, to
	// admins only. Off, the operator serves them on a listener of their
	// own (MetricsHandler).
	PublicMetrics bool
	// TracerProvider makes a span of each request; nil takes the
	// Engine's, and without one nothing is recorded.
	TracerProvider trace.TracerProvider
	// Watch tunes GET /environment/watch and the long-polled
	// GET /environment/version.
	Watch WatchOptions
}

// Server is the HTTP face of the service.
type Server struct {
	store        idempotency.Store
	ready        func(ctx context.Context) error
	canvases     *canvas.Service
	environments *env.Service
	completions  *completion.Service
	testCases    *testcase.Service
	files        *vault.Service
	generations  *testcase.GenerationService
	applications *webhook.ApplicationService
	credentials  *credential.Service
	deliveries   *webhook.DeliveryService
	workflows    *workflow.Service
	review       *review.Service
	audit        *audit.Service
	experiments  *experiment.Service
	auth         *Authenticator
	logger       *slog.Logger
	metrics      *httpMetrics // nil counts nothing
	tracer       trace.Tracer // nil records nothing
	maxBody      int64
	maxHeader    int
	idem         *idempotency.Service
	limits       *limiter
	mux          *http.ServeMux
	schemas      *schemaSet
	watch        *watchHub
	heartbeat    time.Duration
	watchStop    <-chan struct{}
	watchRecheck time.Duration
	// patterns lists every registered route, so that a test can check each
	// one against the OpenAPI document.
	patterns []string
	// literal maps each path registered without wildcards to its methods
	// (with HEAD for GET), sorted; see addPattern.
	literal map[string][]string
}

// handlerFunc is the shape of every handler: errors are returned, and the
// adapter writes them.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// New returns the service's http.Handler.
func New(opts Options) (http.Handler, error) {
	s, err := newServer(opts)
	if err != nil {
		return nil, err
	}
	return s.middleware(s.mux), nil
}

// newServer builds the Server with every route registered; New wraps it in
// the middleware.
func newServer(opts Options) (*Server, error) {
	if e := opts.Engine; e != nil {
		fill(&opts.Store, idempotency.Store(e.Store))
		if opts.Ready == nil {
			opts.Ready = e.Ping
		}
		fill(&opts.Changes, e.Changes)
		fill(&opts.Canvases, e.Canvases)
		fill(&opts.Environments, e.Environments)
		fill(&opts.Completions, e.Completions)
		fill(&opts.Files, e.Files)
		fill(&opts.TestCases, e.TestCases)
		fill(&opts.Generations, e.Generations)
		fill(&opts.Applications, e.Applications)
		fill(&opts.Credentials, e.Credentials)
		fill(&opts.Deliveries, e.Deliveries)
		fill(&opts.Workflows, e.Workflows)
		fill(&opts.Review, e.Review)
		fill(&opts.Experiments, e.Experiments)
		fill(&opts.Audit, e.Audit)
		fill(&opts.Metrics, e.Metrics)
		fill(&opts.TracerProvider, e.TracerProvider)
		fill(&opts.Limits.ModelWork, ModelWork(e))
		fill(&opts.Idempotency, e.Idempotency)
	}
	s := &Server{
		store:        opts.Store,
		ready:        opts.Ready,
		canvases:     opts.Canvases,
		environments: opts.Environments,
		completions:  opts.Completions,
		testCases:    opts.TestCases,
		files:        opts.Files,
		generations:  opts.Generations,
		applications: opts.Applications,
		credentials:  opts.Credentials,
		deliveries:   opts.Deliveries,
		workflows:    opts.Workflows,
		review:       opts.Review,
		experiments:  opts.Experiments,
		audit:        opts.Audit,
		auth:         opts.Auth,
		logger:       opts.Logger,
		maxBody:      opts.MaxBodyBytes,
		maxHeader:    opts.MaxHeaderBytes,
		idem:         opts.Idempotency,
		limits:       newLimiter(opts.Limits),
		mux:          http.NewServeMux(),
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	if s.idem == nil {
		s.idem = idempotency.NewService(idempotency.Options{Store: opts.Store})
	}
	if s.maxBody <= 0 {
		s.maxBody = DefaultMaxBodyBytes
	}
	if s.maxHeader <= 0 {
		s.maxHeader = DefaultMaxHeaderBytes
	}
	if tp := opts.TracerProvider; tp != nil && !isNoop(tp) {
		s.tracer = tp.Tracer(tracerName)
	}
	if opts.Metrics != nil {
		if err := s.registerMetrics(opts.Metrics, opts.PublicMetrics); err != nil {
			return nil, err
		}
	}
	s.watch, s.heartbeat = newWatchHub(opts), cmp.Or(opts.Watch.Heartbeat, DefaultWatchHeartbeat)
	s.watchStop, s.watchRecheck = opts.Watch.Stop, cmp.Or(opts.Watch.Recheck, DefaultWatchRecheck)
	schemas, err := loadSchemas()
	if err != nil {
		return nil, err
	}
	s.schemas = schemas

	s.publicRoute("GET /healthz", s.handleHealth)
	s.publicRoute("GET /openapi.json", s.handleOpenAPI)
	s.registerConsoleRoutes()
	s.registerCanvasRoutes()
	s.registerProjectRoutes()
	s.registerAPIKeyRoutes()
	s.registerEnvironmentRoutes()
	s.registerRequestRoutes()
	s.registerCompletionRoutes()
	s.registerOpenAIRoutes()
	s.registerTaskRoutes()
	s.registerGenerationRoutes()
	s.registerTestCaseRoutes()
	s.registerApplicationRoutes()
	s.registerCredentialRoutes()
	s.registerFileRoutes()
	s.registerDeliveryRoutes()
	s.registerWorkflowRoutes()
	s.registerReviewRoutes()
	s.registerExperimentRoutes()
	s.registerAuditRoutes()
	return s, nil
}

// route registers an authenticated handler: the bearer token is checked,
// and the limits applied (admit), before h runs, and the principal is in
// the request context. What admit holds for the request (its place among
// the model work being queued) is released once h returns.
func (s *Server) route(pattern string, h handlerFunc) {
	s.addPattern(pattern)
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		p, release, err := s.admit(r, pattern)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		defer release()
		// The changes the request makes are recorded with its id and
		// its client's address (audit.Event).
		ctx := audit.WithOrigin(canvas.NewContext(r.Context(), p),
			audit.Origin{RequestID: requestIDFrom(r.Context()), RemoteAddr: clientAddr(r)})
		r = r.WithContext(ctx)
		if err := h(w, r); err != nil {
			s.writeError(w, r, err)
		}
	})
}

// publicRoute registers a handler that needs no authentication.
func (s *Server) publicRoute(pattern string, h handlerFunc) {
	s.addPattern(pattern)
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			s.writeError(w, r, err)
		}
	})
}

// middleware gives every request an id, recovers from panics, answers
// unknown routes and wrong methods with the error body (a wrong method on a
// path registered without wildcards too, see addPattern), and logs the
// request.
func (s *Server) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get("X-Request-Id")
		if !validRequestID(id) {
			id = newRequestID()
		}
		w.Header().Set("X-Request-Id", id)
		r = r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id))
		_, pattern := s.mux.Handler(r)
		r, endSpan := s.startSpan(r, pattern)
		if s.metrics != nil {
			s.metrics.inFlight.Inc()
			defer s.metrics.inFlight.Dec()
		}
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.logger.ErrorContext(r.Context(), "panic", slog.String("requestId", id), slog.Any("panic", v),
					slog.String("stack", string(debug.Stack())))
				if !sw.wrote {
					s.writeError(sw, r, canvas.Errorf(canvas.EINTERNAL, "Internal error."))
				}
			}
			d := time.Since(start)
			s.logRequest(r, id, sw.status, d)
			if s.metrics != nil {
				s.metrics.observe(pattern, sw.status, d.Seconds())
			}
			endSpan(sw.status)
		}()
		if s.headersTooLarge(sw, r) || s.literalMismatch(sw, r) {
			return
		}
		if pattern == "" {
			s.notRouted(sw, r)
			return
		}
		next.ServeHTTP(sw, r)
	})
}

// notRouted answers a request that matches no route: 405 with Allow when the
// path exists under another method, 404 otherwise.
func (s *Server) notRouted(w http.ResponseWriter, r *http.Request) {
	h, _ := s.mux.Handler(r)
	probe := &probeWriter{header: http.Header{}}
	h.ServeHTTP(probe, r)
	if probe.status == http.StatusMethodNotAllowed {
		w.Header().Set("Allow", probe.header.Get("Allow"))
		s.writeError(w, r, canvas.Errorf(canvas.EMETHODNOTALLOWED, "Method %s is not allowed on %s.", r.Method, r.URL.Path))
		return
	}
	s.writeError(w, r, canvas.Errorf(canvas.ENOTFOUND, "No route for %s %s.", r.Method, r.URL.Path))
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if s.ready != nil {
		if err := s.ready(ctx); err != nil {
			return canvas.Errorf(canvas.EINTERNAL, "Store unavailable.")
		}
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	return nil
}

type requestIDKey struct{}

func requestIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

func newRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// validRequestID accepts a caller's request id when it is short and plain.
func validRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// statusWriter records the status a handler wrote, for the request log.
type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

// Flush lets streamed responses through the wrapper.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// probeWriter captures what the mux's own fallback handler would answer.
type probeWriter struct {
	header http.Header
	status int
}

func (p *probeWriter) Header() http.Header         { return p.header }
func (p *probeWriter) Write(b []byte) (int, error) { return len(b), nil }
func (p *probeWriter) WriteHeader(code int)        { p.status = code }

// fill sets *dst to v when *dst is the zero value.
func fill[T comparable](dst *T, v T) {
	var zero T
	if *dst == zero {
		*dst = v
	}
}
