package vocab

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Tone is the register the composer writes in.
type Tone string

// The tones.
const (
	Neutral Tone = "neutral"
	Warm    Tone = "warm"
	Formal  Tone = "formal"
	Direct  Tone = "direct"
)

var tones = []Tone{Neutral, Warm, Formal, Direct}

// Tones lists the tones. The slice is the caller's own.
func Tones() []Tone { return slices.Clone(tones) }

// Voice is how a publisher wants its declines to read.
type Voice struct {
	// SellerName is the public name the composer may use.
	SellerName string `json:"seller_name,omitempty"`
	Tone       Tone   `json:"tone,omitempty"`
	// Templates replace a slug's canned line. They may use the
	// placeholders in [Placeholders]; a placeholder the disclosure level
	// does not reveal makes the template unusable for that decline, and
	// the canned line is used instead.
	Templates map[Slug]string `json:"templates,omitempty"`
}

// MaxTemplate is the longest template a publisher may save, in characters.
const MaxTemplate = 1000

// MaxSellerName is the longest seller name, in characters.
const MaxSellerName = 120

// placeholders are the names a template may use, each with the lowest
// disclosure level at which it has a value.
var placeholders = map[string]Level{
	"seller":         Category,
	"channels":       Category, // channels the buyer could switch to
	"markets":        Category, // markets served
	"formats":        Category, // format kinds offered
	"minimum":        Range,    // the minimum budget, rounded at range level
	"earliest_start": Range,
	"open_flight":    Range,
	"lead_time":      Range,
}

// Placeholders returns the names a template may use, each with the lowest
// disclosure level at which it has a value. The map is the caller's own.
func Placeholders() map[string]Level { return maps.Clone(placeholders) }

var placeholderRE = regexp.MustCompile(`\{\{\s*([a-zA-Z0-9_.]*)\s*\}\}`)

// TemplatePlaceholders returns the placeholder names t uses, in order of
// first use.
func TemplatePlaceholders(t string) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range placeholderRE.FindAllStringSubmatch(t, -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			out = append(out, m[1])
		}
	}
	return out
}

// PlaceholderNames lists the placeholder names, sorted.
func PlaceholderNames() []string {
	out := make([]string, 0, len(placeholders))
	for k := range placeholders {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// CheckTemplate reports what is wrong with a template, if anything: an
// unknown placeholder, an unbalanced brace, or too much text.
func CheckTemplate(t string) error {
	if strings.TrimSpace(t) == "" {
		return fmt.Errorf("template is empty")
	}
	if n := len([]rune(t)); n > MaxTemplate {
		return fmt.Errorf("template is %d characters; the limit is %d", n, MaxTemplate)
	}
	for _, name := range TemplatePlaceholders(t) {
		if _, ok := placeholders[name]; !ok {
			if internalPlaceholders.MatchString(strings.ToLower(name)) {
				return fmt.Errorf("{{%s}} refers to an internal field; templates may use only the public placeholders %s", name, strings.Join(PlaceholderNames(), ", "))
			}
			return fmt.Errorf("unknown placeholder {{%s}}; templates may use %s", name, strings.Join(PlaceholderNames(), ", "))
		}
	}
	rest := placeholderRE.ReplaceAllString(t, "")
	if strings.Contains(rest, "{{") || strings.Contains(rest, "}}") {
		return fmt.Errorf("template has an unbalanced {{ or }}")
	}
	return nil
}

// FillTemplate fills a template's placeholders from shown; it fails when
// one has no value there (the disclosure level does not reveal it).
func FillTemplate(t string, shown map[string]string) (string, bool) {
	ok := true
	out := placeholderRE.ReplaceAllStringFunc(t, func(m string) string {
		name := placeholderRE.FindStringSubmatch(m)[1]
		v, has := shown[name]
		if !has || v == "" {
			ok = false
			return ""
		}
		return v
	})
	return out, ok
}

// TemplateLiteral is the template's own text: every placeholder replaced
// by a space. It is what the publisher wrote and the buyer reads around
// the disclosed values, for a lint to check.
func TemplateLiteral(t string) string {
	return placeholderRE.ReplaceAllString(t, " ")
}

// ParseTone checks a tone name; "" means neutral.
func ParseTone(s string) (Tone, error) {
	if s == "" {
		return Neutral, nil
	}
	for _, t := range tones {
		if string(t) == s {
			return t, nil
		}
	}
	return "", fmt.Errorf("%q is not a tone (want neutral, warm, formal or direct)", s)
}
