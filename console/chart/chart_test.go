package chart

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"
)

const hostile = `<script>alert(1)</script>"onmouseover="alert(2)" & ]]>`

// wellFormed parses an SVG document and returns every attribute and all
// character data in it.
func wellFormed(t *testing.T, svg []byte) (attrs []xml.Attr, text string, elements []string) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(svg))
	var sb strings.Builder
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not well-formed XML: %v\n%s", err, svg)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			elements = append(elements, tok.Name.Local)
			attrs = append(attrs, tok.Attr...)
		case xml.CharData:
			sb.Write(tok)
		}
	}
	return attrs, sb.String(), elements
}

func TestHostileLabelsStayText(t *testing.T) {
	for _, test := range []struct {
		name string
		svg  []byte
	}{
		{"stacked", Stacked(hostile, hostile, []string{hostile, "2026-11-29"},
			[]Series{{Name: hostile, Color: `red" onload="x`, Values: []float64{1, 2}}}, hostile)},
		{"stacked empty", Stacked(hostile, hostile, nil, nil, hostile)},
		{"shares", Shares(hostile, hostile, []Part{{Name: hostile, Value: 3}, {Name: "b", Color: "url(#x)", Value: 1}}, hostile)},
		{"bars", Bars(hostile, hostile, []Group{{Label: hostile, Parts: []Part{{Name: hostile, Value: 2}}}}, hostile)},
		{"bars empty", Bars(hostile, hostile, nil, hostile)},
	} {
		t.Run(test.name, func(t *testing.T) {
			attrs, text, elements := wellFormed(t, test.svg)
			for _, e := range elements {
				switch e {
				case "svg", "title", "desc", "rect", "line", "text":
				default:
					t.Errorf("element <%s> is not one the charts draw", e)
				}
			}
			for _, a := range attrs {
				if strings.HasPrefix(strings.ToLower(a.Name.Local), "on") || strings.Contains(a.Value, "alert") ||
					strings.Contains(a.Value, "url(") || strings.Contains(a.Name.Local, "href") {
					t.Errorf("attribute %s=%q carries caller text", a.Name.Local, a.Value)
				}
			}
			if !strings.Contains(text, hostile) {
				t.Errorf("the hostile label does not survive as text; text is %q", text)
			}
			if bytes.Contains(test.svg, []byte("<script")) {
				t.Errorf("the SVG contains a script element:\n%s", test.svg)
			}
		})
	}
}

func TestNiceCeil(t *testing.T) {
	for _, test := range []struct{ in, want float64 }{{0, 1}, {1, 1}, {3, 5}, {7, 10}, {11, 20}, {240, 500}, {1000, 1000}} {
		if got := niceCeil(test.in); got != test.want {
			t.Errorf("niceCeil(%v) = %v, want %v", test.in, got, test.want)
		}
	}
}

func TestStackedDrawsEveryValue(t *testing.T) {
	svg := Stacked("Declines", "per day", []string{"d1", "d2", "d3"}, []Series{
		{Name: "budget_below_minimum", Values: []float64{1, 0, 2}},
		{Name: "channel_not_offered", Values: []float64{0, 0, 1}},
	}, "none")
	_, _, elements := wellFormed(t, svg)
	rects := 0
	for _, e := range elements {
		if e == "rect" {
			rects++
		}
	}
	// Background, three non-zero bands, two legend swatches.
	if rects != 6 {
		t.Errorf("Stacked drew %d rects, want 6:\n%s", rects, svg)
	}
	if !bytes.Contains(svg, []byte("budget_below_minimum (3)")) {
		t.Errorf("the legend does not total the series:\n%s", svg)
	}
}

func TestSharesPercentages(t *testing.T) {
	svg := Shares("Arms", "share", []Part{{Name: "completed", Value: 3}, {Name: "rejected", Value: 1}}, "none")
	for _, want := range []string{"3 (75%)", "1 (25%)"} {
		if !bytes.Contains(svg, []byte(want)) {
			t.Errorf("Shares lacks %q:\n%s", want, svg)
		}
	}
}
