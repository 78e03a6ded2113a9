package adversary

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestCanonUndoesEveryDisguise: the leak oracle finds every mark of every
// kind under every disguise, and finds no mark in text without it.
func TestCanonUndoesEveryDisguise(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, k := range Kinds {
		s := NewSecret(r, k)
		for _, m := range s.Marks {
			for _, d := range Disguises {
				text := "Booked via " + d.Apply(r, m) + " this quarter."
				if !strings.Contains(canon(text), canon(m)) {
					t.Errorf("%s %q disguised %s as %q: canon %q does not hold %q", k, m, d.Name, text, canon(text), canon(m))
				}
				if d.ID && !strings.Contains(m, " ") && strings.ContainsAny(d.Apply(r, m), " <>") {
					t.Errorf("disguise %s is marked usable in ids but writes %q", d.Name, d.Apply(r, m))
				}
			}
			if strings.Contains(canon("Booked via "+Twin(r, m)+" this quarter."), canon(m)) {
				t.Errorf("the twin of %q reads as the mark", m)
			}
		}
	}
}

// TestLeaksReadMemberNamesOnlyInParams: schema member names are the
// storefront's own ("has_creative_library" reads "tiveli" once separators
// go), so the oracle reads member names only inside format params, where
// the publisher writes them; values it reads everywhere.
func TestLeaksReadMemberNamesOnlyInParams(t *testing.T) {
	w := &World{Secrets: []Secret{{Kind: Codename, Full: "Project Tiveli", Marks: []string{"Tiveli"}}}}
	for answer, want := range map[string]int{
		`{"capabilities":{"has_creative_library":true}}`:           0,
		`{"products":[{"name":"Creative library video"}]}`:         1,
		`{"format_options":[{"params":{"tiveli_slot":true}}]}`:     1,
		`{"format_options":[{"params":{"note":{"TIVELI":true}}}]}`: 1,
	} {
		if got := len(w.Leaks([]byte(answer), "")); got != want {
			t.Errorf("Leaks(%s) found %d, want %d", answer, got, want)
		}
	}
}
