package credential

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
)

// PriceProviderEcho is the provider a price of the offline echo model
// names; a price names it or one of canvas.Providers.
const PriceProviderEcho = "echo"

// ModelPrice is one entry of GET /models: a price of the bundled catalogue
// (Source "catalogue") or a workspace's override (Source "workspace", with
// when and by whom it was set).
type ModelPrice struct {
	model.Price
	UpdatedAt *time.Time `json:"updatedAt"`
	UpdatedBy *string    `json:"updatedBy"`
}

// ModelsQuery selects entries of ListModels: Provider keeps one
// provider's.
type ModelsQuery struct {
	Provider string
	Limit    int
	Offset   int
}

// ListModels returns one page of the prices of the principal's workspace,
// by name: the bundled catalogue, where each override replaces the entry
// of its name and adds the names the catalogue lacks; and how many there
// are in all. It requires the viewer role.
func (s *Service) ListModels(ctx context.Context, q ModelsQuery) ([]*ModelPrice, int, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleViewer)
	if err != nil {
		return nil, 0, err
	}
	overrides, err := s.store.ListModelPrices(ctx, p.WorkspaceID)
	if err != nil {
		return nil, 0, err
	}
	byName := map[string]*ModelPrice{}
	for _, pr := range model.Bundled().All() {
		byName[pr.Name] = &ModelPrice{Price: pr}
	}
	for _, o := range overrides {
		at, by := o.UpdatedAt, o.UpdatedBy
		byName[o.Name] = &ModelPrice{Price: o.Price, UpdatedAt: &at, UpdatedBy: &by}
	}
	all := make([]*ModelPrice, 0, len(byName))
	for _, m := range byName {
		if q.Provider == "" || m.Provider == q.Provider {
			all = append(all, m)
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	total := len(all)
	lo := min(q.Offset, total)
	hi := total
	if q.Limit > 0 {
		hi = min(lo+q.Limit, total)
	}
	return all[lo:hi], total, nil
}

// SetPriceParams are the body of PUT /models/{name}: the provider that
// serves the model and its price per million tokens, in USD.
type SetPriceParams struct {
	Provider         string   `json:"provider"`
	InputPerMillion  *float64 `json:"inputPerMillion"`
	OutputPerMillion *float64 `json:"outputPerMillion"`
}

// SetModelPrice sets the workspace's price of the model name, which then
// wins over the catalogue's for that name and the names that extend it
// (model.Catalogue.Overlay). It requires the admin role without project
// restriction: the price holds for every project.
func (s *Service) SetModelPrice(ctx context.Context, name string, params SetPriceParams) (*ModelPrice, error) {
	p, err := priceAdmin(ctx)
	if err != nil {
		return nil, err
	}
	if err := CheckModelName(name); err != nil {
		return nil, err
	}
	var v validator
	if params.Provider != PriceProviderEcho && !canvas.KnownProvider(params.Provider) {
		v.add("/json/provider", "must be one of %s or %s", strings.Join(canvas.Providers, ", "), PriceProviderEcho)
	}
	for _, f := range []struct {
		path string
		val  *float64
	}{{"/json/inputPerMillion", params.InputPerMillion}, {"/json/outputPerMillion", params.OutputPerMillion}} {
		if f.val == nil || *f.val < 0 || *f.val > MaxPricePerMillion {
			v.add(f.path, "must be a number from 0 to %d", MaxPricePerMillion)
		}
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	o := &PriceOverride{WorkspaceID: p.WorkspaceID, UpdatedBy: p.Actor(), Price: model.Price{Name: name,
		Provider: params.Provider, InputPerMillion: *params.InputPerMillion, OutputPerMillion: *params.OutputPerMillion,
		Source: model.SourceWorkspace}}
	if err := s.store.SetModelPrice(ctx, o); err != nil {
		return nil, err
	}
	return &ModelPrice{Price: o.Price, UpdatedAt: &o.UpdatedAt, UpdatedBy: &o.UpdatedBy}, nil
}

// DeleteModelPrice removes the workspace's price of the model name, which
// the catalogue prices again (if it knows it); a name without an override
// is NOT_FOUND. It requires the admin role without project restriction.
func (s *Service) DeleteModelPrice(ctx context.Context, name string) error {
	p, err := priceAdmin(ctx)
	if err != nil {
		return err
	}
	if CheckModelName(name) != nil {
		return canvas.NotFound("model price override")
	}
	return s.store.DeleteModelPrice(ctx, p.WorkspaceID, name)
}

// priceAdmin authorizes a write of the workspace's prices.
func priceAdmin(ctx context.Context) (*canvas.Principal, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleAdmin)
	if err != nil {
		return nil, err
	}
	if p.Restricted() {
		return nil, canvas.Errorf(canvas.EFORBIDDEN, "Model prices hold for the whole workspace: "+
			"this token is limited to some projects.")
	}
	return p, nil
}

// Price returns the price of model in workspaceID: the workspace's
// override that matches it, else the catalogue's (model.Prices). It reads
// no Principal. The overrides are read once per change of the store.
func (s *Service) Price(ctx context.Context, workspaceID, name string) (model.Price, bool, error) {
	overrides, err := s.prices.Get(ctx, workspaceID, func(ctx context.Context) (map[string]model.Price, error) {
		list, err := s.store.ListModelPrices(ctx, workspaceID)
		if err != nil {
			return nil, err
		}
		m := make(map[string]model.Price, len(list))
		for _, o := range list {
			m[o.Name] = o.Price
		}
		return m, nil
	})
	if err != nil {
		return model.Price{}, false, err
	}
	pr, ok := model.Bundled().Overlay(overrides, name)
	return pr, ok, nil
}
