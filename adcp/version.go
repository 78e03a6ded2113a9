package adcp

import (
	"fmt"
	"regexp"
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

// Supported lists the releases the storefront serves, oldest first. It is
// the one source for capabilities, errors and docs.
var Supported = []Version{
	{3, 0, ""},
	{3, 1, ""},
	{3, 2, "beta.4"},
	{3, 2, "beta.5"},
}

// Default is the release served when the buyer pins no release (only a
// major, or nothing): the newest stable release. Pre-releases are served
// only to buyers that pin them exactly, so an unpinned buyer never receives
// a shape its release does not define.
var Default = Version{3, 1, ""}

// Build is the exact spec build the storefront's schemas come from.
const Build = "3.2.0-beta.5"

// SupportedStrings returns Supported as wire strings.
func SupportedStrings() []string {
	out := make([]string, len(Supported))
	for i, v := range Supported {
		out[i] = v.String()
	}
	return out
}

// Majors returns the distinct supported major versions.
func Majors() []int {
	var out []int
	for _, v := range Supported {
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
		v, err := ParseVersion(pinned)
		if err != nil {
			return Version{}, &NegotiationError{Field: "adcp_version", Asked: pinned}
		}
		for _, s := range Supported {
			if s == v {
				return s, nil
			}
		}
		if v.Pre != "" {
			return Version{}, &NegotiationError{Field: "adcp_version", Asked: pinned}
		}
		var best Version
		for _, s := range Supported {
			if s.Major == v.Major && s.Pre == "" && s.Minor <= v.Minor && (best.IsZero() || s.Minor > best.Minor) {
				best = s
			}
		}
		if best.IsZero() {
			return Version{}, &NegotiationError{Field: "adcp_version", Asked: pinned}
		}
		return best, nil
	}
	if major != 0 && major != Default.Major {
		return Version{}, &NegotiationError{Field: "adcp_major_version", Asked: strconv.Itoa(major)}
	}
	return Default, nil
}
