package merch

// ConfidentialText lists the confidential fields of the rulebook as they
// were written: every rule's and review rule's id, name, notes and
// confidential terms. The deny-list holds the identifying parts of them
// (ConfidentialTerms); this is the whole text, for checks that ask whether
// a word occurs anywhere a buyer cannot see, such as which catalogue
// keywords may steer ranking.
func (rb *Rulebook) ConfidentialText() []string {
	if rb == nil {
		return nil
	}
	var out []string
	for _, r := range rb.Rules {
		out = append(append(out, r.ID, r.Name, r.Notes), r.ConfidentialTerms...)
	}
	if rb.Orders != nil {
		for _, r := range rb.Orders.Review {
			out = append(append(out, r.ID, r.Name, r.Notes), r.ConfidentialTerms...)
		}
	}
	return out
}
