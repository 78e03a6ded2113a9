package adcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseVersion(t *testing.T) {
	for _, test := range []struct {
		in      string
		want    Version
		wantErr bool
	}{
		{"3.1", Version{3, 1, ""}, false},
		{"3.0", Version{3, 0, ""}, false},
		{"3.2-beta.5", Version{3, 2, "beta.5"}, false},
		{"3.2-rc1", Version{3, 2, "rc1"}, false},
		{"10.20", Version{10, 20, ""}, false},
		{"3", Version{}, true},
		{"3.1.0", Version{}, true},
		{"v3.1", Version{}, true},
		{"03.1", Version{}, true},
		{"3.01", Version{}, true},
		{"3.2-", Version{}, true},
		{"3.2-beta.", Version{}, true},
		{"3.2-beta_5", Version{}, true},
		{"100.0", Version{}, true},
		{" 3.1", Version{}, true},
		{"", Version{}, true},
		{"3.99999999999999999999", Version{}, true},
	} {
		got, err := ParseVersion(test.in)
		if (err != nil) != test.wantErr || got != test.want {
			t.Errorf("ParseVersion(%q) = %v, %v, want %v, error %v", test.in, got, err, test.want, test.wantErr)
		}
		if err == nil && got.String() != test.in {
			t.Errorf("ParseVersion(%q).String() = %q, want the input back", test.in, got.String())
		}
	}
}

func TestVersionMethods(t *testing.T) {
	v := Version{3, 2, "beta.4"}
	if !v.AtLeast(3, 2) || !v.AtLeast(3, 1) || v.AtLeast(3, 3) || v.AtLeast(4, 0) || !v.AtLeast(2, 9) {
		t.Errorf("%v.AtLeast gives wrong answers", v)
	}
	if got := v.Release(); got != (Version{3, 2, ""}) {
		t.Errorf("%v.Release() = %v, want 3.2", v, got)
	}
	if !(Version{}).IsZero() || v.IsZero() {
		t.Error("IsZero is wrong")
	}
	want := []string{"3.0", "3.1"}
	for i := 0; i <= 11; i++ {
		want = append(want, fmt.Sprintf("3.2-beta.%d", i))
	}
	for i := 0; i <= 7; i++ {
		want = append(want, fmt.Sprintf("3.2-rc.%d", i))
	}
	if got := SupportedStrings(); !slices.Equal(got, want) {
		t.Errorf("SupportedStrings() = %q, want %q", got, want)
	}
	if got := Majors(); !slices.Equal(got, []int{3}) {
		t.Errorf("Majors() = %v, want [3]", got)
	}
	if defaultVersion.Pre != "" || !slices.Contains(supported, defaultVersion) {
		t.Errorf("defaultVersion = %v, want a supported stable release", defaultVersion)
	}
	if !strings.HasPrefix(Build, supported[len(supported)-1].Release().String()) {
		t.Errorf("Build = %q does not belong to the newest supported release %v", Build, supported[len(supported)-1])
	}
}

func TestNegotiate(t *testing.T) {
	for _, test := range []struct {
		name      string
		pinned    string
		major     int
		want      Version
		wantField string // "" when no error is expected
	}{
		{"nothing pinned", "", 0, defaultVersion, ""},
		{"major only", "", 3, defaultVersion, ""},
		{"exact stable", "3.0", 0, Version{3, 0, ""}, ""},
		{"exact stable 3.1", "3.1", 0, Version{3, 1, ""}, ""},
		{"exact pre-release", "3.2-beta.5", 0, Version{3, 2, "beta.5"}, ""},
		{"older exact pre-release", "3.2-beta.4", 0, Version{3, 2, "beta.4"}, ""},
		{"first pre-release with the rejected arm", "3.2-beta.0", 0, Version{3, 2, "beta.0"}, ""},
		{"newest beta", "3.2-beta.11", 0, Version{3, 2, "beta.11"}, ""},
		{"first release candidate", "3.2-rc.0", 0, Version{3, 2, "rc.0"}, ""},
		{"newest release candidate", "3.2-rc.7", 0, Version{3, 2, "rc.7"}, ""},
		{"release candidate missing from the release table", "3.2-rc.5", 0, Version{3, 2, "rc.5"}, ""},
		{"release candidate past the newest", "3.2-rc.8", 0, Version{}, "adcp_version"},
		{"beta past the newest", "3.2-beta.12", 0, Version{}, "adcp_version"},
		{"leading zero is another label", "3.2-rc.07", 0, Version{}, "adcp_version"},
		{"labels are case-sensitive", "3.2-RC.7", 0, Version{}, "adcp_version"},
		{"adcp_version wins over major", "3.0", 4, Version{3, 0, ""}, ""},
		{"unknown pre-release", "3.2-alpha.1", 0, Version{}, "adcp_version"},
		{"pre-release of a stable release", "3.1-rc.1", 0, Version{}, "adcp_version"},
		{"future pre-release", "3.3-beta.1", 0, Version{}, "adcp_version"},
		{"release 3.2 downshifts to highest stable", "3.2", 0, Version{3, 1, ""}, ""},
		{"future minor downshifts", "3.7", 0, Version{3, 1, ""}, ""},
		{"other major", "4.0", 0, Version{}, "adcp_version"},
		{"older major", "2.5", 0, Version{}, "adcp_version"},
		{"unparseable", "three", 0, Version{}, "adcp_version"},
		{"patch precision", "3.1.0", 0, Version{}, "adcp_version"},
		{"other major only", "", 4, Version{}, "adcp_major_version"},
		{"negative major", "", -1, Version{}, "adcp_major_version"},
	} {
		t.Run(test.name, func(t *testing.T) {
			got, err := Negotiate(test.pinned, test.major)
			if test.wantField == "" {
				if err != nil || got != test.want {
					t.Errorf("Negotiate(%q, %d) = %v, %v, want %v, nil", test.pinned, test.major, got, err, test.want)
				}
				return
			}
			var ne *NegotiationError
			if !errors.As(err, &ne) {
				t.Fatalf("Negotiate(%q, %d) = %v, %v, want a *NegotiationError", test.pinned, test.major, got, err)
			}
			if ne.Field != test.wantField {
				t.Errorf("Negotiate(%q, %d) error field = %q, want %q", test.pinned, test.major, ne.Field, test.wantField)
			}
			if !got.IsZero() {
				t.Errorf("Negotiate(%q, %d) = %v with an error, want the zero Version", test.pinned, test.major, got)
			}
			for _, s := range SupportedStrings() {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not list supported version %s", err, s)
				}
			}
		})
	}
}

func TestDate(t *testing.T) {
	for _, test := range []struct {
		in      string
		wantErr bool
	}{
		{"2026-12-18", false},
		{"2024-02-29", false},
		{"2026-02-29", true},
		{"2026-13-01", true},
		{"2026-1-1", true},
		{"2026-12-18T00:00:00Z", true},
		{"", true},
	} {
		d, err := ParseDate(test.in)
		if (err != nil) != test.wantErr {
			t.Errorf("ParseDate(%q) = %v, %v, want error %v", test.in, d, err, test.wantErr)
			continue
		}
		if err == nil && d.String() != test.in {
			t.Errorf("ParseDate(%q).String() = %q", test.in, d.String())
		}
	}

	var zero Date
	if !zero.IsZero() || zero.String() != "" {
		t.Errorf("zero Date: IsZero() = %v, String() = %q", zero.IsZero(), zero.String())
	}
	d := MustDate("2026-12-30")
	if got := d.AddDays(3).String(); got != "2027-01-02" {
		t.Errorf("AddDays(3) = %s, want 2027-01-02", got)
	}
	if got := d.AddDays(-30).String(); got != "2026-11-30" {
		t.Errorf("AddDays(-30) = %s, want 2026-11-30", got)
	}
	e := MustDate("2027-01-02")
	if !d.Before(e) || d.After(e) || e.Before(d) || !e.After(d) || d.Before(d) || d.After(d) {
		t.Error("Before/After are wrong")
	}
	if got := d.DaysUntil(e); got != 3 {
		t.Errorf("DaysUntil = %d, want 3", got)
	}
	if got := e.DaysUntil(d); got != -3 {
		t.Errorf("DaysUntil backwards = %d, want -3", got)
	}
	// Across a daylight-saving change, days are still whole days: Date is
	// UTC.
	if got := MustDate("2026-03-01").DaysUntil(MustDate("2026-04-01")); got != 31 {
		t.Errorf("DaysUntil(March) = %d, want 31", got)
	}
	late := time.Date(2026, 11, 29, 23, 30, 0, 0, time.FixedZone("UTC-5", -5*3600))
	if got := DateOf(late).String(); got != "2026-11-30" {
		t.Errorf("DateOf(%v) = %s, want the UTC date 2026-11-30", late, got)
	}
	if !d.Time().Equal(time.Date(2026, 12, 30, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("Time() = %v, want midnight UTC", d.Time())
	}

	func() {
		defer func() {
			if recover() == nil {
				t.Error("MustDate(bad) did not panic")
			}
		}()
		MustDate("nope")
	}()
}

func TestDateJSON(t *testing.T) {
	var r DateRange
	if err := json.Unmarshal([]byte(`{"start":"2026-12-18","end":"2027-01-02"}`), &r); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(r)
	if err != nil || string(b) != `{"start":"2026-12-18","end":"2027-01-02"}` {
		t.Errorf("DateRange round trip = %s, %v", b, err)
	}
	for _, bad := range []string{`{"start":20261218}`, `{"start":"18/12/2026"}`, `{"start":null}`} {
		var r DateRange
		// null reads as the empty string, which is not a date either.
		if err := json.Unmarshal([]byte(bad), &r); err == nil {
			t.Errorf("json.Unmarshal(%s) succeeded, want an error", bad)
		}
	}
	zero, _ := json.Marshal(Date{})
	if string(zero) != `""` {
		t.Errorf("json.Marshal(zero Date) = %s, want \"\"", zero)
	}
}

func TestDateRange(t *testing.T) {
	r := func(a, b string) DateRange { return DateRange{MustDate(a), MustDate(b)} }
	for _, test := range []struct {
		a, b DateRange
		want bool
	}{
		{r("2026-12-18", "2027-01-02"), r("2026-12-01", "2026-12-17"), false},
		{r("2026-12-18", "2027-01-02"), r("2026-12-01", "2026-12-18"), true},
		{r("2026-12-18", "2027-01-02"), r("2027-01-02", "2027-01-10"), true},
		{r("2026-12-18", "2027-01-02"), r("2027-01-03", "2027-01-10"), false},
		{r("2026-12-18", "2027-01-02"), r("2026-12-20", "2026-12-21"), true},
		{r("2026-12-20", "2026-12-21"), r("2026-12-18", "2027-01-02"), true},
	} {
		if got := test.a.Overlaps(test.b); got != test.want {
			t.Errorf("%v.Overlaps(%v) = %v, want %v", test.a, test.b, got, test.want)
		}
		if got := test.b.Overlaps(test.a); got != test.want {
			t.Errorf("%v.Overlaps(%v) = %v, want %v (symmetry)", test.b, test.a, got, test.want)
		}
	}
	if got := r("2026-12-18", "2027-01-02").Days(); got != 16 {
		t.Errorf("Days() = %d, want 16", got)
	}
	if got := r("2026-12-18", "2026-12-18").Days(); got != 1 {
		t.Errorf("Days() of one day = %d, want 1", got)
	}
}

func TestRecovery(t *testing.T) {
	for _, test := range []struct {
		code Code
		want Recovery
	}{
		{ServiceUnavailable, Transient},
		{RateLimited, Transient},
		{InvalidRequest, Correctable},
		{VersionUnsupported, Correctable},
		{BudgetTooLow, Correctable},
		{PolicyViolation, Correctable},
		{AccountNotFound, Terminal},
		{AuthInvalid, Terminal},
		{Code("MADE_UP"), Terminal},
	} {
		if got := test.code.Recovery(); got != test.want {
			t.Errorf("%s.Recovery() = %s, want %s", test.code, got, test.want)
		}
	}
}

func TestEnums(t *testing.T) {
	for _, test := range []struct {
		name string
		f    func(string) bool
		yes  []string
		no   []string
	}{
		{"IsChannel", IsChannel, []string{"display", "ctv", "streaming_audio"}, []string{"Display", "tv", ""}},
		{"IsFormatKind", IsFormatKind, []string{"image", "video_vast"}, []string{"video", ""}},
		{"IsDeliveryType", IsDeliveryType, []string{"guaranteed", "non_guaranteed"}, []string{"programmatic"}},
		{"IsCurrency", IsCurrency, []string{"USD", "EUR", "AZZ"}, []string{"usd", "US", "USDX", "", "U@D", "[SD", "US\x00", "\u00dcS", "US\n"}},
		{"IsCountry", IsCountry, []string{"US", "GB", "ZA"}, []string{"us", "USA", "", "@Z", "Z[", "\u00dc", "U\n"}},
		{"IsDomain", IsDomain, []string{"example.com", "a.b-c.example", "localhost"}, []string{"Example.com", "-a.com", "a..com", "a.com.", "", strings.Repeat("a.", 127) + "com"}},
	} {
		for _, s := range test.yes {
			if !test.f(s) {
				t.Errorf("%s(%q) = false, want true", test.name, s)
			}
		}
		for _, s := range test.no {
			if test.f(s) {
				t.Errorf("%s(%q) = true, want false", test.name, s)
			}
		}
	}
}

// TestReleases checks the table's own facts: every 3.2 pre-release from
// beta.0 (the first with the rejected arm) to rc.7 is served with Build's
// wire, each says where it was read, and dates are dates.
func TestReleases(t *testing.T) {
	for _, r := range releases {
		if r.Source == "" {
			t.Errorf("%s has no source", r.Version)
		}
		if r.Date != "" {
			if _, err := time.Parse(time.DateOnly, r.Date); err != nil {
				t.Errorf("%s date %q: %v", r.Version, r.Date, err)
			}
		}
		want := WireAsBuild
		if !r.Version.AtLeast(3, 2) {
			want = WireLegacy
		}
		if r.Wire != want {
			t.Errorf("%s wire = %q, want %q", r.Version, r.Wire, want)
		}
	}
}

// TestREADMEVersions keeps the README's table of served releases the
// table in Releases, rendered.
func TestREADMEVersions(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatalf("reading the README: %v", err)
	}
	want := ReleasesMarkdown()
	if !strings.Contains(string(readme), want) {
		t.Errorf("README.md does not hold the served releases as adcp.Releases() has them; put this table in it:\n%s", want)
	}
}

// TestSpelledVersionsParse: Negotiate matches a pin spelled as a
// supported version's String without parsing it, which is sound only if
// parsing that spelling gives the version back.
func TestSpelledVersionsParse(t *testing.T) {
	for _, v := range Supported() {
		got, err := ParseVersion(v.String())
		if err != nil || got != v {
			t.Errorf("ParseVersion(%q) = %v, %v; want %v", v.String(), got, err, v)
		}
		if n, err := Negotiate(v.String(), 0); err != nil || n != v {
			t.Errorf("Negotiate(%q) = %v, %v", v.String(), n, err)
		}
	}
}

// TestServedVersionsAreSpelledOnce: a supported version's string is the
// one kept for it, spelled as any other version is, and one not served
// is still spelled.
func TestServedVersionsAreSpelledOnce(t *testing.T) {
	for _, v := range supported {
		if v.String() != v.spell() {
			t.Errorf("%#v is spelled %q, want %q", v, v.String(), v.spell())
		}
	}
	if got := (Version{Major: 9, Minor: 1, Pre: "rc.2"}).String(); got != "9.1-rc.2" {
		t.Errorf("an unserved version is spelled %q", got)
	}
}
