package gemini_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/model/gemini"
)

// vertexCredential is a Vertex credential of project proj-1 in
// us-central1 with key.
func vertexCredential(key, baseURL string) model.Credential {
	return model.Credential{Name: "vertex", Provider: canvas.ProviderGemini, APIKey: key, BaseURL: baseURL,
		Settings: model.Settings{Backend: gemini.BackendVertex, Project: "proj-1", Location: "us-central1",
			Headers: map[string]string{"X-Team": "canvas"}}}
}

// serviceAccountKey returns the JSON key of a service account whose
// tokens are asked of tokenURL.
func serviceAccountKey(t *testing.T, tokenURL string) string {
	t.Helper()
	pk, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	der, err := x509.MarshalPKCS8PrivateKey(pk)
	require.NoError(t, err)
	b, err := json.Marshal(map[string]string{
		"type": "service_account", "project_id": "proj-1", "private_key_id": "kid-1",
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email": "canvas@proj-1.iam.gserviceaccount.com", "client_id": "1",
		"token_uri": tokenURL,
	})
	require.NoError(t, err)
	return string(b)
}

func TestProvider_Vertex(t *testing.T) {
	const path = "/v1beta1/projects/proj-1/locations/us-central1/publishers/google/models/gemini-test"
	t.Run("APIKey", func(t *testing.T) {
		fake, url := newFake(t, &fakeGemini{Parts: []string{`{"text": "Hi"}`}})
		p, err := gemini.New(gemini.Options{Credential: vertexCredential(testKey, url)})
		require.NoError(t, err)

		res, err := p.Complete(context.Background(), chatRequest())
		require.NoError(t, err)
		assert.Equal(t, "Hi", res.Text)
		_, err = p.Stream(context.Background(), chatRequest(), nil)
		require.NoError(t, err)

		reqs := fake.Requests()
		require.Len(t, reqs, 2)
		assert.Equal(t, path+":generateContent", reqs[0].Path)
		assert.Equal(t, path+":streamGenerateContent", reqs[1].Path)
		assert.Equal(t, "sse", reqs[1].Query.Get("alt"))
		for _, r := range reqs {
			assert.Equal(t, testKey, r.Header.Get("X-Goog-Api-Key"))
			assert.Empty(t, r.Header.Get("Authorization"))
			assert.Equal(t, "canvas", r.Header.Get("X-Team"))
		}
		assertJSON(t, `{
			"contents": [{"role": "user", "parts": [{"text": "Say hi."}]}],
			"systemInstruction": {"role": "user", "parts": [{"text": "You are terse."}]},
			"generationConfig": {"temperature": 0.25, "topP": 0.5, "maxOutputTokens": 64}
		}`, reqs[0].Body)
	})
	t.Run("ServiceAccount", func(t *testing.T) {
		fake, url := newFake(t, &fakeGemini{Parts: []string{`{"text": "Hi"}`}})
		key := serviceAccountKey(t, url+"/token")
		p, err := gemini.New(gemini.Options{Credential: vertexCredential(key, url)})
		require.NoError(t, err)

		for range 2 {
			_, err = p.Complete(context.Background(), chatRequest())
			require.NoError(t, err)
		}
		_, err = p.Stream(context.Background(), chatRequest(), nil)
		require.NoError(t, err)

		reqs := fake.Requests()
		require.Len(t, reqs, 3)
		for _, r := range reqs {
			assert.True(t, strings.HasPrefix(r.Path, path+":"), r.Path)
			assert.Equal(t, "Bearer ya29.fake-token", r.Header.Get("Authorization"))
			assert.Empty(t, r.Header.Get("X-Goog-Api-Key"))
			assert.Equal(t, "canvas", r.Header.Get("X-Team"))
		}

		tokens := fake.Tokens()
		require.Len(t, tokens, 1, "the token is cached")
		assert.Equal(t, "urn:ietf:params:oauth:grant-type:jwt-bearer", tokens[0].Get("grant_type"))
		jwt := strings.Split(tokens[0].Get("assertion"), ".")
		require.Len(t, jwt, 3)
		claims, err := base64.RawURLEncoding.DecodeString(jwt[1])
		require.NoError(t, err)
		var c map[string]any
		require.NoError(t, json.Unmarshal(claims, &c))
		assert.Equal(t, "canvas@proj-1.iam.gserviceaccount.com", c["iss"])
		assert.Equal(t, url+"/token", c["aud"])
		assert.Equal(t, "https://www.googleapis.com/auth/cloud-platform", c["scope"])
	})
	t.Run("TokenRefused", func(t *testing.T) {
		fake, url := newFake(t, &fakeGemini{Parts: []string{`{"text": "Hi"}`}})
		key := serviceAccountKey(t, url+"/no-such-token-endpoint")
		p, err := gemini.New(gemini.Options{Credential: vertexCredential(key, url)})
		require.NoError(t, err)

		_, err = p.Complete(context.Background(), chatRequest())
		assert.Equal(t, canvas.EPROVIDER, canvas.ErrorCode(err))
		assert.Equal(t, `Model provider "gemini" answered HTTP 404.`, canvas.ErrorMessage(err))
		assert.Empty(t, fake.Requests())
	})
}

// redirect is a transport that records each request's URL and sends it to
// a test server instead.
type redirect struct {
	to   *url.URL
	mu   sync.Mutex
	seen []string
}

func (r *redirect) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.seen = append(r.seen, req.URL.String())
	r.mu.Unlock()
	req = req.Clone(req.Context())
	req.URL.Scheme, req.URL.Host, req.Host = r.to.Scheme, r.to.Host, ""
	return http.DefaultTransport.RoundTrip(req)
}

func (r *redirect) Seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.seen...)
}

// TestProvider_IgnoresEnvironment sets every variable the client library
// reads and checks that the credential alone decides the backend, the
// address, the project and the key.
func TestProvider_IgnoresEnvironment(t *testing.T) {
	for k, v := range map[string]string{
		"GOOGLE_API_KEY": "env-google-key", "GEMINI_API_KEY": "env-gemini-key",
		"GOOGLE_GENAI_USE_VERTEXAI": "true", "GOOGLE_GENAI_USE_ENTERPRISE": "true",
		"GOOGLE_CLOUD_PROJECT": "env-project", "GOOGLE_CLOUD_LOCATION": "env-location", "GOOGLE_CLOUD_REGION": "env-region",
		"GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:1/env", "GOOGLE_VERTEX_BASE_URL": "http://127.0.0.1:1/env",
		"GOOGLE_APPLICATION_CREDENTIALS": "/nonexistent/adc.json", "GOOGLE_CLOUD_QUOTA_PROJECT": "env-quota",
	} {
		t.Setenv(k, v)
	}
	fake, base := newFake(t, &fakeGemini{Parts: []string{`{"text": "ok"}`}})
	to, err := url.Parse(base)
	require.NoError(t, err)

	tests := []struct {
		name string
		cred model.Credential
		want string // the URL the SDK asked for
		auth string // the header that carries the credential, and its value
		val  string
	}{
		{"GeminiAPI", model.Credential{APIKey: testKey},
			"https://generativelanguage.googleapis.com/v1beta/models/gemini-test:generateContent", "X-Goog-Api-Key", testKey},
		{"VertexAPIKey", vertexCredential(testKey, ""),
			"https://us-central1-aiplatform.googleapis.com/v1beta1/projects/proj-1/locations/us-central1/publishers/google/models/gemini-test:generateContent",
			"X-Goog-Api-Key", testKey},
		{"VertexGlobal", model.Credential{APIKey: testKey, Settings: model.Settings{Backend: "vertex", Project: "proj-1", Location: "global"}},
			"https://aiplatform.googleapis.com/v1beta1/projects/proj-1/locations/global/publishers/google/models/gemini-test:generateContent",
			"X-Goog-Api-Key", testKey},
		{"VertexServiceAccount", vertexCredential(serviceAccountKey(t, base+"/token"), ""),
			"https://us-central1-aiplatform.googleapis.com/v1beta1/projects/proj-1/locations/us-central1/publishers/google/models/gemini-test:generateContent",
			"Authorization", "Bearer ya29.fake-token"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rd := &redirect{to: to}
			p, err := gemini.New(gemini.Options{Credential: tt.cred, HTTPClient: &http.Client{Transport: rd}})
			require.NoError(t, err)

			_, err = p.Complete(context.Background(), chatRequest())
			require.NoError(t, err)
			seen := rd.Seen()
			require.NotEmpty(t, seen)
			assert.Equal(t, tt.want, seen[len(seen)-1])
			reqs := fake.Requests()
			require.Len(t, reqs, i+1)
			r := reqs[i]
			assert.Equal(t, tt.val, r.Header.Get(tt.auth))
			if tt.auth == "Authorization" {
				assert.Empty(t, r.Header.Get("X-Goog-Api-Key"))
				assert.Empty(t, r.Header.Get("X-Goog-User-Project"))
			}
		})
	}
}
