// report_test.go holds the tests of the HTML report: well-formed, self-contained, one chart per device, and rendered by a browser when one is installed.

package main

import (
	"bytes"
	"cmp"
	"encoding/xml"
	"errors"
	"fmt"
	"image/png"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tracemem/tracemem"
)

// xmlSummary is what checkWellFormed finds in a document.
type xmlSummary struct {
	svgs      []map[string]string // attributes of each <svg>
	pathsIn   []int               // <path> elements inside each <svg>
	areasIn   []int               // <path class="area"> inside each <svg>
	tables    int
	externals []string // what loads something: src, href, url(...) in attributes and style sheets, @import
}

// checkWellFormed parses doc as strict XML (every tag closed and balanced,
// entities valid) and collects its charts.
func checkWellFormed(t *testing.T, doc []byte) xmlSummary {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(doc))
	d.Strict = true
	var s xmlSummary
	depth, svgDepth := 0, -1
	inStyle := false
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("the report is not well-formed: %v", err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			depth++
			attrs := map[string]string{}
			for _, a := range el.Attr {
				attrs[a.Name.Local] = a.Value
				if a.Name.Local == "src" || a.Name.Local == "href" || strings.Contains(a.Value, "url(") {
					s.externals = append(s.externals, a.Name.Local+"="+a.Value)
				}
			}
			switch el.Name.Local {
			case "svg":
				svgDepth = depth
				s.svgs = append(s.svgs, attrs)
				s.pathsIn = append(s.pathsIn, 0)
				s.areasIn = append(s.areasIn, 0)
			case "path":
				if svgDepth > 0 {
					s.pathsIn[len(s.pathsIn)-1]++
					if attrs["class"] == "area" {
						s.areasIn[len(s.areasIn)-1]++
					}
				}
			case "table":
				s.tables++
			case "style":
				inStyle = true
			case "link", "script", "img", "iframe":
				s.externals = append(s.externals, "<"+el.Name.Local+">")
			}
		case xml.CharData:
			// A style sheet loads with url(...) and @import (the report's
			// needs neither; from a review: its text was not read).
			// CSS is not case-sensitive: URL( loads too.
			if css := bytes.ToLower(el); inStyle && (bytes.Contains(css, []byte("url(")) || bytes.Contains(css, []byte("@import"))) {
				s.externals = append(s.externals, "<style> "+string(el))
			}
		case xml.EndElement:
			if el.Name.Local == "svg" {
				svgDepth = -1
			}
			if el.Name.Local == "style" {
				inStyle = false
			}
			depth--
		}
	}
	if depth != 0 {
		t.Fatalf("unbalanced tags: depth %d at the end", depth)
	}
	return s
}

func writeReportFile(t *testing.T, args ...string) (string, []byte) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "report.html")
	r := runCmd(t, nil, append([]string{"report", "-o", out}, args...)...)
	if r.code != 0 || r.stdout != "" || r.stderr != "" {
		t.Fatalf("report: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return out, data
}

// TestReport checks the report of the sample: well-formed, no external
// resource, one chart per device with an area path per category present and
// the live outline, the peak marked, and the tables.
func TestReport(t *testing.T) {
	_, want := wantAnalysis(t, sample(t), tracemem.Options{MaxTimelinePoints: reportTimelinePoints})
	_, data := writeReportFile(t, sample(t))
	s := checkWellFormed(t, data)
	if len(s.externals) > 0 {
		t.Errorf("the report loads external resources: %v", s.externals)
	}
	if len(s.svgs) != len(want.ByDevice) {
		t.Fatalf("%d charts, want one per device: %d", len(s.svgs), len(want.ByDevice))
	}
	for i, d := range want.ByDevice {
		if s.svgs[i]["data-device"] != d.Device {
			t.Errorf("chart %d is for %q, want %q", i, s.svgs[i]["data-device"], d.Device)
		}
		if s.areasIn[i] == 0 || s.pathsIn[i] != s.areasIn[i]+1 {
			t.Errorf("chart of %s has %d paths, %d areas: want an area per category and the live outline", d.Device, s.pathsIn[i], s.areasIn[i])
		}
	}
	text := string(data)
	// The marker's label, inside the marker's group (the caption says the
	// same words; from a test audit, a report without markers passed).
	if !strings.Contains(text, ">peak "+formatBytes(want.Summary.PeakBytes)+" at "+formatMs(want.Summary.PeakTimestampNs)+" ms</text></g>") {
		t.Errorf("the global peak is not marked")
	}
	if s.tables != 4 {
		t.Errorf("%d tables, want summary, devices, top allocations and nodes", s.tables)
	}
	if top := want.PeakBreakdown[0]; !strings.Contains(text, ">"+esc(top.TensorID)+"<") {
		t.Errorf("the top allocation %s is not in the table", top.TensorID)
	}
}

// TestReportControlCharacters: names holding control characters (ESC, NUL:
// no character reference can put NUL in XML) are shown as Go escapes, as
// summary shows them, and the report stays well-formed.
func TestReportControlCharacters(t *testing.T) {
	data, err := os.ReadFile(sample(t))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(data), `"cuda:0"`, `"cu\u001bda\u0000:0"`)
	text = strings.ReplaceAll(text, `"name": "forward"`, `"name": "fo\u001b[31mrward\u0000"`)
	path := writeFile(t, t.TempDir(), "ctl.jsonl", []byte(text))
	_, report := writeReportFile(t, path)
	checkWellFormed(t, report)
	for _, want := range []string{`cu\x1bda\x00:0`, `fo\x1b[31mrward\x00`} {
		if !strings.Contains(string(report), want) {
			t.Errorf("the report does not show %s", want)
		}
	}
}

// TestReportStaysSmall checks that downsampling bounds the report: the
// same trace with many more points per device gives a larger file, with
// --max-points 50 a smaller one, and both stay well-formed.
func TestReportStaysSmall(t *testing.T) {
	_, small := writeReportFile(t, "--max-points", "50", sample(t))
	_, big := writeReportFile(t, "--max-points", "100000", sample(t))
	checkWellFormed(t, small)
	if len(small) >= len(big) {
		t.Errorf("report with 50 points is %d bytes, with all points %d: downsampling does not shrink it", len(small), len(big))
	}
	paths := regexp.MustCompile(`H[0-9.]+V`).FindAll(small, -1)
	if len(paths) > 2*50*tracemem.NumCategories*2 {
		t.Errorf("%d steps in the 50-point report", len(paths))
	}
}

// TestReportEscapesTraceText: every string the report takes from a trace
// (run fields, devices, span and op names, tensor ids, dtypes, node ids, the
// file name) is escaped (found by mutation: dropping the escape of the op
// name, the dtype or the entrypoint went unnoticed; PyTorch op names such as
// "<built-in method ...>" are common). Each string holds a tag that must
// never appear as markup.
func TestReportEscapesTraceText(t *testing.T) {
	const tag = `<i class="x">`
	str := func(s string) string { return s + tag + "&" }
	op, dev := str("op"), str("cuda")
	p := &tracemem.MemoryProfile{
		Summary: tracemem.MemorySummary{PeakBytes: 2 * mib, PeakTimestampNs: 1e6, PeakDevice: dev, AllocCount: 1},
		Timeline: []tracemem.TimelinePoint{
			{TimestampNs: 1e6, Device: dev, LiveBytes: 2 * mib, ByCategory: catBytes(tracemem.CategoryActivation, 2*mib)},
		},
		PeakBreakdown: []tracemem.LiveAllocation{
			{TensorID: str("t"), SpanID: "s1", OpName: &op, Bytes: 2 * mib, Shape: []uint64{2}, DType: str("f"), Device: dev, Category: tracemem.CategoryActivation},
		},
		ByDevice: []tracemem.DeviceMemoryStats{{Device: dev, CapacityBytes: 4 * mib, PeakBytes: 2 * mib, PeakTimestampNs: 1e6, AllocCount: 1}},
	}
	tree := newSpanTree()
	tree.addSpan(spanInfo{id: "s0", name: str("step")})
	tree.addSpan(spanInfo{id: "s1", parent: "s0", name: str("layer")})
	tr := &trace{name: str("file"), profile: p, tree: tree,
		run:   &runInfo{id: str("run"), entrypoint: str("main"), phase: str("train"), device: str("dev")},
		nodes: map[string]tracemem.NodeMetrics{"s1": {PeakBytes: 2 * mib}, str("n"): {PeakBytes: mib}}}
	var b bytes.Buffer
	if err := writeReport(&b, tr); err != nil {
		t.Fatal(err)
	}
	checkWellFormed(t, b.Bytes())
	if strings.Contains(b.String(), tag) {
		i := strings.Index(b.String(), tag)
		t.Errorf("trace text written as markup: ...%s...", b.String()[max(0, i-80):i+len(tag)])
	}
	for _, want := range []string{"op&lt;i", "f&lt;i", "main&lt;i", "run&lt;i", "train&lt;i", "layer&lt;i", "t&lt;i", "cuda&lt;i"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}

// TestReportHandMade renders profiles made by hand: a capacity far above the
// peak is not drawn but named, a known capacity near the peak is
// drawn, an unknown capacity is said, and a trace without memory events
// gives a report without charts.
func TestReportHandMade(t *testing.T) {
	opName := "matmul"
	p := &tracemem.MemoryProfile{
		// A gradient present with 0 bytes at the peak: the library leaves
		// such categories out of PeakByCategory, the report does not rely
		// on it (its check went untested: found by mutation).
		Summary: tracemem.MemorySummary{PeakBytes: 3 * mib, PeakTimestampNs: 2e6, PeakDevice: "cuda:0", AllocCount: 3, FreeCount: 1,
			PeakByCategory: addCat(addCat(catBytes(tracemem.CategoryParameter, mib), tracemem.CategoryActivation, 2*mib), tracemem.CategoryGradient, 0)},
		Timeline: []tracemem.TimelinePoint{
			{TimestampNs: 1e6, Device: "cuda:0", LiveBytes: mib, ByCategory: catBytes(tracemem.CategoryParameter, mib)},
			// A category present with 0 bytes at every point has no area.
			{TimestampNs: 1e6, Device: "cuda:1", LiveBytes: 2 * mib, ByCategory: addCat(catBytes(tracemem.CategoryActivation, 2*mib), tracemem.CategoryGradient, 0)},
			{TimestampNs: 2e6, Device: "cuda:0", LiveBytes: 3 * mib, ByCategory: addCat(catBytes(tracemem.CategoryParameter, mib), tracemem.CategoryActivation, 2*mib)},
			{TimestampNs: 3e6, Device: "cuda:0", LiveBytes: mib, ByCategory: addCat(catBytes(tracemem.CategoryParameter, mib), tracemem.CategoryActivation, 0)},
		},
		PeakBreakdown: []tracemem.LiveAllocation{
			{TensorID: "a<1>", SpanID: "s1", OpName: &opName, Bytes: 2 * mib, DType: "f32", Device: "cuda:0", Category: tracemem.CategoryActivation},
			{TensorID: "w", SpanID: "", Bytes: mib, DType: "f32", Device: "cuda:0", Category: tracemem.CategoryParameter},
		},
		ByDevice: []tracemem.DeviceMemoryStats{
			{Device: "cuda:0", CapacityBytes: 80 * gib, PeakBytes: 3 * mib, PeakTimestampNs: 2e6, AllocCount: 2, FreeCount: 1},
			{Device: "cuda:1", CapacityBytes: 0, PeakBytes: 2 * mib, PeakTimestampNs: 1e6, AllocCount: 1},
		},
	}
	tree := newSpanTree()
	tree.addSpan(spanInfo{id: "s0", name: "step & <run>"})
	tree.addSpan(spanInfo{id: "s1", parent: "s0", name: "layer"})
	tr := &trace{name: "hand<made>.jsonl", profile: p, tree: tree, nodes: map[string]tracemem.NodeMetrics{"s1": {PeakBytes: 2 * mib}}}
	var b bytes.Buffer
	if err := writeReport(&b, tr); err != nil {
		t.Fatal(err)
	}
	s := checkWellFormed(t, b.Bytes())
	text := b.String()
	for _, want := range []string{
		"cuda:0: peak 3.00 MiB at 2.000000 ms, capacity 80.00 GiB (above the chart)",
		"cuda:1: peak 2.00 MiB at 1.000000 ms, capacity unknown",
		"step &amp; &lt;run&gt; &gt; layer",
		"a&lt;1&gt;",
		"<tr><th>Peak by category</th><td>parameter 1.00 MiB, activation 2.00 MiB</td></tr>", // not the gradient of 0 bytes
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if strings.Contains(text, `class="capacity"`) {
		t.Errorf("a capacity 80 GiB above a 3 MiB peak is drawn to scale")
	}
	if len(s.svgs) != 2 || s.areasIn[0] != 2 || s.areasIn[1] != 1 {
		t.Errorf("charts %d, areas %v: want 2 charts with 2 and 1 category areas (none for cuda:1's gradient of 0 bytes)", len(s.svgs), s.areasIn)
	}
	// The devices table says the capacity too (found by mutation: its
	// capacity column went unchecked).
	tables, _ := parseReport(t, b.Bytes())
	devices := findTable(t, tables, "Devices")
	dcol, ccol := slices.Index(devices.rows[0], "device"), slices.Index(devices.rows[0], "capacity")
	for _, c := range []struct {
		device, want, reason string
	}{
		{"cuda:0", "80.00 GiB", "a known capacity in 1024-based units"},
		{"cuda:1", "unknown", "a capacity of 0 is not known, not 0 B"},
	} {
		got := "no row"
		for _, r := range devices.rows[1:] {
			if r[dcol] == c.device {
				got = r[ccol]
			}
		}
		if got != c.want {
			t.Errorf("devices table, %s: %s: capacity %q, want %q", c.device, c.reason, got, c.want)
		}
	}

	p.ByDevice[0].CapacityBytes = 4 * mib
	b.Reset()
	writeReport(&b, tr)
	if !strings.Contains(b.String(), `class="capacity"`) || !strings.Contains(b.String(), "capacity 4.00 MiB") {
		t.Errorf("a capacity of 4 MiB over a 3 MiB peak is not drawn")
	}

	empty := &trace{name: "empty", profile: &tracemem.MemoryProfile{}, tree: newSpanTree(), nodes: map[string]tracemem.NodeMetrics{}}
	b.Reset()
	if err := writeReport(&b, empty); err != nil {
		t.Fatal(err)
	}
	if s := checkWellFormed(t, b.Bytes()); len(s.svgs) != 0 || !strings.Contains(b.String(), "no memory events") {
		t.Errorf("the report of an empty profile has %d charts or does not say there are no memory events", len(s.svgs))
	}
	if strings.Contains(b.String(), "profile_memory") {
		t.Errorf("the report of a trace of unknown source gives PyTorch's hint")
	}
	// A PyTorch trace without memory events says when PyTorch writes them.
	empty.run = &runInfo{source: "chrome_trace"}
	b.Reset()
	if err := writeReport(&b, empty); err != nil {
		t.Fatal(err)
	}
	if want := "<p>The trace has no memory events (PyTorch&#39;s profiler writes [memory] events with profile_memory=True, in builds with Kineto).</p>"; !strings.Contains(b.String(), want) {
		t.Errorf("the report of a PyTorch trace without memory events does not say %s", want)
	}
}

func catBytes(c tracemem.Category, n uint64) tracemem.CategoryBytes {
	return addCat(tracemem.CategoryBytes{}, c, n)
}

func addCat(b tracemem.CategoryBytes, c tracemem.Category, n uint64) tracemem.CategoryBytes {
	b.Bytes[c] = n
	b.Present = b.Present.With(c)
	return b
}

// TestNiceAxes checks the axis ticks: 1, 2 or 5 × 10^k steps, covering the
// top, in the largest unit the top reaches (MiB below 1 GiB and GiB from
// it, and so on up to EiB).
func TestNiceAxes(t *testing.T) {
	cases := []struct {
		top        uint64
		unit       string
		wantLabels string
		reason     string
	}{
		{3 * mib, "MiB", "0 1 2 3", "3 MiB: steps of 1 MiB"},
		{1300 * mib, "GiB", "0.0 0.5 1.0 1.5", "1.27 GiB: GiB unit, the axis ends above the top"},
		{80 * gib, "GiB", "0 20 40 60 80", "80 GiB: steps of 20"},
		{0, "MiB", "0.0 0.2 0.4 0.6 0.8 1.0", "an empty device gets a 1 MiB axis"},
		{gib, "GiB", "0.0 0.2 0.4 0.6 0.8 1.0", "exactly 1 GiB: GiB from 1 GiB on"},
		{40, "B", "0 10 20 30 40", "40 B: bytes, not 0.00004 MiB (from a user trial)"},
		{3, "B", "0 1 2 3", "3 B: steps of whole bytes, not 0.6"},
		{1, "B", "0 1", "1 B: one step of a byte"},
		{1023, "B", "0 500 1000 1500", "1023 B: still bytes"},
		{kib, "KiB", "0.0 0.2 0.4 0.6 0.8 1.0", "1 KiB: KiB from 1 KiB on"},
		{2406, "KiB", "0.0 0.5 1.0 1.5 2.0 2.5", "2.35 KiB: KiB, not 0.0025 MiB"},
		{mib - 1, "KiB", "0 500 1000 1500", "a byte below 1 MiB: KiB"},
		{2 << 40, "TiB", "0.0 0.5 1.0 1.5 2.0", "2 TiB: TiB, not 2048 GiB (the axis stopped at GiB: labels of up to 11 digits near 2^63 B, from a user trial)"},
		{1000 * tib, "TiB", "0 200 400 600 800 1000", "1000 TiB: still TiB, 4 digits"},
		{3 << 50, "PiB", "0 1 2 3", "3 PiB: PiB (in GiB, 7-digit labels ran into the rotated unit)"},
		{1<<63 - 1, "EiB", "0 2 4 6 8", "2^63-1 B, the library's largest peak: EiB, the axis ends at 8 EiB, less than a billionth above"},
		{math.MaxUint64, "EiB", "0 5 10 15", "2^64-1 B: EiB; the tick of 20 EiB, past 2^64, is left out"},
	}
	for _, c := range cases {
		ax := niceAxis(c.top)
		var labels []string
		for _, tk := range ax.ticks {
			labels = append(labels, tk.label)
		}
		if ax.unit != c.unit || strings.Join(labels, " ") != c.wantLabels {
			t.Errorf("%s: unit %s labels %v, want %s %s", c.reason, ax.unit, labels, c.unit, c.wantLabels)
		}
		if ax.maxBytes < float64(c.top) {
			t.Errorf("%s: axis ends at %g below the top %d", c.reason, ax.maxBytes, c.top)
		}
	}
	for _, c := range []struct {
		end        uint64
		wantLabels string
		reason     string
	}{
		{2_400_000, "0.0 0.5 1.0 1.5 2.0 2.5", "2.4 ms: to the next tick of 0.5 ms"},
		{2_000_000, "0.0 0.5 1.0 1.5 2.0 2.5", "2 ms, on a tick: to the next one, so the last state has some width (from a user trial)"},
		{100, "0.00000 0.00002 0.00004 0.00006 0.00008 0.00010 0.00012", "100 ns: ticks of 20 ns, to 120"},
		{0, "0 1", "everything at 0 ns: a 1 ms axis"},
		{1, "0.000000 0.000001 0.000002", "1 ns: steps of whole ns, to 2 (from a review: 0.2 ns steps ended the axis at 1)"},
		{3, "0.000000 0.000001 0.000002 0.000003 0.000004", "3 ns: steps of 1 ns, none two on one ns"},
	} {
		ta := niceTimeAxis(c.end)
		var labels []string
		for _, tk := range ta.ticks {
			labels = append(labels, tk.label)
		}
		if got := strings.Join(labels, " "); got != c.wantLabels || ta.maxNs != ta.ticks[len(ta.ticks)-1].ns || ta.maxNs <= c.end {
			t.Errorf("%s: ticks %s up to %d ns, want %s, ending on the last, after %d", c.reason, got, ta.maxNs, c.wantLabels, c.end)
		}
	}
	// Near 2⁶⁴ the axes saturate instead of wrapping (from a review: an
	// axis end of 2⁶³ drew the data past the plot's edge).
	for _, end := range []uint64{18e18, math.MaxUint64 - 1, math.MaxUint64} {
		ta := niceTimeAxis(end)
		if ta.maxNs < end || !slices.IsSortedFunc(ta.ticks, func(a, b axisTick) int { return cmp.Compare(a.ns, b.ns) }) || ta.ticks[len(ta.ticks)-1].ns > ta.maxNs {
			t.Errorf("time axis of %d ns: up to %d, ticks %v; want no tick past its end, at or after %d", end, ta.maxNs, ta.ticks, end)
		}
	}
	for _, top := range []uint64{18e18, math.MaxUint64} {
		ax := niceAxis(top)
		if ax.maxBytes < float64(top) || !slices.IsSortedFunc(ax.ticks, func(a, b axisTick) int { return cmp.Compare(a.bytes, b.bytes) }) {
			t.Errorf("bytes axis of %d: up to %g, ticks %v; want ticks in order (none wrapped past 2^64)", top, ax.maxBytes, ax.ticks)
		}
	}
	for _, c := range []struct{ raw, want float64 }{{0.3, 0.5}, {1, 1}, {1.1, 2}, {3, 5}, {7, 10}, {0.02, 0.02}} {
		if got := niceStep(c.raw); got != c.want {
			t.Errorf("niceStep(%g) = %g, want %g", c.raw, got, c.want)
		}
	}
}

// TestNiceAxisBounds: over tops near ticks of every unit (a few bytes
// either side of k × 1, 2 or 5 × 10^e units) and random ones, the axis has
// 4 to 6 ticks (from 3 B up), in equal steps of 1, 2 or 5 × 10^e units from
// 0 to its end, labelled with at most 4 characters, and ends at the top or
// less than a billionth below it.
func TestNiceAxisBounds(t *testing.T) {
	var tops []uint64
	for _, unit := range []uint64{1, kib, mib, gib, tib, pib, eib} {
		for e := 1.0; e <= 1e4; e *= 10 {
			for _, m := range []float64{1, 2, 5} {
				for k := 1.0; k <= 6; k++ {
					if k*m*e*float64(unit) >= 1<<63 { // above the library's peaks; past 2⁶⁴ the conversion is undefined
						continue
					}
					base := uint64(k * m * e * float64(unit))
					for d := uint64(0); d <= 10; d++ {
						tops = append(tops, base+d-min(base, 5))
					}
				}
			}
		}
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 20000 {
		tops = append(tops, rng.Uint64N(1<<uint(rng.IntN(64))))
	}
	for _, top := range tops {
		if top < 3 {
			continue
		}
		ax := niceAxis(top)
		n := len(ax.ticks) - 1
		step := ax.maxBytes / float64(n)
		tol := max(0.5, ax.maxBytes*1e-15) // a float64 holds 2⁶² to 1024 B
		if n < 3 || n > 5 || ax.ticks[0].bytes != 0 || math.Abs(float64(ax.ticks[n].bytes)-ax.maxBytes) > tol {
			t.Fatalf("top %d: %d ticks %v to %g; want 4 to 6 from 0, the last at the end", top, n+1, ax.ticks, ax.maxBytes)
		}
		if ax.maxBytes < float64(top)*(1-1e-9) {
			t.Fatalf("top %d: the axis ends at %g, more than a billionth below it", top, ax.maxBytes)
		}
		for k, tk := range ax.ticks {
			if math.Abs(float64(tk.bytes)-float64(k)*step) > tol {
				t.Fatalf("top %d: ticks %v not in equal steps", top, ax.ticks)
			}
			// A label of at most 4 characters ends 6 left of the plot, at
			// tickCharW a character, at least 16 right of the rotated
			// unit's centre (x 14): from a user trial, at GiB a top near
			// 2⁶³ B gave labels of 11 digits, cut at the SVG's left edge,
			// and at PiB scale 7 digits ran into the unit.
			if len(tk.label) > 4 || chartLeft-6-tickCharW*float64(len(tk.label)) < 14+16 {
				t.Fatalf("top %d: tick label %q (%s): want at most 4 characters, clear of the unit", top, tk.label, ax.unit)
			}
		}
		mant := step / math.Pow(10, math.Floor(math.Log10(step/unitBytes(ax.unit))+1e-9)) / unitBytes(ax.unit)
		if math.Abs(mant-1) > 1e-6 && math.Abs(mant-2) > 1e-6 && math.Abs(mant-5) > 1e-6 {
			t.Fatalf("top %d: a step of %g %s (%g × 10^e), want 1, 2 or 5 × 10^e", top, step/unitBytes(ax.unit), ax.unit, mant)
		}
	}
}

// unitBytes returns the bytes of an axis unit's name.
func unitBytes(name string) float64 {
	return map[string]float64{"B": 1, "KiB": kib, "MiB": mib, "GiB": gib, "TiB": tib, "PiB": pib, "EiB": eib}[name]
}

// needChromium returns the path of Chromium, or skips the test: when it is
// not installed, and with -short.
func needChromium(t *testing.T) string {
	t.Helper()
	const chromium = "/usr/bin/chromium"
	if _, err := os.Stat(chromium); err != nil {
		t.Skipf("%s is not installed, so the report is not rendered in a browser (apt-get install chromium to run this check)", chromium)
	}
	if testing.Short() {
		t.Skip("the browser check starts Chromium; skipped with -short")
	}
	return chromium
}

// TestReportInBrowser renders the report of the sample in headless
// Chromium and checks that the screenshot is not blank: it has many colours,
// among them the parameter and activation fills of the charts.
func TestReportInBrowser(t *testing.T) {
	chromium := needChromium(t)
	report, _ := writeReportFile(t, sample(t))
	dir := t.TempDir()
	shot := filepath.Join(dir, "report.png")
	cmd := exec.Command(chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--screenshot="+shot, "--window-size=1200,900",
		"file://"+report)
	cmd.Env = append(os.Environ(), "HOME="+dir) // no profile or crash files outside the temporary directory
	out, err := runWithTimeout(cmd, 2*time.Minute)
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v\n%s", err, out)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	colours := map[[3]uint32]int{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			colours[[3]uint32{r >> 8, g >> 8, bl >> 8}]++
		}
	}
	if len(colours) < 16 {
		t.Errorf("the screenshot has %d colours: blank or nearly", len(colours))
	}
	for _, c := range []struct {
		name string
		rgb  [3]uint32
	}{{"parameter", [3]uint32{0x4e, 0x79, 0xa7}}, {"activation", [3]uint32{0xf2, 0x8e, 0x2b}}} {
		if colours[c.rgb] < 100 {
			t.Errorf("the %s fill (%v) covers %d pixels of the screenshot: the chart did not render", c.name, c.rgb, colours[c.rgb])
		}
	}
}

// runWithTimeout runs cmd, killing it after d.
func runWithTimeout(cmd *exec.Cmd, d time.Duration) ([]byte, error) {
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return out.Bytes(), err
	case <-time.After(d):
		cmd.Process.Kill()
		<-done
		return out.Bytes(), errors.New("timed out")
	}
}

// reportOf writes trace as a file, runs report on it with args and returns
// the file's path and the report.
func reportOf(t *testing.T, trace string, args ...string) (string, []byte) {
	t.Helper()
	path := writeFile(t, t.TempDir(), "trace.jsonl", []byte(trace))
	_, data := writeReportFile(t, append(args, path)...)
	return path, data
}

// reportTable is one table of a report: the text of the <h2> before it and
// the text of the cells of each row (header rows included).
type reportTable struct {
	heading string
	rows    [][]string
}

// svgElem is one element inside a chart: its name, attributes and text.
type svgElem struct {
	name  string
	attrs map[string]string
	text  string
}

// reportChart is one <svg> of a report and the elements inside it.
type reportChart struct {
	device string
	elems  []*svgElem
}

// parseReport reads the tables and the charts of a report.
func parseReport(t *testing.T, doc []byte) (tables []reportTable, charts []reportChart) {
	t.Helper()
	checkWellFormed(t, doc)
	d := xml.NewDecoder(bytes.NewReader(doc))
	var heading strings.Builder
	var stack []*svgElem // open elements inside the current <svg>
	inH2, inSVG := false, false
	var cell *strings.Builder
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return tables, charts
		}
		if err != nil {
			t.Fatal(err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			attrs := map[string]string{}
			for _, a := range el.Attr {
				attrs[a.Name.Local] = a.Value
			}
			switch {
			case inSVG:
				e := &svgElem{name: el.Name.Local, attrs: attrs}
				charts[len(charts)-1].elems = append(charts[len(charts)-1].elems, e)
				stack = append(stack, e)
			case el.Name.Local == "svg":
				inSVG = true
				charts = append(charts, reportChart{device: attrs["data-device"]})
			case el.Name.Local == "h2":
				inH2 = true
				heading.Reset()
			case el.Name.Local == "table":
				tables = append(tables, reportTable{heading: heading.String()})
			case el.Name.Local == "tr":
				tb := &tables[len(tables)-1]
				tb.rows = append(tb.rows, nil)
			case el.Name.Local == "td" || el.Name.Local == "th":
				cell = &strings.Builder{}
			}
		case xml.EndElement:
			switch {
			case inSVG && el.Name.Local == "svg":
				inSVG, stack = false, nil
			case inSVG:
				stack = stack[:len(stack)-1]
			case el.Name.Local == "h2":
				inH2 = false
			case el.Name.Local == "td" || el.Name.Local == "th":
				tb := &tables[len(tables)-1]
				tb.rows[len(tb.rows)-1] = append(tb.rows[len(tb.rows)-1], cell.String())
				cell = nil
			}
		case xml.CharData:
			switch {
			case inSVG && len(stack) > 0:
				stack[len(stack)-1].text += string(el)
			case inH2:
				heading.Write(el)
			case cell != nil:
				cell.Write(el)
			}
		}
	}
}

// findTable returns the table whose heading starts with prefix.
func findTable(t *testing.T, tables []reportTable, prefix string) reportTable {
	t.Helper()
	for _, tb := range tables {
		if strings.HasPrefix(tb.heading, prefix) {
			return tb
		}
	}
	t.Fatalf("no table under a heading %q...", prefix)
	return reportTable{}
}

// find returns the elements of c named name whose attributes include all of
// attrs (given as name, value pairs).
func (c reportChart) find(name string, attrs ...string) []*svgElem {
	var out []*svgElem
next:
	for _, e := range c.elems {
		if e.name != name {
			continue
		}
		for i := 0; i+1 < len(attrs); i += 2 {
			if e.attrs[attrs[i]] != attrs[i+1] {
				continue next
			}
		}
		out = append(out, e)
	}
	return out
}

// timeEnd returns the time at the end of the chart's time axis, in ns:
// that of its last tick, which the axis ends on.
func (c reportChart) timeEnd(t *testing.T) uint64 {
	t.Helper()
	var end float64
	var x string
	for _, e := range c.find("text", "y", strconv.FormatFloat(chartTop+plotH+18, 'g', -1, 64)) {
		ms, err := strconv.ParseFloat(e.text, 64)
		if err != nil {
			t.Fatalf("chart of %s: time tick %q", c.device, e.text)
		}
		if ms >= end {
			end, x = ms, e.attrs["x"]
		}
	}
	if xx, _ := strconv.ParseFloat(x, 64); !near(xx, chartLeft+plotW) {
		t.Fatalf("chart of %s: the last time tick is at x %s, not at the axis end %g", c.device, x, chartLeft+plotW)
	}
	return uint64(math.Round(end * 1e6))
}

// yScale returns what one byte is in user units of the chart's y axis and
// the axis unit name, read from the chart itself: the axis unit (the rotated
// text), and the label of the grid line at the top of the plot (y = chartTop).
func (c reportChart) yScale(t *testing.T) (maxBytes float64, unit string) {
	t.Helper()
	for _, e := range c.elems {
		if e.name == "text" && strings.HasPrefix(e.attrs["transform"], "rotate(-90") {
			unit = e.text
		}
	}
	unitBytes := unitBytes(unit)
	if unitBytes == 0 {
		t.Fatalf("chart of %s: y axis unit %q", c.device, unit)
	}
	// The label of a grid line is the text right after it.
	for i, e := range c.elems {
		if e.name == "line" && e.attrs["stroke"] == "#e4e4e4" && e.attrs["y1"] == fmt.Sprintf("%.1f", chartTop) && i+1 < len(c.elems) {
			v, err := strconv.ParseFloat(c.elems[i+1].text, 64)
			if err != nil {
				t.Fatalf("chart of %s: top tick label %q", c.device, c.elems[i+1].text)
			}
			return v * unitBytes, unit
		}
	}
	t.Fatalf("chart of %s: no grid line at the top of the plot", c.device)
	return 0, ""
}

// pathVertices returns the vertices of an SVG path made of absolute M, H, V
// and Z commands.
func pathVertices(t *testing.T, d string) [][2]float64 {
	t.Helper()
	var vs [][2]float64
	var cur [2]float64
	for _, m := range regexp.MustCompile(`([MHVZ])\s*([-0-9.]*)(?:\s+([-0-9.]+))?`).FindAllStringSubmatch(d, -1) {
		num := func(s string) float64 {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatalf("path %q: bad number %q", d, s)
			}
			return v
		}
		switch m[1] {
		case "M":
			cur = [2]float64{num(m[2]), num(m[3])}
		case "H":
			cur[0] = num(m[2])
		case "V":
			cur[1] = num(m[2])
		case "Z":
			continue
		}
		vs = append(vs, cur)
	}
	return vs
}

// crossings returns the y of every horizontal edge of the path through vs
// (closed when closed) that spans x.
func crossings(vs [][2]float64, closed bool, x float64) []float64 {
	var ys []float64
	n := len(vs)
	last := n - 1
	if closed {
		last = n
	}
	for i := 0; i < last; i++ {
		a, b := vs[i], vs[(i+1)%n]
		if a[1] == b[1] && min(a[0], b[0]) < x && x < max(a[0], b[0]) {
			ys = append(ys, a[1])
		}
	}
	return ys
}

// near says whether a drawn coordinate (printed to 0.1) is v.
func near(got, v float64) bool { return math.Abs(got-v) <= 0.051 }

// TestReportChartGeometry: each category's band sits on the one below, the stack tops out at the live bytes, x scales to the axis end and every path runs to it, so the chart shows what is live when.
func TestReportChartGeometry(t *testing.T) {
	// cuda:0: every category's amount and the ones below it change, and its
	// last point (80 ns) is before the trace's end (100 ns, on cuda:1),
	// itself before the axis end (120 ns, the first tick of 20 ns after
	// it). The axis end is small so that scaling x by one ns more shows.
	trace := jsonlTrace(startRec("root", "root", "", 0),
		memRec(10, "alloc", "p1", "root", "cuda:0", 4*mib, "parameter"),
		memRec(20, "alloc", "a1", "root", "cuda:0", 2*mib, "activation"),
		memRec(30, "alloc", "g1", "root", "cuda:0", 1*mib, "gradient"),
		memRec(40, "alloc", "a2", "root", "cuda:0", 3*mib, "activation"),
		memRec(45, "alloc", "x1", "root", "cuda:0", 1*mib, "other"), // the top band (from a test audit: no trace here had other)
		memRec(50, "free", "a1", "root", "cuda:0", 2*mib, "activation"),
		memRec(60, "free", "p1", "root", "cuda:0", 4*mib, "parameter"),
		memRec(70, "alloc", "o1", "root", "cuda:0", 1*mib, "optimizer"),
		memRec(80, "free", "g1", "root", "cuda:0", 1*mib, "gradient"),
		memRec(100, "alloc", "b1", "root", "cuda:1", 1*mib, "activation"),
		endRec("root", 100),
	)
	path, data := reportOf(t, trace)
	_, want := wantAnalysis(t, path, tracemem.Options{})
	_, charts := parseReport(t, data)
	if len(charts) != 2 {
		t.Fatalf("%d charts, want 2", len(charts))
	}
	for _, c := range charts {
		if end := c.timeEnd(t); end != 120 {
			t.Fatalf("%s: the time axis ends at %d ns, want 120 (the first tick after the trace's end)", c.device, end)
		}
	}
	xOf := func(ns uint64) float64 { return chartLeft + plotW*float64(ns)/120 }
	axisEnd := chartLeft + plotW
	for _, c := range charts {
		var pts []tracemem.TimelinePoint
		for _, pt := range want.Timeline {
			if pt.Device == c.device {
				pts = append(pts, pt)
			}
		}
		maxBytes, _ := c.yScale(t)
		yOf := func(v uint64) float64 { return chartTop + plotH - plotH*float64(v)/maxBytes }

		live := c.find("path", "class", "live")
		if len(live) != 1 {
			t.Fatalf("%s: %d live outlines", c.device, len(live))
		}
		lv := pathVertices(t, live[0].attrs["d"])
		if first := lv[0]; !near(first[0], xOf(pts[0].TimestampNs)) || !near(first[1], yOf(pts[0].LiveBytes)) {
			t.Errorf("%s: the live outline starts at %v, want (%.1f, %.1f)", c.device, first, xOf(pts[0].TimestampNs), yOf(pts[0].LiveBytes))
		}
		if last := lv[len(lv)-1]; !near(last[0], axisEnd) {
			t.Errorf("%s: the live outline ends at x %.1f, want the axis end %.1f", c.device, last[0], axisEnd)
		}
		areas := map[tracemem.Category][][2]float64{}
		for _, cat := range tracemem.Categories {
			present := false
			for _, pt := range pts {
				present = present || pt.ByCategory.Get(cat) > 0
			}
			found := c.find("path", "class", "area", "data-category", cat.String())
			if !present {
				if len(found) != 0 {
					t.Errorf("%s: an area for %s, which has no bytes there", c.device, cat)
				}
				continue
			}
			if len(found) != 1 {
				t.Fatalf("%s: %d areas for %s, want 1", c.device, len(found), cat)
			}
			vs := pathVertices(t, found[0].attrs["d"])
			areas[cat] = vs
			minX, maxX := vs[0][0], vs[0][0]
			for _, v := range vs {
				minX, maxX = min(minX, v[0]), max(maxX, v[0])
			}
			if !near(minX, xOf(pts[0].TimestampNs)) || !near(maxX, axisEnd) {
				t.Errorf("%s: the %s area spans x %.1f to %.1f, want %.1f to the axis end %.1f", c.device, cat, minX, maxX, xOf(pts[0].TimestampNs), axisEnd)
			}
		}

		for i, pt := range pts {
			// Point i holds from its x to the next point's (the axis end after the last).
			x0, x1 := xOf(pt.TimestampNs), axisEnd
			if i+1 < len(pts) {
				x1 = xOf(pts[i+1].TimestampNs)
			}
			if x1-x0 < 1 {
				continue
			}
			mid := (x0 + x1) / 2
			if ys := crossings(lv, false, mid); len(ys) != 1 || !near(ys[0], yOf(pt.LiveBytes)) {
				t.Errorf("%s point %d (%d ns): the live outline is at y %v, want %.1f (%d bytes)", c.device, i, pt.TimestampNs, ys, yOf(pt.LiveBytes), pt.LiveBytes)
			}
			below, prevTop := uint64(0), yOf(0)
			for _, cat := range tracemem.Categories {
				vs, ok := areas[cat]
				if !ok {
					continue
				}
				ys := crossings(vs, true, mid)
				if len(ys) != 2 {
					t.Errorf("%s point %d: the %s area crosses x %.1f %d times, want 2 (its top and bottom)", c.device, i, cat, mid, len(ys))
					continue
				}
				top, bottom := min(ys[0], ys[1]), max(ys[0], ys[1])
				own := pt.ByCategory.Get(cat)
				if !near(bottom, prevTop) {
					t.Errorf("%s point %d (%d ns): the %s area's bottom is at y %.1f, not on the top of the band below (%.1f)", c.device, i, pt.TimestampNs, cat, bottom, prevTop)
				}
				if !near(top, yOf(below+own)) {
					t.Errorf("%s point %d (%d ns): the %s area's top is at y %.1f, want %.1f (%d bytes below it + %d of its own)", c.device, i, pt.TimestampNs, cat, top, yOf(below+own), below, own)
				}
				below, prevTop = below+own, top
			}
			if below != pt.LiveBytes || !near(prevTop, yOf(pt.LiveBytes)) {
				t.Errorf("%s point %d: the stack ends at y %.1f (%d bytes), want the live bytes at %.1f (%d)", c.device, i, prevTop, below, yOf(pt.LiveBytes), pt.LiveBytes)
			}
		}
	}
}

// TestReportCapacityLine: a capacity up to 2 × the peak (inclusive) is drawn inside the plot at its height, a higher one only named "(above the chart)", so the line is never off the chart nor the areas flattened.
func TestReportCapacityLine(t *testing.T) {
	cases := []struct {
		name           string
		peak, capacity uint64
		drawn          bool
		reason         string
	}{
		{"equal", gib, gib, true, "a capacity equal to the peak is drawn at the top of the axis"},
		{"1.5x", gib, 3 * gib / 2, true, "a capacity between the peak and 2 × the peak is drawn"},
		{"2x", gib, 2 * gib, true, "exactly 2 × the peak is still drawn (the limit is inclusive)"},
		{"2x+4", gib, 2*gib + 4, false, "above 2 × the peak the capacity is not drawn (the caption names it)"},
		// From a user trial: a peak of 0 counted as 1 B, so a capacity of
		// 1 or 2 B was drawn, against the README's rule.
		{"zero peak, 1 B", 0, 1, false, "a peak of 0: a capacity of 1 B is more than twice it, named in the caption"},
		{"zero peak, 2 B", 0, 2, false, "a peak of 0: nor is one of 2 B drawn"},
	}
	// The library's live bytes saturate at 2⁶³−1, so no trace gives a peak
	// above 2⁶³; capacityDrawn takes any DeviceMemoryStats, and 2 × such a
	// peak wrapped (from a review: the line was dropped).
	if d := (tracemem.DeviceMemoryStats{PeakBytes: 1<<63 + 1, CapacityBytes: 1<<63 + 2}); !capacityDrawn(d) {
		t.Errorf("capacityDrawn(%+v) = false, want true: 2 × the peak saturates instead of wrapping", d)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, data := reportOf(t, rootTrace(
				capRec(5, "cuda:0", c.capacity),
				memRec(10, "alloc", "a", "root", "cuda:0", c.peak, "activation"),
				memRec(20, "free", "a", "root", "cuda:0", c.peak, "activation"),
			))
			_, charts := parseReport(t, data)
			if len(charts) != 1 {
				t.Fatalf("%d charts, want 1", len(charts))
			}
			ch := charts[0]
			lines := ch.find("line", "class", "capacity")
			above := strings.Contains(string(data), "capacity "+formatBytes(c.capacity)+" (above the chart)")
			if !c.drawn {
				if len(lines) != 0 || !above {
					t.Errorf("%s: %d capacity lines, named above the chart: %v; want none, named", c.reason, len(lines), above)
				}
				return
			}
			if len(lines) != 1 || above || strings.Contains(string(data), "(above the chart)") {
				t.Fatalf("%s: %d capacity lines, named above the chart: %v; want 1, not named", c.reason, len(lines), above)
			}
			maxBytes, _ := ch.yScale(t)
			want := chartTop + plotH - plotH*float64(c.capacity)/maxBytes
			y1, err1 := strconv.ParseFloat(lines[0].attrs["y1"], 64)
			y2, err2 := strconv.ParseFloat(lines[0].attrs["y2"], 64)
			if err1 != nil || err2 != nil || y1 != y2 || y1 < chartTop || y1 > chartTop+plotH || !near(y1, want) {
				t.Errorf("%s: the capacity line is at y1 %q y2 %q, want both %.1f inside the plot [%g, %g]", c.reason, lines[0].attrs["y1"], lines[0].attrs["y2"], want, chartTop, chartTop+plotH)
			}
			if texts := ch.find("text", "fill", "#d62728"); !slices.ContainsFunc(texts, func(e *svgElem) bool { return e.text == "capacity "+formatBytes(c.capacity) }) {
				t.Errorf("%s: the capacity line is not labelled", c.reason)
			}
		})
	}
}

// TestReportPeakLabelAnchor: the peak label goes right of the peak unless the peak is in the right 30% of the plot, so it stays inside the chart without covering the areas before the peak.
func TestReportPeakLabelAnchor(t *testing.T) {
	cases := []struct {
		name   string
		peakNs uint64 // on a time axis of 100 ns
		anchor string
		reason string
	}{
		{"left", 10, "start", "a peak at 10% has room on its right"},
		{"middle", 50, "start", "a peak at 50% has room on its right"},
		{"before70", 69, "start", "a peak at 69% is left of the 70% limit"},
		{"at70", 70, "start", "the label moves left only for a peak past 70%, not at 70% exactly"},
		{"after70", 71, "end", "a peak at 71% is in the right 30%: the label goes left"},
		{"end", 95, "end", "a peak at 95% would push a right-hand label off the chart"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// The trace ends at 96 ns: the axis runs to the next tick, 100 ns.
			_, data := reportOf(t, jsonlTrace(startRec("root", "root", "", 0),
				memRec(c.peakNs, "alloc", "a", "root", "cuda:0", 8*mib, "activation"),
				memRec(c.peakNs+1, "free", "a", "root", "cuda:0", 8*mib, "activation"),
				memRec(96, "alloc", "b", "root", "cuda:0", 4, "activation"),
				endRec("root", 96),
			))
			_, charts := parseReport(t, data)
			var labels []*svgElem
			for _, e := range charts[0].find("text", "fill", "#d62728") {
				if strings.HasPrefix(e.text, "peak ") {
					labels = append(labels, e)
				}
			}
			if len(labels) != 1 {
				t.Fatalf("%s: %d peak labels, want 1", c.reason, len(labels))
			}
			px := chartLeft + plotW*float64(c.peakNs)/100
			x, _ := strconv.ParseFloat(labels[0].attrs["x"], 64)
			if got := labels[0].attrs["text-anchor"]; got != c.anchor || (c.anchor == "start") != (x > px) {
				t.Errorf("%s: the label is anchored at its %s at x %.1f (peak at %.1f), want its %s", c.reason, got, x, px, c.anchor)
			}
			// The 8 MiB peak is the top of its axis: its label stays 8
			// above it, in the margin above the plot (from a user trial:
			// moved down into the plot, it was struck through by the live
			// line falling from the peak).
			if y, _ := strconv.ParseFloat(labels[0].attrs["y"], 64); y != chartTop-peakLabelGap {
				t.Errorf("%s: the label of a peak at the top of the axis is at y %.1f, want %.1f (8 above the peak, over the plot)", c.reason, y, chartTop-peakLabelGap)
			}
		})
	}
}

// TestReportAxisUnit: the y axis is in GiB from exactly 1 GiB on and in MiB below, as documented, so a 1 GiB peak is not labelled 1024 MiB, and in TiB, PiB or EiB above, so its labels stay short.
func TestReportAxisUnit(t *testing.T) {
	cases := []struct {
		name   string
		peak   uint64
		unit   string
		top    float64 // bytes at the top of the axis
		reason string
	}{
		{"1GiB", gib, "GiB", gib, "a peak of exactly 1 GiB: GiB axis up to 1.0"},
		{"below1GiB", gib - 4, "MiB", 1500 * mib, "4 bytes less than 1 GiB: MiB axis, steps of 500"},
		{"40B", 40, "B", 40, "a peak of 40 B: a bytes axis up to 40"},
		// From a user trial: the axis stopped at GiB, so a peak near 2⁶³ B
		// had labels of up to 11 digits, cut at the SVG's left edge, and one
		// of petabytes 7 digits, running into the rotated unit.
		{"2TiB", 2 * tib, "TiB", 2 * tib, "a peak of 2 TiB: TiB, up to 2.0"},
		{"3PiB", 3 * pib, "PiB", 3 * pib, "a peak of 3 PiB: PiB, up to 3"},
		{"2^63-1", 1<<63 - 1, "EiB", 8 * eib, "the largest peak, 2⁶³−1 B: EiB, up to 8"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, data := reportOf(t, rootTrace(
				memRec(10, "alloc", "a", "root", "cuda:0", c.peak, "activation"),
				memRec(20, "free", "a", "root", "cuda:0", c.peak, "activation"),
			))
			_, charts := parseReport(t, data)
			maxBytes, unit := charts[0].yScale(t)
			if unit != c.unit || maxBytes != c.top {
				t.Errorf("%s: axis in %s up to %g bytes, want %s up to %g", c.reason, unit, maxBytes, c.unit, c.top)
			}
			// The tick labels (right-aligned 6 left of the plot) are short.
			for _, e := range charts[0].find("text", "x", strconv.FormatFloat(chartLeft-6, 'g', -1, 64)) {
				if len(e.text) > 4 {
					t.Errorf("%s: tick label %q, want at most 4 characters", c.reason, e.text)
				}
			}
		})
	}
}

// TestReportTables: the Devices table shows each device's allocs and frees in their own columns and the tables hold the default 50 allocations and 30 nodes, as documented, on the sample which has more of each.
func TestReportTables(t *testing.T) {
	_, want := wantAnalysis(t, sample(t), tracemem.Options{MaxTimelinePoints: 2000})
	_, data := writeReportFile(t, sample(t))
	tables, _ := parseReport(t, data)

	devices := findTable(t, tables, "Devices")
	col := map[string]int{}
	for i, h := range devices.rows[0] {
		col[h] = i
	}
	differ := false
	for _, d := range want.ByDevice {
		differ = differ || d.AllocCount != d.FreeCount
		found := false
		for _, r := range devices.rows[1:] {
			if r[col["device"]] != d.Device {
				continue
			}
			found = true
			if r[col["allocs"]] != strconv.FormatUint(uint64(d.AllocCount), 10) || r[col["frees"]] != strconv.FormatUint(uint64(d.FreeCount), 10) {
				t.Errorf("%s: allocs %s frees %s, want %d and %d", d.Device, r[col["allocs"]], r[col["frees"]], d.AllocCount, d.FreeCount)
			}
		}
		if !found {
			t.Errorf("no row for device %s", d.Device)
		}
	}
	if !differ {
		t.Fatalf("the sample has as many allocs as frees on every device: the check cannot tell the columns apart")
	}

	const topAllocations, topNodes = 50, 30
	if len(want.PeakBreakdown) <= topAllocations {
		t.Fatalf("the sample has %d allocations at the peak, want more than %d", len(want.PeakBreakdown), topAllocations)
	}
	allocs := findTable(t, tables, "Top ")
	tcol := slices.Index(allocs.rows[0], "tensor")
	if got := len(allocs.rows) - 1; got != topAllocations {
		t.Errorf("%d top allocations, want %d", got, topAllocations)
	}
	for i, r := range allocs.rows[1:] {
		if i < len(want.PeakBreakdown) && r[tcol] != want.PeakBreakdown[i].TensorID {
			t.Errorf("top allocation %d is %s, want %s", i, r[tcol], want.PeakBreakdown[i].TensorID)
			break
		}
	}

	tr, err := loadOne(&env{}, sample(t), loadOptions{opts: tracemem.Options{MaxTimelinePoints: 2000}, wantNodes: true, wantOps: true})
	if err != nil {
		t.Fatal(err)
	}
	withPeak := 0
	for _, m := range tr.nodes {
		if m.PeakBytes > 0 {
			withPeak++
		}
	}
	if withPeak <= topNodes {
		t.Fatalf("the sample has %d nodes with a peak, want more than %d", withPeak, topNodes)
	}
	if got := len(findTable(t, tables, "Nodes").rows) - 1; got != topNodes {
		t.Errorf("%d nodes, want %d", got, topNodes)
	}
}

// attrsOf returns the attributes of elems, for messages.
func attrsOf(elems []*svgElem) []map[string]string {
	var out []map[string]string
	for _, e := range elems {
		out = append(out, e.attrs)
	}
	return out
}

// TestReportDeviceWithoutPoints: a device the profile lists with no
// timeline point (its capacity alone, say) gets a chart with its axes and
// no area, outline or peak mark, not a crash (found by mutation: drawing
// the paths or the peak of no points went unnoticed).
func TestReportDeviceWithoutPoints(t *testing.T) {
	p := &tracemem.MemoryProfile{ByDevice: []tracemem.DeviceMemoryStats{{Device: "cuda:0", CapacityBytes: 4 * mib}}}
	tr := &trace{name: "bare", profile: p, tree: newSpanTree(), nodes: map[string]tracemem.NodeMetrics{}}
	var b bytes.Buffer
	if err := writeReport(&b, tr); err != nil {
		t.Fatal(err)
	}
	if s := checkWellFormed(t, b.Bytes()); len(s.svgs) != 1 || s.pathsIn[0] != 0 {
		t.Errorf("charts %d, paths %v: want one chart without paths", len(s.svgs), s.pathsIn)
	}
	if strings.Contains(b.String(), `class="peak"`) {
		t.Errorf("a device without points has its peak marked")
	}
}

// TestReportChartLabels: the lines and labels around the plot, with the
// margins worked out by hand (70 left, 20 right, 24 top, 36 bottom): the
// grid lines of the bytes axis run across the plot, from x 70 to x 980,
// each labelled left of it (x 64, right aligned) 4 below the line; the
// unit is written turned, at x 14 and half way down (y 144); the time
// ticks hang 5 below the plot and the time axis title is centred under it;
// the capacity line runs across the plot, labelled at its right end just
// above it; the peak's line spans the plot's height and its label sits 8
// above the peak (found by mutation: every one of these positions could
// move unnoticed).
func TestReportChartLabels(t *testing.T) {
	_, data := reportOf(t, jsonlTrace(startRec("root", "root", "", 0), capRec(1, "cuda:0", 4*mib),
		memRec(10, "alloc", "a", "root", "cuda:0", 3*mib, "activation"), endRec("root", 100)))
	_, charts := parseReport(t, data)
	if len(charts) != 1 {
		t.Fatalf("%d charts, want 1", len(charts))
	}
	c := charts[0]
	num := func(e *svgElem, attr string) float64 {
		v, err := strconv.ParseFloat(e.attrs[attr], 64)
		if err != nil {
			t.Fatalf("<%s> %s=%q: %v", e.name, attr, e.attrs[attr], err)
		}
		return v
	}
	grid := 0
	for i, e := range c.elems {
		if e.name != "line" || e.attrs["stroke"] != "#e4e4e4" {
			continue
		}
		grid++
		y := num(e, "y1")
		label := c.elems[i+1] // the label of a grid line is the text right after it
		cases := []struct {
			name, reason string
			got, want    float64
		}{
			{"x1", "a grid line starts at the plot's left edge", num(e, "x1"), 70},
			{"x2", "and ends at its right edge", num(e, "x2"), 980},
			{"y2", "it is level", num(e, "y2"), y},
			{"label x", "its label ends 6 left of the plot", num(label, "x"), 64},
			{"label y", "4 below the line, centred on it for 11px text", num(label, "y"), y + 4},
		}
		for _, cc := range cases {
			if !near(cc.got, cc.want) {
				t.Errorf("grid line at y %.1f, %s: %s: %g, want %g", y, cc.name, cc.reason, cc.got, cc.want)
			}
		}
		if label.name != "text" || label.attrs["text-anchor"] != "end" {
			t.Errorf("grid line at y %.1f: its label is <%s text-anchor=%q>, want right-aligned text", y, label.name, label.attrs["text-anchor"])
		}
	}
	if grid < 3 {
		t.Errorf("%d grid lines, want at least 3", grid)
	}
	var unit []*svgElem
	for _, e := range c.elems {
		if e.name == "text" && strings.HasPrefix(e.attrs["transform"], "rotate(") {
			unit = append(unit, e)
		}
	}
	if len(unit) != 1 || unit[0].attrs["x"] != "14" || unit[0].attrs["y"] != "144" || unit[0].attrs["transform"] != "rotate(-90 14 144)" {
		t.Errorf("the unit labels are %v, want one text at x 14, y 144, turned about that point", attrsOf(unit))
	}
	// The time axis: ticks 5 long below the plot's bottom (y 264), and
	// its title centred under the plot, 4 above the SVG's bottom.
	ticks := c.find("line", "stroke", "#999")
	if len(ticks) < 3 {
		t.Errorf("%d time ticks, want at least 3", len(ticks))
	}
	for _, e := range ticks {
		if y1, y2 := num(e, "y1"), num(e, "y2"); !near(y1, 264) || !near(y2, 269) || num(e, "x1") != num(e, "x2") {
			t.Errorf("time tick %v: want a vertical line from y 264 to 269", e.attrs)
		}
	}
	var title []*svgElem
	for _, e := range c.elems {
		if e.name == "text" && e.text == "time (ms)" {
			title = append(title, e)
		}
	}
	if len(title) != 1 || title[0].attrs["x"] != "525" || title[0].attrs["y"] != "296" {
		t.Errorf("the time axis titles are %v, want one at x 525, y 296", attrsOf(title))
	}
	// The capacity, 4 MiB on an axis of 4 MiB: at the plot's top, y 24.
	for i, e := range c.elems {
		if e.name != "line" || e.attrs["class"] != "capacity" {
			continue
		}
		label := c.elems[i+1]
		if !near(num(e, "x1"), 70) || !near(num(e, "x2"), 980) || !near(num(e, "y1"), 24) || !near(num(e, "y2"), 24) {
			t.Errorf("capacity line %v: want y 24 from x 70 to 980", e.attrs)
		}
		if !strings.HasPrefix(label.text, "capacity ") || !near(num(label, "x"), 976) || !near(num(label, "y"), 20) {
			t.Errorf("capacity label %q at %v: want it at x 976, y 20", label.text, label.attrs)
		}
	}
	if len(c.find("line", "class", "capacity")) != 1 {
		t.Errorf("no capacity line")
	}
	// The peak, 3 MiB: y 84.
	var peakLine, peakLabel *svgElem
	for _, e := range c.elems {
		switch {
		case e.name == "line" && e.attrs["stroke-dasharray"] == "2 3":
			peakLine = e
		case e.name == "text" && strings.HasPrefix(e.text, "peak "):
			peakLabel = e
		}
	}
	if peakLine == nil || peakLabel == nil {
		t.Fatalf("no peak line or label")
	}
	if !near(num(peakLine, "y1"), 24) || !near(num(peakLine, "y2"), 264) || num(peakLine, "x1") != num(peakLine, "x2") {
		t.Errorf("peak line %v: want a vertical line from y 24 to 264", peakLine.attrs)
	}
	if !near(num(peakLabel, "y"), 76) {
		t.Errorf("peak label at y %s, want 76 (8 above the peak)", peakLabel.attrs["y"])
	}
}

// TestReportTimeLabelsInsideSVG: every label of the time axis keeps inside
// the SVG, at 7 units a character (a digit of the 11px font is 6.1 to 7 wide, by the font),
// and each is centred on its tick unless that would cross the SVG's right
// edge, when it ends at its tick (from a review: an hour's last label,
// "4000000", was cut to "400000" at the edge).
func TestReportTimeLabelsInsideSVG(t *testing.T) {
	cases := []struct {
		name, reason string
		endNs        uint64
		lastAnchor   string
	}{
		{"5chars", "10 s: the axis ends at 12000 ms, 5 characters, which fit centred", 10e9, "middle"},
		{"6chars", "100 s: the axis ends at 120000 ms, 6 characters, 42 units at 7 a character: over the 20 right of the plot by half of one", 100e9, "end"},
		{"hour", "an hour: the axis ends at 4000000 ms, 7 characters", 3_600_000_000_000, "end"},
		{"subµs", "96 ns: the axis ends at 0.00010 ms, 7 characters", 96, "end"},
		{"second", "a second: 1000 ms", 1e9, "middle"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, data := reportOf(t, jsonlTrace(startRec("root", "root", "", 0),
				memRec(1, "alloc", "a", "root", "cuda:0", mib, "activation"),
				memRec(c.endNs, "free", "a", "root", "cuda:0", mib, "activation"),
				endRec("root", c.endNs)))
			_, charts := parseReport(t, data)
			if len(charts) != 1 {
				t.Fatalf("%d charts, want 1", len(charts))
			}
			var labels []*svgElem
			for _, e := range charts[0].elems {
				if e.name == "text" && e.attrs["y"] == "282" {
					labels = append(labels, e)
				}
			}
			if len(labels) < 3 {
				t.Fatalf("%s: %d time labels, want at least 3", c.reason, len(labels))
			}
			for i, e := range labels {
				x, err := strconv.ParseFloat(e.attrs["x"], 64)
				if err != nil {
					t.Fatal(err)
				}
				w := 7 * float64(len(e.text))
				lo, hi := x-w/2, x+w/2
				want := "middle"
				if i == len(labels)-1 {
					want = c.lastAnchor
				}
				if e.attrs["text-anchor"] == "end" {
					lo, hi = x-w, x
				}
				if lo < 0 || hi > chartW {
					t.Errorf("%s: label %q at x %.1f (%s) spans %.1f to %.1f, outside the SVG (0 to %g)", c.reason, e.text, x, e.attrs["text-anchor"], lo, hi, chartW)
				}
				if e.attrs["text-anchor"] != want {
					t.Errorf("%s: label %q is anchored at its %s, want its %s", c.reason, e.text, e.attrs["text-anchor"], want)
				}
			}
		})
	}
}

// TestReportChartInsideSVG: the plot keeps inside its 1000×300 SVG, with
// the margins worked out by hand (70 left, 20 right, 24 top, 36 bottom):
// the live outline of a 4 MiB alloc and free ends at the axis end, x 980,
// at zero bytes, y 264, and stays within those bounds (from a mutation
// test: TestReportChartGeometry scales with the same constants as the
// chart, so a plot drawn past the SVG's edges passed it).
func TestReportChartInsideSVG(t *testing.T) {
	_, data := reportOf(t, rootTrace(memRec(10, "alloc", "a", "root", "cuda:0", 4*mib, "activation"), memRec(20, "free", "a", "root", "cuda:0", 4*mib, "activation")))
	_, charts := parseReport(t, data)
	if len(charts) != 1 {
		t.Fatalf("%d charts, want 1", len(charts))
	}
	live := charts[0].find("path", "class", "live")
	if len(live) != 1 {
		t.Fatalf("%d live outlines, want 1", len(live))
	}
	vs := pathVertices(t, live[0].attrs["d"])
	if last := vs[len(vs)-1]; last != [2]float64{980, 264} {
		t.Errorf("the live outline ends at %v, want (980, 264): the axis end at zero bytes", last)
	}
	for _, v := range vs {
		if v[0] < 70 || v[0] > 980 || v[1] < 24 || v[1] > 264 {
			t.Errorf("vertex %v outside the plot (x 70 to 980, y 24 to 264)", v)
		}
	}
}

// TestReportSummaryTable: the Summary table gives each of the profile's
// figures in its own row, worked out by hand from a profile whose figures
// all differ (from a test audit: allocs and frees swapped, two anomaly
// kinds swapped, or autograd-retained bytes printed as pre-existing, all
// passed, as no test read this table's values).
func TestReportSummaryTable(t *testing.T) {
	p := &tracemem.MemoryProfile{
		Summary: tracemem.MemorySummary{AllocCount: 7, FreeCount: 5, TotalAllocBytes: 3 * mib, PeakBytes: 2 * mib, PeakTimestampNs: 2e6, PeakDevice: "cuda:0",
			PeakByCategory: addCat(catBytes(tracemem.CategoryActivation, mib), tracemem.CategoryOther, mib), PreexistingBytes: 2048, AutogradRetainedBytes: 5120},
		Timeline:  []tracemem.TimelinePoint{{TimestampNs: 2e6, Device: "cuda:0", LiveBytes: 2 * mib, ByCategory: addCat(catBytes(tracemem.CategoryActivation, mib), tracemem.CategoryOther, mib)}},
		ByDevice:  []tracemem.DeviceMemoryStats{{Device: "cuda:0", PeakBytes: 2 * mib, PeakTimestampNs: 2e6, AllocCount: 7, FreeCount: 5}},
		Anomalies: tracemem.Anomalies{UnmatchedFrees: 1, DoubleFrees: 2, DuplicateAllocs: 3, SizeMismatches: 4},
	}
	var b bytes.Buffer
	if err := writeReport(&b, &trace{name: "t.jsonl", profile: p, tree: newSpanTree(), nodes: map[string]tracemem.NodeMetrics{}}); err != nil {
		t.Fatal(err)
	}
	tables, _ := parseReport(t, b.Bytes())
	got := map[string]string{}
	for _, r := range findTable(t, tables, "Summary").rows {
		if len(r) == 2 {
			got[r[0]] = r[1]
		}
	}
	for k, want := range map[string]string{
		"Peak":                          "2.00 MiB (2097152 bytes) on cuda:0 at 2.000000 ms",
		"Peak by category":              "activation 1.00 MiB, other 1.00 MiB",
		"Events":                        "7 allocs, 5 frees, 3.00 MiB allocated in total",
		"Pre-existing":                  "2.00 KiB",
		"Autograd-retained activations": "5.00 KiB (live just before the first memory event of a backward step)",
		"Anomalies":                     "1 unmatched free, 2 double frees, 3 duplicate allocs, 4 size mismatches",
	} {
		if got[k] != want {
			t.Errorf("row %q = %q, want %q", k, got[k], want)
		}
	}
}

// TestReportEndsInFinalState: downsampled (by default, to 2000 points), the
// chart still ends in the state the device ends in: a trace whose last two
// events allocate and free 4 MiB ends at 0 B, not at the 4 MiB its last
// window peaked at (from a review: the report drew the 4 MiB held to the end
// of the axis, a leak that was not there).
func TestReportEndsInFinalState(t *testing.T) {
	const pairs = 3000 // 6002 points: windows of 4
	recs := make([]string, 0, 2*pairs+2)
	for i := range uint64(pairs) {
		recs = append(recs, memRec(10*i+1, "alloc", "t", "root", "cuda:0", 4096, "activation"), memRec(10*i+5, "free", "t", "root", "cuda:0", 4096, "activation"))
	}
	recs = append(recs, memRec(10*pairs+1, "alloc", "big", "root", "cuda:0", 4*mib, "activation"), memRec(10*pairs+2, "free", "big", "root", "cuda:0", 4*mib, "activation"))
	_, data := reportOf(t, jsonlTrace(append(append([]string{startRec("root", "root", "", 0)}, recs...), endRec("root", 10*pairs+2))...))
	_, charts := parseReport(t, data)
	live := charts[0].find("path", "class", "live")
	if len(live) != 1 {
		t.Fatalf("%d live outlines", len(live))
	}
	vs := pathVertices(t, live[0].attrs["d"])
	// The axis: 4 MiB at the top (y 24), 0 B at y 264.
	if last := vs[len(vs)-1]; last[1] != 264 {
		t.Errorf("the live outline ends at y %.1f, want 264 (0 B, the final state)", last[1])
	}
	if top := slices.MinFunc(vs, func(a, b [2]float64) int { return cmp.Compare(a[1], b[1]) }); top[1] != 24 {
		t.Errorf("the live outline's top is at y %.1f, want 24 (the 4 MiB peak)", top[1])
	}
}

// TestReportPointsPerDevice: by default a device keeps 2000 timeline points (of 3998 points, the last and 1999 windows of 2 before it), so the chart keeps the detail the default promises; --max-points 0 keeps all.
func TestReportPointsPerDevice(t *testing.T) {
	const pairs = 1999 // an alloc and a free each: 3998 points
	recs := make([]string, 0, 2*pairs)
	for i := range uint64(pairs) {
		bytes := 4 * (1 + i%97)
		recs = append(recs, memRec(10*i+1, "alloc", "t", "root", "cuda:0", bytes, "activation"), memRec(10*i+5, "free", "t", "root", "cuda:0", bytes, "activation"))
	}
	path, data := reportOf(t, rootTrace(recs...))
	if _, all := wantAnalysis(t, path, tracemem.Options{}); len(all.Timeline) != 2*pairs {
		t.Fatalf("the trace has %d points, want %d", len(all.Timeline), 2*pairs)
	}
	_, charts := parseReport(t, data)
	live := charts[0].find("path", "class", "live")
	if len(live) != 1 {
		t.Fatalf("%d live outlines", len(live))
	}
	// One M for the first point, then an H...V step per further point.
	if got := 1 + strings.Count(live[0].attrs["d"], "V"); got != 2000 {
		t.Errorf("the live outline has %d points, want 2000", got)
	}
	// --max-points 0 keeps every point, as in profile and export (from a
	// user trial).
	_, data = reportOf(t, rootTrace(recs...), "--max-points", "0")
	_, charts = parseReport(t, data)
	if live = charts[0].find("path", "class", "live"); len(live) != 1 {
		t.Fatalf("--max-points 0: %d live outlines", len(live))
	}
	if got := 1 + strings.Count(live[0].attrs["d"], "V"); got != 2*pairs {
		t.Errorf("--max-points 0: the live outline has %d points, want every one, %d", got, 2*pairs)
	}
}

// TestReportCapacityLegend: the legend lists the capacity line only when a
// chart draws one (from a user trial: it was always listed).
func TestReportCapacityLegend(t *testing.T) {
	mem := []string{memRec(10, "alloc", "a", "root", "cuda:0", 100, "activation")}
	for _, c := range []struct {
		name    string
		samples []string
		want    bool
	}{
		{"unknown", nil, false},
		{"drawn", []string{`{"kind": "device_memory", "timestamp_ns": 0, "device": "cuda:0", "used_bytes": 0, "free_bytes": 150, "capacity_bytes": 150}`}, true},
		{"above the chart", []string{`{"kind": "device_memory", "timestamp_ns": 0, "device": "cuda:0", "used_bytes": 0, "free_bytes": 1000, "capacity_bytes": 1000}`}, false},
	} {
		_, data := reportOf(t, rootTrace(append(c.samples, mem...)...))
		legend, _, _ := strings.Cut(string(data[strings.Index(string(data), `<p class="legend">`):]), "</p>")
		if got := strings.Contains(legend, "capacity"); got != c.want {
			t.Errorf("capacity %s: capacity in the legend %v, want %v: %s", c.name, got, c.want, legend)
		}
	}
}

// TestReportTimeAxisEnd: the time axis runs past the trace's end, the later
// of its last point and its last span end, so that the state after the last
// point shows (from a user trial: a trace whose peak is its last event drew
// it as a line, and with --max-points the axis stopped at the last point
// kept, before the end).
func TestReportTimeAxisEnd(t *testing.T) {
	for _, c := range []struct {
		name     string
		trace    string
		args     []string
		traceEnd uint64
	}{
		{"last point", jsonlTrace(startRec("root", "root", "", 0), memRec(50, "alloc", "a", "root", "cuda:0", 100, "activation")), nil, 50},
		{"span end", jsonlTrace(startRec("root", "root", "", 0), memRec(50, "alloc", "a", "root", "cuda:0", 100, "activation"), endRec("root", 5000)), nil, 5000},
		{"points cut", jsonlTrace(startRec("root", "root", "", 0),
			memRec(10, "alloc", "a", "root", "cuda:0", 100, "activation"), memRec(20, "free", "a", "root", "cuda:0", 100, "activation"),
			memRec(30, "alloc", "b", "root", "cuda:0", 10, "activation"), memRec(40, "free", "b", "root", "cuda:0", 10, "activation"), endRec("root", 40)),
			[]string{"--max-points", "1"}, 40},
	} {
		_, data := reportOf(t, c.trace, c.args...)
		_, charts := parseReport(t, data)
		if end := charts[0].timeEnd(t); end <= c.traceEnd || end > 2*c.traceEnd {
			t.Errorf("%s: the time axis ends at %d ns, want after the trace's end, %d, by less than as much again", c.name, end, c.traceEnd)
		}
	}
}

// devicePointsScan is how the charts found their points before
// pointsByDevice, one scan of the timeline per device: the reference it is
// checked against.
func devicePointsScan(p *tracemem.MemoryProfile, device string) []*tracemem.TimelinePoint {
	var pts []*tracemem.TimelinePoint
	for i := range p.Timeline {
		if pt := &p.Timeline[i]; pt.Device == device {
			pts = append(pts, pt)
		}
	}
	return pts
}

// TestPointsByDevice: on random timelines over many devices (some without
// points, some points of devices the profile does not list, the device ""),
// each device's points are those a scan of the timeline finds, in order.
func TestPointsByDevice(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for n := range 300 {
		devices := 1 + rng.IntN(60)
		p := &tracemem.MemoryProfile{}
		for d := range devices {
			p.ByDevice = append(p.ByDevice, tracemem.DeviceMemoryStats{Device: "cuda:" + strconv.Itoa(d)})
		}
		p.ByDevice[0].Device = ""
		for i := range rng.IntN(400) {
			p.Timeline = append(p.Timeline, tracemem.TimelinePoint{TimestampNs: uint64(i), Device: p.ByDevice[rng.IntN(devices)].Device, LiveBytes: uint64(i)})
			if rng.IntN(20) == 0 {
				p.Timeline[i].Device = "stray:" + strconv.Itoa(rng.IntN(3))
			}
		}
		got := pointsByDevice(p)
		seen := 0
		for _, d := range append(p.ByDevice, tracemem.DeviceMemoryStats{Device: "stray:0"}, tracemem.DeviceMemoryStats{Device: "stray:1"}, tracemem.DeviceMemoryStats{Device: "stray:2"}) {
			want := devicePointsScan(p, d.Device)
			if !slices.Equal(got[d.Device], want) {
				t.Fatalf("timeline %d, device %q: %d points, want the %d a scan finds", n, d.Device, len(got[d.Device]), len(want))
			}
			seen += len(want)
		}
		if seen != len(p.Timeline) {
			t.Fatalf("timeline %d: %d points by device, of %d", n, seen, len(p.Timeline))
		}
	}
}

// TestReportSplitsTimelineOnce: a report of many devices splits the
// timeline by device once, not once per device (devices × points: 80k
// devices of one point took 42 s). A scan per device elsewhere in the
// report would not show here; BenchmarkReportDevices times the whole.
func TestReportSplitsTimelineOnce(t *testing.T) {
	const devices = 500
	p := &tracemem.MemoryProfile{Summary: tracemem.MemorySummary{PeakBytes: 8, PeakDevice: "cuda:0", AllocCount: devices}}
	for d := range devices {
		dev := "cuda:" + strconv.Itoa(d)
		p.ByDevice = append(p.ByDevice, tracemem.DeviceMemoryStats{Device: dev, PeakBytes: 8, PeakTimestampNs: uint64(d), AllocCount: 1})
		p.Timeline = append(p.Timeline, tracemem.TimelinePoint{TimestampNs: uint64(d), Device: dev, LiveBytes: 8, ByCategory: catBytes(tracemem.CategoryActivation, 8)})
	}
	tr := &trace{name: "devices", profile: p, tree: newSpanTree(), nodes: map[string]tracemem.NodeMetrics{}}
	before := pointsByDeviceCalls.Load()
	var b bytes.Buffer
	if err := writeReport(&b, tr); err != nil {
		t.Fatal(err)
	}
	if got := pointsByDeviceCalls.Load() - before; got != 1 {
		t.Errorf("the report of %d devices split the timeline %d times, want once", devices, got)
	}
	if got := strings.Count(b.String(), `class="live"`); got != devices {
		t.Errorf("%d live outlines, want %d", got, devices)
	}
}

// TestReportNodesByPeak: the report's node table lists the nodes that
// `nodes` ranks first by peak, in its order (from a mutation test: a table
// ranked by residual went unseen).
func TestReportNodesByPeak(t *testing.T) {
	_, data := writeReportFile(t, sample(t))
	tables, _ := parseReport(t, data)
	var got []string
	for _, tb := range tables {
		if strings.HasPrefix(tb.heading, "Nodes with the highest peak") {
			for _, row := range tb.rows[1:] {
				got = append(got, row[4])
			}
		}
	}
	r := runCmd(t, nil, "nodes", "--top", strconv.Itoa(reportTopNodes), sample(t))
	var want []string
	lines := strings.Split(r.stdout, "\n")
	for i, header := range lines {
		if col := strings.Index(header, "  NODE  "); col >= 0 { // the column of the node's id
			for _, line := range lines[i+1:] {
				if f := strings.Fields(line[min(col, len(line)):]); len(f) > 0 {
					want = append(want, f[0])
				}
			}
			break
		}
	}
	if len(got) != reportTopNodes || !slices.Equal(got, want) {
		t.Errorf("report's nodes %q, want those of nodes --top %d: %q", got, reportTopNodes, want)
	}
}

// TestSatUint64: a float at or past 2⁶⁴ saturates; a conversion of 2⁶⁴
// itself is undefined in Go (2⁶³ on amd64), so the bound is inclusive
// (found by mutation: v > 2⁶⁴ passed).
func TestSatUint64(t *testing.T) {
	for _, c := range []struct {
		name string
		v    float64
		want uint64
	}{
		{"small", 1.4, 1},
		{"rounds", 2.5, 3},
		{"below 2⁶⁴", math.Nextafter(maxUint64Float, 0), math.MaxUint64 - 2047},
		{"2⁶⁴", maxUint64Float, math.MaxUint64},
		{"past 2⁶⁴", 1e20, math.MaxUint64},
	} {
		if got := satUint64(c.v); got != c.want {
			t.Errorf("%s: satUint64(%g) = %d, want %d", c.name, c.v, got, c.want)
		}
	}
}

// TestReportOnePointAxisEnd: with --max-points 1 each device keeps its
// highest point alone, and the time axis still runs to the first tick after
// the trace's last memory event, whichever device it is on and whether the
// trace streams or is read whole (from a user trial: the axis ended after
// the point kept, at 0.0012 ms, for a trace whose last event is at 9 ms);
// the point kept is the one the library keeps for 1 point, the first of the
// highest.
func TestReportOnePointAxisEnd(t *testing.T) {
	mem := func(ts uint64, action, tensor, device string, bytes uint64) string {
		return memRec(ts, action, tensor, "", device, bytes, "activation") // no span: only memory events give the end
	}
	cases := []struct {
		name, reason string
		records      []string
		end          uint64 // the trace's last memory event, ns
	}{
		{"late alloc", "the peak at 1 µs, freed at 2 µs, and a smaller alloc at 9 ms (the user's trace)",
			[]string{mem(1000, "alloc", "a", "cuda:0", 10*mib), mem(2000, "free", "a", "cuda:0", 10*mib), mem(9e6, "alloc", "b", "cuda:0", mib)}, 9e6},
		{"other device", "the last event is on cuda:1, whose highest point is earlier; cuda:0's chart ends there too",
			[]string{mem(1000, "alloc", "a", "cuda:0", 4*mib), mem(2000, "alloc", "b", "cuda:1", 8*mib), mem(3000, "free", "b", "cuda:1", 8*mib), mem(7e6, "alloc", "c", "cuda:1", mib)}, 7e6},
		{"tie", "the last event comes back to the peak: the first of the two is the point kept",
			[]string{mem(1000, "alloc", "a", "cuda:0", mib), mem(2000, "free", "a", "cuda:0", mib), mem(9e6, "alloc", "b", "cuda:0", mib)}, 9e6},
		{"last highest", "the last event is the peak: it is the point kept",
			[]string{mem(1000, "alloc", "a", "cuda:0", mib), mem(9e6, "alloc", "b", "cuda:0", mib)}, 9e6},
		{"read whole", "memory events out of order: the trace is read whole and replayed in time order",
			[]string{mem(1000, "alloc", "a", "cuda:0", 2*mib), mem(9e6, "alloc", "b", "cuda:0", mib), mem(2000, "free", "a", "cuda:0", 2*mib)}, 9e6},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path, data := reportOf(t, jsonlTrace(c.records...), "--max-points", "1")
			_, want := wantAnalysis(t, path, tracemem.Options{MaxTimelinePoints: 1})
			_, charts := parseReport(t, data)
			if len(charts) != len(want.ByDevice) {
				t.Fatalf("%s: %d charts, want %d", c.reason, len(charts), len(want.ByDevice))
			}
			wantEnd := niceTimeAxis(c.end).maxNs
			for _, ch := range charts {
				if end := ch.timeEnd(t); end != wantEnd {
					t.Errorf("%s: %s: the time axis ends at %d ns, want %d, the first tick after the last memory event (%d ns)", c.reason, ch.device, end, wantEnd, c.end)
				}
				pts := devicePointsScan(want, ch.device)
				live := ch.find("path", "class", "live")
				if len(pts) != 1 || len(live) != 1 {
					t.Fatalf("%s: %s: %d points kept by the library, %d live outlines; want 1 and 1", c.reason, ch.device, len(pts), len(live))
				}
				maxBytes, _ := ch.yScale(t)
				x := chartLeft + plotW*float64(pts[0].TimestampNs)/float64(wantEnd)
				y := chartTop + plotH - plotH*float64(pts[0].LiveBytes)/maxBytes
				if vs := pathVertices(t, live[0].attrs["d"]); len(vs) != 2 || !near(vs[0][0], x) || !near(vs[0][1], y) || !near(vs[1][0], chartLeft+plotW) || vs[1][1] != vs[0][1] {
					t.Errorf("%s: %s: the live outline has vertices %v, want the one point kept, (%.1f, %.1f) at %d ns, held to the axis end %g", c.reason, ch.device, vs, x, y, pts[0].TimestampNs, chartLeft+plotW)
				}
			}
		})
	}
}

// labelBoxOf returns the box of a label of a chart as the report estimates
// it: tickCharW a character, labelAscent above the baseline, labelDescent
// below, and labelHalo around.
func labelBoxOf(t *testing.T, e *svgElem) labelBox {
	t.Helper()
	x, err1 := strconv.ParseFloat(e.attrs["x"], 64)
	y, err2 := strconv.ParseFloat(e.attrs["y"], 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("label %q at x %q y %q", e.text, e.attrs["x"], e.attrs["y"])
	}
	w := tickCharW * float64(len([]rune(e.text)))
	switch e.attrs["text-anchor"] {
	case "start":
	case "end":
		x -= w
	default:
		t.Fatalf("label %q anchored at %q", e.text, e.attrs["text-anchor"])
	}
	return labelBox{x - labelHalo, y - labelAscent - labelHalo, x + w + labelHalo, y + labelDescent + labelHalo}
}

// segmentHits reports whether the level or upright segment a–b touches box.
func segmentHits(a, b [2]float64, box labelBox) bool {
	return max(min(a[0], b[0]), box.x0) <= min(max(a[0], b[0]), box.x1) && max(min(a[1], b[1]), box.y0) <= min(max(a[1], b[1]), box.y1)
}

// checkChartLabels checks the peak's and the capacity's labels of a chart:
// inside the SVG, above the plot's bottom; the peak's crossing neither the
// live line nor the capacity line; the capacity's crossing neither the
// live line (when strict: a capacity at or above the peak always leaves it
// room) nor the peak's line or dot; and the two not overlapping.
func checkChartLabels(t *testing.T, what string, ch reportChart, strict bool) {
	t.Helper()
	var peak, capLabel *svgElem
	var peakLine, dot, capLine *svgElem
	for _, e := range ch.elems {
		switch {
		case e.name == "text" && strings.HasPrefix(e.text, "peak "):
			peak = e
		case e.name == "text" && strings.HasPrefix(e.text, "capacity "):
			capLabel = e
		case e.name == "line" && e.attrs["stroke-dasharray"] == "2 3":
			peakLine = e
		case e.name == "circle":
			dot = e
		case e.name == "line" && e.attrs["class"] == "capacity":
			capLine = e
		}
	}
	num := func(e *svgElem, attr string) float64 {
		v, err := strconv.ParseFloat(e.attrs[attr], 64)
		if err != nil {
			t.Fatalf("%s: <%s %s=%q>", what, e.name, attr, e.attrs[attr])
		}
		return v
	}
	var live [][2]float64
	if l := ch.find("path", "class", "live"); len(l) == 1 {
		live = pathVertices(t, l[0].attrs["d"])
	}
	crossesLive := func(box labelBox) bool {
		for i := 0; i+1 < len(live); i++ {
			if segmentHits(live[i], live[i+1], box) {
				return true
			}
		}
		return false
	}
	if (capLine == nil) != (capLabel == nil) || peak == nil || peakLine == nil || dot == nil {
		t.Fatalf("%s: peak label %v, line %v, dot %v; capacity line %v, label %v", what, peak != nil, peakLine != nil, dot != nil, capLine != nil, capLabel != nil)
	}
	pb := labelBoxOf(t, peak)
	inside := func(b labelBox) bool { return b.x0 >= 0 && b.x1 <= chartW && b.y0 >= 0 && b.y1 <= chartTop+plotH }
	if !inside(pb) {
		t.Errorf("%s: the peak label %q spans %v, outside the SVG or below the plot", what, peak.text, pb)
	}
	if crossesLive(pb) {
		t.Errorf("%s: the live line crosses the peak label %q (%v)", what, peak.text, pb)
	}
	if capLine == nil {
		return
	}
	cy := num(capLine, "y1")
	if segmentHits([2]float64{num(capLine, "x1"), cy}, [2]float64{num(capLine, "x2"), cy}, pb) {
		t.Errorf("%s: the capacity line (y %.1f) crosses the peak label %q (%v)", what, cy, peak.text, pb)
	}
	cb := labelBoxOf(t, capLabel)
	if !inside(cb) {
		t.Errorf("%s: the capacity label %q spans %v, outside the SVG or below the plot", what, capLabel.text, cb)
	}
	if cb.overlaps(pb) {
		t.Errorf("%s: the capacity label %q (%v) overlaps the peak label %q (%v)", what, capLabel.text, cb, peak.text, pb)
	}
	if !strict {
		return
	}
	if crossesLive(cb) {
		t.Errorf("%s: the live line crosses the capacity label %q (%v)", what, capLabel.text, cb)
	}
	px, py := num(dot, "cx"), num(dot, "cy")
	if segmentHits([2]float64{px, chartTop}, [2]float64{px, chartTop + plotH}, cb) || cb.overlaps(labelBox{px - 4, py - 4, px + 4, py + 4}) {
		t.Errorf("%s: the peak's line or dot at x %.1f crosses the capacity label %q (%v)", what, px, capLabel.text, cb)
	}
}

// labelProfile returns a trace of one device, cuda:0, whose live bytes are
// those of points (ns, bytes), all activations, with capacity (0: unknown).
func labelProfile(points [][2]uint64, capacity uint64) *trace {
	d := tracemem.DeviceMemoryStats{Device: "cuda:0", CapacityBytes: capacity, AllocCount: uint64(len(points))}
	p := &tracemem.MemoryProfile{}
	for i, pt := range points {
		if i == 0 || pt[1] > d.PeakBytes {
			d.PeakBytes, d.PeakTimestampNs = pt[1], pt[0]
		}
		p.Timeline = append(p.Timeline, tracemem.TimelinePoint{TimestampNs: pt[0], Device: "cuda:0", LiveBytes: pt[1], HeapBytes: pt[1], ByCategory: catBytes(tracemem.CategoryActivation, pt[1])})
	}
	p.ByDevice = []tracemem.DeviceMemoryStats{d}
	p.Summary = tracemem.MemorySummary{PeakBytes: d.PeakBytes, PeakTimestampNs: d.PeakTimestampNs, PeakDevice: "cuda:0", AllocCount: d.AllocCount}
	return &trace{name: "labels", profile: p, tree: newSpanTree(), nodes: map[string]tracemem.NodeMetrics{}}
}

// TestReportLabelsClear: the labels of the peak and the capacity stay off
// the live line, the capacity line, the peak's marker and each other, and
// inside the SVG (from a user trial: a peak near the top of the axis had
// its label moved down onto the live line, in 39 of 501 charts, and a
// capacity just above the peak ran through the peak's label, or its own
// label sat on the live line or on the peak's), in cases made by hand and
// in random charts.
func TestReportLabelsClear(t *testing.T) {
	cases := []struct {
		name, reason string
		points       [][2]uint64 // ns, live bytes; the axis ends at 100 ns
		capacity     uint64
	}{
		{"peak at the top, falling", "a peak at the top of the axis, freed 1 ns later: the line falls right where a label moved into the plot was",
			[][2]uint64{{10, 8 * mib}, {11, 0}, {96, 4}}, 0},
		{"peak near the top, held", "a peak 5% below the top of the axis, held: its level runs through a label moved down into the plot",
			[][2]uint64{{10, 19 * mib / 2}, {50, mib}, {96, mib}}, 0},
		{"peak at the start", "a peak at 0 ns and the top of the axis (24 devices, from the user's trial)",
			[][2]uint64{{0, 96 * mib}, {96, 96 * mib}}, 0},
		{"capacity just above the peak", "a capacity a little above a peak in the right 30%: the capacity line ran through the peak's label, and the capacity's label into the peak's",
			[][2]uint64{{5, 10 * mib}, {20, 30 * mib}, {85, 40 * mib}, {90, 38 * mib}, {96, 38 * mib}}, 42 * mib},
		{"capacity under the live line", "a capacity below the peak, the live line above it at the right end, where its label went",
			[][2]uint64{{5, 2 * mib}, {68, 106 * mib / 10}, {70, 9 * mib}, {75, 104 * mib / 10}, {96, 104 * mib / 10}}, 1035 * mib / 100},
		{"capacity at the top, peak at the left under it", "a capacity at the top of the axis and a peak just under it, held",
			[][2]uint64{{5, 78 * mib / 10}, {60, mib}, {96, mib}}, 8 * mib},
		{"peak at the right end under the capacity", "the peak's line at the right end of the capacity line, where its label goes first",
			[][2]uint64{{5, mib}, {95, 4 * mib}, {96, 4 * mib}}, 4 * mib},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := writeReport(&b, labelProfile(append(c.points, [2]uint64{96, c.points[len(c.points)-1][1]}), c.capacity)); err != nil {
				t.Fatal(err)
			}
			_, charts := parseReport(t, b.Bytes())
			if len(charts) != 1 {
				t.Fatalf("%d charts", len(charts))
			}
			if end := charts[0].timeEnd(t); end != 100 {
				t.Fatalf("%s: the axis ends at %d ns, want 100", c.reason, end)
			}
			checkChartLabels(t, c.reason, charts[0], true)
		})
	}
	// Random charts: with no capacity or one of 1 to 2 × the peak, every
	// label has a place clear of everything; with one below the peak (the
	// live line may cross it anywhere) the labels still keep off each other
	// and the peak's label off the lines.
	rng := rand.New(rand.NewPCG(11, 12))
	for n := range 400 {
		var points [][2]uint64
		ns := uint64(0)
		for range 1 + rng.IntN(40) {
			ns += uint64(rng.IntN(1000))
			points = append(points, [2]uint64{ns, uint64(rng.Int64N(1 << uint(1+rng.IntN(50))))})
		}
		peak := slices.MaxFunc(points, func(a, b [2]uint64) int { return cmp.Compare(a[1], b[1]) })[1]
		var capacity uint64
		strict := true
		switch rng.IntN(3) {
		case 1:
			capacity = peak + uint64(rng.Float64()*float64(peak))
		case 2:
			capacity, strict = peak/2+uint64(rng.Float64()*float64(peak/2)), false
		}
		if peak == 0 {
			continue
		}
		var b bytes.Buffer
		if err := writeReport(&b, labelProfile(points, capacity)); err != nil {
			t.Fatal(err)
		}
		_, charts := parseReport(t, b.Bytes())
		checkChartLabels(t, fmt.Sprintf("random chart %d (capacity %d, peak %d)", n, capacity, peak), charts[0], strict)
	}
}

// cssRules returns the declarations of a style sheet by selector (each
// selector of a list gets the block's declarations).
func cssRules(css string) map[string]map[string]string {
	rules := map[string]map[string]string{}
	for block := range strings.SplitSeq(css, "}") {
		sels, decls, ok := strings.Cut(block, "{")
		if !ok {
			continue
		}
		for sel := range strings.SplitSeq(sels, ",") {
			sel = strings.TrimSpace(sel)
			if rules[sel] == nil {
				rules[sel] = map[string]string{}
			}
			for d := range strings.SplitSeq(decls, ";") {
				if k, v, ok := strings.Cut(d, ":"); ok {
					rules[sel][strings.TrimSpace(k)] = strings.TrimSpace(v)
				}
			}
		}
	}
	return rules
}

// TestReportLongNamesWrap: names without spaces (span paths, tensor ids,
// devices of hundreds of characters) wrap in the table cells, the headings
// and the captions instead of widening the page (from a user trial: up to
// 8000 px), while numbers and the report's own words (the category and
// kind columns) never break, nor do short names to make room for long
// ones. The style sheet says so, which this reads without a browser;
// TestReportLongNamesInBrowser renders it.
func TestReportLongNamesWrap(t *testing.T) {
	rules := cssRules(reportCSS)
	cases := []struct {
		selector, property, value, reason string
	}{
		{"td", "overflow-wrap", "anywhere", "a name in a table cell breaks where it must (break-word would not let its column narrow)"},
		{"td:not(.n)", "min-width", "4em", "a short name (matmul, bf16, [4,512]) is not broken to narrow its column"},
		{"td.n", "white-space", "nowrap", "a number never wraps"},
		{"table.allocs td:nth-child(2)", "white-space", "nowrap", "a category (activation) never breaks"},
		{"table.nodes td:nth-child(4)", "white-space", "nowrap", "a node's kind (function) never breaks"},
		{"h1", "overflow-wrap", "anywhere", "the file name in the title wraps"},
		{"h2", "overflow-wrap", "anywhere", "the peak device in the top allocations' heading wraps"},
		{"p", "overflow-wrap", "anywhere", "the run's names wrap"},
		{"figcaption", "overflow-wrap", "anywhere", "the device in a chart's caption wraps"},
	}
	for _, c := range cases {
		if got := rules[c.selector][c.property]; got != c.value {
			t.Errorf("%s: %s {%s: %q}, want %q", c.reason, c.selector, c.property, got, c.value)
		}
	}
	// The selectors by column name the columns they mean.
	_, data := writeReportFile(t, sample(t))
	for _, want := range []string{
		"<table class=\"allocs\">\n<tr><th class=\"n\">bytes</th><th>category</th>",
		"<table class=\"nodes\">\n<tr><th class=\"n\">peak</th><th class=\"n\">residual</th><th class=\"n\">bytes</th><th>kind</th>",
	} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the report lacks %q, whose column the style sheet keeps on one line", want)
		}
	}
}

// TestReportLongNamesInBrowser renders, in headless Chromium 1200 px wide,
// the report of a trace whose span names, tensor id and device are 120 to
// 300 characters without a space, and checks that nothing is drawn in the
// page's right margin (the body's 24 px): a table or heading wider than
// the window would run through it.
func TestReportLongNamesInBrowser(t *testing.T) {
	chromium := needChromium(t)
	long := func(s string, n int) string { return strings.Repeat(s, n/len(s)) }
	dev := long("device_", 120)
	_, data := reportOf(t, jsonlTrace(startRec("root", long("module_", 300), "", 0), startRec("s", long("layer.", 200), "root", 1),
		memRec(10, "alloc", long("tensor", 300), "s", dev, mib, "activation"),
		memRec(20, "alloc", "t2", "s", dev, 2*mib, "parameter"),
		endRec("s", 100), endRec("root", 100)))
	dir := t.TempDir()
	page, shot := filepath.Join(dir, "report.html"), filepath.Join(dir, "report.png")
	if err := os.WriteFile(page, data, 0o644); err != nil {
		t.Fatal(err)
	}
	const width, height, margin = 1200, 2400, 24
	cmd := exec.Command(chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--hide-scrollbars",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--screenshot="+shot, fmt.Sprintf("--window-size=%d,%d", width, height),
		"file://"+page)
	cmd.Env = append(os.Environ(), "HOME="+dir)
	if out, err := runWithTimeout(cmd, 2*time.Minute); err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	if b.Dx() < width-margin {
		t.Fatalf("a screenshot %d px wide, want %d", b.Dx(), width)
	}
	drawn := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Max.X - margin + 4; x < b.Max.X; x++ {
			if r, g, bl, _ := img.At(x, y).RGBA(); r>>8 < 0xf0 || g>>8 < 0xf0 || bl>>8 < 0xf0 {
				drawn++
			}
		}
	}
	if drawn > 0 {
		t.Errorf("%d pixels drawn in the right margin of a %d px window: a long name widens the page instead of wrapping", drawn, width)
	}
}
