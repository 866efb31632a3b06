package bedrock

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/auth/bearer"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
)

// Options configure a Bedrock provider.
type Options struct {
	// Credential is the opened credential: Settings.Region (required) names
	// the AWS region; APIKey is an access key pair
	// "ACCESS_KEY_ID:SECRET_ACCESS_KEY[:SESSION_TOKEN]" (requests signed
	// with SigV4) or, when it holds no ":", a Bedrock API key (sent as a
	// bearer token, over https only); BaseURL replaces the regional
	// endpoint; Settings.Headers go with every request.
	Credential model.Credential
	// HTTPClient makes the requests; nil: a client of its own whose
	// transport bounds the wait for response headers by
	// Credential.Settings.Timeout().
	HTTPClient *http.Client
}

// Provider is a model.Provider calling Amazon Bedrock's Converse and
// ConverseStream APIs.
type Provider struct {
	name   string
	client *bedrockruntime.Client
}

var _ model.Provider = (*Provider)(nil)

// region is what an AWS region name looks like, e.g. "us-east-1".
var region = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)+$`)

// New returns a Bedrock provider for opts.Credential. A missing or
// malformed settings.region, an empty or malformed apiKey, or a base URL
// that is not an absolute http(s) URL (https with a Bedrock API key) is a
// VALIDATION error naming the setting.
//
// The client is built from opts alone: no shared AWS configuration file,
// no environment variable (AWS_BEARER_TOKEN_BEDROCK, AWS_ENDPOINT_URL, ...)
// and no instance metadata is read, and the SDK makes one attempt per call.
func New(opts Options) (*Provider, error) {
	c := opts.Credential
	name := c.Provider
	if name == "" {
		name = canvas.ProviderBedrock
	}
	if c.Settings.Region == "" {
		return nil, canvas.Invalid("A Bedrock credential needs settings.region.",
			canvas.Detail{Path: "/json/settings/region", Message: "is required"})
	}
	if !region.MatchString(c.Settings.Region) {
		return nil, canvas.Invalid("The Bedrock region is not an AWS region name.",
			canvas.Detail{Path: "/json/settings/region", Message: `must be an AWS region name such as "us-east-1"`})
	}
	auth, err := authFor(c.APIKey)
	if err != nil {
		return nil, err
	}
	if c.BaseURL != "" {
		u, err := url.Parse(c.BaseURL)
		if err != nil || u.Host == "" || u.Scheme != "http" && u.Scheme != "https" {
			return nil, canvas.Invalid("The Bedrock base URL is not an http(s) URL.",
				canvas.Detail{Path: "/json/baseUrl", Message: "must be an absolute http(s) URL"})
		}
		if auth.bearer && u.Scheme != "https" {
			return nil, canvas.Invalid("A Bedrock API key is sent over https only.",
				canvas.Detail{Path: "/json/baseUrl", Message: "must be an https URL with a Bedrock API key"})
		}
	}
	client := model.VendorClient(opts.HTTPClient, c.Settings.Timeout())
	var apiOptions []func(*middleware.Stack) error
	for k, v := range c.Settings.Headers {
		apiOptions = append(apiOptions, smithyhttp.SetHeaderValue(k, v))
	}
	o := bedrockruntime.Options{
		Region:     c.Settings.Region,
		HTTPClient: bodyDoer{client},
		Retryer:    aws.NopRetryer{},
	}
	if c.BaseURL != "" {
		o.BaseEndpoint = aws.String(strings.TrimRight(c.BaseURL, "/"))
	}
	// bedrockruntime.New reads AWS_BEARER_TOKEN_BEDROCK before the option
	// functions run: this one sets the authentication and the API options
	// again, so that nothing the environment holds is used.
	bc := bedrockruntime.New(o, func(o *bedrockruntime.Options) {
		o.APIOptions = apiOptions
		if auth.bearer {
			o.Credentials = nil
			o.BearerAuthTokenProvider = bearer.StaticTokenProvider{Token: bearer.Token{Value: auth.token}}
			o.AuthSchemePreference = []string{"httpBearerAuth"}
			return
		}
		o.Credentials = aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return auth.keys, nil
		})
		o.BearerAuthTokenProvider = nil
		o.AuthSchemePreference = []string{"sigv4"}
	})
	return &Provider{name: name, client: bc}, nil
}

// Factory builds the provider of an opened Bedrock credential: register it
// as model.Kinds{canvas.ProviderBedrock: bedrock.Factory}.
func Factory(c model.Credential) (model.Provider, error) {
	return New(Options{Credential: c})
}

// Name returns the credential's provider name ("bedrock").
func (p *Provider) Name() string { return p.name }

// authentication is how requests are authenticated: SigV4 with keys, or a
// bearer token.
type authentication struct {
	bearer bool
	token  string
	keys   aws.Credentials
}

// authFor reads a credential's key: "ACCESS_KEY_ID:SECRET_ACCESS_KEY" or
// "ACCESS_KEY_ID:SECRET_ACCESS_KEY:SESSION_TOKEN" (none of which holds a
// ":"), else a Bedrock API key.
func authFor(key string) (authentication, error) {
	key = strings.TrimSpace(key)
	if key == "" {
		return authentication{}, canvas.Invalid("A Bedrock credential needs an apiKey.",
			canvas.Detail{Path: "/json/apiKey", Message: "is required"})
	}
	if !strings.Contains(key, ":") {
		return authentication{bearer: true, token: key}, nil
	}
	parts := strings.Split(key, ":")
	if len(parts) > 3 || slices.Contains(parts, "") {
		return authentication{}, canvas.Invalid("The Bedrock apiKey is malformed.",
			canvas.Detail{Path: "/json/apiKey", Message: `must be "ACCESS_KEY_ID:SECRET_ACCESS_KEY", "ACCESS_KEY_ID:SECRET_ACCESS_KEY:SESSION_TOKEN" or a Bedrock API key`})
	}
	creds := aws.Credentials{AccessKeyID: parts[0], SecretAccessKey: parts[1], Source: "promptcanvas"}
	if len(parts) == 3 {
		creds.SessionToken = parts[2]
	}
	return authentication{keys: creds}, nil
}

// bodyDoer sends the SDK's requests with their body's WriteTo method
// hidden. The SDK closes a request's body as soon as the response arrives,
// and its body's WriteTo then fails with io.EOF; net/http may at that very
// moment still be checking the body for bytes past its Content-Length, and
// takes that error for a broken connection, which it closes under the
// response being read (an event stream fails with "use of closed network
// connection"). Through Read, a closed body reads as the end of the body.
type bodyDoer struct{ client *http.Client }

// Do sends r through the client.
func (d bodyDoer) Do(r *http.Request) (*http.Response, error) {
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = readCloser{r.Body}
	}
	return d.client.Do(r)
}

// readCloser exposes Read and Close only.
type readCloser struct{ io.ReadCloser }

// exceptionStatus is the HTTP status Bedrock documents for each exception,
// for the exceptions that arrive inside a stream (whose HTTP answer was
// 200).
var exceptionStatus = map[string]int{
	"AccessDeniedException":         http.StatusForbidden,
	"InternalServerException":       http.StatusInternalServerError,
	"ModelErrorException":           http.StatusFailedDependency,
	"ModelNotReadyException":        http.StatusTooManyRequests,
	"ModelStreamErrorException":     http.StatusFailedDependency,
	"ModelTimeoutException":         http.StatusRequestTimeout,
	"ResourceNotFoundException":     http.StatusNotFound,
	"ServiceQuotaExceededException": http.StatusBadRequest,
	"ServiceUnavailableException":   http.StatusServiceUnavailable,
	"ThrottlingException":           http.StatusTooManyRequests,
	"ValidationException":           http.StatusBadRequest,
}

// failure is the PROVIDER_ERROR of a failed call: the HTTP status and
// headers of the vendor's answer, the exception's code; for an exception
// inside a stream, the status Bedrock documents for it.
func (p *Provider) failure(ctx context.Context, err error) error {
	var (
		status int
		code   string
		header http.Header
	)
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		code = apiErr.ErrorCode()
	}
	var respErr *smithyhttp.ResponseError
	if errors.As(err, &respErr) && respErr.Response != nil && respErr.Response.Response != nil {
		status = respErr.HTTPStatusCode()
		header = respErr.Response.Header
	} else if code != "" {
		status = exceptionStatus[code]
		if status == 0 {
			status = http.StatusInternalServerError
		}
	}
	return model.Failure(ctx, p.name, status, code, header, err)
}
