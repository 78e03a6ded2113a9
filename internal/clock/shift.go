package clock

// parseShift reads a clock shift: a sign, a whole number and a unit, y
// (years), d (days) or h (hours), as in +7y, -2y, +90d or -36h. It
// imports nothing and names nothing of this package, so that
// scripts/test-clock-shift.sh compiles this same file into the standard
// library's time package to read STOREFRONT_CLOCK_SHIFT there.
func parseShift(s string) (years, days, hours int, ok bool) {
	if len(s) < 3 || (s[0] != '+' && s[0] != '-') {
		return 0, 0, 0, false
	}
	n := 0
	for _, c := range s[1 : len(s)-1] {
		if c < '0' || c > '9' || n > 100_000 {
			return 0, 0, 0, false
		}
		n = n*10 + int(c-'0')
	}
	if s[0] == '-' {
		n = -n
	}
	switch s[len(s)-1] {
	case 'y':
		return n, 0, 0, true
	case 'd':
		return 0, n, 0, true
	case 'h':
		return 0, 0, n, true
	}
	return 0, 0, 0, false
}
