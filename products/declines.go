package products

import (
	"bytes"
	"slices"
	"strconv"
	"sync"

	"github.com/storefront/storefront/decline"
	"github.com/storefront/storefront/internal/verbatim"
	"github.com/storefront/storefront/merch"
	"github.com/storefront/storefront/sanitize"
	"github.com/storefront/storefront/vocab"
)

// declines keeps the declines one snapshot has composed, so that a brief
// declined again is not worded, screened and verified again. The snapshot
// is immutable and holds everything else a decline is made from (the
// rulebook and its voice, the catalogue the suggestions are verified
// against, the screen), so a decline is kept under the rest of what its
// words depend on: the account's disclosure cap, the normalised brief
// (today's date in it) and the request's filters and markets, which the
// grounds' figures and the verification read (DeclineGrounds, Verifier,
// FigureVerifier). A new snapshot starts with no declines.
//
// It is kept per caller as well (the principal and the account): a kept
// decline answers sooner than a composed one, and a buyer timing its
// answers must learn nothing of what other buyers asked, only of its own
// repeated briefs.
//
// It holds at most declinesKept declines, in two generations: when the
// newer fills, the older is dropped, so a decline asked for again is kept
// and memory stays bounded.
type declines struct {
	// of are the parts of the snapshot the declines were composed from:
	// a copy of the snapshot with any of them changed keeps none.
	of       declineSources
	mu       sync.Mutex
	new, old map[string]decline.Composed
}

type declineSources struct {
	rulebook  *merch.Rulebook
	rules     *merch.Index
	catalogue *Catalogue
	screen    *sanitize.Screen
}

func sourcesOf(s *Snapshot) declineSources {
	return declineSources{s.Rulebook, s.Rules, s.Catalogue, s.Screen}
}

const (
	declinesKept = 512
	// maxDeclineKey leaves out of the cache a request whose key is
	// longer: one long brief must not hold the memory of many.
	maxDeclineKey = 4 << 10
)

func newDeclines(of declineSources) *declines {
	return &declines{of: of, new: map[string]decline.Composed{}}
}

// keptDeclines are the declines kept for s, nil when s keeps none.
func (s *Snapshot) keptDeclines() *declines {
	if s.declines == nil || s.declines.of != sourcesOf(s) {
		return nil
	}
	return s.declines
}

// declineKey is what a decline depends on besides its snapshot, and the
// caller it is kept for (who: the principal and the account): json.Marshal
// of struct{Who string; Cap int; Brief merch.Brief; Filters Filters; Geo
// []string}. False when that cannot be written (a float that is not
// finite), is too long to keep, or could be another input's key as well:
// json.Marshal writes each byte of invalid UTF-8 as the escape \ufffd, so
// no key holding that escape is kept. (U+FFFD itself is written as it is;
// a brief that spells out the escape is left out too, which costs only a
// decline composed again.)
func declineKey(who string, cap vocab.Level, brief merch.Brief, req *Request) (string, bool) {
	if !req.Filters.writable() || (brief.Budget != nil && !finite(brief.Budget.Min, brief.Budget.Max)) {
		return "", false
	}
	var buf [1024]byte
	b := append(buf[:0], `{"Who":`...)
	b = verbatim.AppendString(b, who)
	b = append(b, `,"Cap":`...)
	b = strconv.AppendInt(b, int64(cap), 10)
	b = append(b, `,"Brief":`...)
	b = appendBrief(b, &brief)
	b = append(b, `,"Filters":`...)
	b = appendFilters(b, &req.Filters)
	b = append(b, `,"Geo":`...)
	b = appendStrings(b, req.GeoCountries)
	b = append(b, '}')
	if len(b) > maxDeclineKey || bytes.Contains(b, []byte(`\ufffd`)) {
		return "", false
	}
	return string(b), true
}

// compose returns the decline kept under key, or composes it with build
// and keeps it. A nil d keeps nothing.
func (d *declines) compose(key string, ok bool, build func() decline.Composed) decline.Composed {
	if d == nil || !ok {
		return build()
	}
	d.mu.Lock()
	c, hit := d.new[key]
	if !hit {
		if c, hit = d.old[key]; hit {
			d.keep(key, c)
		}
	}
	d.mu.Unlock()
	if !hit {
		c = build()
		d.mu.Lock()
		d.keep(key, c)
		d.mu.Unlock()
	}
	return fresh(c)
}

// keep puts c in the newer generation, starting a new one when it is full.
func (d *declines) keep(key string, c decline.Composed) {
	if len(d.new) >= declinesKept/2 {
		d.old, d.new = d.new, make(map[string]decline.Composed, declinesKept/2)
	}
	d.new[key] = c
}

// fresh is c with lists of its own, so that no caller can change a kept
// decline.
func fresh(c decline.Composed) decline.Composed {
	c.Suggestions = slices.Clone(c.Suggestions)
	c.Offered = slices.Clone(c.Offered)
	for i := range c.Offered {
		c.Offered[i].Edits = slices.Clone(c.Offered[i].Edits)
	}
	return c
}
