package workflow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/promptcanvas/promptcanvas/internal/schemadetail"
)

// configSchemaURL names the one in-memory resource an action's config
// schema is compiled from.
const configSchemaURL = "mem:///workflow/action-config.json"

// compiledConfig is an action's compiled config schema.
type compiledConfig struct {
	once sync.Once
	// schema is nil when the action accepts any config.
	schema *jsonschema.Schema
	// doc is the schema document, read for the keyword values that
	// messages quote.
	doc any
	// err says that the action's schema does not compile: a fault of the
	// action, not of a spec.
	err error
}

// configSchemaOf returns the compiled config schema of a, compiled once per
// registry (Registry.schemas) for every action value that is comparable;
// others compile each time.
func configSchemaOf(reg *Registry, a Action) *compiledConfig {
	if v := reflect.ValueOf(a); !v.IsValid() || !v.Comparable() {
		cs := &compiledConfig{}
		cs.compile(a)
		return cs
	}
	v, _ := reg.schemas.LoadOrStore(a, &compiledConfig{})
	cs := v.(*compiledConfig)
	cs.once.Do(func() { cs.compile(a) })
	return cs
}

func (cs *compiledConfig) compile(a Action) {
	raw := a.ConfigSchema()
	if jsonKind(raw) == "null" {
		return
	}
	fail := func(err error) { cs.err = fmt.Errorf("workflow: action %T: config schema: %w", a, err) }
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&cs.doc); err != nil {
		fail(err)
		return
	}
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.AssertFormat = true
	c.LoadURL = func(url string) (io.ReadCloser, error) {
		return nil, fmt.Errorf("reference to %s is not allowed", url)
	}
	if err := c.AddResource(configSchemaURL, bytes.NewReader(raw)); err != nil {
		fail(err)
		return
	}
	s, err := c.Compile(configSchemaURL)
	if err != nil {
		fail(err)
		return
	}
	cs.schema = s
}

// checkConfig validates a node's config against its action's schema; an
// absent config is checked as {}.
func (c *compiler) checkConfig(path string, a Action, cfg json.RawMessage) bool {
	cs := configSchemaOf(c.reg, a)
	if cs.err != nil {
		c.err = cs.err
		return false
	}
	if cs.schema == nil {
		return true
	}
	var doc any
	dec := json.NewDecoder(bytes.NewReader(configOrEmpty(cfg)))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		c.add(path, "must be valid JSON")
		return false
	}
	err := cs.schema.Validate(doc)
	if err == nil {
		return true
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		c.err = fmt.Errorf("workflow: validate config: %w", err)
		return false
	}
	// The details are worded as request bodies' validation errors are.
	c.details = append(c.details, schemadetail.Details(ve, cs.doc, doc, path)...)
	return false
}
