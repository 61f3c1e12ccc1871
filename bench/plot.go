package main

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"strings"
	"unicode"
)

// The chart: one panel per kind of figure, each a grouped bar chart drawn
// pixel by pixel with the standard library.
const (
	plotWidth       = 1400
	plotPanelHeight = 320
	plotMarginLeft  = 90
	plotMarginRight = 20
	plotTitleHeight = 60
	plotLabelHeight = 40
	textScale       = 2
)

var (
	colorBackground = color.RGBA{255, 255, 255, 255}
	colorAxis       = color.RGBA{60, 60, 60, 255}
	colorGrid       = color.RGBA{225, 225, 225, 255}
	colorText       = color.RGBA{20, 20, 20, 255}
	// seriesColors are the limit, then each target in order.
	colorLimit   = color.RGBA{170, 170, 170, 255}
	seriesColors = []color.RGBA{{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}}
)

// panel is one bar chart: groups of bars, one per series.
type panel struct {
	title  string
	log    bool
	series []string
	colors []color.RGBA
	groups []barGroup
}

type barGroup struct {
	label  string
	values []float64 // NaN for a missing bar
}

// plotPoint names a figure in the results: a workload's metric, shown under
// label.
type plotPoint struct{ workload, key, label string }

func (rep *report) panels() []panel {
	limitOf := map[string]string{}
	for _, w := range rep.workload {
		for _, m := range w.metrics {
			limitOf[w.id+"/"+m.key] = m.limit
		}
	}
	var targetNamesInOrder []string
	for _, t := range rep.targets {
		targetNamesInOrder = append(targetNamesInOrder, targetNames[t])
	}
	build := func(title string, log, withLimit bool, limitName string, points []plotPoint) panel {
		p := panel{title: title, log: log}
		if withLimit {
			p.series = append(p.series, limitName)
			p.colors = append(p.colors, colorLimit)
		}
		p.series = append(p.series, targetNamesInOrder...)
		p.colors = append(p.colors, seriesColors[:len(rep.targets)]...)
		for _, pt := range points {
			rw, ok := rep.findRow(pt.workload, pt.key)
			if !ok {
				continue
			}
			g := barGroup{label: pt.label}
			if withLimit {
				v := math.NaN()
				if rw.limit.n > 0 {
					v = rw.limit.median
				}
				g.values = append(g.values, v)
			}
			for _, s := range rw.targets {
				v := math.NaN()
				if s.n > 0 {
					v = s.median
				}
				g.values = append(g.values, v)
			}
			p.groups = append(p.groups, g)
		}
		return p
	}
	throughput := build("throughput, MB/s (limit: loopback TCP; sendfile for raw fetch)", false, true, "machine limit", []plotPoint{
		{"a", keyMBps, "a: 1 KiB acks=1"}, {"b", keyMBps, "b: acks=all"}, {"c", keyMBps, "c: 100 B"},
		{"d", "raw_mbps", "d: raw fetch"}, {"d", "client_mbps", "d: consumer"}, {"g", keyMBps, "g: overload"},
	})
	ack := build("produce acknowledgement latency p99, ms (log scale)", true, false, "", []plotPoint{
		{"a", keyAckP99, "a: 1 KiB acks=1"}, {"b", keyAckP99, "b: acks=all"}, {"c", keyAckP99, "c: 100 B"},
		{"f", keyAckP99, "f: many partitions"}, {"g", keyAckP99, "g: overload"},
	})
	e2e := build(fmt.Sprintf("(e) end-to-end latency at %g MB/s, ms (log scale; limit: loopback round trip)", rep.opts.e2eMBps), true, true, "machine limit", []plotPoint{
		{"e", "e2e_p50_ms", "p50"}, {"e", "e2e_p99_ms", "p99"}, {"e", "e2e_p999_ms", "p99.9"}, {"e", "e2e_max_ms", "max"},
	})
	var out []panel
	for _, p := range []panel{throughput, ack, e2e} {
		if len(p.groups) > 0 {
			out = append(out, p)
		}
	}
	return out
}

func (rep *report) findRow(workloadID, key string) (row, bool) {
	for _, rw := range rep.rows {
		if rw.workload == workloadID && rw.metric.key == key {
			return rw, true
		}
	}
	return row{}, false
}

// plot renders the panels as a PNG.
func (rep *report) plot() []byte {
	panels := rep.panels()
	height := plotTitleHeight + max(len(panels), 1)*(plotPanelHeight+plotLabelHeight)
	c := &canvas{img: image.NewRGBA(image.Rect(0, 0, plotWidth, height))}
	c.fill(0, 0, plotWidth, height, colorBackground)
	c.text(plotMarginLeft, 12, "SAMSA BENCHMARKS "+rep.when.UTC().Format("2006-01-02")+
		fmt.Sprintf(" - MEDIAN OF %d ROUNDS", rep.opts.runs), colorText)
	// Legend, from the first panel with a limit series.
	x := plotMarginLeft
	legend := []string{"machine limit"}
	colors := []color.RGBA{colorLimit}
	for i, t := range rep.targets {
		legend = append(legend, targetNames[t])
		colors = append(colors, seriesColors[i])
	}
	for i, name := range legend {
		c.fill(x, 36, 14, 14, colors[i])
		c.text(x+20, 36, name, colorText)
		x += 20 + textWidth(name) + 30
	}
	y := plotTitleHeight
	for _, p := range panels {
		c.drawPanel(p, y)
		y += plotPanelHeight + plotLabelHeight
	}
	var buf bytes.Buffer
	_ = png.Encode(&buf, c.img)
	return buf.Bytes()
}

// canvas draws rectangles and text on an image.
type canvas struct{ img *image.RGBA }

func (c *canvas) fill(x, y, w, h int, col color.RGBA) {
	r := image.Rect(x, y, x+w, y+h).Intersect(c.img.Bounds())
	for py := r.Min.Y; py < r.Max.Y; py++ {
		for px := r.Min.X; px < r.Max.X; px++ {
			c.img.SetRGBA(px, py, col)
		}
	}
}

func textWidth(s string) int { return len([]rune(s)) * glyphAdvance * textScale }

// text draws s with its top-left corner at (x, y).
func (c *canvas) text(x, y int, s string, col color.RGBA) {
	for _, r := range s {
		glyph, ok := font5x7[unicode.ToUpper(r)]
		if ok {
			for gy, line := range glyph {
				for gx, bit := range line {
					if bit == '#' {
						c.fill(x+gx*textScale, y+gy*textScale, textScale, textScale, col)
					}
				}
			}
		}
		x += glyphAdvance * textScale
	}
}

// scale maps values to pixel heights in a panel.
type scale struct {
	log      bool
	low, top float64 // axis range (log10 of it when log)
	ticks    []float64
}

func newScale(values []float64, log bool) scale {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range values {
		if math.IsNaN(v) || (log && v <= 0) {
			continue
		}
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	if math.IsInf(hi, -1) {
		lo, hi = 0.1, 1
	}
	if log {
		low := math.Floor(math.Log10(lo))
		top := math.Ceil(math.Log10(hi))
		if top <= low {
			top = low + 1
		}
		s := scale{log: true, low: low, top: top}
		for e := low; e <= top; e++ {
			s.ticks = append(s.ticks, math.Pow(10, e))
		}
		return s
	}
	step := niceStep(hi / 5)
	top := math.Ceil(hi*1.1/step) * step
	s := scale{low: 0, top: top}
	for v := 0.0; v <= top+step/2; v += step {
		s.ticks = append(s.ticks, v)
	}
	return s
}

// niceStep rounds x up to 1, 2 or 5 times a power of ten.
func niceStep(x float64) float64 {
	if x <= 0 {
		return 1
	}
	power := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*power >= x {
			return m * power
		}
	}
	return 10 * power
}

// fraction is where v falls between the bottom (0) and top (1) of the axis.
func (s scale) fraction(v float64) float64 {
	if s.log {
		if v <= 0 {
			return 0
		}
		return (math.Log10(v) - s.low) / (s.top - s.low)
	}
	return (v - s.low) / (s.top - s.low)
}

func (c *canvas) drawPanel(p panel, top int) {
	c.text(plotMarginLeft, top+4, p.title, colorText)
	plotTop := top + 40
	plotBottom := top + plotPanelHeight
	plotLeft, plotRight := plotMarginLeft, plotWidth-plotMarginRight
	var all []float64
	for _, g := range p.groups {
		all = append(all, g.values...)
	}
	sc := newScale(all, p.log)
	height := float64(plotBottom - plotTop)
	for _, tick := range sc.ticks {
		y := plotBottom - int(sc.fraction(tick)*height)
		c.fill(plotLeft, y, plotRight-plotLeft, 1, colorGrid)
		label := shortNumber(tick)
		c.text(plotLeft-8-textWidth(label), y-7, label, colorText)
	}
	c.fill(plotLeft, plotTop, 1, plotBottom-plotTop, colorAxis)
	c.fill(plotLeft, plotBottom, plotRight-plotLeft, 1, colorAxis)
	groupWidth := (plotRight - plotLeft) / max(len(p.groups), 1)
	for gi, g := range p.groups {
		gx := plotLeft + gi*groupWidth
		barWidth := groupWidth * 8 / 10 / max(len(g.values), 1)
		for bi, v := range g.values {
			if math.IsNaN(v) {
				continue
			}
			f := math.Max(0, math.Min(1, sc.fraction(v)))
			h := int(f * height)
			x := gx + groupWidth/10 + bi*barWidth
			c.fill(x+1, plotBottom-h, barWidth-2, h, p.colors[bi])
			label := shortNumber(v)
			lx := x + (barWidth-textWidth(label))/2
			c.text(max(lx, x-10), plotBottom-h-18, label, colorText)
		}
		c.text(gx+(groupWidth-textWidth(g.label))/2, plotBottom+10, g.label, colorText)
	}
}

// shortNumber prints a figure in at most about five characters.
func shortNumber(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 10000:
		return fmt.Sprintf("%.0fk", v/1000)
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", v), ".0")
	case a >= 1:
		return strings.TrimSuffix(fmt.Sprintf("%.2f", v), ".00")
	case a == 0:
		return "0"
	}
	return fmt.Sprintf("%.3g", v)
}
