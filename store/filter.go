package store

import "github.com/storefront/storefront/ledger"

// Matches reports whether e passes f. Stores that cannot push a filter
// into their query language use it; it is the definition the others must
// agree with.
func Matches(e ledger.Entry, f DecisionFilter) bool {
	switch {
	case f.Arm != "" && e.Arm != f.Arm,
		f.Slug != "" && e.Slug != f.Slug,
		f.Account != "" && e.Account != f.Account,
		!f.Since.IsZero() && e.Time.Before(f.Since),
		!f.Until.IsZero() && !e.Time.Before(f.Until),
		f.Before > 0 && e.Sequence >= f.Before:
		return false
	}
	return true
}

// TaskMatches reports whether t passes f (ignoring paging).
func TaskMatches(t Task, f TaskFilter) bool {
	if len(f.IDs) > 0 && !contains(f.IDs, t.ID) {
		return false
	}
	if f.Type != "" && t.Type != f.Type {
		return false
	}
	if len(f.Statuses) > 0 && !contains(f.Statuses, t.Status) {
		return false
	}
	if f.HasWebhook != nil && (t.Webhook != nil) != *f.HasWebhook {
		return false
	}
	return true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
