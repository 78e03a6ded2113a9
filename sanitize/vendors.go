package sanitize

import (
	"slices"
	"sync"
)

// vendors is the list Vendors returns.
var vendors = []string{
	"Google Ad Manager", "DoubleClick", "DFP", "Magnite", "Rubicon Project",
	"SpotX", "PubMatic", "Index Exchange", "OpenX", "Xandr", "AppNexus",
	"Microsoft Invest", "The Trade Desk", "FreeWheel", "SpringServe",
	"Amazon Publisher Services", "TripleLift", "Sovrn", "Sharethrough",
	"Equativ", "Smart AdServer", "Kevel", "Integral Ad Science",
	"DoubleVerify", "Moat", "comScore", "Nielsen", "LiveRamp", "Lotame",
	"BlueKai", "Eyeota", "Peer39", "GumGum", "Teads", "Outbrain", "Taboola",
	"Yieldmo", "Kargo", "Beachfront", "Nexxen", "Unruly", "Tremor Video",
	"Samba TV", "iSpot", "VideoAmp", "Triton Digital", "AdsWizz",
	"StackAdapt", "Innovid", "Flashtalking", "Celtra", "Sizmek", "Adform",
	"Quantcast", "Criteo", "Zeta Global", "Mediaocean", "Prebid",
	"Permutive", "Experian", "Acxiom", "Oracle Advertising", "Yahoo DSP",
	"MediaMath", "Amobee", "Verve", "InMobi", "Smaato", "Chartboost",
	"Vungle", "AppLovin", "ironSource", "Unity Ads",
}

// Vendors returns the ad-technology vendors and partners whose names a
// decline must never carry: naming the exchange, verification vendor or data partner
// behind a decision discloses the seller's stack. Words that are also
// ordinary English are left out; publishers add such names to a rule's
// confidential terms.
func Vendors() []string { return slices.Clone(vendors) }

// VendorTerms returns Vendors as deny-list terms.
func VendorTerms() []Term {
	out := make([]Term, len(vendors))
	for i, v := range vendors {
		out[i] = Term{Value: v, Kind: KindVendor}
	}
	return out
}

// vendor is the vendor screen, built on first use.
var vendor = sync.OnceValue(func() *Screen { return New(NewDenyList(VendorTerms(), nil)) })

// Vendor returns the vendor screen: markup, characters and the vendor
// names, and no publisher's terms. It screens what is written before a
// publisher's snapshot is loaded, or for no publisher at all (a request's
// envelope, a transport's refusal), and the compliance controller's echo of
// the caller's own words, which must never be matched against a
// publisher's deny-list. It is built once and shared.
func Vendor() *Screen { return vendor() }
