package products_test

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/storefront/storefront/demo"
	"github.com/storefront/storefront/merch"
	"github.com/storefront/storefront/vocab"
)

// TestBudgetFigureServes: the budget a reason quotes is one that is then
// served. Asked for CTV (25,000 USD minimum) and influencer (not carried,
// so the rule's general 1,000 USD), the reason used to quote 1,000 USD, and
// a brief at 1,000 USD then got nothing. The figure now comes from the
// carried channel, and a brief at the quoted figure is served.
func TestBudgetFigureServes(t *testing.T) {
	demoRules := demo.Rulebook()
	t.Run("demo rules", func(t *testing.T) { budgetFigureServes(t, &demoRules) })
	// A rule whose own minimum (1,000 USD) is below every CTV product's
	// minimum spend quotes the smallest budget that buys one instead.
	low := &merch.Rulebook{Format: merch.Format, Rules: []merch.Rule{{ID: "LOW-1", Name: "Low floor",
		When:    merch.Condition{BudgetBelow: &merch.BudgetFloor{Currency: "USD", Minimum: 1000}},
		Decline: merch.Action{Slug: vocab.BudgetBelowMinimum, Disclosure: vocab.Exact, Suggest: []vocab.SuggestionKind{vocab.RaiseBudget}}}}}
	t.Run("rule minimum below the products'", func(t *testing.T) { budgetFigureServes(t, low) })
}

func budgetFigureServes(t *testing.T, rb *merch.Rulebook) {
	e := newEnv(t)
	e.publisher(t, "p", demo.Products(), rb)
	brief := func(budget float64) string {
		return `{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"streaming launch","filters":{"channels":["ctv","influencer"],"budget_range":{"max":` +
			strconv.FormatFloat(budget, 'f', -1, 64) + `,"currency":"USD"}}}`
	}
	r, m := e.get(t, "p", anonymous, brief(500))
	if m["status"] != "rejected" {
		t.Fatalf("status = %v: %s", m["status"], r.Payload)
	}
	reason := m["reason"].(string)
	figure := regexp.MustCompile(`([0-9][0-9,]*) USD`).FindStringSubmatch(reason)
	if figure == nil {
		t.Fatalf("the reason names no figure: %q", reason)
	}
	amount, _ := strconv.ParseFloat(strings.ReplaceAll(figure[1], ",", ""), 64)
	_, at := e.get(t, "p", anonymous, brief(amount))
	ps, _ := json.Marshal(at["products"])
	if at["status"] != "completed" || len(productsOf(t, at)) == 0 {
		t.Errorf("the reason quotes %s USD, but a brief at %s USD gets %v with products %s", figure[1], figure[1], at["status"], ps)
	}
}
