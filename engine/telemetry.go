package engine

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/store"
)

// tracerName names the spans the engine makes.
const tracerName = "github.com/promptcanvas/promptcanvas/engine"

// propagator carries trace context in W3C traceparent headers: into
// webhook requests and model back ends, and with jobs through the queue.
var propagator = propagation.TraceContext{}

// telemetry holds the engine's metrics and its tracer.
type telemetry struct {
	tracer trace.Tracer

	modelDuration   *prometheus.HistogramVec
	modelTokens     *prometheus.CounterVec
	modelCost       *prometheus.CounterVec
	jobs            *prometheus.CounterVec
	jobDuration     *prometheus.HistogramVec
	webhookAttempts *prometheus.CounterVec
	publishes       prometheus.Counter
	commitDuration  *prometheus.HistogramVec
	commitWrites    *prometheus.HistogramVec

	mu    sync.Mutex
	lanes map[string]string // job kind -> lane, for the queue's gauges
}

// newTelemetry registers the engine's metrics on reg and takes its tracer
// from tp.
func newTelemetry(reg *prometheus.Registry, tp trace.TracerProvider) (*telemetry, error) {
	t := &telemetry{
		tracer: tp.Tracer(tracerName),
		modelDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "canvas_model_call_duration_seconds", Help: "Time of calls to model back ends, by model and result (ok, error).",
			Buckets: []float64{.005, .025, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120},
		}, []string{"model", "result"}),
		modelTokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "canvas_model_tokens_total", Help: "Tokens used by model calls, by model and direction (input, output).",
		}, []string{"model", "direction"}),
		modelCost: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "canvas_model_cost_usd_total", Help: "What model calls cost in USD, by model and provider, where the model's price is known.",
		}, []string{"model", "provider"}),
		jobs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "canvas_jobs_total", Help: "Job attempts by kind and result (succeeded, retried, failed, interrupted, panicked).",
		}, []string{"kind", "result"}),
		jobDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "canvas_job_duration_seconds", Help: "Time of job attempts, by kind.",
			Buckets: []float64{.001, .005, .025, .1, .5, 1, 5, 15, 60, 300},
		}, []string{"kind"}),
		webhookAttempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "canvas_webhook_delivery_attempts_total",
			Help: "Webhook requests sent (deliveries and Test Requests), by result: the status class (2xx...) or error.",
		}, []string{"result"}),
		publishes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "canvas_publications_total", Help: "Publications created (publishes of a version not already active).",
		}),
		commitDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "canvas_db_commit_duration_seconds",
			Help:    "Time of write transactions, begin to durable commit, by committer (write: a transaction of its own).",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, 1},
		}, []string{"committer"}),
		commitWrites: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "canvas_db_commit_writes", Help: "Writes sharing one commit, by committer.",
			Buckets: []float64{1, 2, 4, 8, 16, 32, 64},
		}, []string{"committer"}),
		lanes: map[string]string{},
	}
	for _, c := range []prometheus.Collector{t.modelDuration, t.modelTokens, t.modelCost, t.jobs, t.jobDuration,
		t.webhookAttempts, t.publishes, t.commitDuration, t.commitWrites} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// observeModel makes a span of each model call and counts its time and
// tokens.
func (t *telemetry) observeModel(ctx context.Context, req model.Request) (context.Context, func(*model.Result, error)) {
	start := time.Now()
	ctx, span := t.tracer.Start(ctx, "model.call", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("gen_ai.request.model", req.Model),
			attribute.String("gen_ai.system", req.Provider)))
	return ctx, func(res *model.Result, err error) {
		result := "ok"
		if err != nil {
			result = "error"
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
		t.modelDuration.WithLabelValues(req.Model, result).Observe(time.Since(start).Seconds())
		if res != nil {
			t.modelTokens.WithLabelValues(req.Model, "input").Add(float64(res.Usage.InputTokens))
			t.modelTokens.WithLabelValues(req.Model, "output").Add(float64(res.Usage.OutputTokens))
			span.SetAttributes(attribute.Int("gen_ai.usage.input_tokens", res.Usage.InputTokens),
				attribute.Int("gen_ai.usage.output_tokens", res.Usage.OutputTokens))
			if res.Cost != nil {
				t.modelCost.WithLabelValues(req.Model, req.Provider).Add(res.Cost.Total)
			}
		}
		span.End()
	}
}

// handler wraps the handler of a job kind of lane: each attempt is a span,
// a child of the trace the job was enqueued under, and its outcome and time
// are counted.
func (t *telemetry) handler(lane, kind string, h queue.Handler) queue.Handler {
	t.mu.Lock()
	t.lanes[kind] = lane
	t.mu.Unlock()
	return func(ctx context.Context, j *queue.Job) (err error) {
		if j.Trace != "" {
			ctx = propagator.Extract(ctx, propagation.MapCarrier{"traceparent": j.Trace})
		}
		ctx, span := t.tracer.Start(ctx, "job "+kind, trace.WithSpanKind(trace.SpanKindConsumer),
			trace.WithAttributes(attribute.String("job.id", j.ID), attribute.String("job.kind", kind),
				attribute.String("job.lane", lane), attribute.Int("job.attempt", j.Attempts)))
		start := time.Now()
		result := "panicked"
		defer func() {
			t.jobs.WithLabelValues(kind, result).Inc()
			t.jobDuration.WithLabelValues(kind).Observe(time.Since(start).Seconds())
			span.SetAttributes(attribute.String("job.result", result))
			span.End()
		}()
		err = h(ctx, j)
		switch {
		case err == nil:
			result = "succeeded"
		case ctx.Err() != nil:
			result = "interrupted" // cancelled, lease lost or shutdown
		case queue.IsPermanent(err) || (j.MaxAttempts > 0 && j.Attempts >= j.MaxAttempts):
			result = "failed"
		default:
			result = "retried"
		}
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
		return err
	}
}

// laneOf returns the lane of a job kind, "" when no handler was registered.
func (t *telemetry) laneOf(kind string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.lanes[kind]
}

// webhookTransport wraps the webhook sender's transport: each request is a
// client span whose trace context goes with it (traceparent), and its
// result is counted.
func (t *telemetry) webhookTransport(base http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		ctx, span := t.tracer.Start(req.Context(), "webhook "+req.Method, trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(attribute.String("server.address", req.URL.Host)))
		defer span.End()
		req = req.Clone(ctx)
		propagator.Inject(ctx, propagation.HeaderCarrier(req.Header))
		resp, err := base.RoundTrip(req)
		if err != nil {
			t.webhookAttempts.WithLabelValues("error").Inc()
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
			return nil, err
		}
		t.webhookAttempts.WithLabelValues(strconv.Itoa(resp.StatusCode/100) + "xx").Inc()
		span.SetAttributes(attribute.Int("http.response.status_code", resp.StatusCode))
		if resp.StatusCode >= 300 {
			span.SetStatus(codes.Error, resp.Status)
		}
		return resp, nil
	})
}

// TraceTransport returns base (http.DefaultTransport when nil) wrapped so
// that each request carries the trace context of its context in a W3C
// traceparent header: for the HTTP client of a model back end, so that its
// spans join the model call's trace.
func TraceTransport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		if !trace.SpanContextFromContext(req.Context()).IsValid() {
			return base.RoundTrip(req)
		}
		req = req.Clone(req.Context())
		propagator.Inject(req.Context(), propagation.HeaderCarrier(req.Header))
		return base.RoundTrip(req)
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// publishHook counts a publication as its transaction writes it.
func (t *telemetry) publishHook(ctx context.Context, _ string, pub *env.Publication) {
	t.publishes.Inc()
	trace.SpanFromContext(ctx).AddEvent("publication.created",
		trace.WithAttributes(attribute.String("publication.id", pub.PublicationID)))
}

// storeObserver watches the store's write transactions.
type storeObserver struct{ t *telemetry }

var _ store.Observer = storeObserver{}

// Committed counts the commit's time and writes, and makes it a span: a
// child of its first writer's span, linked to the others'.
func (o storeObserver) Committed(c store.Commit) {
	t := o.t
	t.commitDuration.WithLabelValues(c.Name).Observe(c.Duration.Seconds())
	t.commitWrites.WithLabelValues(c.Name).Observe(float64(len(c.Writes)))
	var parent context.Context
	var links []trace.Link
	for _, w := range c.Writes {
		sc := trace.SpanContextFromContext(w)
		if !sc.IsValid() {
			continue
		}
		if parent == nil {
			parent = w
			continue
		}
		links = append(links, trace.Link{SpanContext: sc})
	}
	if parent == nil {
		return // no writer is traced
	}
	_, span := t.tracer.Start(parent, c.System+".commit "+c.Name, trace.WithTimestamp(c.Start),
		trace.WithLinks(links...), trace.WithAttributes(attribute.String("db.system.name", c.System),
			attribute.Int("db.writes", len(c.Writes))))
	if c.Err != nil {
		span.RecordError(c.Err)
		span.SetStatus(codes.Error, c.Err.Error())
	}
	span.End(trace.WithTimestamp(c.Start.Add(c.Duration)))
}

// JobTrace returns the traceparent of ctx's span, "" when it has none.
func (o storeObserver) JobTrace(ctx context.Context) string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ""
	}
	c := propagation.MapCarrier{}
	propagator.Inject(ctx, c)
	return c["traceparent"]
}

// queueCollector reports the backlog of each lane at scrape time, from the
// store's queue.StatsStore.
type queueCollector struct {
	t                                 *telemetry
	store                             queue.StatsStore
	depth, oldest, scheduled, running *prometheus.Desc
}

func newQueueCollector(t *telemetry, s queue.StatsStore) *queueCollector {
	return &queueCollector{t: t, store: s,
		depth:     prometheus.NewDesc("canvas_queue_depth", "Queued jobs that are due, by lane.", []string{"lane"}, nil),
		oldest:    prometheus.NewDesc("canvas_queue_oldest_age_seconds", "Age of the oldest due queued job, by lane (0 when none).", []string{"lane"}, nil),
		scheduled: prometheus.NewDesc("canvas_queue_scheduled", "Queued jobs not yet due (retries in backoff), by lane.", []string{"lane"}, nil),
		running:   prometheus.NewDesc("canvas_queue_running", "Running jobs, by lane.", []string{"lane"}, nil),
	}
}

func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.depth
	ch <- c.oldest
	ch <- c.scheduled
	ch <- c.running
}

// Collect reads the store's backlog; when the store does not answer within
// the scrape's bound, the series are left out and the error reported.
func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	stats, err := c.store.QueueStats(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.depth, err)
		return
	}
	type lane struct {
		due, scheduled, running int
		oldest                  time.Time
	}
	lanes := map[string]*lane{queue.LaneModel: {}, queue.LaneDelivery: {}, queue.LaneMaintenance: {}}
	for _, s := range stats {
		name := c.t.laneOf(s.Kind)
		if name == "" {
			name = "unhandled"
		}
		l := lanes[name]
		if l == nil {
			l = &lane{}
			lanes[name] = l
		}
		l.due += s.Due
		l.scheduled += s.Scheduled
		l.running += s.Running
		if !s.OldestDue.IsZero() && (l.oldest.IsZero() || s.OldestDue.Before(l.oldest)) {
			l.oldest = s.OldestDue
		}
	}
	now := time.Now()
	for name, l := range lanes {
		age := 0.0
		if !l.oldest.IsZero() {
			age = max(0, now.Sub(l.oldest).Seconds())
		}
		ch <- prometheus.MustNewConstMetric(c.depth, prometheus.GaugeValue, float64(l.due), name)
		ch <- prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, age, name)
		ch <- prometheus.MustNewConstMetric(c.scheduled, prometheus.GaugeValue, float64(l.scheduled), name)
		ch <- prometheus.MustNewConstMetric(c.running, prometheus.GaugeValue, float64(l.running), name)
	}
}

// RegisterCacheMetrics registers the hit and miss counts of a
// freshness-checked cache named name on reg, read from stats at scrape
// time: canvas_cache_requests_total{cache, result} and
// canvas_cache_hit_ratio{cache}.
func RegisterCacheMetrics(reg prometheus.Registerer, name string, stats func() (hits, misses uint64)) error {
	labels := prometheus.Labels{"cache": name}
	cs := []prometheus.Collector{
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "canvas_cache_requests_total",
			Help:        "Reads of a freshness-checked cache, by cache and result (hit, miss).",
			ConstLabels: prometheus.Labels{"cache": name, "result": "hit"}},
			func() float64 { h, _ := stats(); return float64(h) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "canvas_cache_requests_total",
			Help:        "Reads of a freshness-checked cache, by cache and result (hit, miss).",
			ConstLabels: prometheus.Labels{"cache": name, "result": "miss"}},
			func() float64 { _, m := stats(); return float64(m) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "canvas_cache_hit_ratio",
			Help: "Share of a freshness-checked cache's reads served from the cache since start (0 before any).", ConstLabels: labels},
			func() float64 {
				h, m := stats()
				if h+m == 0 {
					return 0
				}
				return float64(h) / float64(h+m)
			}),
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// noopTracerProvider is the TracerProvider of an engine that is given
// none: it records nothing and has no global side effect.
func noopTracerProvider() trace.TracerProvider { return noop.NewTracerProvider() }

// handlerRegistrar registers job handlers on a worker, each wrapped by
// telemetry.handler.
type handlerRegistrar struct {
	w *queue.Worker
	t *telemetry
}

func (r handlerRegistrar) HandleIn(lane, kind string, h queue.Handler) {
	r.w.HandleIn(lane, kind, r.t.handler(lane, kind, h))
}
