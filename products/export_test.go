package products

// Uncached is snap without its kept declines: every decline it answers
// with is composed afresh, the reference the kept ones are checked
// against.
func Uncached(snap *Snapshot) *Snapshot {
	c := *snap
	c.declines = nil
	return &c
}
