package agent_test

import (
	"encoding/json"
	"testing"

	"github.com/storefront/storefront/agent"
	"github.com/storefront/storefront/vocab"
)

// TestMetaIsTheMetaObject: a reply's Meta encodes as the _meta object the
// transports send, its decline under DeclineKey, and as {} when it carries
// nothing.
func TestMetaIsTheMetaObject(t *testing.T) {
	b, err := json.Marshal(agent.Meta{Decline: &agent.DeclineMeta{Slug: vocab.BudgetBelowMinimum}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"` + agent.DeclineKey + `":{"slug":"budget_below_minimum"}}`; string(b) != want {
		t.Errorf("json.Marshal(Meta with a decline) = %s, want %s", b, want)
	}
	if b, _ := json.Marshal(agent.Meta{}); string(b) != `{}` {
		t.Errorf("json.Marshal(Meta{}) = %s, want {}", b)
	}
	if !(agent.Meta{}).IsZero() || (agent.Meta{}).Slug() != "" {
		t.Error("the zero Meta is not empty")
	}
}
