package merch

// Hooks for the index's tests in merch_test.

var (
	Fold              = fold
	IndexedPredicates = indexedPredicates
)

// IndexParts are the parts of an index BreakIndex can damage: each files
// some rules, and the property test must notice any of them missing.
var IndexParts = []string{
	"domains", "words", "industries", "scopes", "budgets", "budget floors",
	"channels_offered", "countries_served", "format_kinds_offered",
	"currencies_accepted", "delivery_types_offered", "flights", "starts",
}

// BreakIndex damages one part of ix: it forgets the rules filed there or,
// for "budget floors", keeps each budget rule's minimum as its highest
// floor, forgetting its per-channel floors.
func BreakIndex(ix *Index, part string) {
	switch part {
	case "domains":
		ix.domains = nil
	case "words":
		ix.words = nil
	case "industries":
		ix.industries = nil
	case "scopes":
		ix.scopes = nil
	case "budgets":
		ix.budgets = nil
	case "budget floors":
		for _, fs := range ix.budgets {
			for i := range fs {
				fs[i].top = ix.rb.Rules[fs[i].rule].When.BudgetBelow.Minimum
			}
		}
	case "channels_offered":
		ix.channels = negation{}
	case "countries_served":
		ix.countries = negation{}
	case "format_kinds_offered":
		ix.formats = negation{}
	case "currencies_accepted":
		ix.currencies = negation{}
	case "delivery_types_offered":
		ix.delivery = negation{}
	case "flights":
		ix.flights = nil
	case "starts":
		ix.starts = nil
	default:
		panic("no index part " + part)
	}
}

// Visited is how many rules ix would evaluate for b: the rules filed under
// its facts.
func (ix *Index) Visited(b Brief) int {
	return len(ix.candidates(&b, tokens(b.Text), nil))
}
