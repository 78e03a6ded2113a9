package merch

import (
	"fmt"
	"strings"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/jsonfield"
	"github.com/storefront/storefront/sanitize"
	"github.com/storefront/storefront/vocab"
)

// Orders says which media buys the publisher approves by hand. A buy no
// decline rule refuses is created at once unless the account's trust tier
// is listed in ReviewTiers or a review rule holds for one of its packages;
// then it waits in the order desk. Review rules are confidential like
// decline rules: the buyer learns only that its order waits.
type Orders struct {
	// ReviewTiers lists account trust tiers (an account's disclosure
	// cap) whose every buy waits for approval.
	ReviewTiers []vocab.Level `json:"review_tiers,omitempty"`
	// Review rules send the buys they hold for to the desk.
	Review []ReviewRule `json:"review,omitempty"`
}

// ReviewRule sends a buy to the order desk when its condition holds for a
// package. Every part given must hold; at least one must be given.
type ReviewRule struct {
	ID                string   `json:"id" jsonschema:"minLength=1,maxLength=128"`
	Name              string   `json:"name" jsonschema:"minLength=1,maxLength=200"`
	Notes             string   `json:"notes,omitempty" jsonschema:"maxLength=4000"`
	ConfidentialTerms []string `json:"confidential_terms,omitempty"`
	Disabled          bool     `json:"disabled,omitempty"`
	// BudgetAtLeast holds when a package's budget in its currency is at
	// or above the amount.
	BudgetAtLeast *Threshold `json:"budget_at_least,omitempty"`
	// When is a condition over the package's terms, as decline rules
	// have; it holds as it would for them.
	When *Condition `json:"when,omitempty"`
}

// Threshold is an amount in one currency.
type Threshold struct {
	Currency string  `json:"currency" jsonschema:"pattern=^[A-Z]{3}$"`
	Amount   float64 `json:"amount" jsonschema:"minimum=0"`
}

// ReviewReason is one thing that sent a buy to the desk. It is internal:
// for the publisher's order desk and the ledger, never the buyer.
type ReviewReason struct {
	RuleID   string // "" for a trust tier
	RuleName string
}

func (r ReviewReason) String() string {
	if r.RuleID == "" {
		return r.RuleName
	}
	return r.RuleID + " " + r.RuleName
}

// TierReview is the review reason for an account whose tier always waits.
func TierReview(tier vocab.Level) ReviewReason {
	return ReviewReason{RuleName: "account trust tier " + tier.String()}
}

// ReviewsTier reports whether every buy of an account at tier waits.
func (o *Orders) ReviewsTier(tier vocab.Level) bool {
	if o == nil {
		return false
	}
	for _, t := range o.ReviewTiers {
		if t == tier {
			return true
		}
	}
	return false
}

// Review returns the review rules that hold for a package's brief, in
// order. Like Evaluate it is pure and never panics.
func Review(rb *Rulebook, b Brief, m Market) (out []ReviewReason, err error) {
	if rb == nil {
		return nil, ErrNoRulebook
	}
	if rb.Orders == nil {
		return nil, nil
	}
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, fmt.Errorf("merch: review fault: %v", p)
		}
	}()
	hay := haystack(b.Text)
	for i := range rb.Orders.Review {
		r := &rb.Orders.Review[i]
		if r.Disabled {
			continue
		}
		if r.BudgetAtLeast != nil {
			amount, ok := b.Budget.Amount()
			if !ok || !strings.EqualFold(b.Budget.Currency, r.BudgetAtLeast.Currency) || amount < r.BudgetAtLeast.Amount {
				continue
			}
		}
		if r.When != nil {
			if _, holds := r.When.holds(&b, &m, hay); !holds {
				continue
			}
		}
		out = append(out, ReviewReason{RuleID: r.ID, RuleName: r.Name})
	}
	return out, nil
}

// validateOrders checks the orders section. Review rule ids must differ
// from each other and from the decline rules' (ids).
func validateOrders(v *jsonfield.Invalid, rb *Rulebook, ids map[string]int) {
	o := rb.Orders
	if o == nil {
		return
	}
	for i, t := range o.ReviewTiers {
		if t < vocab.None || t > vocab.Exact {
			v.Add(jsonfield.Pointer("orders", "review_tiers", i), "a trust tier is none, category, range or exact")
		}
	}
	seen := map[string]int{}
	for i, r := range o.Review {
		p := jsonfield.Pointer("orders", "review", i)
		checkText(v, p+"/id", "id", r.ID, 128, true)
		checkText(v, p+"/name", "name", r.Name, 200, true)
		checkText(v, p+"/notes", "notes", r.Notes, 4000, false)
		for j, t := range r.ConfidentialTerms {
			checkText(v, jsonfield.Join(p, "confidential_terms", j), "confidential term", t, 200, true)
		}
		if j, dup := ids[r.ID]; dup && r.ID != "" {
			v.Add(p+"/id", "rule id %q is already used by /rules/%d", r.ID, j)
		} else if j, dup := seen[r.ID]; dup && r.ID != "" {
			v.Add(p+"/id", "rule id %q is already used by /orders/review/%d", r.ID, j)
		}
		seen[r.ID] = i
		n := 0
		if t := r.BudgetAtLeast; t != nil {
			n++
			if !adcp.IsCurrency(t.Currency) {
				v.Add(p+"/budget_at_least/currency", "currency must be an ISO 4217 code such as USD")
			}
			if t.Amount < 0 {
				v.Add(p+"/budget_at_least/amount", "amount must not be negative")
			}
		}
		if r.When != nil {
			n++
			validateCondition(v, p+"/when", *r.When)
		}
		if n == 0 {
			v.Add(p, "a review rule needs budget_at_least or when")
		}
	}
}

// confidentialTerms lists the review rules' confidential parts.
func (o *Orders) confidentialTerms() []sanitize.Term {
	if o == nil {
		return nil
	}
	var terms []sanitize.Term
	for _, r := range o.Review {
		terms = append(terms, ruleTerms(r.ID, r.Name, r.Notes, r.ConfidentialTerms)...)
	}
	return terms
}
