package decline

// TemplateLiteral is the template's own text: every placeholder replaced
// by a space. It is what the publisher wrote and the buyer reads around
// the disclosed values, for a lint to check.
func TemplateLiteral(t string) string {
	return placeholderRE.ReplaceAllString(t, " ")
}
