// Package s3test runs an in-process S3-compatible server for tests: the S3
// wire protocol (github.com/johannesboyne/gofakes3, objects in memory)
// behind an httptest server on loopback, so that the S3 blob storage is
// tested through the real AWS SDK, request signing and multipart uploads
// included.
package s3test

import (
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/stretchr/testify/require"
)

// Region is the region the server's URLs name.
const Region = "us-east-1"

// Credentials a client signs its requests with; the server accepts any.
const (
	AccessKeyID     = "canvas-test"
	SecretAccessKey = "canvas-test-secret"
)

// Server is an S3-compatible server in memory.
type Server struct {
	// Endpoint is the server's base URL, http://127.0.0.1:PORT.
	Endpoint string

	backend *s3mem.Backend
}

// Start starts a server and registers its Close with tb.Cleanup.
func Start(tb testing.TB) *Server {
	tb.Helper()
	backend := s3mem.New()
	faker := gofakes3.New(backend, gofakes3.WithLogger(gofakes3.DiscardLog()))
	srv := httptest.NewServer(faker.Server())
	tb.Cleanup(srv.Close)
	return &Server{Endpoint: srv.URL, backend: backend}
}

// CreateBucket creates an empty bucket.
func (s *Server) CreateBucket(tb testing.TB, name string) {
	tb.Helper()
	require.NoError(tb, s.backend.CreateBucket(name))
}

// URL returns the s3:// URL of a bucket on the server, in the form
// bucketblobs.Open and canvasd --blobs take.
func (s *Server) URL(bucket string) string {
	q := url.Values{"endpoint": {s.Endpoint}, "region": {Region}, "use_path_style": {"true"}}
	return "s3://" + bucket + "?" + q.Encode()
}

// SetCredentials sets the AWS SDK's credential variables for the rest of
// the test (tb must not be parallel), so that a client opened from a URL
// signs its requests and never asks an instance metadata service.
func SetCredentials(tb interface{ Setenv(k, v string) }) {
	tb.Setenv("AWS_ACCESS_KEY_ID", AccessKeyID)
	tb.Setenv("AWS_SECRET_ACCESS_KEY", SecretAccessKey)
	tb.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	tb.Setenv("AWS_CONFIG_FILE", "/dev/null")
	tb.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
}

// Env returns the same variables as SetCredentials, for a child process.
func Env() []string {
	return []string{"AWS_ACCESS_KEY_ID=" + AccessKeyID, "AWS_SECRET_ACCESS_KEY=" + SecretAccessKey,
		"AWS_EC2_METADATA_DISABLED=true", "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null"}
}
