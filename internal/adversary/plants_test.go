package adversary

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/vocab"
)

// plantStrings are the buyer-visible strings a plant was written into, in
// the form the screen sees them.
func plantStrings(w *World, p Plant) []string {
	switch p.Field {
	case FieldTemplate:
		var out []string
		for _, t := range w.Rulebook.Voice.Templates {
			if strings.Contains(t, p.Text) {
				out = append(out, vocab.TemplateLiteral(t))
			}
		}
		return out
	case FieldSeller:
		name := w.Rulebook.Voice.SellerName
		if !strings.Contains(name, p.Text) {
			return nil // a later plant took its place
		}
		return []string{name, "Thank you for considering " + name + ".", name + " is unable to accept this brief as submitted."}
	case FieldName, FieldDescription:
		var out []string
		for _, c := range w.Catalogue {
			text := c.Name
			if p.Field == FieldDescription {
				text = c.Description
			}
			if strings.Contains(text, p.Text) {
				out = append(out, text)
			}
		}
		return out
	case FieldParamsValue:
		return []string{"Reserved for " + p.Text}
	case FieldParamsKey:
		return []string{p.Text + "_slot"}
	case FieldPricingID:
		return []string{"cpm_" + p.Text}
	case FieldFormatID:
		return []string{p.Text + "_unit"}
	case FieldPropertyTag:
		return []string{p.Text}
	}
	return nil
}

// TestPlantsScreened: every plant the generator writes where a buyer reads
// is text the serving screen would change (the lint's verdict), so the
// program withholds it. It checks the generator as much as the screen: a
// mark the screen rightly lets pass (a codename that is a common word,
// which identifies nothing alone) would be counted a leak by the probes.
// Without the program it is fast enough for many more worlds than the
// probes visit (STOREFRONT_ADVERSARY_PLANT_WORLDS; the default is part of
// the test command).
func TestPlantsScreened(t *testing.T) {
	n := 2000
	if s := os.Getenv("STOREFRONT_ADVERSARY_PLANT_WORLDS"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	missed := map[string]int{}
	shown := 0
	for s := uint64(1); s <= uint64(n); s++ {
		w := NewWorld(s, "plants")
		screen := products.ServingScreen(w.Publisher, &w.Rulebook, w.Catalogue)
		for _, p := range w.Plants {
			for _, text := range plantStrings(w, p) {
				if products.ServedChange(screen, text) != "" {
					continue
				}
				class := fmt.Sprintf("%s in %s (%s)", w.Secrets[p.Secret].Kind, p.Field, p.Disguise)
				missed[class]++
				if shown < 40 {
					shown++
					t.Errorf("world %d: %s: mark %q written %q served in %q", s, class, p.Mark, p.Text, text)
				}
			}
		}
	}
	for c, k := range missed {
		t.Logf("%6d %s", k, c)
	}
}
