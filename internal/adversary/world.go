package adversary

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/demo"
	"github.com/storefront/storefront/merch"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/vocab"
)

// Field is a place a buyer reads where the generator plants a mark.
type Field string

// The fields plants go in. Keywords are catalogue-only: a mark there must
// not change what a buyer who types it gets (an oracle, not a leak).
const (
	FieldTemplate    Field = "voice template"
	FieldSeller      Field = "seller name"
	FieldName        Field = "product name"
	FieldDescription Field = "product description"
	FieldParamsValue Field = "format params value"
	FieldParamsKey   Field = "format params member"
	FieldPricingID   Field = "pricing_option_id"
	FieldFormatID    Field = "format_option_id"
	FieldPropertyTag Field = "property tag"
	FieldKeyword     Field = "catalogue keyword"
)

// Fields lists every plant field.
var Fields = []Field{FieldTemplate, FieldSeller, FieldName, FieldDescription, FieldParamsValue, FieldParamsKey,
	FieldPricingID, FieldFormatID, FieldPropertyTag, FieldKeyword}

// Plant is one mark written, disguised, into a buyer-visible field.
type Plant struct {
	Field    Field
	Secret   int // index into World.Secrets
	Mark     string
	Disguise string
	Text     string // as written
}

// World is one generated publisher: its confidential fields hold the
// secrets, its public fields the plants.
type World struct {
	Seed      uint64
	Publisher products.Publisher
	Rulebook  merch.Rulebook
	Catalogue []products.Product
	Secrets   []Secret
	Plants    []Plant
	// Slugs are the slugs of the world's enabled rules, with the brief
	// fields that make each fire.
	Triggers []Trigger
}

// Trigger is a rule of the world and the request fields that fire it.
type Trigger struct {
	Slug   vocab.Slug
	Fields string
}

// slugRules are the rules a world draws from: a condition per slug, the
// suggestions it may offer and request fields that fire it on the clock
// the suite runs at (Clock).
var slugRules = []struct {
	slug    vocab.Slug
	when    merch.Condition
	suggest []vocab.SuggestionKind
	fields  string
}{
	{vocab.BudgetBelowMinimum, merch.Condition{BudgetBelow: &merch.BudgetFloor{Currency: "USD", Minimum: 1500, PerChannel: map[string]float64{"ctv": 25000}}},
		[]vocab.SuggestionKind{vocab.RaiseBudget, vocab.SwitchChannel}, `"filters":{"budget_range":{"max":90,"currency":"USD"}}`},
	{vocab.ChannelNotOffered, merch.Condition{ChannelsOffered: []string{"display", "olv", "ctv", "streaming_audio"}}, []vocab.SuggestionKind{vocab.SwitchChannel},
		`"filters":{"channels":["dooh"]}`},
	{vocab.GeoNotServed, merch.Condition{CountriesServed: []string{"US", "GB", "CA"}}, []vocab.SuggestionKind{vocab.TargetMarket},
		`"targeting_overlay":{"geo_countries":["FR"]}`},
	{vocab.FormatNotOffered, merch.Condition{FormatKindsOffered: []string{"image", "video_hosted", "video_vast", "audio_hosted"}}, []vocab.SuggestionKind{vocab.ChangeFormat},
		`"filters":{"format_kinds":["html5"]}`},
	{vocab.CategoryNotAccepted, merch.Condition{Industries: []string{"gambling_betting"}}, nil,
		`"brand":{"domain":"bet.example","industries":["gambling_betting.casino"]}`},
	{vocab.CommerciallyDeclined, merch.Condition{Keywords: []string{"payday"}}, nil, `"brief":"payday offers"`},
	{vocab.LeadTimeTooShort, merch.Condition{LeadTimeDays: ptr(5)}, []vocab.SuggestionKind{vocab.LaterStart},
		`"filters":{"start_date":"2026-11-30","end_date":"2026-12-20"}`},
	{vocab.FlightUnavailable, merch.Condition{SoldOut: []merch.Window{{Start: adcp.MustDate("2026-12-20"), End: adcp.MustDate("2026-12-31")}}}, []vocab.SuggestionKind{vocab.MoveFlight},
		`"filters":{"start_date":"2026-12-22","end_date":"2026-12-28"}`},
}

func ptr[T any](v T) *T { return &v }

// templateLines are carrier sentences for a planted template; %s is the
// disguised mark.
var templateLines = []string{
	"Per %s we can only offer {{%s}}.",
	"This is held for %s; ask about {{%s}}.",
	"%s has first refusal. {{%s}} remain open.",
}

var placeholders = []string{"seller", "channels", "markets", "formats", "minimum", "earliest_start", "open_flight", "lead_time"}

// NewWorld generates the world of seed, with publisher id id.
func NewWorld(seed uint64, id string) *World { return newWorld(seed, id, true) }

// NewCleanWorld is the world of seed without its plants: the publisher a
// careful sales team keeps, for measuring what declines tell a buyer.
func NewCleanWorld(seed uint64, id string) *World { return newWorld(seed, id, false) }

func newWorld(seed uint64, id string, plants bool) *World {
	r := rand.New(rand.NewPCG(seed, seed^0x5eed))
	w := &World{Seed: seed, Publisher: products.Publisher{ID: id, Name: "Lakeside Media", Domain: "lakeside.example", AnonymousDiscovery: true}}
	add := func(k Kind) int {
		w.Secrets = append(w.Secrets, NewSecret(r, k))
		return len(w.Secrets) - 1
	}
	rb := merch.Rulebook{Format: merch.Format, Voice: vocab.Voice{SellerName: "Lakeside Media", Tone: []vocab.Tone{vocab.Warm, vocab.Formal, vocab.Neutral}[r.IntN(3)],
		Templates: map[vocab.Slug]string{}}}
	for i, sr := range slugRules {
		if i > 0 && r.IntN(3) == 0 {
			continue
		}
		id, name, person, ticket, vendor, hex, partner := add(ShortID), add(Codename), add(Person), add(Ticket), add(Vendor), add(HexID), add(Partner)
		s := func(i int) Secret { return w.Secrets[i] }
		rb.Rules = append(rb.Rules, merch.Rule{
			ID:   s(id).Full,
			Name: s(name).Full,
			Notes: fmt.Sprintf("Agreed with %s in %s. Runs on %s. ask %s about %s.",
				s(person).Full, s(ticket).Full, s(vendor).Full, strings.ToLower(s(person).Mark()), s(hex).Full),
			ConfidentialTerms: []string{s(partner).Full},
			When:              sr.when,
			Decline:           merch.Action{Slug: sr.slug, Disclosure: vocab.Level(r.IntN(4)), Suggest: sr.suggest},
		})
		w.Triggers = append(w.Triggers, Trigger{sr.slug, sr.fields})
	}
	reviewer := add(Person)
	rb.Orders = &merch.Orders{Review: []merch.ReviewRule{{ID: w.Secrets[add(ShortID)].Full, Name: "Desk review",
		Notes: "Signed off by " + w.Secrets[reviewer].Full + ".", BudgetAtLeast: &merch.Threshold{Currency: "USD", Amount: 1e9}}}}

	all := demo.Products()
	r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	w.Catalogue = all[:4+r.IntN(4)]
	for i := range w.Catalogue {
		w.Catalogue[i].InternalRef = w.Secrets[add(HexID)].Full
		w.Catalogue[i].Keywords = nil
	}
	w.Rulebook = rb
	for n := 6 + r.IntN(7); plants && n > 0; n-- {
		w.plant(r, Fields[r.IntN(len(Fields))])
	}
	return w
}

// plant writes a mark of a random secret into field.
func (w *World) plant(r *rand.Rand, f Field) {
	si := r.IntN(len(w.Secrets))
	sec := w.Secrets[si]
	mark := sec.Marks[r.IntN(len(sec.Marks))]
	id := f != FieldTemplate && f != FieldSeller && f != FieldName && f != FieldDescription && f != FieldParamsValue && f != FieldKeyword
	var d Disguise
	for {
		d = Disguises[r.IntN(len(Disguises))]
		if !id || d.ID {
			break
		}
	}
	if id {
		mark = strings.ReplaceAll(mark, " ", "_")
	}
	text := d.Apply(r, mark)
	p := &w.Catalogue[r.IntN(len(w.Catalogue))]
	switch f {
	case FieldTemplate:
		if len(w.Triggers) == 0 {
			return
		}
		slug := w.Triggers[r.IntN(len(w.Triggers))].Slug
		w.Rulebook.Voice.Templates[slug] = fmt.Sprintf(templateLines[r.IntN(len(templateLines))], text, placeholders[r.IntN(len(placeholders))])
	case FieldSeller:
		w.Rulebook.Voice.SellerName = "Lakeside Media " + text
	case FieldName:
		p.Name += " " + text
	case FieldDescription:
		p.Description = "Booked via " + text + ". " + p.Description
	case FieldParamsValue, FieldParamsKey:
		fo := &p.FormatOptions[0]
		params := map[string]any{}
		_ = json.Unmarshal(fo.Params, &params)
		if f == FieldParamsValue {
			params["note"] = "Reserved for " + text
		} else {
			params[text+"_slot"] = true
		}
		fo.Params, _ = json.Marshal(params)
	case FieldPricingID:
		p.PricingOptions[0].PricingOptionID = "cpm_" + text
	case FieldFormatID:
		p.FormatOptions[0].FormatOptionID = text + "_unit"
	case FieldPropertyTag:
		p.PublisherProperties[0].SelectionType = "by_tag"
		p.PublisherProperties[0].PropertyTags = []string{text}
	case FieldKeyword:
		p.Keywords = append(p.Keywords, text)
	}
	w.Plants = append(w.Plants, Plant{Field: f, Secret: si, Mark: mark, Disguise: d.Name, Text: text})
}

// Valid checks the world against the rules the storefront validates
// documents with, so that what is probed is what a store can hold.
func (w *World) Valid() error {
	if err := w.Rulebook.Validate(); err != nil {
		return fmt.Errorf("world %d rulebook: %w", w.Seed, err)
	}
	for _, p := range w.Catalogue {
		if err := p.Validate(); err != nil {
			return fmt.Errorf("world %d product %s: %w", w.Seed, p.ProductID, err)
		}
	}
	return nil
}

// Blind is w with every confidential field rewritten to hold none of the
// secrets, the plants left where they are: the screen then knows nothing
// it should withhold, so the suite's oracle must find the plants. It is
// the control that shows the oracle can see a leak.
func (w *World) Blind() *World {
	b := *w
	b.Rulebook.Rules = append([]merch.Rule(nil), w.Rulebook.Rules...)
	for i := range b.Rulebook.Rules {
		r := &b.Rulebook.Rules[i]
		r.ID, r.Name, r.Notes, r.ConfidentialTerms = fmt.Sprintf("rule-%d", i+1), fmt.Sprintf("rule %d", i+1), "", nil
	}
	b.Rulebook.Orders = nil
	b.Catalogue = append([]products.Product(nil), w.Catalogue...)
	for i := range b.Catalogue {
		b.Catalogue[i].InternalRef = ""
	}
	return &b
}
