package vocab

import (
	"encoding/json"
	"fmt"
)

// Level is how much a buyer may learn about why a brief was declined. The
// levels are ordered: each reveals everything the one before it does and
// more.
type Level int

const (
	// None shows the generic line and nothing else: no category, no
	// suggestions.
	None Level = iota
	// Category shows the slug's line and suggestions without figures.
	Category
	// Range shows thresholds rounded into coarse public buckets.
	Range
	// Exact shows thresholds as they are.
	Exact
)

var levelNames = []string{"none", "category", "range", "exact"}

// Levels lists the level names in order.
func Levels() []string { return append([]string(nil), levelNames...) }

func (l Level) String() string {
	if l < None || l > Exact {
		return fmt.Sprintf("Level(%d)", int(l))
	}
	return levelNames[l]
}

// ParseLevel parses a level name.
func ParseLevel(s string) (Level, error) {
	for i, n := range levelNames {
		if n == s {
			return Level(i), nil
		}
	}
	return None, fmt.Errorf("%q is not a disclosure level (want none, category, range or exact)", s)
}

// Cap returns the lower of l and max: an account's trust tier can lower
// what a rule discloses, never raise it.
func (l Level) Cap(max Level) Level {
	if max < l {
		return max
	}
	return l
}

// MarshalJSON writes the level name.
func (l Level) MarshalJSON() ([]byte, error) { return json.Marshal(l.String()) }

// UnmarshalJSON reads a level name.
func (l *Level) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a disclosure level must be a string")
	}
	p, err := ParseLevel(s)
	if err != nil {
		return err
	}
	*l = p
	return nil
}
