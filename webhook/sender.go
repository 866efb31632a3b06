package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/internal/netguard"
)

// DefaultTimeout bounds one delivery attempt: a receiver that has not
// answered within it has failed the attempt.
const DefaultTimeout = 15 * time.Second

// maxRetryAfter caps a receiver's Retry-After, so that a receiver cannot
// park a delivery for longer than the whole retry schedule's last step.
const maxRetryAfter = 24 * time.Hour

// maxResponseBody is how much of a receiver's answer an Attempt keeps.
const maxResponseBody = 1 << 10

// SenderOptions configures NewSender; the zero value is a guarded sender
// with the default timeout and the system clock.
type SenderOptions struct {
	// AllowPrivateNetworks lets deliveries reach loopback, private and
	// other non-public addresses (CANVAS_ALLOW_PRIVATE_NETWORKS=1, for
	// local testing). Off, such addresses are refused when dialled.
	AllowPrivateNetworks bool
	// Timeout bounds each attempt; zero means DefaultTimeout.
	Timeout time.Duration
	// Now is the clock of the webhook-timestamp header; nil means
	// time.Now.
	Now canvas.Clock
	// UserAgent is sent unless a delivery's own headers name one; empty
	// means "PromptCanvas-Webhooks/1".
	UserAgent string
	// WrapTransport, when set, wraps the guarded transport of every
	// attempt, for metrics and trace propagation.
	WrapTransport func(http.RoundTripper) http.RoundTripper
}

// Sender makes single delivery attempts. It is safe for concurrent use.
type Sender struct {
	client    *http.Client
	now       func() time.Time
	userAgent string
}

// NewSender returns a Sender whose HTTP client times out per opts, does not
// follow redirects, and dials through the network guard.
func NewSender(opts SenderOptions) *Sender {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.UserAgent == "" {
		opts.UserAgent = "PromptCanvas-Webhooks/1"
	}
	client := netguard.Client(opts.AllowPrivateNetworks, opts.Timeout)
	if opts.WrapTransport != nil {
		client.Transport = opts.WrapTransport(client.Transport)
	}
	return &Sender{
		client:    client,
		now:       opts.Now,
		userAgent: opts.UserAgent,
	}
}

// Attempt is the outcome of one delivery attempt.
type Attempt struct {
	// Status is the receiver's HTTP status, zero when none was received.
	Status int
	// Err is nil when the receiver answered 2xx, the reason otherwise.
	Err error
	// Permanent reports that retrying cannot help: the receiver answered
	// 410 Gone, or the delivery cannot be sent at all (bad URL, refused
	// address).
	Permanent bool
	// RetryAfter is the receiver's Retry-After on a 429 or 503, zero when
	// it sent none.
	RetryAfter time.Duration
	// Timestamp is the webhook-timestamp sent, and Duration how long the
	// attempt took.
	Timestamp time.Time
	Duration  time.Duration
	// ResponseBody holds the first KiB of the receiver's answer.
	ResponseBody []byte
}

// OK reports whether the attempt delivered the notification.
func (a *Attempt) OK() bool { return a.Err == nil }

// Send makes one attempt at d: a POST of the JSON Event to d.URL with the
// delivery's headers in order (a name given twice is sent with both
// values), then webhook-id, webhook-timestamp, webhook-signature when d has
// a Secret, and content-type: application/json. Those last four, and the
// headers that frame the request itself (host, content-length,
// transfer-encoding, connection...), cannot be set by a delivery's headers:
// such headers, and invalid ones, are dropped.
//
// Only a 2xx answer is success; a redirect is not followed and is a
// failure; 410 is a permanent failure; a 429 or 503 carries its
// Retry-After.
func (s *Sender) Send(ctx context.Context, d *Delivery) *Attempt {
	var secrets []string
	if d.Secret != "" {
		secrets = []string{d.Secret}
	}
	return s.SendSigned(ctx, d, secrets)
}

// SendSigned is Send signing with secrets instead of d.Secret: the
// webhook-signature header carries one space-separated "v1,..." signature
// per secret, in order (a subscription whose secret is being rotated signs
// with both), and is absent when secrets is empty.
func (s *Sender) SendSigned(ctx context.Context, d *Delivery, secrets []string) *Attempt {
	body, err := json.Marshal(d.Event)
	if err != nil {
		return &Attempt{Timestamp: s.now(), Err: fmt.Errorf("webhook: encode event: %w", err), Permanent: true}
	}
	return s.post(ctx, d.ID, d.URL, d.Headers, secrets, body, maxResponseBody)
}

// post makes one attempt of a POST of body, keeping up to maxAnswer bytes
// of the answer.
func (s *Sender) post(ctx context.Context, id, rawURL string, headers []Header, secrets []string, body []byte, maxAnswer int64) *Attempt {
	now := s.now()
	a := &Attempt{Timestamp: now}
	defer func() { a.Duration = s.now().Sub(now) }()
	req, err := s.requestOf(ctx, id, rawURL, headers, secrets, body, now)
	if err != nil {
		a.Err, a.Permanent = err, true
		return a
	}
	resp, err := s.client.Do(req)
	if err != nil {
		a.Err = fmt.Errorf("webhook: %w", describe(err, s.client.Timeout))
		a.Permanent = errors.Is(err, netguard.ErrBlocked)
		return a
	}
	defer resp.Body.Close()
	a.Status = resp.StatusCode
	a.ResponseBody, _ = io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // let the connection be reused
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return a
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		a.Err = fmt.Errorf("webhook: receiver answered %s (redirects are not followed)", resp.Status)
	case resp.StatusCode == http.StatusGone:
		a.Err, a.Permanent = fmt.Errorf("webhook: receiver answered %s", resp.Status), true
	default:
		a.Err = fmt.Errorf("webhook: receiver answered %s", resp.Status)
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
			a.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), now)
		}
	}
	return a
}

// Call is one signed request that expects an answer: a POST of Body (a
// JSON document) to URL, signed per Standard Webhooks with Secrets under
// the message id ID, as Send signs a delivery.
type Call struct {
	ID      string
	URL     string
	Secrets []string
	Body    []byte
	// MaxAnswer bounds the answer kept, in bytes; zero keeps 1 KiB.
	MaxAnswer int64
}

// Post makes the call c, through the same guarded client and with the same
// headers and rules as Send (only a 2xx answer is success, a redirect is
// not followed); the attempt's ResponseBody holds the answer up to
// c.MaxAnswer. Bound the call's time with ctx: the Sender's own timeout
// bounds it too.
func (s *Sender) Post(ctx context.Context, c Call) *Attempt {
	max := c.MaxAnswer
	if max <= 0 {
		max = maxResponseBody
	}
	return s.post(ctx, c.ID, c.URL, nil, c.Secrets, c.Body, max)
}

// requestOf builds the request of a POST of body to rawURL with headers,
// signed with secrets under the message id id.
func (s *Sender) requestOf(ctx context.Context, id, rawURL string, headers []Header, secrets []string, body []byte, now time.Time) (*http.Request, error) {
	u, err := netguard.CheckURL(rawURL)
	if err != nil {
		return nil, fmt.Errorf("webhook: %w", err)
	}
	if id == "" {
		return nil, errors.New("webhook: delivery has no id")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("webhook: %w", err)
	}
	req.Header = http.Header{}
	for _, h := range headers {
		if !sendable(h) {
			continue
		}
		req.Header.Add(h.Name, h.Value)
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", s.userAgent)
	}
	ts := strconv.FormatInt(now.Unix(), 10)
	req.Header.Set("webhook-id", id)
	req.Header.Set("webhook-timestamp", ts)
	if len(secrets) > 0 {
		sigs := make([]string, 0, len(secrets))
		for _, secret := range secrets {
			sig, err := Sign(secret, id, ts, body)
			if err != nil {
				return nil, err
			}
			sigs = append(sigs, sig)
		}
		req.Header.Set("webhook-signature", strings.Join(sigs, " "))
	}
	req.Header.Set("Content-Type", "application/json")
	return req, nil
}

// reserved reports whether a delivery's own headers may not set the
// header name (lowercase): the sender owns it, or it frames the HTTP
// request.
func reserved(name string) bool {
	switch name {
	case "webhook-id", "webhook-timestamp", "webhook-signature", "content-type",
		"host", "content-length", "transfer-encoding", "connection", "keep-alive",
		"te", "trailer", "upgrade", "proxy-connection", "expect":
		return true
	}
	return false
}

// sendable reports whether h may be sent: a valid name that is not
// reserved, and a value without control characters.
func sendable(h Header) bool {
	if h.Name == "" || reserved(strings.ToLower(h.Name)) {
		return false
	}
	for _, c := range h.Name {
		if c > 0x7e || c <= ' ' || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, c) {
			return false
		}
	}
	for _, c := range h.Value {
		if c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// Sign returns the webhook-signature header value for a message of the
// given id, timestamp (unix seconds, as sent) and body under secret, per
// Standard Webhooks: "v1," and the base64 HMAC-SHA256 of "id.timestamp.body",
// keyed with the base64-decoded secret (its "whsec_" prefix removed).
func Sign(secret, id, timestamp string, body []byte) (string, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil || len(key) == 0 {
		return "", errors.New("webhook: the signing secret is not whsec_ followed by base64")
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id))
	mac.Write([]byte{'.'})
	mac.Write([]byte(timestamp))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)), nil
}

// parseRetryAfter reads a Retry-After value (seconds or an HTTP date),
// capped at maxRetryAfter; zero when absent or unreadable.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	var d time.Duration
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0
		}
		d = time.Duration(min(secs, int64(maxRetryAfter/time.Second))) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now)
	}
	return max(0, min(d, maxRetryAfter))
}

// describe returns the reason of a failed request without the
// *url.Error wrapper, whose text repeats the URL (and any credentials in
// it).
func describe(err error, timeout time.Duration) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	if ue.Timeout() {
		return fmt.Errorf("receiver did not answer within %s: %w", timeout, ue.Err)
	}
	return ue.Err
}

// CheckURL returns an error unless raw can be a webhook endpoint: an
// absolute http or https URL with a host. Whether its address is public is
// decided when it is dialled, not here.
func CheckURL(raw string) error {
	_, err := netguard.CheckURL(raw)
	return err
}
