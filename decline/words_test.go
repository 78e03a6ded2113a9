package decline

import (
	"testing"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/vocab"
)

// TestPlaceholderLevels checks that a disclosure gives each placeholder a value
// exactly from its documented level on, given facts for all of them.
func TestPlaceholderLevels(t *testing.T) {
	open := adcp.DateRange{Start: adcp.MustDate("2027-01-03"), End: adcp.MustDate("2027-01-10")}
	facts := vocab.Facts{
		Currency: "USD", Minimum: 3200, AlternativeChannels: []string{"display"}, OpenFlight: &open,
		EarliestStart: adcp.MustDate("2026-12-02"), LeadDays: 3, ServedCountries: []string{"US"}, OfferedFormatKinds: []string{"image"},
	}
	for _, level := range []vocab.Level{vocab.None, vocab.Category, vocab.Range, vocab.Exact} {
		d := disclose(vocab.Grounds{Slug: vocab.BudgetBelowMinimum, Level: level, Facts: facts}, vocab.Voice{SellerName: "Northwind"})
		if d.level() != level {
			t.Errorf("disclose at %s built a %s disclosure", level, d.level())
		}
		shown := d.values()
		for name, from := range vocab.Placeholders() {
			if has := shown[name] != ""; has != (level >= from) {
				t.Errorf("disclosure at %s: %s shown = %v, want %v (from %s)", level, name, has, level >= from, from)
			}
		}
		for name := range shown {
			if _, ok := vocab.Placeholders()[name]; !ok {
				t.Errorf("disclosure at %s gives %q, which is not a documented placeholder", level, name)
			}
		}
	}
}

func TestLabels(t *testing.T) {
	for _, ch := range adcp.Channels() {
		if channelLabels[ch] == "" {
			t.Errorf("channel %s has no label", ch)
		}
	}
	for _, k := range adcp.FormatKinds() {
		if formatLabels[k] == "" {
			t.Errorf("format kind %s has no label", k)
		}
	}
	if got := ChannelList([]string{"display", "olv", "streaming_audio"}); got != "display, online video and streaming audio" {
		t.Errorf("ChannelList = %q", got)
	}
	if got := ChannelList(nil); got != "" {
		t.Errorf("ChannelList(nil) = %q", got)
	}
}
