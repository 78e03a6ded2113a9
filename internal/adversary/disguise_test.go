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
