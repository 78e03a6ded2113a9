package decline

import (
	"fmt"
	"maps"
	"math"
	"strconv"
	"strings"

	"github.com/storefront/storefront/adcp"
)

// channelLabels are the words the composer uses for channels.
var channelLabels = map[string]string{
	"display": "display", "olv": "online video", "social": "social",
	"search": "search", "ctv": "connected TV", "linear_tv": "linear TV",
	"radio": "radio", "streaming_audio": "streaming audio",
	"podcast": "podcast", "dooh": "digital out-of-home", "ooh": "out-of-home",
	"print": "print", "cinema": "cinema", "email": "email", "gaming": "gaming",
	"retail_media": "retail media", "influencer": "influencer",
	"affiliate": "affiliate", "product_placement": "product placement",
	"sponsored_intelligence": "sponsored intelligence",
}

// ChannelLabel is the word the composer uses for a channel.
func ChannelLabel(ch string) string {
	if l, ok := channelLabels[ch]; ok {
		return l
	}
	return strings.ReplaceAll(ch, "_", " ")
}

// formatLabels are the words the composer uses for format kinds.
var formatLabels = map[string]string{
	"image": "image", "html5": "HTML5", "display_tag": "display tag",
	"image_carousel": "image carousel", "video_hosted": "hosted video",
	"video_vast": "VAST video", "audio_hosted": "hosted audio",
	"audio_daast": "DAAST audio", "sponsored_placement": "sponsored placement",
	"native_in_feed": "native in-feed", "responsive_creative": "responsive",
	"agent_placement": "agent placement", "custom": "custom",
}

// FormatLabel is the word the composer uses for a format kind.
func FormatLabel(k string) string {
	if l, ok := formatLabels[k]; ok {
		return l
	}
	return strings.ReplaceAll(k, "_", " ")
}

// list joins words as "a", "a and b", "a, b and c".
func list(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// ChannelList names channels in words: "display, online video and audio".
func ChannelList(chs []string) string { return mapList(chs, ChannelLabel, len(chs)) }

func mapList(items []string, f func(string) string, max int) string {
	if len(items) > max {
		items = items[:max]
	}
	out := make([]string, len(items))
	for i, s := range items {
		out[i] = f(s)
	}
	return list(out)
}

// money formats an amount with thousands separators and its currency.
func money(amount float64, currency string) string {
	whole := math.Floor(amount)
	cents := int(math.Round((amount - whole) * 100))
	if cents == 100 {
		whole++
		cents = 0
	}
	s := strconv.FormatFloat(whole, 'f', 0, 64)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if cents > 0 {
		fmt.Fprintf(&b, ".%02d", cents)
	}
	return b.String() + " " + currency
}

// coarse rounds an amount up to the next step of the 1-2.5-5 series: the
// public bucket a range-level disclosure shows instead of the threshold.
func coarse(amount float64) float64 {
	if amount <= 0 {
		return 0
	}
	exp := math.Pow(10, math.Floor(math.Log10(amount)))
	for _, step := range []float64{1, 2.5, 5, 10} {
		if v := step * exp; v >= amount-1e-9 {
			return v
		}
	}
	return 10 * exp
}

// exactUp rounds an amount up to whole cents, so a suggested budget never
// falls short of the minimum through rounding.
func exactUp(amount float64) float64 { return math.Ceil(amount*100-1e-9) / 100 }

// monthPart names the part of the month a date falls in.
func monthPart(d adcp.Date) string {
	t := d.Time()
	part := "mid"
	switch {
	case t.Day() <= 10:
		part = "early"
	case t.Day() > 20:
		part = "late"
	}
	return fmt.Sprintf("%s %s %d", part, t.Month(), t.Year())
}

// leadBucket describes a lead time coarsely.
func leadBucket(days int) string {
	switch {
	case days <= 3:
		return "a few days"
	case days <= 10:
		return "about a week"
	case days <= 20:
		return "about two weeks"
	case days <= 45:
		return "about a month"
	}
	return "more than a month"
}

func capitalise(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	r[0] = []rune(strings.ToUpper(string(r[0])))[0]
	return string(r)
}

// ChannelLabels returns the words the composer uses for channels.
func ChannelLabels() map[string]string { return maps.Clone(channelLabels) }

// FormatLabels returns the words the composer uses for format kinds.
func FormatLabels() map[string]string { return maps.Clone(formatLabels) }
