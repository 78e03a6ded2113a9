// Package field says what text the storefront will store or serve: valid
// UTF-8 with no NUL or other control character (line breaks and tabs only
// where a field allows them), within the field's length, hostnames that are
// hostnames and identifiers of a fixed alphabet. The admin API, the buyer
// tasks and both stores check text here, so the same input is refused the
// same way wherever it arrives.
//
// The checks are structural. Whether a text gives away something
// confidential is the screen's business (package sanitize), which is called
// beside these checks, never from them. This package imports nothing of the
// storefront, and its messages never quote the text they refuse (they say
// which character, and what is wrong with it), so they are safe to show to
// whoever sent it.
package field

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// Rule is what one text field may hold.
type Rule struct {
	// Min and Max bound the length in characters (Unicode code points).
	// Min 1 makes the field required; Max 0 sets no bound.
	Min, Max int
	// Lines allows line feeds, carriage returns and tabs: notes,
	// descriptions, briefs. No other control character is allowed
	// anywhere.
	Lines bool
}

// The rules of the storefront's fields. The README's admin API and buyer
// error sections list them; change both together.
var (
	// Name is a display name: a publisher's, a product's.
	Name = Rule{Min: 1, Max: 200}
	// TokenName names a token for the people who manage it.
	TokenName = Rule{Min: 1, Max: 100}
	// Note is a change note (X-Change-Note), kept with the version it
	// explains.
	Note = Rule{Max: 500}
	// Label is a short free-form value of one line that is not an
	// identifier: a brand id, an author.
	Label = Rule{Max: 255}
	// Prose is a multi-line text a person wrote: a decline reason, a
	// description.
	Prose = Rule{Max: 2000, Lines: true}
	// Query is a query-string value of the admin API.
	Query = Rule{Max: 1000}
)

// Check returns what is wrong with s under r, or nil. The error is a
// predicate ("must not contain ...") to follow the field's name.
func (r Rule) Check(s string) error {
	if err := Text(s, r.Lines); err != nil {
		return err
	}
	n := utf8.RuneCountInString(s)
	switch {
	case n < r.Min && r.Min == 1:
		return errors.New("is required")
	case n < r.Min:
		return fmt.Errorf("must be at least %d characters", r.Min)
	case r.Max > 0 && n > r.Max:
		return fmt.Errorf("is %d characters; the limit is %d", n, r.Max)
	}
	return nil
}

// Text reports the first thing in s that no stored or served text may
// hold: bytes that are not UTF-8, a NUL, or a control character other than
// line feed, carriage return and tab (those too unless lines is set).
func Text(s string, lines bool) error {
	at := 0
	for i, r := range s {
		at++
		if r == utf8.RuneError {
			if _, w := utf8.DecodeRuneInString(s[i:]); w == 1 {
				return fmt.Errorf("must be valid UTF-8 (byte %d is not)", i+1)
			}
		}
		if err := control(r, lines, at); err != nil {
			return err
		}
	}
	return nil
}

func control(r rune, lines bool, at int) error {
	if !unicode.IsControl(r) {
		return nil
	}
	if r == '\n' || r == '\r' || r == '\t' {
		if lines {
			return nil
		}
		return fmt.Errorf("must be one line, without line breaks or tabs (character %d is U+%04X)", at, r)
	}
	if r == 0 {
		return fmt.Errorf("must not contain NUL (character %d)", at)
	}
	return fmt.Errorf("must not contain control characters (character %d is U+%04X)", at, r)
}

// MaxIdentifier is the longest identifier.
const MaxIdentifier = 128

// Identifier reports whether s is an identifier the storefront assigns or
// accepts for its own records (account, buyer, token and publisher ids):
// 1 to MaxIdentifier characters of A-Z, a-z, 0-9, "_", "-", "." and ":".
func Identifier(s string) error {
	if s == "" {
		return errors.New("is required")
	}
	if len(s) > MaxIdentifier {
		return fmt.Errorf("is longer than %d characters", MaxIdentifier)
	}
	for i := 0; i < len(s); i++ {
		if !idByte(s[i]) {
			return fmt.Errorf("must hold only A-Z, a-z, 0-9, _ - . and : (character %d is not one)", utf8.RuneCountInString(s[:i])+1)
		}
	}
	return nil
}

func idByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c == ':'
}

// MaxHostname is the longest hostname (RFC 1035).
const MaxHostname = 253

// Hostname reports whether s is a hostname as AdCP writes domains: lower-
// case ASCII labels of letters, digits and inner hyphens (RFC 1123), each
// 1 to 63 characters, at most 253 in all, without a trailing dot, not an IP
// address. An internationalised name is accepted in its ASCII (punycode)
// form, whose "xn--" labels must decode; given in Unicode, the error names
// the ASCII form to send instead.
func Hostname(s string) error {
	if s == "" {
		return errors.New("is required")
	}
	if err := Text(s, false); err != nil {
		return err
	}
	if len(s) > MaxHostname {
		return fmt.Errorf("must be a domain name of at most %d characters", MaxHostname)
	}
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			if ascii, err := idna.Lookup.ToASCII(s); err == nil && ascii != s && Hostname(ascii) == nil {
				return fmt.Errorf("must be a domain name written in ASCII: send %s", ascii)
			}
			return errors.New("must be a domain name: letters a-z, digits, hyphens and dots")
		}
	}
	if strings.ToLower(s) != s {
		return errors.New("must be a lower-case domain name")
	}
	labels := strings.Split(s, ".")
	for i, l := range labels {
		if err := label(l); err != nil {
			return fmt.Errorf("must be a domain name: label %d %v", i+1, err)
		}
	}
	if allDigits(labels[len(labels)-1]) {
		return errors.New("must be a domain name, not an IP address")
	}
	return nil
}

func label(l string) error {
	switch {
	case l == "":
		return errors.New("is empty")
	case len(l) > 63:
		return errors.New("is longer than 63 characters")
	case l[0] == '-' || l[len(l)-1] == '-':
		return errors.New("starts or ends with a hyphen")
	}
	for i := 0; i < len(l); i++ {
		if c := l[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return errors.New("holds a character other than a-z, 0-9 and -")
		}
	}
	if strings.HasPrefix(l, "xn--") {
		if _, err := idna.Lookup.ToUnicode(l); err != nil {
			return errors.New("is not valid punycode")
		}
	}
	return nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
