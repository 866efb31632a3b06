package model

import (
	"context"
	"errors"
	"strings"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// redactedMark replaces a credential's key in the text of an error.
const redactedMark = "[redacted]"

// keyedProvider is the provider of a workspace credential, whose errors
// have the credential's key cut out of their text. A vendor that refuses
// a key often quotes it in its error message ("Incorrect API key provided:
// sk-..."), and the vendor's message travels in the error's cause
// (VendorError.Err) to the log: the key must not.
type keyedProvider struct {
	Provider
	secrets []string
}

// withoutKey returns p, whose errors will not hold key.
func withoutKey(p Provider, key string) Provider {
	secrets := secretsOf(key)
	if len(secrets) == 0 {
		return p
	}
	return keyedProvider{Provider: p, secrets: secrets}
}

// secretsOf returns the texts of key that an error must not hold: the key,
// and each part of an AWS key pair "ACCESS_KEY_ID:SECRET_ACCESS_KEY
// [:SESSION_TOKEN]", which a vendor may quote alone.
func secretsOf(key string) []string {
	key = strings.TrimSpace(key)
	if key == "" {
		return nil
	}
	out := []string{key}
	if !strings.HasPrefix(key, "{") {
		for _, part := range strings.Split(key, ":") {
			if len(part) >= 8 && part != key {
				out = append(out, part)
			}
		}
	}
	return out
}

func (p keyedProvider) Complete(ctx context.Context, req Request) (*Result, error) {
	res, err := p.Provider.Complete(ctx, req)
	return res, p.redact(err)
}

func (p keyedProvider) Stream(ctx context.Context, req Request, emit func(Chunk) error) (*Result, error) {
	res, err := p.Provider.Stream(ctx, req, emit)
	return res, p.redact(err)
}

// redact returns err with the key cut out of its text. A *canvas.Error
// stays one, with the same code and details, so that callers read it as
// they read any provider's error; errors.Is and errors.As still reach
// every error of the chain.
func (p keyedProvider) redact(err error) error {
	if err == nil {
		return nil
	}
	var ce *canvas.Error
	if errors.As(err, &ce) && ce == err {
		c := *ce
		c.Message = p.cut(c.Message)
		if c.Err != nil {
			c.Err = &redactedError{err: c.Err, cut: p.cut}
		}
		return &c
	}
	return &redactedError{err: err, cut: p.cut}
}

// cut returns s without the secrets.
func (p keyedProvider) cut(s string) string {
	for _, k := range p.secrets {
		s = strings.ReplaceAll(s, k, redactedMark)
	}
	return s
}

// redactedError is err with a text that holds no secret.
type redactedError struct {
	err error
	cut func(string) string
}

func (e *redactedError) Error() string { return e.cut(e.err.Error()) }

func (e *redactedError) Unwrap() error { return e.err }
