package server

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/engine"
)

// httpMetrics counts the server's requests by route pattern.
type httpMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	inFlight prometheus.Gauge
	// modelStart is the push-back's last prediction (queuedelay.go).
	modelStart prometheus.Gauge
}

// unmatchedRoute is the route label of a request that matched no route, so
// that scanners cannot grow the label set.
const unmatchedRoute = "unmatched"

// newHTTPMetrics registers the HTTP metrics on reg; a second server on the
// same registry shares the first one's.
func newHTTPMetrics(reg prometheus.Registerer) (*httpMetrics, error) {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "canvas_http_requests_total", Help: "HTTP requests answered, by route pattern and status code.",
		}, []string{"route", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "canvas_http_request_duration_seconds", Help: "Time to answer HTTP requests, by route pattern and status class (2xx...).",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 10, 60},
		}, []string{"route", "class"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "canvas_http_requests_in_flight", Help: "HTTP requests being answered.",
		}),
		modelStart: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "canvas_model_work_predicted_start_seconds",
			Help: "How long model work queued at the last check would wait to start, as the push-back on model work predicted it.",
		}),
	}
	var err error
	m.requests, err = register(reg, m.requests)
	if err == nil {
		m.duration, err = register(reg, m.duration)
	}
	if err == nil {
		m.inFlight, err = register(reg, m.inFlight)
	}
	if err == nil {
		m.modelStart, err = register(reg, m.modelStart)
	}
	return m, err
}

// register registers c on reg, or returns the collector registered before
// it under the same description.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing, nil
			}
		}
		return c, err
	}
	return c, nil
}

// observe counts one answered request.
func (m *httpMetrics) observe(route string, status int, seconds float64) {
	if route == "" {
		route = unmatchedRoute
	}
	m.requests.WithLabelValues(route, strconv.Itoa(status)).Inc()
	m.duration.WithLabelValues(route, strconv.Itoa(status/100)+"xx").Observe(seconds)
}

// registerMetrics puts the HTTP metrics and the API-key caches' counts on
// reg, and, when public is set, serves reg at GET /metrics to admins.
func (s *Server) registerMetrics(reg *prometheus.Registry, public bool) error {
	m, err := newHTTPMetrics(reg)
	if err != nil {
		return err
	}
	s.metrics = m
	if a := s.auth; a != nil {
		for name, stats := range map[string]func() (uint64, uint64){
			"api_key":   func() (uint64, uint64) { st := a.keys.Stats(); return st.Hits, st.Misses },
			"workspace": func() (uint64, uint64) { st := a.workspaces.Stats(); return st.Hits, st.Misses },
		} {
			err := engine.RegisterCacheMetrics(reg, name, stats)
			var are prometheus.AlreadyRegisteredError
			if err != nil && !errors.As(err, &are) {
				return err
			}
		}
	}
	if public {
		// Registered on the mux alone: /metrics is an operator's endpoint,
		// not part of the API that the OpenAPI document describes.
		h := MetricsHandler(reg)
		s.mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
			p, err := s.auth.Authenticate(r)
			if err == nil {
				_, err = canvas.Authorize(canvas.NewContext(r.Context(), p), canvas.RoleAdmin)
			}
			if err != nil {
				s.writeError(w, r, err)
				return
			}
			h.ServeHTTP(w, r)
		})
	}
	return nil
}

// MetricsHandler serves the metrics of reg in the Prometheus text format,
// for a listener of the operator's (canvasd's --metrics-addr).
func MetricsHandler(reg *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg})
}
