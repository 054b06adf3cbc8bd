// report_test.go holds the tests of the HTML report: well-formed, self-contained, one chart per device, and rendered by a browser when one is installed.

package main

import (
	"bytes"
	"encoding/xml"
	"errors"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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
	externals []string // attribute values that load something (src, href, url(...))
}

// checkWellFormed parses doc as strict XML (every tag closed and balanced,
// entities valid) and collects its charts.
func checkWellFormed(t *testing.T, doc []byte) xmlSummary {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(doc))
	d.Strict = true
	var s xmlSummary
	depth, svgDepth := 0, -1
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
			case "link", "script", "img", "iframe":
				s.externals = append(s.externals, "<"+el.Name.Local+">")
			}
		case xml.EndElement:
			if el.Name.Local == "svg" {
				svgDepth = -1
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
	if !strings.Contains(text, "peak "+formatBytes(want.Summary.PeakBytes)+" at "+formatMs(want.Summary.PeakTimestampNs)+" ms") {
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

// TestReportHandMade renders profiles made by hand: a capacity far above the
// peak is not drawn to scale but named, a known capacity near the peak is
// drawn, an unknown capacity is said, and a trace without memory events
// gives a report without charts.
func TestReportHandMade(t *testing.T) {
	opName := "matmul"
	p := &tracemem.MemoryProfile{
		Summary: tracemem.MemorySummary{PeakBytes: 3 * mib, PeakTimestampNs: 2e6, PeakDevice: "cuda:0", AllocCount: 3, FreeCount: 1},
		Timeline: []tracemem.TimelinePoint{
			{TimestampNs: 1e6, Device: "cuda:0", LiveBytes: mib, ByCategory: catBytes(tracemem.CategoryParameter, mib)},
			{TimestampNs: 1e6, Device: "cuda:1", LiveBytes: 2 * mib, ByCategory: catBytes(tracemem.CategoryActivation, 2*mib)},
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
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if strings.Contains(text, `class="capacity"`) {
		t.Errorf("a capacity 80 GiB above a 3 MiB peak is drawn to scale")
	}
	if len(s.svgs) != 2 || s.areasIn[0] != 2 || s.areasIn[1] != 1 {
		t.Errorf("charts %d, areas %v: want 2 charts with 2 and 1 category areas", len(s.svgs), s.areasIn)
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
// top, in MiB below 1 GiB and GiB from it.
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
	ta := niceTimeAxis(2_400_000)
	var labels []string
	for _, tk := range ta.ticks {
		labels = append(labels, tk.label)
	}
	if got := strings.Join(labels, " "); got != "0.0 0.5 1.0 1.5 2.0" {
		t.Errorf("time ticks of 2.4 ms = %s", got)
	}
	for _, c := range []struct{ raw, want float64 }{{0.3, 0.5}, {1, 1}, {1.1, 2}, {3, 5}, {7, 10}, {0.02, 0.02}} {
		if got := niceStep(c.raw); got != c.want {
			t.Errorf("niceStep(%g) = %g, want %g", c.raw, got, c.want)
		}
	}
}

// TestReportInBrowser renders the report of the sample in headless
// Chromium and checks that the screenshot is not blank: it has many colours,
// among them the parameter and activation fills of the charts.
func TestReportInBrowser(t *testing.T) {
	const chromium = "/usr/bin/chromium"
	if _, err := os.Stat(chromium); err != nil {
		t.Skipf("%s is not installed, so the report is not rendered in a browser (apt-get install chromium to run this check)", chromium)
	}
	if testing.Short() {
		t.Skip("the browser check starts Chromium; skipped with -short")
	}
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
