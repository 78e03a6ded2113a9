// Package bench is the storefront's load benchmark: a generated publisher
// of any size, an MCP load generator, the bare net/http ceiling that
// replays the storefront's own answers, the orchestration that runs the
// storefront, the ceiling and the Node peer side by side, and the report
// with its targets and plot. It is reached through `storefront bench`.
package bench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/storefront/storefront/demo"
	"github.com/storefront/storefront/merch"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/vocab"
)

// PublisherID is the generated publisher's id.
const PublisherID = "harborlane"

// Fixture sizes a generated publisher: how many products, rules and
// deny-list terms it has.
type Fixture struct {
	Products int
	Rules    int
	Deny     int
}

// DefaultFixture returns the size the targets are stated for.
func DefaultFixture() Fixture { return Fixture{Products: 10_000, Rules: 1_000, Deny: 10_000} }

// ParseFixture reads "products=10000,rules=1000,deny=10000". Sizes left
// out keep their defaults; k and m suffixes are accepted (10k, 1m).
func ParseFixture(s string) (Fixture, error) {
	f := DefaultFixture()
	if strings.TrimSpace(s) == "" {
		return f, nil
	}
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return f, fmt.Errorf("fixture %q: want name=size pairs such as products=10000,rules=1000,deny=10000", s)
		}
		n, err := parseSize(v)
		if err != nil {
			return f, fmt.Errorf("fixture %s: %w", k, err)
		}
		switch k {
		case "products":
			if n < 1 {
				return f, errors.New("fixture products: at least one product is needed")
			}
			f.Products = n
		case "rules":
			if n < len(demo.Rulebook().Rules) {
				return f, fmt.Errorf("fixture rules: at least %d (the rules the declines in the mix need)", len(demo.Rulebook().Rules))
			}
			f.Rules = n
		case "deny":
			f.Deny = n
		default:
			return f, fmt.Errorf("fixture %q: unknown size %q (want products, rules or deny)", s, k)
		}
	}
	return f, nil
}

func parseSize(v string) (int, error) {
	mult := 1
	switch {
	case strings.HasSuffix(v, "k"):
		mult, v = 1_000, strings.TrimSuffix(v, "k")
	case strings.HasSuffix(v, "m"):
		mult, v = 1_000_000, strings.TrimSuffix(v, "m")
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 10_000_000/mult {
		return 0, fmt.Errorf("%q is not a size", v)
	}
	return n * mult, nil
}

func (f Fixture) String() string {
	return fmt.Sprintf("products=%d,rules=%d,deny=%d", f.Products, f.Rules, f.Deny)
}

// Label is a short form for tables: 10k/1k/10k.
func (f Fixture) Label() string {
	return short(f.Products) + " products, " + short(f.Rules) + " rules, " + short(f.Deny) + " deny terms"
}

func short(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return strconv.Itoa(n/1_000_000) + "M"
	case n >= 1_000 && n%1_000 == 0:
		return strconv.Itoa(n/1_000) + "k"
	}
	return strconv.Itoa(n)
}

// Publisher is the generated publisher.
func (f Fixture) Publisher() products.Publisher {
	return products.Publisher{ID: PublisherID, Name: "Harbor Lane Media", Domain: "harborlane.example", AnonymousDiscovery: true}
}

// Extra words that vary the generated products' names, so brief ranking
// has real work to do.
var (
	topics   = []string{"coffee", "travel", "sports", "finance", "food", "music", "news", "family", "gaming", "fitness", "auto", "fashion", "weather", "science", "cinema", "garden"}
	placings = []string{"homepage", "section", "mobile", "app", "evening", "weekend", "premium", "run of site", "sponsorship", "takeover"}
)

// Catalogue generates the products: the demo catalogue's shapes, repeated
// with new ids, names, keywords and internal references. Only as many
// products carry an internal reference as the deny-list size leaves room
// for.
func (f Fixture) Catalogue() []products.Product {
	base := demo.Products()
	r := rand.New(rand.NewPCG(7, uint64(f.Products)))
	refs := f.refBudget()
	out := make([]products.Product, f.Products)
	for i := range out {
		p := clone(base[i%len(base)])
		topic := topics[r.IntN(len(topics))]
		placing := placings[r.IntN(len(placings))]
		p.ProductID = fmt.Sprintf("hl_%s_%06d", strings.TrimPrefix(p.ProductID, "nw_"), i)
		p.Name = fmt.Sprintf("%s: %s %s", strings.TrimSuffix(p.Name, "."), topic, placing)
		p.Description = fmt.Sprintf("%s Audiences who follow %s, reached in %s placements.", p.Description, topic, placing)
		p.Keywords = append(p.Keywords, topic, strings.ReplaceAll(placing, " ", "_"))
		for j := range p.PublisherProperties {
			p.PublisherProperties[j].PublisherDomain = f.Publisher().Domain
		}
		p.InternalRef = ""
		if i < refs {
			p.InternalRef = fmt.Sprintf("HL-LI-%07d", i)
		}
		out[i] = p
	}
	return out
}

// clone deep-copies what Catalogue changes in a demo product.
func clone(p products.Product) products.Product {
	p.PublisherProperties = append([]products.PublisherProperty(nil), p.PublisherProperties...)
	p.Keywords = append([]string(nil), p.Keywords...)
	return p
}

// refBudget is how many products get an internal reference: a tenth of the
// deny-list, at most one per product.
func (f Fixture) refBudget() int {
	return min(f.Products, f.Deny/10)
}

// Rulebook generates the rulebook: the demo rules (every decline in the
// mix comes from one of them) and filler rules up to the size, none of
// which fires for the mix's briefs but all of which are evaluated. The
// confidential terms are padded until the deny-list has the size asked.
func (f Fixture) Rulebook(catalogue []products.Product) merch.Rulebook {
	rb := demo.Rulebook()
	rb.Voice.SellerName = f.Publisher().Name
	r := rand.New(rand.NewPCG(11, uint64(f.Rules)))
	for i := len(rb.Rules); i < f.Rules; i++ {
		rule := merch.Rule{
			ID:    fmt.Sprintf("HL-%05d-%s", i, strings.ToUpper(nonsense(r))),
			Name:  fmt.Sprintf("%s %s holdback %d", capital(nonsense(r)), nonsense(r), i),
			Notes: fmt.Sprintf("Requested by %s %s for the %s account.", capital(nonsense(r)), capital(nonsense(r)), capital(nonsense(r))),
		}
		switch i % 4 {
		case 0:
			rule.When.Keywords = []string{nonsense(r) + " " + nonsense(r), nonsense(r)}
			rule.Decline = merch.Action{Slug: vocab.CategoryNotAccepted, Disclosure: vocab.Category}
		case 1:
			rule.When.BrandDomains = []string{nonsense(r) + ".example"}
			rule.Decline = merch.Action{Slug: vocab.CommerciallyDeclined, Disclosure: vocab.None}
		case 2:
			rule.When.Industries = []string{"tobacco"}
			rule.When.Channels = []string{"ctv"}
			rule.Decline = merch.Action{Slug: vocab.CategoryNotAccepted, Disclosure: vocab.Category}
		default:
			rule.When.Keywords = []string{nonsense(r)}
			rule.When.Channels = []string{"streaming_audio"}
			rule.Decline = merch.Action{Slug: vocab.CommerciallyDeclined, Disclosure: vocab.Category}
		}
		rb.Rules = append(rb.Rules, rule)
	}
	have := len(products.DenyTerms(&rb, catalogue))
	base := len(demo.Rulebook().Rules)
	for i := 0; have < f.Deny; i++ {
		j := i % len(rb.Rules)
		if len(rb.Rules) > base {
			j = base + i%(len(rb.Rules)-base)
		}
		rule := &rb.Rules[j]
		rule.ConfidentialTerms = append(rule.ConfidentialTerms, fmt.Sprintf("%s %s %d", capital(nonsense(r)), nonsense(r), i))
		have++
	}
	return rb
}

// nonsense is a pronounceable word no brief in the mix contains.
func nonsense(r *rand.Rand) string {
	const cons, vows = "bdfgklmnprstvz", "aeiou"
	b := make([]byte, 6+r.IntN(4))
	for i := range b {
		if i%2 == 0 {
			b[i] = cons[r.IntN(len(cons))]
		} else {
			b[i] = vows[r.IntN(len(vows))]
		}
	}
	return "q" + string(b)
}

func capital(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

// Seed stores the generated publisher, its catalogue and rulebook in s, as
// the admin API would: every product and the rulebook are validated first.
func (f Fixture) Seed(ctx context.Context, s store.Content) error {
	if _, err := s.Publisher(ctx, PublisherID); err == nil {
		return fmt.Errorf("publisher %s already exists: seed a fresh store", PublisherID)
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	catalogue := f.Catalogue()
	rb := f.Rulebook(catalogue)
	if err := rb.Validate(); err != nil {
		return fmt.Errorf("generated rulebook: %w", err)
	}
	for _, p := range catalogue {
		if err := p.Validate(); err != nil {
			return fmt.Errorf("generated product %s: %w", p.ProductID, err)
		}
	}
	if err := s.PutPublisher(ctx, f.Publisher()); err != nil {
		return err
	}
	if bulk, ok := s.(store.BulkCatalogue); ok {
		if _, err := bulk.PutProducts(ctx, PublisherID, catalogue, 0); err != nil {
			return err
		}
	} else {
		for _, p := range catalogue {
			if _, err := s.PutProduct(ctx, PublisherID, p, 0); err != nil {
				return err
			}
		}
	}
	_, err := s.SaveRulebook(ctx, PublisherID, rb, 0, "bench", "generated rulebook: "+f.String())
	return err
}

// DenyTerms is the size of the generated publisher's deny-list: at least
// Deny, more when its rules and references alone have more terms.
func (f Fixture) DenyTerms() int {
	catalogue := f.Catalogue()
	rb := f.Rulebook(catalogue)
	return len(products.DenyTerms(&rb, catalogue))
}
