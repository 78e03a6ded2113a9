// Package chart renders the console's charts as self-contained SVG
// documents on the server, so that the browser needs no chart library.
//
// Every piece of text that reaches a document (titles, labels, legend
// entries) is XML-escaped here, because labels may come from data a buyer
// or a publisher typed. It must never emit scripts, event attributes,
// style sheets, links or references to anything outside the document, and
// it must never put a caller's string into an attribute: attributes hold
// only numbers and colours this package chose or checked.
package chart

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"math"
	"regexp"
	"strconv"
)

// Series is one named, coloured series of values.
type Series struct {
	Name string
	// Color is a #rrggbb colour; anything else gets one from the palette.
	Color  string
	Values []float64
}

// Part is one labelled value.
type Part struct {
	Name  string
	Color string
	Value float64
}

// Group is a labelled set of parts drawn under one heading.
type Group struct {
	Label string
	Parts []Part
}

// palette is the colours given, in order, to series and parts without a
// valid colour of their own. It is chosen to stay distinguishable for the
// common kinds of colour blindness.
var palette = []string{"#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#f0e442", "#999999"}

var colorRE = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

func colorOf(c string, i int) string {
	if colorRE.MatchString(c) {
		return c
	}
	return Color(i)
}

const (
	// Widths are in CSS pixels: the wide time series, and the bar charts
	// that sit two to a row.
	wideWidth = 1200
	barWidth  = 600
	fontSize  = 12
	font      = "system-ui, -apple-system, Segoe UI, Roboto, sans-serif"
)

// doc accumulates one SVG document.
type doc struct {
	b     bytes.Buffer
	width float64
}

func (d *doc) printf(format string, args ...any) { fmt.Fprintf(&d.b, format, args...) }

// text writes s as escaped character data.
func (d *doc) text(s string) { _ = xml.EscapeText(&d.b, []byte(s)) }

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func (d *doc) open(width int, title, desc string, height int) {
	d.width = float64(width)
	d.printf(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-labelledby="chart-title chart-desc" font-family="%s" font-size="%d">`,
		width, height, width, height, font, fontSize)
	d.printf(`<title id="chart-title">`)
	d.text(title)
	d.printf(`</title><desc id="chart-desc">`)
	d.text(desc)
	d.printf(`</desc><rect width="%d" height="%d" fill="#ffffff"/>`, width, height)
	d.label(16, 24, "start", "#1b1f24", 15, true, title)
}

func (d *doc) close() []byte {
	d.printf(`</svg>`)
	return d.b.Bytes()
}

// label writes a text element; s is escaped.
func (d *doc) label(x, y float64, anchor, fill string, size int, bold bool, s string) {
	weight := "normal"
	if bold {
		weight = "600"
	}
	d.printf(`<text x="%s" y="%s" text-anchor="%s" fill="%s" font-size="%d" font-weight="%s">`, num(x), num(y), anchor, fill, size, weight)
	d.text(s)
	d.printf(`</text>`)
}

// empty writes the message shown when there is nothing to draw.
func (d *doc) empty(msg string, height int) {
	d.label(d.width/2, float64(height)/2+4, "middle", "#57606a", 13, false, msg)
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten, so that axis
// ticks fall on round numbers.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

// Stacked draws one stacked bar per category (a day, say), one band per
// series, with a legend. Categories and series names are escaped.
func Stacked(title, desc string, categories []string, series []Series, emptyMsg string) []byte {
	const (
		height              = 340
		left, right         = 48.0, 16.0
		top, bottom, legend = 44.0, 40.0, 22.0
	)
	var d doc
	d.open(wideWidth, title, desc, height)
	totals := make([]float64, len(categories))
	max := 0.0
	for i := range categories {
		for _, s := range series {
			if i < len(s.Values) && s.Values[i] > 0 {
				totals[i] += s.Values[i]
			}
		}
		max = math.Max(max, totals[i])
	}
	if len(categories) == 0 || max == 0 {
		d.empty(emptyMsg, height)
		return d.close()
	}
	plotW := d.width - left - right
	plotH := height - top - bottom - legend
	// The values are counts, so ticks are whole numbers on a round step.
	step := math.Max(1, niceCeil(max/4))
	yMax := step * math.Ceil(max/step)
	// Horizontal grid lines and the y axis labels.
	for i := 0; float64(i)*step <= yMax; i++ {
		v := float64(i) * step
		y := top + plotH - plotH*v/yMax
		d.printf(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#d0d7de" stroke-width="1"/>`, num(left), num(y), num(left+plotW), num(y))
		d.label(left-6, y+4, "end", "#57606a", 11, false, strconv.FormatFloat(v, 'f', -1, 64))
	}
	slot := plotW / float64(len(categories))
	barW := math.Max(1, slot*0.7)
	for i := range categories {
		x := left + slot*float64(i) + (slot-barW)/2
		y := top + plotH
		for si, s := range series {
			if i >= len(s.Values) || s.Values[i] <= 0 {
				continue
			}
			h := plotH * s.Values[i] / yMax
			y -= h
			d.printf(`<rect x="%s" y="%s" width="%s" height="%s" fill="%s"><title>`, num(x), num(y), num(barW), num(h), colorOf(s.Color, si))
			d.text(categories[i] + ": " + s.Name + " " + num(s.Values[i]))
			d.printf(`</title></rect>`)
		}
	}
	// At most about eight category labels fit under the axis.
	every := int(math.Ceil(float64(len(categories)) / 8))
	for i := 0; i < len(categories); i += every {
		d.label(left+slot*float64(i)+slot/2, top+plotH+16, "middle", "#57606a", 11, false, categories[i])
	}
	d.printf(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#57606a" stroke-width="1"/>`, num(left), num(top+plotH), num(left+plotW), num(top+plotH))
	// Legend, wrapping onto more rows when needed would crowd the chart;
	// entries are short slugs, so one row suffices in practice.
	x := left
	ly := float64(height) - 10
	for si, s := range series {
		total := 0.0
		for _, v := range s.Values {
			total += v
		}
		if total == 0 {
			continue
		}
		d.printf(`<rect x="%s" y="%s" width="10" height="10" fill="%s"/>`, num(x), num(ly-9), colorOf(s.Color, si))
		entry := s.Name + " (" + num(total) + ")"
		d.label(x+14, ly, "start", "#1b1f24", 11, false, entry)
		x += 14 + float64(len([]rune(entry)))*6.2 + 14
	}
	return d.close()
}

// Shares draws one horizontal bar per part, sized by its share of the
// total, labelled with its count and percentage.
func Shares(title, desc string, parts []Part, emptyMsg string) []byte {
	return bars(title, desc, []Group{{Parts: parts}}, emptyMsg, true)
}

// Bars draws groups of horizontal bars on one scale, each labelled with
// its value.
func Bars(title, desc string, groups []Group, emptyMsg string) []byte {
	return bars(title, desc, groups, emptyMsg, false)
}

func bars(title, desc string, groups []Group, emptyMsg string, share bool) []byte {
	const (
		rowH, labelW, top = 26.0, 190.0, 44.0
		valueW            = 90.0
	)
	rows := 0
	total, max := 0.0, 0.0
	for _, g := range groups {
		if g.Label != "" {
			rows++
		}
		for _, p := range g.Parts {
			rows++
			total += math.Max(0, p.Value)
			max = math.Max(max, p.Value)
		}
	}
	height := int(top + float64(rows)*rowH + 16)
	if height < 140 {
		height = 140
	}
	var d doc
	d.open(barWidth, title, desc, height)
	if max <= 0 {
		d.empty(emptyMsg, height)
		return d.close()
	}
	scale := max
	if share {
		scale = total
	}
	plotW := d.width - 16 - labelW - valueW
	y := top
	i := 0
	for _, g := range groups {
		if g.Label != "" {
			d.label(16, y+17, "start", "#1b1f24", 12, true, g.Label)
			y += rowH
		}
		for _, p := range g.Parts {
			v := math.Max(0, p.Value)
			d.label(labelW, y+17, "end", "#1b1f24", 12, false, p.Name)
			w := plotW * v / scale
			d.printf(`<rect x="%s" y="%s" width="%s" height="18" fill="#eaeef2"/>`, num(labelW+8), num(y+4), num(plotW))
			d.printf(`<rect x="%s" y="%s" width="%s" height="18" fill="%s"/>`, num(labelW+8), num(y+4), num(w), colorOf(p.Color, i))
			value := num(v)
			if share {
				value += fmt.Sprintf(" (%.0f%%)", 100*v/scale)
			}
			d.label(labelW+8+plotW+8, y+17, "start", "#1b1f24", 12, false, value)
			y += rowH
			i++
		}
	}
	return d.close()
}

// Color is the palette's colour for the i-th series or part: the colours
// stay distinguishable for the common kinds of colour blindness.
func Color(i int) string { return palette[i%len(palette)] }
