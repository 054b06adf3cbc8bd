// report.go holds the report subcommand: one self-contained HTML file with an inline SVG timeline per device.

package main

import (
	"fmt"
	"html"
	"io"
	"math"
	"math/bits"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/tracemem/tracemem"
)

// reportTimelinePoints is the default number of timeline points kept per
// device for the report: peak-preserving downsampling keeps the file small
// for any trace size while every peak stays exact.
const reportTimelinePoints = 2000

// Rows of the report's tables.
const (
	reportTopAllocations = 50
	reportTopNodes       = 30
)

func cmdReport(e *env, args []string) error {
	fs := e.newFlags("report")
	var out string
	points := boundedInt{v: reportTimelinePoints, min: 0}
	fs.StringVar(&out, "o", "", "output HTML file (- for stdout)")
	fs.Var(&points, "max-points", "timeline points kept per device; 0 keeps one per memory event (a big file for a big trace)")
	files, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if out == "" {
		return usagef("report: -o FILE is required")
	}
	if err := checkFiles("report", files, 1); err != nil {
		return err
	}
	if err := checkOutput(e, "report", out, files[0]); err != nil {
		return err
	}
	t, err := loadOne(e, files[0], reportLoad(points.v))
	if err != nil {
		return err
	}
	reportTrim(t, points.v)
	return writeOutput(e, out, func(w io.Writer) error { return writeReport(w, t) })
}

// categoryColors are the fill colours of the categories in the report.
var categoryColors = [tracemem.NumCategories]string{
	tracemem.CategoryOther:      "#a0a0a0",
	tracemem.CategoryParameter:  "#4e79a7",
	tracemem.CategoryActivation: "#f28e2b",
	tracemem.CategoryGradient:   "#59a14f",
	tracemem.CategoryOptimizer:  "#b07aa1",
}

const reportCSS = `body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;background:#fff}
h1{font-size:20px}h2{font-size:17px;margin-top:28px}
table{border-collapse:collapse;margin:8px 0}td,th{padding:3px 10px;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.path{font-family:ui-monospace,monospace;font-size:12px}
.meta{color:#555}.legend span{display:inline-block;margin-right:16px}
.legend i{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:-1px}
figure{margin:12px 0 24px}figcaption{font-weight:600;margin-bottom:4px}
svg text{font:11px system-ui,sans-serif;fill:#333}
svg text.label{fill:#d62728;paint-order:stroke;stroke:#fff;stroke-width:3px;stroke-linejoin:round}
h1,h2,p,figcaption,td{overflow-wrap:anywhere}td:not(.n){min-width:4em}
table.allocs td:nth-child(2),table.nodes td:nth-child(4){white-space:nowrap}`

// writeReport writes the HTML report of t: the timeline chart of each
// device first, then the summary, the devices, the top allocations at the
// peak and the nodes with the highest peak. The document is well-formed XML
// as well as HTML, needs no network access and no script.
func writeReport(w io.Writer, t *trace) error {
	var b strings.Builder
	p := t.profile
	s := &p.Summary
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<title>tracemem report: %s</title>\n<style>%s</style>\n</head>\n<body>\n", esc(t.name), reportCSS)
	fmt.Fprintf(&b, "<h1>Memory report: %s</h1>\n", esc(t.name))
	if r := t.run; r != nil {
		fmt.Fprintf(&b, "<p class=\"meta\">run %s (%s), entrypoint %s, main device %s</p>\n", esc(orDash(r.id)), esc(orDash(r.phase)), esc(orDash(r.entrypoint)), esc(orDash(r.device)))
	}
	b.WriteString("<p class=\"meta\">Sizes in 1024-based units (1 KiB = 1024 B, 1 MiB = 1024 KiB, 1 GiB = 1024 MiB, 1 TiB = 1024 GiB; the charts' axes go on to 1 PiB = 1024 TiB and 1 EiB = 1024 PiB); times in ms since the trace start. A span path is the span names from the root down, joined with \" &gt; \".</p>\n")

	b.WriteString("<h2>Memory timeline</h2>\n<p class=\"legend\">")
	for _, c := range tracemem.Categories {
		fmt.Fprintf(&b, "<span><i style=\"background:%s\"></i>%s</span>", categoryColors[c], c)
	}
	b.WriteString("<span><i style=\"background:#222;height:2px\"></i>live bytes</span>")
	if slices.ContainsFunc(p.ByDevice, capacityDrawn) { // else no chart has the line (from a user trial)
		b.WriteString("<span><i style=\"background:#d62728;height:2px\"></i>capacity</span>")
	}
	b.WriteString("</p>\n")
	if len(p.ByDevice) == 0 {
		fmt.Fprintf(&b, "<p>%s.</p>\n", esc("T"+strings.TrimPrefix(noMemoryEvents(t.run), "t")))
	}
	// The trace ends with its last memory event or span, whichever is
	// later: the last event is each device's last point, unless reportTrim
	// dropped it (--max-points 1) and noted its time.
	tEnd := t.memoryEndNs
	for i := range p.Timeline {
		tEnd = max(tEnd, p.Timeline[i].TimestampNs)
	}
	if t.tree != nil {
		tEnd = max(tEnd, t.tree.lastNs())
	}
	byDevice := pointsByDevice(p)
	for _, d := range devicesInOrder(p) {
		writeDeviceChart(&b, d, byDevice[d.Device], tEnd)
	}

	b.WriteString("<h2>Summary</h2>\n<table class=\"summary\">\n")
	row := func(k, v string) { fmt.Fprintf(&b, "<tr><th>%s</th><td>%s</td></tr>\n", esc(k), esc(v)) }
	if !hasMemory(p) {
		row("Peak", "none (no memory events)")
	} else {
		row("Peak", fmt.Sprintf("%s (%d %s) on %s at %s ms", formatBytes(s.PeakBytes), s.PeakBytes, plural(s.PeakBytes, "byte", "bytes"), orDash(s.PeakDevice), formatMs(s.PeakTimestampNs)))
		var cats []string
		for c, v := range s.PeakByCategory.All() {
			if v > 0 {
				cats = append(cats, fmt.Sprintf("%s %s", c, formatBytes(v)))
			}
		}
		if len(cats) == 0 { // a peak of 0 B
			cats = []string{"none"}
		}
		row("Peak by category", strings.Join(cats, ", "))
	}
	row("Events", events(s))
	row("Pre-existing", formatBytes(s.PreexistingBytes))
	row("Autograd-retained activations", formatBytes(s.AutogradRetainedBytes)+" (live just before the first memory event of a backward step)")
	row("Anomalies", anomalies(&p.Anomalies))
	for _, n := range allocatorNotes(t) {
		row(n[0], n[1])
	}
	b.WriteString("</table>\n")

	b.WriteString("<h2>Devices</h2>\n<table class=\"devices\">\n<tr><th>device</th><th class=\"n\">capacity</th><th class=\"n\">peak</th><th class=\"n\">peak at (ms)</th><th class=\"n\">allocs</th><th class=\"n\">frees</th></tr>\n")
	for _, d := range devicesInOrder(p) {
		capacity := "unknown"
		if d.CapacityBytes > 0 {
			capacity = formatBytes(d.CapacityBytes)
		}
		fmt.Fprintf(&b, "<tr><td>%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%d</td><td class=\"n\">%d</td></tr>\n",
			esc(orDash(d.Device)), capacity, formatBytes(d.PeakBytes), formatMs(d.PeakTimestampNs), d.AllocCount, d.FreeCount)
	}
	b.WriteString("</table>\n")

	if hasMemory(p) {
		n := min(reportTopAllocations, len(p.PeakBreakdown))
		fmt.Fprintf(&b, "<h2>Top %d %s at the peak (of %d live on %s)</h2>\n", n, plural(uint64(n), "allocation", "allocations"), len(p.PeakBreakdown), esc(orDash(s.PeakDevice)))
		b.WriteString("<table class=\"allocs\">\n<tr><th class=\"n\">bytes</th><th>category</th><th>dtype</th><th>shape</th><th>op</th><th>tensor</th><th>span path</th></tr>\n")
		for _, a := range p.PeakBreakdown[:n] {
			fmt.Fprintf(&b, "<tr><td class=\"n\">%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td class=\"path\">%s</td></tr>\n",
				formatBytes(a.Bytes), a.Category, esc(orDash(a.DType)), formatShape(a.Shape, a.DType), esc(orDash(opName(a.OpName))), esc(idCell(a.TensorID)), esc(t.tree.path(a.SpanID)))
		}
		b.WriteString("</table>\n")
	}

	ranked := rankNodes(t.nodes, sortPeak, reportTopNodes)
	fmt.Fprintf(&b, "<h2>Nodes with the highest peak (%d of %d)</h2>\n", len(ranked), len(t.nodes))
	b.WriteString("<p class=\"meta\">bytes: requested by the node (a span: its own ops); peak: most bytes live at once that its subtree allocated, summed over devices; residual: bytes its subtree allocated still live when it ended.</p>\n")
	b.WriteString("<table class=\"nodes\">\n<tr><th class=\"n\">peak</th><th class=\"n\">residual</th><th class=\"n\">bytes</th><th>kind</th><th>node</th><th>path</th></tr>\n")
	for _, n := range ranked {
		ref := t.tree.describeNode(n.key)
		fmt.Fprintf(&b, "<tr><td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td>%s</td><td>%s</td><td class=\"path\">%s</td></tr>\n",
			formatBytes(n.m.PeakBytes), formatBytes(n.m.ResidualBytes), formatBytes(n.m.Bytes), esc(ref.kind), esc(idCell(n.key)), esc(ref.path))
	}
	b.WriteString("</table>\n<p class=\"meta\">Made by tracemem.</p>\n</body>\n</html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// Chart geometry, in SVG user units.
const (
	chartW, chartH             = 1000.0, 300.0
	chartLeft, chartRight      = 70.0, 20.0
	chartTop, chartBottom      = 24.0, 36.0
	plotW                      = chartW - chartLeft - chartRight
	plotH                      = chartH - chartTop - chartBottom
	capacityOffChartMultiplier = 2 // a capacity above this many times the peak is not drawn; the caption gives it
	// tickCharW bounds the width of a character of a tick label (digits
	// and a point, in the 11px font of reportCSS): 6.1 to 7, by the font.
	tickCharW = 7.0
)

// capacityDrawn reports whether the chart of d draws its capacity line:
// when it is known and within capacityOffChartMultiplier × the peak (a
// product past 2⁶⁴ counts as 2⁶⁴: the library's peaks stay below 2⁶³, but
// d could come from elsewhere). A peak of 0 draws none, as the README says:
// any capacity is more than twice it.
func capacityDrawn(d tracemem.DeviceMemoryStats) bool {
	hi, limit := bits.Mul64(capacityOffChartMultiplier, d.PeakBytes)
	return d.CapacityBytes > 0 && (hi != 0 || d.CapacityBytes <= limit)
}

// pointsByDeviceCalls counts the calls of pointsByDevice, for a test that a
// report splits the timeline once, not once per device.
var pointsByDeviceCalls atomic.Int64

// pointsByDevice returns the points of p's timeline by device, each in
// timeline order, in two passes over the timeline (a count per device, then
// the points): a scan of the timeline per device took devices × points
// (80k devices of one point each: 42 s).
func pointsByDevice(p *tracemem.MemoryProfile) map[string][]*tracemem.TimelinePoint {
	pointsByDeviceCalls.Add(1)
	counts := make(map[string]int, len(p.ByDevice))
	for i := range p.Timeline {
		counts[p.Timeline[i].Device]++
	}
	// One backing array, a run of it per device.
	all := make([]*tracemem.TimelinePoint, len(p.Timeline))
	byDevice := make(map[string][]*tracemem.TimelinePoint, len(counts))
	for d, n := range counts {
		byDevice[d], all = all[:0:n], all[n:]
	}
	for i := range p.Timeline {
		pt := &p.Timeline[i]
		byDevice[pt.Device] = append(byDevice[pt.Device], pt)
	}
	return byDevice
}

// writeDeviceChart writes the figure of one device: the stacked area of its
// categories over time (step-wise: a point's value holds until the next
// point), the live bytes outline, the capacity line when known and within
// capacityOffChartMultiplier × the peak, and the device peak marked. The time
// axis runs from 0 to the first tick after tEnd (the trace's end: the last
// memory event or the latest span start or end, whichever is later). pts
// are the device's points in timeline order.
func writeDeviceChart(b *strings.Builder, d tracemem.DeviceMemoryStats, pts []*tracemem.TimelinePoint, tEnd uint64) {
	var present tracemem.CategorySet
	for _, pt := range pts {
		for c, v := range pt.ByCategory.All() {
			if v > 0 {
				present = present.With(c)
			}
		}
	}
	top := d.PeakBytes
	capDrawn := capacityDrawn(d)
	if capDrawn {
		top = max(top, d.CapacityBytes)
	}
	yAxis := niceAxis(top)
	tAxis := niceTimeAxis(tEnd)
	x := func(ns uint64) float64 { return chartLeft + plotW*float64(ns)/float64(tAxis.maxNs) }
	y := func(v uint64) float64 { return chartTop + plotH - plotH*float64(v)/yAxis.maxBytes }

	caption := fmt.Sprintf("%s: peak %s at %s ms", orDash(d.Device), formatBytes(d.PeakBytes), formatMs(d.PeakTimestampNs))
	switch {
	case d.CapacityBytes == 0:
		caption += ", capacity unknown"
	case capDrawn:
		caption += fmt.Sprintf(", capacity %s", formatBytes(d.CapacityBytes))
	default:
		caption += fmt.Sprintf(", capacity %s (above the chart)", formatBytes(d.CapacityBytes))
	}
	fmt.Fprintf(b, "<figure>\n<figcaption>%s</figcaption>\n", esc(caption))
	fmt.Fprintf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" height=\"%g\" viewBox=\"0 0 %g %g\" role=\"img\" data-device=\"%s\">\n<title>%s</title>\n",
		chartW, chartH, chartW, chartH, esc(orDash(d.Device)), esc("memory timeline of "+orDash(d.Device)))
	fmt.Fprintf(b, "<rect x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\" fill=\"#fafafa\" stroke=\"#ccc\"/>\n", chartLeft, chartTop, plotW, plotH)

	// Grid and axes.
	for _, tk := range yAxis.ticks {
		yy := y(tk.bytes)
		fmt.Fprintf(b, "<line x1=\"%g\" y1=\"%.1f\" x2=\"%g\" y2=\"%.1f\" stroke=\"#e4e4e4\"/><text x=\"%g\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
			chartLeft, yy, chartLeft+plotW, yy, chartLeft-6, yy+4, tk.label)
	}
	fmt.Fprintf(b, "<text x=\"14\" y=\"%g\" transform=\"rotate(-90 14 %g)\" text-anchor=\"middle\">%s</text>\n", chartTop+plotH/2, chartTop+plotH/2, yAxis.unit)
	for _, tk := range tAxis.ticks {
		xx := x(tk.ns)
		// A label centred on the last tick, at the plot's right edge, would
		// run past the SVG's edge (an hour's 4000000 did): from 6
		// characters on, at tickCharW each against the 20 units right of
		// the plot, it ends at its tick.
		anchor := "middle"
		if float64(len(tk.label))*tickCharW/2 > chartW-xx {
			anchor = "end"
		}
		fmt.Fprintf(b, "<line x1=\"%.1f\" y1=\"%g\" x2=\"%.1f\" y2=\"%g\" stroke=\"#999\"/><text x=\"%.1f\" y=\"%g\" text-anchor=\"%s\">%s</text>\n",
			xx, chartTop+plotH, xx, chartTop+plotH+5, xx, chartTop+plotH+18, anchor, tk.label)
	}
	fmt.Fprintf(b, "<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">time (ms)</text>\n", chartLeft+plotW/2, chartH-4)

	// Stacked areas, one path per category with bytes, bottom up in display order.
	if len(pts) > 0 {
		xEnd := x(tAxis.maxNs)
		lower := make([]uint64, len(pts))
		upper := make([]uint64, len(pts))
		for _, c := range tracemem.Categories {
			if !present.Has(c) {
				continue
			}
			for i, pt := range pts {
				upper[i] = addSat(lower[i], pt.ByCategory.Get(c))
			}
			fmt.Fprintf(b, "<path class=\"area\" data-category=\"%s\" fill=\"%s\" d=\"%s\"/>\n", c, categoryColors[c], stepArea(pts, lower, upper, x, y, xEnd))
			copy(lower, upper)
		}
		live := make([]uint64, len(pts))
		for i, pt := range pts {
			live[i] = pt.LiveBytes
		}
		fmt.Fprintf(b, "<path class=\"live\" fill=\"none\" stroke=\"#222\" stroke-width=\"1\" d=\"%s\"/>\n", stepLine(pts, live, x, y, xEnd))
	}
	// The labels of the capacity and the peak, placed off the lines and
	// each other (see placePeakLabel and placeCapacityLabel).
	var peak, capLabel chartLabel
	px, py := x(d.PeakTimestampNs), y(d.PeakBytes)
	capY := math.NaN()
	if capDrawn {
		capY = y(d.CapacityBytes)
	}
	if len(pts) > 0 {
		peak = placePeakLabel(fmt.Sprintf("peak %s at %s ms", formatBytes(d.PeakBytes), formatMs(d.PeakTimestampNs)), px, py, capY)
	}
	if capDrawn {
		liveAt := func(x0, x1 float64) (top, bottom float64, ok bool) { return stepLineSpan(pts, x, y, x0, x1) }
		capLabel = placeCapacityLabel("capacity "+formatBytes(d.CapacityBytes), capY, liveAt, peak, len(pts) > 0, px, py)
		fmt.Fprintf(b, "<line class=\"capacity\" x1=\"%g\" y1=\"%.1f\" x2=\"%g\" y2=\"%.1f\" stroke=\"#d62728\" stroke-dasharray=\"6 4\"/><text class=\"label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" fill=\"#d62728\">%s</text>\n",
			chartLeft, capY, chartLeft+plotW, capY, capLabel.x, capLabel.y, capLabel.anchor, capLabel.text)
	}
	if len(pts) > 0 {
		fmt.Fprintf(b, "<g class=\"peak\"><line x1=\"%.1f\" y1=\"%g\" x2=\"%.1f\" y2=\"%g\" stroke=\"#d62728\" stroke-dasharray=\"2 3\"/><circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"#d62728\"><title>%s</title></circle><text class=\"label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" fill=\"#d62728\">%s</text></g>\n",
			px, chartTop, px, chartTop+plotH, px, py, esc(caption), peak.x, peak.y, peak.anchor, peak.text)
	}
	b.WriteString("</svg>\n</figure>\n")
}

// Labels in a chart: the box a label's text takes is estimated at
// tickCharW a character, labelAscent above its baseline and labelDescent
// below, with labelHalo around it: the white outline drawn behind the text
// (reportCSS), which keeps a label legible over a line it cannot avoid.
const (
	labelAscent, labelDescent = 9.0, 3.0
	labelHalo                 = 1.5
	peakLabelGap              = 8.0 // from the peak (its dot has a radius of 4) to the label's baseline
	capLabelGap               = 4.0 // from the capacity line to the label's text
)

// chartLabel is a label placed in a chart.
type chartLabel struct {
	x, y   float64 // the anchor and the baseline
	anchor string  // "start" or "end": the end of the text at x
	text   string  // no markup: only the report's own words and numbers
}

// labelBox is a rectangle in a chart's user units, y down.
type labelBox struct{ x0, y0, x1, y1 float64 }

// box returns the rectangle l's text and halo take.
func (l chartLabel) box() labelBox {
	w := tickCharW * float64(utf8.RuneCountInString(l.text))
	x0 := l.x
	if l.anchor == "end" {
		x0 -= w
	}
	return labelBox{x0 - labelHalo, l.y - labelAscent - labelHalo, x0 + w + labelHalo, l.y + labelDescent + labelHalo}
}

func (a labelBox) overlaps(b labelBox) bool {
	return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1
}

// spansY reports whether a horizontal line at y crosses a.
func (a labelBox) spansY(y float64) bool { return a.y0 <= y && y <= a.y1 }

// inside reports whether a lies within the SVG, above bottom.
func (a labelBox) inside(bottom float64) bool {
	return a.x0 >= 0 && a.x1 <= chartW && a.y0 >= 0 && a.y1 <= bottom
}

// placePeakLabel places the label of the peak at (px, py): 8 above the
// peak, where no part of the live line can be (nothing is higher than the
// peak; the margin above the plot takes a peak at the top of the axis),
// right of the peak unless it is in the right 30% of the plot or the label
// would leave the SVG there, and above the capacity line (at capY, NaN when
// none) when that would cross it, a capacity just above the peak.
func placePeakLabel(text string, px, py, capY float64) chartLabel {
	first := chartLabel{x: px + 6, y: py - peakLabelGap, anchor: "start", text: text}
	second := chartLabel{x: px - 6, y: py - peakLabelGap, anchor: "end", text: text}
	if px > chartLeft+plotW*0.7 {
		first, second = second, first
	}
	l := first
	if !first.box().inside(chartH) && second.box().inside(chartH) {
		l = second
	}
	if l.box().spansY(capY) {
		l.y = capY - peakLabelGap
	}
	return l
}

// placeCapacityLabel places the label of the capacity line at capY: the
// first of above its right end, above its left end, below its right end
// and below its left end that stays in the SVG above the plot's bottom
// (the time axis's labels are below) and crosses neither the live line
// (liveAt gives its top and bottom over a range of x) nor the peak's label,
// dot or line (when hasPeak); when none does, the one that does the least
// harm, by the weights below (text over text is the worst). A capacity at
// or above the peak always has such a place: the live line keeps below it,
// and the peak's label, on one side of the peak, leaves one end free.
func placeCapacityLabel(text string, capY float64, liveAt func(x0, x1 float64) (top, bottom float64, ok bool), peak chartLabel, hasPeak bool, px, py float64) chartLabel {
	above, below := capY-capLabelGap, capY+capLabelGap+labelAscent
	right, left := chartLeft+plotW-4, chartLeft+4
	var best chartLabel
	bestCost := math.MaxInt
	for _, l := range []chartLabel{
		{x: right, y: above, anchor: "end", text: text},
		{x: left, y: above, anchor: "start", text: text},
		{x: right, y: below, anchor: "end", text: text},
		{x: left, y: below, anchor: "start", text: text},
	} {
		bx := l.box()
		cost := 0
		if !bx.inside(chartTop + plotH) {
			cost += 8
		}
		if hasPeak && bx.overlaps(peak.box()) {
			cost += 4
		}
		if top, bottom, ok := liveAt(bx.x0, bx.x1); ok && top <= bx.y1 && bottom >= bx.y0 {
			cost += 2
		}
		if hasPeak && (bx.overlaps(labelBox{px, chartTop, px, chartTop + plotH}) || bx.overlaps(labelBox{px - 4, py - 4, px + 4, py + 4})) {
			cost++
		}
		if cost < bestCost {
			best, bestCost = l, cost
		}
		if cost == 0 {
			break
		}
	}
	return best
}

// stepLineSpan returns the top and bottom y of the step line of the live
// bytes of pts (held to the axis end) over x0 to x1, and false when the
// line has no part there (it starts at the first point).
func stepLineSpan(pts []*tracemem.TimelinePoint, x func(uint64) float64, y func(uint64) float64, x0, x1 float64) (top, bottom float64, ok bool) {
	if len(pts) == 0 || x1 < x(pts[0].TimestampNs) {
		return 0, 0, false
	}
	// The point whose step reaches x0 (the last before it), then every
	// point up to x1; the points are in time order.
	i := max(sort.Search(len(pts), func(i int) bool { return x(pts[i].TimestampNs) >= x0 })-1, 0)
	top, bottom = math.Inf(1), math.Inf(-1)
	for ; i < len(pts) && x(pts[i].TimestampNs) <= x1; i++ {
		yy := y(pts[i].LiveBytes)
		top, bottom = min(top, yy), max(bottom, yy)
	}
	return top, bottom, true
}

// stepArea returns the path of the band between lower and upper, drawn as
// steps from the first point to xEnd.
func stepArea(pts []*tracemem.TimelinePoint, lower, upper []uint64, x func(uint64) float64, y func(uint64) float64, xEnd float64) string {
	var b strings.Builder
	n := len(pts)
	fmt.Fprintf(&b, "M%.1f %.1f", x(pts[0].TimestampNs), y(upper[0]))
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "H%.1fV%.1f", x(pts[i].TimestampNs), y(upper[i]))
	}
	fmt.Fprintf(&b, "H%.1fV%.1f", xEnd, y(lower[n-1]))
	for i := n - 1; i >= 1; i-- {
		fmt.Fprintf(&b, "H%.1fV%.1f", x(pts[i].TimestampNs), y(lower[i-1]))
	}
	fmt.Fprintf(&b, "H%.1fZ", x(pts[0].TimestampNs))
	return b.String()
}

// stepLine returns the path of values drawn as steps from the first point to
// xEnd.
func stepLine(pts []*tracemem.TimelinePoint, v []uint64, x func(uint64) float64, y func(uint64) float64, xEnd float64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "M%.1f %.1f", x(pts[0].TimestampNs), y(v[0]))
	for i := 1; i < len(pts); i++ {
		fmt.Fprintf(&b, "H%.1fV%.1f", x(pts[i].TimestampNs), y(v[i]))
	}
	fmt.Fprintf(&b, "H%.1f", xEnd)
	return b.String()
}

// axisTick is one labelled tick.
type axisTick struct {
	bytes uint64
	ns    uint64
	label string
}

// byteAxis is the bytes axis of a chart: from 0 to maxBytes, labelled in
// the largest of B, KiB, MiB, GiB, TiB, PiB and EiB that its top reaches.
type byteAxis struct {
	maxBytes float64
	unit     string
	ticks    []axisTick
}

// niceAxis returns a bytes axis covering top (1 MiB when 0) with 4 to 6
// ticks at 1, 2 or 5 times a power of ten of the unit (whole bytes in B, so
// a top of 1 B has two, 0 and 1, and of 2 B three). A top less than a
// billionth above a tick ends the axis at that tick: the difference (3 B
// over 3 GiB) cannot be drawn, and a step more would squash the chart.
// The unit is the largest the top reaches, up to EiB (2⁶⁴ B is 16 EiB), so
// that a tick label has at most 4 characters ("1500", "0.2"; from a check
// of the report: at GiB, a top near 2⁶³ B gave 10 digits, cut at the
// chart's edge).
func niceAxis(top uint64) byteAxis {
	if top == 0 {
		top = mib // an empty device: a 1 MiB axis
	}
	unit, name := 1.0, "B"
	for _, u := range []struct {
		bytes float64
		name  string
	}{{kib, "KiB"}, {mib, "MiB"}, {gib, "GiB"}, {tib, "TiB"}, {pib, "PiB"}, {eib, "EiB"}} {
		if float64(top) >= u.bytes {
			unit, name = u.bytes, u.name
		}
	}
	topU := float64(top) / unit
	step := niceStep(topU / 5)
	if name == "B" {
		step = max(step, 1) // no fraction of a byte (from a user trial: 0.00004 MiB)
	}
	// The tolerance is niceStep's, relative to top: with a step at least
	// topU/5 within it, n is at most 5.
	n := math.Ceil(topU / step * (1 - 1e-9))
	ax := byteAxis{maxBytes: n * step * unit, unit: name}
	dec := decimals(step)
	for k := 0.0; k <= n+1e-9 && k*step*unit < maxUint64Float; k++ { // none past 2⁶⁴ B (from a review)
		ax.ticks = append(ax.ticks, axisTick{bytes: uint64(math.Round(k * step * unit)), label: fmt.Sprintf("%.*f", dec, k*step)})
	}
	return ax
}

// timeAxis is the time axis of a chart, from 0 to maxNs, labelled in ms.
type timeAxis struct {
	maxNs uint64
	ticks []axisTick
}

// niceTimeAxis returns a time axis from 0 to the first tick after end, with
// ticks at 1, 2 or 5 times a power of ten of a millisecond: the state after
// the last point, which holds until the trace ends, gets some width (from a
// user trial: a trace whose peak is its last event showed it as a line).
//
// Steps are whole ns. An axis past 2⁶⁴ ns ends at the largest time, without
// the ticks beyond it.
func niceTimeAxis(end uint64) timeAxis {
	endMs := float64(end) / 1e6
	step := max(niceStep(endMs/8), 1e-6)
	dec := decimals(step)
	n := math.Floor(endMs/step+1e-9) + 1
	ax := timeAxis{maxNs: satUint64(n * step * 1e6)}
	for k := 0.0; k <= n && k*step*1e6 < maxUint64Float; k++ {
		ax.ticks = append(ax.ticks, axisTick{ns: uint64(math.Round(k * step * 1e6)), label: fmt.Sprintf("%.*f", dec, k*step)})
	}
	return ax
}

// maxUint64Float is 2⁶⁴, the first float64 beyond the uint64 range.
const maxUint64Float = 1 << 64

// satUint64 returns v rounded, as a uint64, saturated at its largest value:
// a float64 conversion out of range is implementation-dependent (2⁶³ on
// amd64).
func satUint64(v float64) uint64 {
	if v = math.Round(v); v >= maxUint64Float {
		return math.MaxUint64
	}
	return uint64(v)
}

// niceStep returns the smallest of 1, 2 or 5 × 10^k that is ≥ raw, or
// within a billionth below it (so float error in raw does not skip a step).
func niceStep(raw float64) float64 {
	if raw <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}

// decimals returns the decimals needed to print multiples of step.
func decimals(step float64) int {
	return max(0, int(-math.Floor(math.Log10(step)+1e-9)))
}

// esc escapes text for HTML and XML. What printable escapes is shown as a Go
// escape, as in the text output: XML has no way to write NUL and most other
// control characters, even as character references.
func esc(s string) string { return html.EscapeString(printable(s)) }

// reportLoad is what report needs of a trace, keeping points timeline
// points per device (0: all): node metrics and op names too, for its node
// table. For 1 point it keeps 2, each device's last point besides its
// highest, so that the trace's last memory event is known; reportTrim then
// drops the last.
func reportLoad(points int) loadOptions {
	if points == 1 {
		points = 2
	}
	return loadOptions{opts: tracemem.Options{MaxTimelinePoints: points}, wantNodes: true, wantOps: true}
}

// reportTrim sets t.memoryEndNs to the time of the trace's last memory
// event, the latest of the points reportLoad(points) kept (each device
// keeps its last one), and for points 1 keeps each device's highest point
// alone: the library's downsampling to 1 point keeps the first of the
// highest, and to 2 the first of the highest before the last and the last,
// so that is the first of its two points unless the last is higher. No
// more than a point per device is held besides the timeline, and the
// trace is not read again.
func reportTrim(t *trace, points int) {
	p := t.profile
	for i := range p.Timeline {
		t.memoryEndNs = max(t.memoryEndNs, p.Timeline[i].TimestampNs)
	}
	if points != 1 {
		return
	}
	keep := make(map[string]int, len(p.ByDevice)) // index of the point each device keeps
	for i := range p.Timeline {
		pt := &p.Timeline[i]
		if k, ok := keep[pt.Device]; !ok || pt.LiveBytes > p.Timeline[k].LiveBytes {
			keep[pt.Device] = i
		}
	}
	n := 0
	for i := range p.Timeline {
		if keep[p.Timeline[i].Device] == i {
			p.Timeline[n] = p.Timeline[i]
			n++
		}
	}
	clear(p.Timeline[n:])
	p.Timeline = p.Timeline[:n]
}
