package model

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
)

// Currency is the currency of every price and cost.
const Currency = "USD"

// Cost is what one call cost, from its usage and its model's price.
type Cost struct {
	Input    float64 `json:"input"`
	Output   float64 `json:"output"`
	Total    float64 `json:"total"`
	Currency string  `json:"currency"`
}

// Add returns c plus o; a nil side counts as nothing, and nil plus nil is
// nil (no price known).
func (c *Cost) Add(o *Cost) *Cost {
	switch {
	case c == nil && o == nil:
		return nil
	case c == nil:
		cp := *o
		return &cp
	case o == nil:
		cp := *c
		return &cp
	}
	return &Cost{Input: round(c.Input + o.Input), Output: round(c.Output + o.Output),
		Total: round(c.Total + o.Total), Currency: Currency}
}

// Price is the price of a model per million input and output tokens.
// Source says where it comes from: "catalogue" or "workspace" (an
// override).
type Price struct {
	Name             string  `json:"name"`
	Provider         string  `json:"provider"`
	InputPerMillion  float64 `json:"inputPerMillion"`
	OutputPerMillion float64 `json:"outputPerMillion"`
	Source           string  `json:"source"`
}

// Price sources.
const (
	SourceCatalogue = "catalogue"
	SourceWorkspace = "workspace"
)

// Cost returns what usage costs at p.
func (p *Price) Cost(u Usage) *Cost {
	in := round(float64(u.InputTokens) * p.InputPerMillion / 1e6)
	out := round(float64(u.OutputTokens) * p.OutputPerMillion / 1e6)
	return &Cost{Input: in, Output: out, Total: round(in + out), Currency: Currency}
}

// round keeps costs to a billionth of a dollar, so that sums of float
// products read as the vendor's invoice does.
func round(f float64) float64 { return math.Round(f*1e9) / 1e9 }

// Catalogue is the bundled price list: the date its prices were taken and
// one price per model name.
type Catalogue struct {
	Date   string
	prices map[string]Price
	names  []string // longest first, for prefix matches
}

//go:embed prices.json
var pricesJSON []byte

var bundled = mustCatalogue(pricesJSON)

// Bundled returns the price catalogue built into the binary.
func Bundled() *Catalogue { return bundled }

func mustCatalogue(b []byte) *Catalogue {
	c, err := ParseCatalogue(b)
	if err != nil {
		panic(err)
	}
	return c
}

// ParseCatalogue reads a catalogue in the form of the bundled prices.json.
func ParseCatalogue(b []byte) (*Catalogue, error) {
	var doc struct {
		Date     string  `json:"date"`
		Currency string  `json:"currency"`
		Models   []Price `json:"models"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("price catalogue: %w", err)
	}
	if doc.Currency != Currency {
		return nil, fmt.Errorf("price catalogue: currency %q, want %s", doc.Currency, Currency)
	}
	c := &Catalogue{Date: doc.Date, prices: make(map[string]Price, len(doc.Models))}
	for _, p := range doc.Models {
		if p.Name == "" || p.InputPerMillion < 0 || p.OutputPerMillion < 0 {
			return nil, fmt.Errorf("price catalogue: bad entry %+v", p)
		}
		if _, dup := c.prices[p.Name]; dup {
			return nil, fmt.Errorf("price catalogue: %q twice", p.Name)
		}
		p.Source = SourceCatalogue
		c.prices[p.Name] = p
		c.names = append(c.names, p.Name)
	}
	sort.SliceStable(c.names, func(i, j int) bool { return len(c.names[i]) > len(c.names[j]) })
	return c, nil
}

// All returns every price of the catalogue, by name.
func (c *Catalogue) All() []Price {
	out := make([]Price, 0, len(c.prices))
	for _, p := range c.prices {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Lookup returns the price of model: the entry of its exact name, else of
// the longest name it extends with a dated or versioned suffix
// ("claude-sonnet-4-5-20250929", "gpt-4o-2024-08-06",
// "anthropic.claude-sonnet-4-20250514-v1:0"). A Bedrock cross-region
// prefix ("us.", "eu.", "apac.", "global.") is ignored.
func (c *Catalogue) Lookup(model string) (Price, bool) {
	return lookup(c.prices, c.names, model)
}

// lookup is Lookup over any set of prices; names is longest first.
func lookup(prices map[string]Price, names []string, model string) (Price, bool) {
	for _, name := range candidates(model) {
		if p, ok := prices[name]; ok {
			return p, true
		}
		for _, n := range names {
			if len(name) > len(n) && strings.HasPrefix(name, n) && strings.ContainsRune("-@:", rune(name[len(n)])) {
				return prices[n], true
			}
		}
	}
	return Price{}, false
}

// candidates returns model and, for a Bedrock inference profile, the model
// without its region prefix.
func candidates(model string) []string {
	for _, region := range []string{"us.", "eu.", "apac.", "global.", "us-gov."} {
		if strings.HasPrefix(model, region) {
			return []string{model, model[len(region):]}
		}
	}
	return []string{model}
}

// Prices gives the price of a model in a workspace: the workspace's
// override, else the catalogue's. ok is false when neither knows the model.
type Prices interface {
	Price(ctx context.Context, workspaceID, model string) (p Price, ok bool, err error)
}

// CataloguePrices is Prices without overrides: the catalogue alone.
type CataloguePrices struct{ *Catalogue }

// Price implements Prices.
func (c CataloguePrices) Price(_ context.Context, _, model string) (Price, bool, error) {
	p, ok := c.Lookup(model)
	return p, ok, nil
}

// Overlay returns the price of model in overrides (a workspace's, by
// name) if any matches it, else in the catalogue: an override of
// "claude-sonnet-4-5" prices "claude-sonnet-4-5-20250929" too.
func (c *Catalogue) Overlay(overrides map[string]Price, model string) (Price, bool) {
	if len(overrides) > 0 {
		names := make([]string, 0, len(overrides))
		for n := range overrides {
			names = append(names, n)
		}
		sort.SliceStable(names, func(i, j int) bool { return len(names[i]) > len(names[j]) })
		if p, ok := lookup(overrides, names, model); ok {
			return p, true
		}
	}
	return c.Lookup(model)
}
