package adcp

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Version is an AdCP release as it appears on the wire: MAJOR.MINOR with an
// optional pre-release tag ("3.1", "3.2-beta.5").
type Version struct {
	Major, Minor int
	Pre          string
}

var versionRE = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([a-zA-Z0-9](?:[a-zA-Z0-9.-]*[a-zA-Z0-9])?))?$`)

// ParseVersion parses a release-precision version string.
func ParseVersion(s string) (Version, error) {
	m := versionRE.FindStringSubmatch(s)
	if m == nil {
		return Version{}, fmt.Errorf("%q is not a release-precision AdCP version such as \"3.1\" or \"3.2-beta.5\"", s)
	}
	major, err1 := strconv.Atoi(m[1])
	minor, err2 := strconv.Atoi(m[2])
	if err1 != nil || err2 != nil || major > 99 {
		return Version{}, fmt.Errorf("%q is not a release-precision AdCP version", s)
	}
	return Version{Major: major, Minor: minor, Pre: m[3]}, nil
}

func (v Version) String() string {
	// Every answer names its version: a served one is spelled once.
	for i := range supported {
		if supported[i] == v {
			return spellings[i]
		}
	}
	return v.spell()
}

func (v Version) spell() string {
	s := strconv.Itoa(v.Major) + "." + strconv.Itoa(v.Minor)
	if v.Pre != "" {
		s += "-" + v.Pre
	}
	return s
}

// IsZero reports whether v is the zero Version.
func (v Version) IsZero() bool { return v == Version{} }

// Release returns v without its pre-release tag.
func (v Version) Release() Version { return Version{Major: v.Major, Minor: v.Minor} }

// AtLeast reports whether v's release is major.minor or later. Pre-release
// tags are ignored: 3.2-beta.4 has the 3.2 shapes.
func (v Version) AtLeast(major, minor int) bool {
	return v.Major > major || (v.Major == major && v.Minor >= minor)
}

// Wire says how a served release's wire differs, for what the storefront
// serves (get_products in every arm, get_adcp_capabilities, the error arm
// and comply_test_controller's force_get_products_arm), from Build's, the
// release whose official schemas the storefront validates against.
type Wire string

const (
	// WireLegacy: a stable release before 3.2. It has no rejected arm, so
	// a decline is served as a typed, correctable error.
	WireLegacy Wire = "no rejected arm: a decline is a typed error"
	// WireAsBuild: the same wire as Build. Only the adcp_version echo
	// differs.
	WireAsBuild Wire = "as " + Build + " but the adcp_version echo"
)

// Release is one release the storefront serves, with where its facts come
// from.
type Release struct {
	Version Version
	// Date is when the release was published (its tag's commit date, or
	// the release notes' date); "" when neither gives one.
	Date string
	// Source says where the release and its wire facts were read.
	Source string
	Wire   Wire
}

// Sources of the facts in Releases. The README explains them.
const (
	sourceStable = "stable line (3.0.28, 3.1.20)"
	sourceTags   = "AdCP tag v3.2.0-%s: its get_products, error and envelope schemas are beta.5's, byte for byte"
	sourceNotes  = "AdCP release notes (RELEASES.md)"
	// rc.2, rc.5 and rc.6 are missing from RELEASES.md's table, but the
	// labels exist: a buyer SDK may pin them, and refusing one would cut
	// that buyer off the rejected arm for no wire reason.
	sourceRC2 = "AdCP's 3.2 versions page and release notes list it (adcontextprotocol/adcp#7518); not in RELEASES.md"
	sourceGap = "inferred: Changesets numbers prereleases one by one (adcontextprotocol/adcp#7069), and rc.4 and rc.7 exist; not in RELEASES.md"
	sourceRC7 = "AdCP release notes (RELEASES.md); the newest found, compliance index of 2026-09-27"
)

// releases is the one table of the releases the storefront serves, oldest
// first. Capabilities, VERSION_UNSUPPORTED errors, the README and the
// tests all read it (through Supported); nothing else lists versions.
//
// Every 3.2 pre-release that carries the rejected arm is served: it first
// shipped in 3.2.0-beta.0, and a pre-release pin never downshifts, so each
// label must be listed to be served.
var releases = func() []Release {
	rs := []Release{
		{Version{3, 0, ""}, "", sourceStable, WireLegacy},
		{Version{3, 1, ""}, "", sourceStable, WireLegacy},
	}
	for i, date := range []string{"2026-08-17", "2026-08-19", "2026-08-19", "2026-08-19", "2026-08-20", "2026-08-22"} {
		pre := fmt.Sprintf("beta.%d", i)
		rs = append(rs, Release{Version{3, 2, pre}, date, fmt.Sprintf(sourceTags, pre), WireAsBuild})
	}
	for i, date := range []string{"2026-08-24", "", "", "", "", "2026-09-03"} {
		rs = append(rs, Release{Version{3, 2, fmt.Sprintf("beta.%d", i+6)}, date, sourceNotes, WireAsBuild})
	}
	for i, date := range []string{"2026-09-04", "2026-09-05", "", "2026-09-14", "2026-09-20", "", "", ""} {
		source := sourceNotes
		switch i {
		case 2:
			source = sourceRC2
		case 5, 6:
			source = sourceGap
		case 7:
			source = sourceRC7
		}
		rs = append(rs, Release{Version{3, 2, fmt.Sprintf("rc.%d", i)}, date, source, WireAsBuild})
	}
	return rs
}()

// ReleasesMarkdown renders Releases as the README's table.
func ReleasesMarkdown() string {
	var b strings.Builder
	b.WriteString("| pin | published | wire | source |\n|---|---|---|---|\n")
	for _, r := range releases {
		date := r.Date
		if date == "" {
			date = "–"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", r.Version, date, r.Wire, r.Source)
	}
	return b.String()
}

// supported is releases' versions.
var supported = func() []Version {
	out := make([]Version, len(releases))
	for i, r := range releases {
		out[i] = r.Version
	}
	return out
}()

// spellings are the supported versions' strings, in the same order.
var spellings = func() []string {
	out := make([]string, len(supported))
	for i, v := range supported {
		out[i] = v.spell()
	}
	return out
}()

// spelled maps each supported version's canonical spelling to it, so that
// a pin spelled as the storefront spells it is matched without parsing.
var spelled = func() map[string]Version {
	out := make(map[string]Version, len(supported))
	for _, v := range supported {
		out[v.String()] = v
	}
	return out
}()

var defaultVersion = Version{3, 1, ""}

// Releases returns the one table of the releases the storefront serves,
// oldest first.
func Releases() []Release { return slices.Clone(releases) }

// Supported lists the releases the storefront serves, oldest first:
// Releases' versions.
func Supported() []Version { return slices.Clone(supported) }

// Default is the release served when the buyer pins no release (only a
// major, or nothing): the newest stable release. Pre-releases are served
// only to buyers that pin them exactly, so an unpinned buyer never receives
// a shape its release does not define.
func Default() Version { return defaultVersion }

// Build is the exact spec build the storefront's schemas come from.
const Build = "3.2.0-beta.5"

// SupportedStrings returns Supported as wire strings.
func SupportedStrings() []string {
	out := make([]string, len(supported))
	for i, v := range supported {
		out[i] = v.String()
	}
	return out
}

// Majors returns the distinct supported major versions.
func Majors() []int {
	var out []int
	for _, v := range supported {
		if len(out) == 0 || out[len(out)-1] != v.Major {
			out = append(out, v.Major)
		}
	}
	return out
}

// NegotiationError says why no release could be served.
type NegotiationError struct {
	// Field is the request field that carried the unsupported pin.
	Field string
	// Asked is the value the buyer sent.
	Asked string
}

func (e *NegotiationError) Error() string {
	return fmt.Sprintf("AdCP version %s is not supported; supported versions are %s", e.Asked, strings.Join(SupportedStrings(), ", "))
}

// Negotiate picks the release to serve for a buyer's pins. pinned is the
// request's adcp_version ("" when absent); major is adcp_major_version (0
// when absent). adcp_version wins when both are present.
//
//   - An exact match is served as is.
//   - A pre-release pin must match exactly; any other is refused.
//   - A release pin is served the highest supported stable release at or
//     below it within the same major ("3.3" gets 3.1).
//   - A different major is refused.
//   - A major alone, or no pin at all, gets Default.
func Negotiate(pinned string, major int) (Version, error) {
	if pinned != "" {
		if v, ok := spelled[pinned]; ok {
			return v, nil
		}
		v, err := ParseVersion(pinned)
		if err != nil {
			return Version{}, &NegotiationError{Field: "adcp_version", Asked: pinned}
		}
		for _, s := range supported {
			if s == v {
				return s, nil
			}
		}
		if v.Pre != "" {
			return Version{}, &NegotiationError{Field: "adcp_version", Asked: pinned}
		}
		var best Version
		for _, s := range supported {
			if s.Major == v.Major && s.Pre == "" && s.Minor <= v.Minor && (best.IsZero() || s.Minor > best.Minor) {
				best = s
			}
		}
		if best.IsZero() {
			return Version{}, &NegotiationError{Field: "adcp_version", Asked: pinned}
		}
		return best, nil
	}
	if major != 0 && major != defaultVersion.Major {
		return Version{}, &NegotiationError{Field: "adcp_major_version", Asked: strconv.Itoa(major)}
	}
	return defaultVersion, nil
}
