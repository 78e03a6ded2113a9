package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"time"

	"github.com/storefront/storefront/demo"
	"github.com/storefront/storefront/internal/cputime"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/sanitize"
)

// PeerCatalogue is the file the Node peer serves from: the storefront's
// own products as an AdCP 3.0 buyer receives them, and each product's
// minimum spend per currency.
type PeerCatalogue struct {
	Version   string                        `json:"adcp_version"`
	Products  []json.RawMessage             `json:"products"`
	MinSpend  map[string]map[string]float64 `json:"min_spend"`
	Countries map[string][]string           `json:"countries"`
}

// ExportCatalogue pages through the storefront's whole catalogue with
// wholesale get_products at AdCP 3.0 (the version the peer's SDK speaks)
// and writes it to path, with the markets each product serves (which the
// AdCP product does not carry) taken from the fixture it was built from.
func ExportCatalogue(ctx context.Context, mcpURL string, f Fixture, path string) error {
	c := &Client{URL: mcpURL, HTTP: &http.Client{Timeout: time.Minute}}
	out := PeerCatalogue{Version: "3.0", MinSpend: map[string]map[string]float64{}, Countries: map[string][]string{}}
	for _, p := range f.Catalogue() {
		out.Countries[p.ProductID] = p.Countries
	}
	cursor := ""
	for page := 1; ; page++ {
		args := map[string]any{"adcp_version": "3.0", "buying_mode": "wholesale", "pagination": map[string]any{"max_results": products.MaxPageSize}}
		if cursor != "" {
			args["pagination"].(map[string]any)["cursor"] = cursor
		}
		a, _ := json.Marshal(args)
		raw, err := c.Call(ctx, newRequest(page, "export", "completed", string(a)).Body)
		if err != nil {
			return err
		}
		var msg struct {
			Result struct {
				StructuredContent struct {
					Products   []json.RawMessage `json:"products"`
					Pagination struct {
						HasMore bool   `json:"has_more"`
						Cursor  string `json:"cursor"`
					} `json:"pagination"`
				} `json:"structuredContent"`
			} `json:"result"`
		}
		if err := json.Unmarshal(raw, &msg); err != nil {
			return err
		}
		sc := msg.Result.StructuredContent
		if len(sc.Products) == 0 && page == 1 {
			return fmt.Errorf("the storefront listed no products: %s", truncate(raw, 300))
		}
		for _, p := range sc.Products {
			var wire struct {
				ID      string `json:"product_id"`
				Pricing []struct {
					Currency string   `json:"currency"`
					MinSpend *float64 `json:"min_spend_per_package"`
				} `json:"pricing_options"`
			}
			if err := json.Unmarshal(p, &wire); err != nil {
				return err
			}
			ms := map[string]float64{}
			for _, po := range wire.Pricing {
				v := 0.0
				if po.MinSpend != nil {
					v = *po.MinSpend
				}
				if cur, ok := ms[po.Currency]; !ok || v < cur {
					ms[po.Currency] = v
				}
			}
			out.MinSpend[wire.ID] = ms
		}
		out.Products = append(out.Products, sc.Products...)
		if !sc.Pagination.HasMore {
			break
		}
		cursor = sc.Pagination.Cursor
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}

// ScreenCost is the screen's cost per response at one deny-list size, and
// what building its deny-list cost: wall and CPU time (every thread, the
// collector's share of the build included) and the live heap the built
// screen keeps.
type ScreenCost struct {
	Terms           int     `json:"terms"`
	NsPerResponse   float64 `json:"ns_per_response"`
	BuildSeconds    float64 `json:"build_seconds"`
	BuildCPUSeconds float64 `json:"build_cpu_seconds"`
	BuildHeapMiB    float64 `json:"build_heap_mib"`
}

// A typical decline the screen checks: a reason and two suggestions.
var (
	screenReason = "Thank you for considering Harbor Lane Media. That budget is below what Harbor Lane Media can accept for this inventory; budgets of 2,500 USD or more fit. We would be glad to look at a revised brief."
	screenSugg   = []string{"A budget of 2,500 USD or more would fit this brief.", "Display inventory would fit this brief."}
)

// ScreenCosts times the screen on a typical decline at each deny-list
// size, with deny-lists drawn from generated publishers.
func ScreenCosts(sizes []int) []ScreenCost {
	var out []ScreenCost
	for _, n := range sizes {
		terms := ScreenTerms(n)
		lexicon := products.PublicLexicon()
		// The build is timed alone: the garbage of generating the
		// publisher is collected first, so only the build's own
		// collection is in its figures.
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		began, cpu := time.Now(), cputime.Used()
		screen := sanitize.New(sanitize.NewDenyList(terms, lexicon))
		build, buildCPU := time.Since(began), cputime.Used()-cpu
		runtime.GC()
		runtime.ReadMemStats(&after)
		batch := func() {
			for range 200 {
				screen.Prose(screenReason, sanitize.MaxReason, sanitize.Declined)
				screen.Lines(screenSugg, sanitize.MaxSuggestion, sanitize.MaxSuggestions)
			}
		}
		batch() // warm-up, not counted
		iters := 0
		t0 := time.Now()
		for time.Since(t0) < 500*time.Millisecond {
			batch()
			iters += 200
		}
		elapsed := time.Since(t0)
		out = append(out, ScreenCost{Terms: len(terms), NsPerResponse: float64(elapsed) / float64(iters),
			BuildSeconds: build.Seconds(), BuildCPUSeconds: buildCPU.Seconds(),
			BuildHeapMiB: max(0, float64(after.HeapAlloc)-float64(before.HeapAlloc)) / (1 << 20)})
		runtime.KeepAlive(screen)
	}
	return out
}

// ScreenTerms is the deny-list of n terms the screen is timed with: the
// terms of a generated publisher with n deny-list terms, its rules' and
// products' first.
func ScreenTerms(n int) []sanitize.Term {
	f := Fixture{Products: min(n, 1000), Rules: len(demo.Rulebook().Rules), Deny: n}
	catalogue := f.Catalogue()
	rb := f.Rulebook(catalogue)
	terms := products.DenyTerms(&rb, catalogue)
	return terms[:min(n, len(terms))]
}
