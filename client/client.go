package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/promptcanvas/promptcanvas/client/wire"
)

// Retry defaults: how many times a retryable request is sent again, and the
// bounds of the exponential backoff between attempts.
const (
	DefaultMaxRetries = 3
	DefaultMinBackoff = 200 * time.Millisecond
	DefaultMaxBackoff = 5 * time.Second
	// maxRetryAfter bounds a server's Retry-After, so that one answer
	// cannot park a caller for hours; the context bounds it further.
	maxRetryAfter = time.Minute
)

// Options configures a Client.
type Options struct {
	// Token is sent as "Authorization: Bearer <Token>": an API key or a JWT.
	Token string
	// HTTPClient sends the requests; nil means a client without an overall
	// timeout (watches and streams are long), bounded by each call's
	// context.
	HTTPClient *http.Client
	// MaxRetries is how many times a retryable request is sent again after
	// a connection error, a 429, 502, 503 or 504 answer, or a 409 with
	// Retry-After to a request with an Idempotency-Key (the key is held by
	// a request in progress); zero means DefaultMaxRetries, a negative
	// value disables retries. Requests are retryable when their method is
	// idempotent (GET, HEAD, PUT, DELETE) or when they carry an
	// Idempotency-Key.
	MaxRetries int
	// MinBackoff and MaxBackoff bound the exponential backoff between
	// attempts (with jitter); a Retry-After answer is honoured instead.
	MinBackoff, MaxBackoff time.Duration
	// UserAgent is sent as User-Agent when not empty.
	UserAgent string
}

// Client calls a Prompt Canvas server. It is safe for concurrent use.
type Client struct {
	base       string // without a trailing slash
	token      string
	hc         *http.Client
	maxRetries int
	minBackoff time.Duration
	maxBackoff time.Duration
	userAgent  string
}

// New returns a Client of the server at baseURL (for example
// "http://127.0.0.1:8080"), which must be an absolute http or https URL.
func New(baseURL string, opts Options) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("client: base URL %q is not an absolute http or https URL", baseURL)
	}
	c := &Client{
		base:       strings.TrimRight(u.String(), "/"),
		token:      opts.Token,
		hc:         opts.HTTPClient,
		maxRetries: opts.MaxRetries,
		minBackoff: opts.MinBackoff,
		maxBackoff: opts.MaxBackoff,
		userAgent:  opts.UserAgent,
	}
	if c.hc == nil {
		c.hc = &http.Client{}
	}
	switch {
	case c.maxRetries == 0:
		c.maxRetries = DefaultMaxRetries
	case c.maxRetries < 0:
		c.maxRetries = 0
	}
	if c.minBackoff <= 0 {
		c.minBackoff = DefaultMinBackoff
	}
	if c.maxBackoff < c.minBackoff {
		c.maxBackoff = max(DefaultMaxBackoff, c.minBackoff)
	}
	return c, nil
}

// CallOption adjusts one call.
type CallOption func(*callOptions)

type callOptions struct {
	header http.Header
}

// WithIdempotencyKey sends the Idempotency-Key header: the server answers a
// repeated request with the same key with the first answer instead of
// running it again, which also makes the write safe to retry.
func WithIdempotencyKey(key string) CallOption {
	return WithHeader("Idempotency-Key", key)
}

// WithHeader sends a header with the call, for example an
// x-svc-forward-* header that a completion forwards to its webhook.
func WithHeader(name, value string) CallOption {
	return func(o *callOptions) {
		if o.header == nil {
			o.header = http.Header{}
		}
		o.header.Set(name, value)
	}
}

// Error is an error the server answered: the code, message and details
// of its JSON error body (wire.ErrorBody), the HTTP status and the request
// id, for reports and support. An answer without an error body (a proxy's
// 502, say) has the code its status stands for.
type Error struct {
	StatusCode int
	Code       string
	Message    string
	Details    []wire.Detail
	RequestID  string
}

// Error words the error with its details, each as "path: message", so that
// a 422 says what to fix.
func (e *Error) Error() string {
	msg := e.Message
	for i, d := range e.Details {
		sep := "; "
		if i == 0 {
			sep = " "
		}
		msg += sep + d.Path + ": " + d.Message
	}
	return fmt.Sprintf("%s: %s (HTTP %d, request %s)", e.Code, msg, e.StatusCode, e.RequestID)
}

// StatusCode returns the HTTP status of an error the server answered, or 0
// when err did not come from an answer (a connection error, say).
func StatusCode(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.StatusCode
	}
	return 0
}

// ErrorCode returns the code of an error the server answered (wire.CodeNotFound,
// ...), or "" when err did not come from an answer.
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// request is one call: what to send and where to put the answer.
type request struct {
	method string
	path   string
	query  url.Values
	// body is sent as JSON when not nil; raw is sent as it is (with
	// contentType) when not nil.
	body        any
	raw         []byte
	contentType string
	header      http.Header
	// out receives the JSON answer of a 2xx; nil discards it.
	out any
}

// response is what a call answered, for the callers that need more than
// the body (the ETag, the status).
type response struct {
	status int
	header http.Header
	body   []byte
}

// call sends req with retries and decodes the answer: a 2xx into req.out,
// a 304 as it is, anything else as an *Error.
func (c *Client) call(ctx context.Context, req request, opts ...CallOption) (*response, error) {
	var co callOptions
	for _, o := range opts {
		o(&co)
	}
	for k, vs := range co.header {
		if req.header == nil {
			req.header = http.Header{}
		}
		req.header[k] = vs
	}
	payload := req.raw
	if req.body != nil {
		var err error
		if payload, err = json.Marshal(req.body); err != nil {
			return nil, fmt.Errorf("client: encode request: %w", err)
		}
		req.contentType = "application/json"
	}
	retryable := req.method == http.MethodGet || req.method == http.MethodHead || req.method == http.MethodPut ||
		req.method == http.MethodDelete || req.header.Get("Idempotency-Key") != ""
	target := c.base + req.path
	if len(req.query) > 0 {
		target += "?" + req.query.Encode()
	}
	for attempt := 0; ; attempt++ {
		resp, err := c.send(ctx, req, target, payload)
		if err != nil {
			if ctx.Err() != nil || !retryable || attempt >= c.maxRetries {
				return nil, err
			}
			if err := sleep(ctx, c.backoff(attempt)); err != nil {
				return nil, err
			}
			continue
		}
		if retryable && attempt < c.maxRetries && (retryStatus(resp.status) || keyInProgress(req, resp)) {
			wait := c.backoff(attempt)
			if ra, ok := retryAfter(resp.header.Get("Retry-After")); ok {
				wait = ra
			}
			if err := sleep(ctx, wait); err != nil {
				return nil, err
			}
			continue
		}
		if resp.status >= 400 {
			return resp, decodeError(resp)
		}
		if req.out != nil && resp.status != http.StatusNotModified && resp.status != http.StatusNoContent {
			if err := json.Unmarshal(resp.body, req.out); err != nil {
				return resp, fmt.Errorf("client: decode %s %s answer: %w", req.method, req.path, err)
			}
		}
		return resp, nil
	}
}

// send makes one attempt and reads the whole answer.
func (c *Client) send(ctx context.Context, req request, target string, payload []byte) (*response, error) {
	var body io.Reader
	if payload != nil {
		body = bytes.NewReader(payload)
	}
	hr, err := http.NewRequestWithContext(ctx, req.method, target, body)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	c.setHeaders(hr, req.header)
	if req.contentType != "" {
		hr.Header.Set("Content-Type", req.contentType)
	}
	resp, err := c.hc.Do(hr)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return &response{status: resp.StatusCode, header: resp.Header, body: b}, nil
}

// setHeaders sets the authorization, user agent and extra headers.
func (c *Client) setHeaders(hr *http.Request, extra http.Header) {
	if c.token != "" {
		hr.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.userAgent != "" {
		hr.Header.Set("User-Agent", c.userAgent)
	}
	hr.Header.Set("Accept", "application/json")
	for k, vs := range extra {
		hr.Header[k] = vs
	}
}

// decodeError turns an error answer into an *Error with the server's code,
// message and details.
func decodeError(resp *response) error {
	var body wire.ErrorBody
	_ = json.Unmarshal(resp.body, &body)
	e := &Error{StatusCode: resp.status, Code: body.Code, Message: body.Message, Details: body.Details,
		RequestID: body.RequestID}
	if e.RequestID == "" {
		e.RequestID = resp.header.Get("X-Request-Id")
	}
	if e.Code == "" {
		e.Code = codeOfStatus(resp.status)
		e.Message = http.StatusText(resp.status)
	}
	return e
}

// codeOfStatus names the code of an error answer without the error body (a
// proxy's 502, say).
func codeOfStatus(status int) string {
	switch status {
	case http.StatusBadRequest:
		return wire.CodeBadRequest
	case http.StatusUnauthorized:
		return wire.CodeUnauthorized
	case http.StatusForbidden:
		return wire.CodeForbidden
	case http.StatusNotFound:
		return wire.CodeNotFound
	case http.StatusConflict:
		return wire.CodeConflict
	case http.StatusTooManyRequests:
		return wire.CodeRateLimited
	}
	return wire.CodeInternal
}

// retryStatus reports whether an answer says "try again later".
func retryStatus(status int) bool {
	switch status {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// keyInProgress reports whether resp refuses req because its
// Idempotency-Key is held by a request still in progress: a 409 with
// Retry-After, which says when the holder's hold ends.
func keyInProgress(req request, resp *response) bool {
	return resp.status == http.StatusConflict && req.header.Get("Idempotency-Key") != "" &&
		resp.header.Get("Retry-After") != ""
}

// backoff is the wait before retry attempt+1: exponential from MinBackoff,
// capped at MaxBackoff, with jitter in its upper half.
func (c *Client) backoff(attempt int) time.Duration {
	d := c.minBackoff << min(attempt, 20)
	if d <= 0 || d > c.maxBackoff {
		d = c.maxBackoff
	}
	return d/2 + rand.N(d/2+1)
}

// retryAfter reads a Retry-After header: seconds or an HTTP date.
func retryAfter(v string) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return min(time.Duration(n)*time.Second, maxRetryAfter), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return min(max(time.Until(t), 0), maxRetryAfter), true
	}
	return 0, false
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
