package model_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
)

// memCredentials are the credentials of one workspace, in memory: the
// model package's view of what the credential package stores.
type memCredentials struct {
	mu    sync.Mutex
	infos []model.CredentialInfo
	keys  map[string]string
	conc  map[string]int
	at    map[string]time.Time
	used  map[string]int
}

func newMemCredentials() *memCredentials {
	return &memCredentials{keys: map[string]string{}, conc: map[string]int{}, at: map[string]time.Time{}, used: map[string]int{}}
}

func (m *memCredentials) add(id, name, provider string, projects ...string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ci := model.CredentialInfo{ID: id, Name: name, Provider: provider, CreatedAt: time.Now()}
	if len(projects) > 0 {
		ci.ProjectIDs = projects
	}
	m.infos = append(m.infos, ci)
	m.keys[id] = "key-of-" + name
	m.at[id] = time.Unix(1, 0)
}

func (m *memCredentials) List(_ context.Context, ws string) ([]model.CredentialInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if ws != "ws" {
		return nil, nil
	}
	return append([]model.CredentialInfo(nil), m.infos...), nil
}

func (m *memCredentials) Open(_ context.Context, ws, id string) (*model.Credential, time.Time, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, ci := range m.infos {
		if ci.ID == id && ws == "ws" {
			return &model.Credential{ID: id, WorkspaceID: ws, Name: ci.Name, Provider: ci.Provider, APIKey: m.keys[id],
				Settings: model.Settings{MaxConcurrency: m.conc[id]}}, m.at[id], nil
		}
	}
	return nil, time.Time{}, canvas.NotFound("credential")
}

func (m *memCredentials) Used(_ context.Context, _, id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.used[id]++
}

// scripted is a provider whose answers are scripted per call: an error to
// fail with, or the answer.
type scripted struct {
	name  string
	key   string
	calls atomic.Int32
	fail  func(n int) error
	block chan struct{}
	in    atomic.Int32
	peak  atomic.Int32
}

func (p *scripted) Name() string { return p.name }

func (p *scripted) Complete(ctx context.Context, req model.Request) (*model.Result, error) {
	n := int(p.calls.Add(1))
	cur := p.in.Add(1)
	defer p.in.Add(-1)
	for {
		peak := p.peak.Load()
		if cur <= peak || p.peak.CompareAndSwap(peak, cur) {
			break
		}
	}
	if p.block != nil {
		select {
		case <-p.block:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if p.fail != nil {
		if err := p.fail(n); err != nil {
			return nil, err
		}
	}
	return &model.Result{Text: p.name + " answers with " + p.key, Model: req.Model,
		Usage: model.Usage{InputTokens: 1000, OutputTokens: 2000}}, nil
}

func (p *scripted) Stream(ctx context.Context, req model.Request, emit func(model.Chunk) error) (*model.Result, error) {
	res, err := p.Complete(ctx, req)
	if err != nil {
		return nil, err
	}
	return res, emit(model.Chunk{Text: res.Text})
}

func vendorFailure(status int, retryAfter string) error {
	h := http.Header{}
	if retryAfter != "" {
		h.Set("Retry-After", retryAfter)
	}
	return model.Failure(context.Background(), "fake", status, "code", h, errors.New("vendor says no"))
}

type callerFixture struct {
	creds     *memCredentials
	providers map[string]*scripted // by credential key
	caller    *model.Caller
	built     atomic.Int32
}

func newCallerFixture(t *testing.T, server model.Provider) *callerFixture {
	f := &callerFixture{creds: newMemCredentials(), providers: map[string]*scripted{}}
	factory := func(c model.Credential) (model.Provider, error) {
		f.built.Add(1)
		p, ok := f.providers[c.APIKey]
		if !ok {
			return nil, errors.New("no scripted provider for " + c.Name)
		}
		p.key = c.APIKey
		return p, nil
	}
	reg := model.NewRegistry(model.NewEcho(model.EchoOptions{}))
	if server != nil {
		reg.RegisterPrefix("", server)
	}
	f.caller = model.NewCaller(model.Options{Providers: reg, Credentials: f.creds,
		Kinds:  model.Kinds{canvas.ProviderAnthropic: factory, canvas.ProviderOpenAI: factory, canvas.ProviderGemini: factory},
		Retry:  model.Retry{Attempts: 3, BaseDelay: time.Millisecond, MaxDelay: 50 * time.Millisecond},
		Prices: model.CataloguePrices{Catalogue: model.Bundled()}})
	return f
}

func (f *callerFixture) provider(name string) *scripted {
	p := &scripted{name: name}
	f.providers["key-of-"+name] = p
	return p
}

func TestCaller_Target(t *testing.T) {
	ctx := context.Background()
	f := newCallerFixture(t, nil)
	f.creds.add("c-claude-old", "claude-old", canvas.ProviderAnthropic)
	f.creds.add("c-claude-new", "claude-new", canvas.ProviderAnthropic)
	f.creds.add("c-gemini-p2", "gemini-p2", canvas.ProviderGemini, "p2")
	f.creds.add("c-openai", "openai", canvas.ProviderOpenAI)
	ws := model.Scope{WorkspaceID: "ws", Projects: []string{"p1"}}

	cases := []struct {
		name  string
		scope model.Scope
		want  model.Want
		got   model.Target
		code  string
		says  string
	}{
		{name: "OldestByModelName", scope: ws, want: model.Want{Model: "claude-sonnet-4-5"},
			got: model.Target{Model: "claude-sonnet-4-5", Provider: "anthropic", CredentialID: "c-claude-old"}},
		{name: "AllowedPreferred", scope: model.Scope{WorkspaceID: "ws", Allowed: []string{"c-claude-new"}},
			want: model.Want{Model: "claude-sonnet-4-5"},
			got:  model.Target{Model: "claude-sonnet-4-5", Provider: "anthropic", CredentialID: "c-claude-new"}},
		{name: "Named", scope: ws, want: model.Want{Model: "my-model", CredentialID: "c-openai"},
			got: model.Target{Model: "my-model", Provider: "openai", CredentialID: "c-openai"}},
		{name: "ProviderNamed", scope: ws, want: model.Want{Model: "llama3", Provider: canvas.ProviderOpenAI},
			got: model.Target{Model: "llama3", Provider: "openai", CredentialID: "c-openai"}},
		{name: "Echo", scope: model.Scope{WorkspaceID: "ws", Allowed: []string{}}, want: model.Want{Model: "echo"},
			got: model.Target{Model: "echo"}},
		{name: "NamedOutsideList", scope: model.Scope{WorkspaceID: "ws", Allowed: []string{"c-claude-new"}},
			want: model.Want{Model: "gpt-4o", CredentialID: "c-openai"}, code: canvas.EFORBIDDEN, says: `"openai"`},
		{name: "OnlyServerOutsideList", scope: model.Scope{WorkspaceID: "ws", Allowed: []string{"c-claude-new"}},
			want: model.Want{Model: "gpt-4o"}, code: canvas.EFORBIDDEN, says: `"openai" (c-openai)`},
		{name: "NamedUnknown", scope: ws, want: model.Want{Model: "gpt-4o", CredentialID: "nope", CredentialPath: "/json/settings/credentialId"},
			code: canvas.EINVALID, says: `"nope"`},
		{name: "OtherProject", scope: ws, want: model.Want{Model: "gemini-2.5-pro", CredentialID: "c-gemini-p2"},
			code: canvas.EFORBIDDEN, says: "other projects"},
		{name: "NoCredentialOfProject", scope: ws, want: model.Want{Model: "gemini-2.5-pro"},
			code: canvas.EINVALID, says: `"gemini-2.5-pro"`},
		{name: "UnknownModel", scope: ws, want: model.Want{Model: "mystery"}, code: canvas.EINVALID, says: `"mystery"`},
		{name: "WrongProvider", scope: ws, want: model.Want{Model: "x", Provider: canvas.ProviderGemini, CredentialID: "c-openai"},
			code: canvas.EINVALID, says: "openai, not gemini"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := f.caller.Target(ctx, tc.scope, tc.want)
			if tc.code == "" {
				require.NoError(t, err)
				assert.Equal(t, tc.got, got)
				return
			}
			require.Error(t, err)
			assert.Equal(t, tc.code, canvas.ErrorCode(err))
			assert.Contains(t, canvas.ErrorMessage(err), tc.says)
		})
	}

	t.Run("ServerBackEnd", func(t *testing.T) {
		f := newCallerFixture(t, &scripted{name: "server"})
		got, err := f.caller.Target(ctx, model.Scope{WorkspaceID: "ws"}, model.Want{Model: "gpt-4o"})
		require.NoError(t, err)
		assert.Equal(t, model.Target{Model: "gpt-4o"}, got, "no credential: the server-wide back end")
		_, err = f.caller.Target(ctx, model.Scope{WorkspaceID: "ws", Allowed: []string{}}, model.Want{Model: "gpt-4o"})
		assert.Equal(t, canvas.EINVALID, canvas.ErrorCode(err), "a restricted canvas does not use the built-in back end")
	})
}

func TestCaller_SendOnCredentials(t *testing.T) {
	ctx := context.Background()
	msgs := []model.Message{{Role: canvas.RoleUser, Content: "hi"}}

	t.Run("CostAndUse", func(t *testing.T) {
		f := newCallerFixture(t, nil)
		f.creds.add("c1", "claude", canvas.ProviderAnthropic)
		f.provider("claude")
		res, err := f.caller.Call(ctx, "ws", model.Request{Messages: msgs, Model: "claude-sonnet-4-5-20250929",
			Provider: canvas.ProviderAnthropic, CredentialID: "c1"}, nil)
		require.NoError(t, err)
		assert.Equal(t, "claude answers with key-of-claude", res.Text)
		assert.Equal(t, model.Target{Model: "claude-sonnet-4-5-20250929", Provider: "anthropic", CredentialID: "c1"}, res.Target)
		require.NotNil(t, res.Cost, "claude-sonnet-4-5 is in the catalogue")
		assert.Equal(t, model.Cost{Input: 0.003, Output: 0.03, Total: 0.033, Currency: "USD"}, *res.Cost)
		assert.Equal(t, 1, f.creds.used["c1"])

		res, err = f.caller.Call(ctx, "ws", model.Request{Messages: msgs, Model: "unpriced",
			Provider: canvas.ProviderAnthropic, CredentialID: "c1"}, nil)
		require.NoError(t, err)
		assert.Nil(t, res.Cost, "no price known")
		assert.EqualValues(t, 1, f.built.Load(), "the provider of an unchanged credential is built once")
	})
	t.Run("RetriesThenSucceeds", func(t *testing.T) {
		f := newCallerFixture(t, nil)
		f.creds.add("c1", "claude", canvas.ProviderAnthropic)
		p := f.provider("claude")
		p.fail = func(n int) error {
			if n < 3 {
				return vendorFailure(http.StatusTooManyRequests, "0.01")
			}
			return nil
		}
		res, err := f.caller.Call(ctx, "ws", model.Request{Messages: msgs, Model: "claude-x", CredentialID: "c1",
			Provider: canvas.ProviderAnthropic}, nil)
		require.NoError(t, err)
		assert.Equal(t, "claude answers with key-of-claude", res.Text)
		assert.EqualValues(t, 3, p.calls.Load())
	})
	t.Run("NotRetryable", func(t *testing.T) {
		f := newCallerFixture(t, nil)
		f.creds.add("c1", "claude", canvas.ProviderAnthropic)
		p := f.provider("claude")
		p.fail = func(int) error { return vendorFailure(http.StatusBadRequest, "") }
		_, err := f.caller.Call(ctx, "ws", model.Request{Messages: msgs, Model: "claude-x", CredentialID: "c1"}, nil)
		assert.Equal(t, canvas.EPROVIDER, canvas.ErrorCode(err))
		assert.Contains(t, canvas.ErrorMessage(err), "HTTP 400")
		assert.NotContains(t, canvas.ErrorMessage(err), "vendor says no", "the vendor's message stays out of the answer")
		assert.EqualValues(t, 1, p.calls.Load())
	})
	t.Run("BoundedAttempts", func(t *testing.T) {
		f := newCallerFixture(t, nil)
		f.creds.add("c1", "claude", canvas.ProviderAnthropic)
		p := f.provider("claude")
		p.fail = func(int) error { return vendorFailure(http.StatusServiceUnavailable, "") }
		_, err := f.caller.Call(ctx, "ws", model.Request{Messages: msgs, Model: "claude-x", CredentialID: "c1"}, nil)
		assert.Equal(t, canvas.EPROVIDER, canvas.ErrorCode(err))
		assert.EqualValues(t, 3, p.calls.Load())
	})
	t.Run("FallbackAnswers", func(t *testing.T) {
		f := newCallerFixture(t, nil)
		f.creds.add("c1", "claude", canvas.ProviderAnthropic)
		f.creds.add("c2", "gemini", canvas.ProviderGemini)
		claude, gemini := f.provider("claude"), f.provider("gemini")
		// A wait longer than the retry allows moves on at once.
		claude.fail = func(int) error { return vendorFailure(http.StatusTooManyRequests, "3600") }
		res, err := f.caller.Call(ctx, "ws", model.Request{Messages: msgs, Model: "claude-x", CredentialID: "c1",
			Provider: canvas.ProviderAnthropic, Fallbacks: []model.Target{{Model: "gemini-2.5-flash", Provider: canvas.ProviderGemini, CredentialID: "c2"}}}, nil)
		require.NoError(t, err)
		assert.Equal(t, "gemini answers with key-of-gemini", res.Text)
		assert.Equal(t, model.Target{Model: "gemini-2.5-flash", Provider: "gemini", CredentialID: "c2"}, res.Target)
		assert.EqualValues(t, 1, claude.calls.Load())
		assert.EqualValues(t, 1, gemini.calls.Load())
		require.NotNil(t, res.Cost)
		assert.InDelta(t, 0.0053, res.Cost.Total, 1e-9, "priced as the model that answered")
	})
	t.Run("NoFallbackOnFinalError", func(t *testing.T) {
		f := newCallerFixture(t, nil)
		f.creds.add("c1", "claude", canvas.ProviderAnthropic)
		f.creds.add("c2", "gemini", canvas.ProviderGemini)
		claude, gemini := f.provider("claude"), f.provider("gemini")
		claude.fail = func(int) error { return vendorFailure(http.StatusUnauthorized, "") }
		_, err := f.caller.Call(ctx, "ws", model.Request{Messages: msgs, Model: "claude-x", CredentialID: "c1",
			Fallbacks: []model.Target{{Model: "gemini-x", CredentialID: "c2"}}}, nil)
		assert.Equal(t, canvas.EPROVIDER, canvas.ErrorCode(err))
		assert.EqualValues(t, 0, gemini.calls.Load(), "a 401 is not retryable: no fallback")
	})
	t.Run("ConcurrencyPerCredential", func(t *testing.T) {
		f := newCallerFixture(t, nil)
		f.creds.add("c1", "claude", canvas.ProviderAnthropic)
		f.creds.conc["c1"] = 2
		p := f.provider("claude")
		p.block = make(chan struct{})
		var wg sync.WaitGroup
		for range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := f.caller.Call(ctx, "ws", model.Request{Messages: msgs, Model: "claude-x", CredentialID: "c1"}, nil)
				assert.NoError(t, err)
			}()
		}
		require.Eventually(t, func() bool { return p.in.Load() == 2 }, 5*time.Second, time.Millisecond)
		close(p.block)
		wg.Wait()
		assert.EqualValues(t, 2, p.peak.Load(), "never more calls in flight than the credential allows")
		assert.EqualValues(t, 6, p.calls.Load())
	})
	t.Run("RotatedKeyRebuilds", func(t *testing.T) {
		f := newCallerFixture(t, nil)
		f.creds.add("c1", "claude", canvas.ProviderAnthropic)
		f.provider("claude")
		req := model.Request{Messages: msgs, Model: "claude-x", CredentialID: "c1"}
		_, err := f.caller.Call(ctx, "ws", req, nil)
		require.NoError(t, err)
		f.creds.mu.Lock()
		f.creds.keys["c1"] = "key-of-claude2"
		f.creds.at["c1"] = time.Unix(2, 0)
		f.creds.mu.Unlock()
		f.provider("claude2")
		res, err := f.caller.Call(ctx, "ws", req, nil)
		require.NoError(t, err)
		assert.Equal(t, "claude2 answers with key-of-claude2", res.Text)
	})
	t.Run("DeletedCredential", func(t *testing.T) {
		f := newCallerFixture(t, nil)
		_, err := f.caller.Call(ctx, "ws", model.Request{Messages: msgs, Model: "claude-x", CredentialID: "gone"}, nil)
		assert.Equal(t, canvas.ENOTFOUND, canvas.ErrorCode(err))
	})
}
