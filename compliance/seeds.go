package compliance

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/storefront/storefront/jsonfield"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
)

// seedProduct adds a fixture product to the principal's sandbox catalogue.
// Fixtures are partial: missing required fields get neutral defaults, a
// legacy format_ids list becomes format_options, and the result must then
// validate like any catalogue product.
func (c *Controller) seedProduct(ctx context.Context, publisher string, p products.Principal, req *Request) (reply, *failure) {
	var id string
	if ok, f := param(req, "product_id", &id); f != nil {
		return nil, f
	} else if !ok || id == "" {
		return nil, fail(InvalidParams, "params.product_id is required")
	}
	fixture := map[string]json.RawMessage{}
	if _, f := param(req, "fixture", &fixture); f != nil {
		return nil, f
	}
	info, err := c.Store.Publisher(ctx, publisher)
	if err != nil {
		return nil, fail(InternalError, "the publisher is unavailable")
	}
	prod, f := productFromFixture(id, fixture, info.Domain)
	if f != nil {
		return nil, f
	}
	// A product seeded before its pricing options keeps the ones it had.
	if existing, _, err := c.Store.SeededCatalogue(ctx, publisher, p.ID); err == nil {
		for _, e := range existing {
			if e.ProductID == id && len(prod.PricingOptions) == 0 {
				prod.PricingOptions = e.PricingOptions
			}
		}
	}
	if f := validSeed(prod); f != nil {
		return nil, f
	}
	if _, err := c.Store.SeedProduct(ctx, publisher, p.ID, session(req), prod); err != nil {
		return nil, fail(InternalError, "the fixture could not be stored")
	}
	return &done{Success: true}, nil
}

// seedPricingOption adds or replaces a pricing option on a seeded product.
func (c *Controller) seedPricingOption(ctx context.Context, publisher string, p products.Principal, req *Request) (reply, *failure) {
	var productID, optionID string
	if ok, f := param(req, "product_id", &productID); f != nil {
		return nil, f
	} else if !ok || productID == "" {
		return nil, fail(InvalidParams, "params.product_id is required")
	}
	if ok, f := param(req, "pricing_option_id", &optionID); f != nil {
		return nil, f
	} else if !ok || optionID == "" {
		return nil, fail(InvalidParams, "params.pricing_option_id is required")
	}
	fixture := map[string]json.RawMessage{}
	if _, f := param(req, "fixture", &fixture); f != nil {
		return nil, f
	}
	fixture["pricing_option_id"], _ = json.Marshal(optionID)
	if _, ok := fixture["pricing_model"]; !ok {
		fixture["pricing_model"] = json.RawMessage(`"cpm"`)
	}
	b, _ := json.Marshal(fixture)
	var po products.PricingOption
	if err := jsonfield.Decode(b, &po); err != nil {
		return nil, fail(InvalidParams, "params.fixture is not a CPM pricing option: %v", err)
	}
	seeded, _, err := c.Store.SeededCatalogue(ctx, publisher, p.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fail(NotFound, "no seeded product %q: seed_product it first", productID)
	}
	if err != nil {
		return nil, fail(InternalError, "the seeded catalogue is unavailable")
	}
	for _, prod := range seeded {
		if prod.ProductID != productID {
			continue
		}
		replaced := false
		for i := range prod.PricingOptions {
			if prod.PricingOptions[i].PricingOptionID == optionID {
				prod.PricingOptions[i], replaced = po, true
			}
		}
		if !replaced {
			prod.PricingOptions = append(prod.PricingOptions, po)
		}
		if f := validSeed(prod); f != nil {
			return nil, f
		}
		if _, err := c.Store.SeedProduct(ctx, publisher, p.ID, session(req), prod); err != nil {
			return nil, fail(InternalError, "the fixture could not be stored")
		}
		return &done{Success: true}, nil
	}
	return nil, fail(NotFound, "no seeded product %q: seed_product it first", productID)
}

// validSeed validates a seeded product like a catalogue product, except
// that it may wait for its pricing options (seed_pricing_option comes
// after seed_product); until it has one it is never returned.
func validSeed(p products.Product) *failure {
	err := p.Validate()
	var inv jsonfield.Invalid
	if !errors.As(err, &inv) {
		return nil
	}
	for _, f := range inv {
		if len(p.PricingOptions) == 0 && f.Pointer == "/pricing_options" {
			continue
		}
		return fail(InvalidParams, "params.fixture%s: %s", f.Pointer, f.Detail)
	}
	return nil
}

var dimsRE = regexp.MustCompile(`(\d{2,4})x(\d{2,4})`)
var secsRE = regexp.MustCompile(`(\d{1,3})s\b`)

// productFromFixture builds a catalogue product from a storyboard fixture.
func productFromFixture(id string, fx map[string]json.RawMessage, domain string) (products.Product, *failure) {
	doc := map[string]any{
		"product_id":    id,
		"name":          "Sandbox " + strings.ReplaceAll(id, "_", " "),
		"description":   "Sandbox fixture product " + id + ".",
		"channels":      []string{"display"},
		"delivery_type": "non_guaranteed",
		"countries":     []string{"US"},
		"reporting_capabilities": map[string]any{
			"available_reporting_frequencies": []string{"daily"}, "expected_delay_minutes": 60, "timezone": "UTC",
			"supports_webhooks": false, "available_metrics": []string{"impressions", "spend", "clicks"}, "date_range_support": "date_range",
		},
		"publisher_properties": []map[string]any{{"publisher_domain": domain, "selection_type": "all"}},
	}
	known := jsonNames(reflect.TypeFor[products.Product]())
	for _, k := range sortedKeys(fx) {
		raw := fx[k]
		if k == "format_ids" || k == "product_id" {
			continue // format_ids become format_options below
		}
		if !known[k] {
			// A product served without a field its fixture set would
			// answer differently than the storyboard expects: refuse
			// what the catalogue cannot honour rather than drop it.
			return products.Product{}, fail(InvalidParams, "params.fixture.%s: the catalogue does not model %s, so this fixture cannot be honoured", k, k)
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return products.Product{}, fail(InvalidParams, "params.fixture.%s is not valid JSON", k)
		}
		doc[k] = v
	}
	if chans, ok := doc["channels"].([]any); ok {
		doc["channels"] = currentChannels(chans)
	}
	if props, ok := doc["publisher_properties"].([]any); ok {
		for _, x := range props {
			if m, ok := x.(map[string]any); ok {
				if _, has := m["selection_type"]; !has {
					m["selection_type"] = "all"
				}
				if _, has := m["publisher_domain"]; !has {
					m["publisher_domain"] = domain
				}
			}
		}
	}
	if _, has := doc["format_options"]; !has {
		doc["format_options"] = formatOptionsFromIDs(fx["format_ids"])
	}
	b, _ := json.Marshal(doc)
	var p products.Product
	if err := jsonfield.Decode(b, &p); err != nil {
		return products.Product{}, fail(InvalidParams, "params.fixture is not a product: %v", err)
	}
	return p, nil
}

// legacyChannels maps the channel names AdCP used before its channel
// taxonomy onto the channels that replaced them, as the taxonomy's
// migration table does; fixtures still written with them ("video") are
// read as the buyer meant them.
var legacyChannels = map[string][]string{
	"video": {"olv", "ctv"}, "audio": {"streaming_audio", "podcast", "radio"}, "native": {"display"},
	"web": {"display", "olv"}, "mobile_app": {"display", "olv", "gaming"}, "retail": {"retail_media"},
	"commerce_media": {"retail_media"}, "sponsorship": {"product_placement"},
}

func currentChannels(in []any) []any {
	var out []any
	seen := map[any]bool{}
	for _, c := range in {
		name, _ := c.(string)
		names, legacy := legacyChannels[name]
		if !legacy {
			names = []string{name}
		}
		for _, x := range names {
			if !seen[x] {
				seen[x] = true
				out = append(out, x)
			}
		}
	}
	return out
}

// formatOptionsFromIDs turns legacy named formats into canonical format
// options, reading the kind and size from the format id.
func formatOptionsFromIDs(raw json.RawMessage) []map[string]any {
	var ids []struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(raw, &ids)
	var out []map[string]any
	for _, f := range ids {
		if f.ID == "" {
			continue
		}
		opt := map[string]any{"format_option_id": f.ID, "format_kind": "image", "params": map[string]any{}}
		switch low := strings.ToLower(f.ID); {
		case strings.Contains(low, "video") || strings.Contains(low, "preroll"):
			opt["format_kind"] = "video_hosted"
			if m := secsRE.FindStringSubmatch(low); m != nil {
				s, _ := strconv.Atoi(m[1])
				opt["params"] = map[string]any{"duration_ms_exact": s * 1000}
			}
		case strings.Contains(low, "audio"):
			opt["format_kind"] = "audio_hosted"
		default:
			if m := dimsRE.FindStringSubmatch(low); m != nil {
				w, _ := strconv.Atoi(m[1])
				h, _ := strconv.Atoi(m[2])
				opt["params"] = map[string]any{"width": w, "height": h}
			}
		}
		out = append(out, opt)
	}
	if len(out) == 0 {
		out = append(out, map[string]any{"format_option_id": "display_300x250", "format_kind": "image", "params": map[string]any{"width": 300, "height": 250}})
	}
	return out
}

// jsonNames is the set of JSON names of a struct type's fields.
func jsonNames(t reflect.Type) map[string]bool {
	out := map[string]bool{}
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.IsExported() && name != "-" && name != "" {
			out[name] = true
		}
	}
	return out
}

func sortedKeys(m map[string]json.RawMessage) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
