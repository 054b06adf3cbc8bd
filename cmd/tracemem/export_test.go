// export_test.go holds the tests of the chrome, pprof and csv exports: each read back and checked against the analysis.

package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
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

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/pprof/profile"
	"github.com/tracemem/tracemem"
)

// wantAnalysis analyzes path through the document path of the library
// (ReadTraceFile + Analyze), independently of the command's loader.
func wantAnalysis(t *testing.T, path string, opts tracemem.Options) (*tracemem.TraceDocument, *tracemem.MemoryProfile) {
	t.Helper()
	doc, err := tracemem.ReadTraceFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := tracemem.Analyze(doc, opts)
	if err != nil {
		t.Fatal(err)
	}
	return doc, p
}

// docPath returns the span path of span id in doc, root first, walking the
// parent links (a reference for the command's span tree).
func docPath(doc *tracemem.TraceDocument, id string) []string {
	byID := make(map[string]*tracemem.Span)
	for i := range doc.Spans {
		byID[doc.Spans[i].ID] = &doc.Spans[i]
	}
	var names []string
	for s := byID[id]; s != nil && len(names) <= len(doc.Spans); s = byID[s.ParentID] {
		names = append([]string{s.Name}, names...)
	}
	return names
}

func exportFile(t *testing.T, format string, extra ...string) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out."+format)
	args := append([]string{"export", "--format", format, "-o", out}, extra...)
	args = append(args, sample(t))
	if r := runCmd(t, nil, args...); r.code != 0 || r.stdout != "" || r.stderr != "" {
		t.Fatalf("export %s: exit %d, stdout %q, stderr %q", format, r.code, r.stdout, r.stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestExportPprof parses the pprof export back and checks its sample types,
// its totals against the peak, and each sample's stack against the span
// path of its allocation.
func TestExportPprof(t *testing.T) {
	doc, want := wantAnalysis(t, sample(t), tracemem.Options{})
	data := exportFile(t, "pprof")
	if len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
		t.Fatalf("the pprof export is not gzipped")
	}
	prof, err := profile.Parse(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("profile.Parse: %v", err)
	}
	if err := prof.CheckValid(); err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, st := range prof.SampleType {
		types = append(types, st.Type+"/"+st.Unit)
	}
	if !slices.Equal(types, []string{"inuse_objects/count", "inuse_space/bytes"}) || prof.DefaultSampleType != "inuse_space" {
		t.Fatalf("sample types %v (default %q), want inuse_objects/count, inuse_space/bytes (default inuse_space)", types, prof.DefaultSampleType)
	}
	var breakdownSum uint64
	for _, a := range want.PeakBreakdown {
		breakdownSum += a.Bytes
	}
	var space, objects, allocSpace int64
	byTensor := make(map[string]*profile.Sample)
	for _, s := range prof.Sample {
		space += s.Value[1]
		objects += s.Value[0]
		if id := s.Label["tensor_id"]; len(id) == 1 {
			allocSpace += s.Value[1]
			byTensor[id[0]] = s
		}
	}
	if uint64(allocSpace) != breakdownSum {
		t.Errorf("inuse_space of the allocations = %d, want the peak breakdown's sum %d", allocSpace, breakdownSum)
	}
	if uint64(space) != want.Summary.PeakBytes {
		t.Errorf("inuse_space total = %d, want the peak %d (breakdown + pre-existing live at the peak)", space, want.Summary.PeakBytes)
	}
	if objects != int64(len(want.PeakBreakdown)) || len(byTensor) != len(want.PeakBreakdown) {
		t.Errorf("inuse_objects = %d over %d tensors, want %d", objects, len(byTensor), len(want.PeakBreakdown))
	}
	for _, a := range want.PeakBreakdown {
		s := byTensor[a.TensorID]
		if s == nil {
			t.Errorf("no sample for tensor %s", a.TensorID)
			continue
		}
		var stack []string // root first
		for i := len(s.Location) - 1; i >= 0; i-- {
			stack = append(stack, s.Location[i].Line[0].Function.Name)
		}
		wantStack := docPath(doc, a.SpanID)
		// The op is the leaf, unless the span is an op span of that name
		// (from a user trial: "matmul / matmul" in every stack).
		i := slices.IndexFunc(doc.Spans, func(s tracemem.Span) bool { return s.ID == a.SpanID })
		if a.OpName != nil && (i < 0 || doc.Spans[i].Kind != tracemem.SpanOp || doc.Spans[i].Name != *a.OpName) {
			wantStack = append(wantStack, *a.OpName)
		}
		if !slices.Equal(stack, wantStack) {
			t.Errorf("tensor %s: stack %q, want %q", a.TensorID, stack, wantStack)
		}
		if s.Value[1] != int64(a.Bytes) || s.Label["dtype"][0] != a.DType || s.Label["category"][0] != a.Category.String() {
			t.Errorf("tensor %s: value %d dtype %v category %v, want %d %s %s", a.TensorID, s.Value[1], s.Label["dtype"], s.Label["category"], a.Bytes, a.DType, a.Category)
		}
		// The size as a numeric label, as Go's heap profiles give it, for
		// pprof's -tags and -tagfocus=bytes=...
		if !slices.Equal(s.NumLabel["bytes"], []int64{int64(a.Bytes)}) || !slices.Equal(s.NumUnit["bytes"], []string{"bytes"}) {
			t.Errorf("tensor %s: numeric label bytes %v (unit %v), want [%d] in bytes", a.TensorID, s.NumLabel["bytes"], s.NumUnit["bytes"], a.Bytes)
		}
	}
}

// chromeEvent is the part of a Chrome trace event the tests read.
type chromeEvent struct {
	Ph   string         `json:"ph"`
	Name string         `json:"name"`
	Cat  string         `json:"cat"`
	Pid  int            `json:"pid"`
	Tid  int            `json:"tid"`
	Ts   json.Number    `json:"ts"`
	Dur  json.Number    `json:"dur"`
	Args map[string]any `json:"args"`
}

// TestExportChrome parses the Chrome export back as JSON and checks the
// counter values at the peak, one counter event per timeline point, one
// process per device and one complete event per span.
func TestExportChrome(t *testing.T) {
	doc, want := wantAnalysis(t, sample(t), tracemem.Options{})
	data := exportFile(t, "chrome")
	var tr struct {
		TraceEvents     []chromeEvent `json:"traceEvents"`
		DisplayTimeUnit string        `json:"displayTimeUnit"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&tr); err != nil {
		t.Fatalf("the chrome export is not JSON: %v", err)
	}
	s := want.Summary
	var counters, spans int
	var slices []viewerSlice
	procs := map[int]string{}
	peakPid := -1
	for _, ev := range tr.TraceEvents {
		if ev.Ph == "M" && ev.Name == "process_name" {
			procs[ev.Pid] = ev.Args["name"].(string)
			if ev.Args["name"] == "memory "+s.PeakDevice {
				peakPid = ev.Pid
			}
		}
	}
	foundPeak := false
	for _, ev := range tr.TraceEvents {
		switch ev.Ph {
		case "C":
			counters++
			if ev.Pid != peakPid || ev.Ts.String() != usString(s.PeakTimestampNs) {
				continue
			}
			var sum uint64
			match := true
			for _, c := range tracemem.Categories {
				v, ok := ev.Args[c.String()]
				var got uint64
				if ok {
					got, _ = strconv.ParseUint(string(v.(json.Number)), 10, 64)
				}
				sum += got
				if got != s.PeakByCategory.Get(c) {
					match = false
				}
			}
			if match && sum == s.PeakBytes {
				foundPeak = true
			}
		case "X":
			spans++
			if ev.Pid != spansPid {
				t.Errorf("span %s on pid %d, want %d", ev.Name, ev.Pid, spansPid)
			}
			start := usNs(t, ev.Ts)
			slices = append(slices, viewerSlice{lane: int32(ev.Tid), start: start, end: start + usNs(t, ev.Dur), id: ev.Args["id"].(string)})
		}
	}
	// Each span is drawn under its parent or under none, never under
	// another span (from a user trial: a span under an unrelated one).
	parent := map[string]string{}
	for _, sp := range doc.Spans {
		parent[sp.ID] = sp.ParentID
	}
	under, lanes := 0, int32(0)
	for i, p := range viewerParents(slices) {
		if p != "" && p != parent[slices[i].id] {
			t.Errorf("span %s drawn under %s, not its parent %q", slices[i].id, p, parent[slices[i].id])
		}
		if p != "" {
			under++
		}
		lanes = max(lanes, slices[i].lane)
	}
	// Most spans have their parent, on a few threads: only spans of no
	// length that start with a sibling, or end with one, go elsewhere.
	if under < len(doc.Spans)*9/10 || lanes > 4 {
		t.Errorf("%d of %d spans drawn under their parent, on %d threads; want nearly all, on a few", under, len(doc.Spans), lanes)
	}
	t.Logf("%d of %d spans drawn under their parent, on %d threads", under, len(doc.Spans), lanes)
	if !foundPeak {
		t.Errorf("no counter event of %s at ts %s with the peak's categories %v (sum %d)", s.PeakDevice, usString(s.PeakTimestampNs), s.PeakByCategory, s.PeakBytes)
	}
	if counters != len(want.Timeline) {
		t.Errorf("%d counter events, want one per timeline point: %d", counters, len(want.Timeline))
	}
	if spans != len(doc.Spans) {
		t.Errorf("%d complete events, want one per span: %d", spans, len(doc.Spans))
	}
	if len(procs) != len(want.ByDevice)+1 {
		t.Errorf("processes %v, want spans and one per device (%d)", procs, len(want.ByDevice))
	}
}

// usNs parses the export's microseconds (3 decimals) as ns.
func usNs(t *testing.T, us json.Number) uint64 {
	t.Helper()
	whole, frac, _ := strings.Cut(string(us), ".")
	w, err1 := strconv.ParseUint(whole, 10, 64)
	f, err2 := strconv.ParseUint((frac + "000")[:3], 10, 64)
	if err1 != nil || err2 != nil || len(frac) > 3 {
		t.Fatalf("time %q: not µs with 3 decimals", us)
	}
	return w*1000 + f
}

// viewerSlice is a span as a trace viewer sees it: its thread, interval and
// id, in the order written.
type viewerSlice struct {
	lane       int32
	start, end uint64
	id         string
}

// viewerParents returns the id of the slice each slice is drawn under (""
// for none), by the rule trace viewers stack a thread's complete events
// by: the innermost slice written before it on its thread that holds it
// (the latest start, then the earliest end, then the last written). Ends
// count as inside, as a memory event at a span's end does: under that
// reading a span of no length at another's end is drawn under it. O(n²),
// obviously right.
func viewerParents(sl []viewerSlice) []string {
	out := make([]string, len(sl))
	for i, s := range sl {
		best := -1
		for j, o := range sl[:i] {
			if o.lane != s.lane || o.start > s.start || o.end < s.end {
				continue
			}
			if best < 0 || o.start > sl[best].start || o.start == sl[best].start && o.end <= sl[best].end {
				best = j
			}
		}
		if best >= 0 {
			out[i] = sl[best].id
		}
	}
	return out
}

// usString renders ns as the export's microseconds.
func usString(ns uint64) string {
	return strconv.FormatUint(ns/1000, 10) + "." + strconv.FormatUint(1000+ns%1000, 10)[1:]
}

// TestExportCSV checks the CSV header, one row per timeline point (with and
// without downsampling), and each row against its timeline point.
func TestExportCSV(t *testing.T) {
	for _, points := range []int{0, 40} {
		t.Run("max-points="+strconv.Itoa(points), func(t *testing.T) {
			_, want := wantAnalysis(t, sample(t), tracemem.Options{MaxTimelinePoints: points})
			data := exportFile(t, "csv", "--max-points", strconv.Itoa(points))
			rows, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			header := "timestamp_ns,device,live_bytes,free_bytes,parameter,activation,gradient,optimizer,other"
			if len(rows) == 0 || strings.Join(rows[0], ",") != header {
				t.Fatalf("header %q, want %q", rows[0], header)
			}
			if len(rows)-1 != len(want.Timeline) {
				t.Fatalf("%d rows, want one per timeline point: %d", len(rows)-1, len(want.Timeline))
			}
			if points > 0 && len(rows)-1 > points*len(want.ByDevice) {
				t.Errorf("%d rows, want at most %d per device", len(rows)-1, points)
			}
			for i, p := range want.Timeline {
				r := rows[i+1]
				wantRow := []string{strconv.FormatUint(p.TimestampNs, 10), p.Device, strconv.FormatUint(p.LiveBytes, 10), strconv.FormatUint(p.FreeBytes, 10)}
				for _, c := range tracemem.Categories {
					wantRow = append(wantRow, strconv.FormatUint(p.ByCategory.Get(c), 10))
				}
				if !slices.Equal(r, wantRow) {
					t.Fatalf("row %d = %q, want %q", i+1, r, wantRow)
				}
			}
		})
	}
}

// TestExportStdout checks that -o - writes the export to stdout.
func TestExportStdout(t *testing.T) {
	r := runCmd(t, nil, "export", "--format", "csv", "-o", "-", sample(t))
	want := exportFile(t, "csv")
	if r.code != 0 || r.stdout != string(want) {
		t.Errorf("export -o - gave exit %d and %d bytes, want the file's %d bytes", r.code, len(r.stdout), len(want))
	}
}

// TestNoMemoryNote: an export or a profile of a trace without memory events
// succeeds (its output is valid, and empty of memory) with a note on stderr
// that says so and, for a PyTorch trace, when PyTorch writes them (from a
// user trial: the empty file passed without a word), or for tracemem's own
// Chrome export which trace to analyze. A trace with memory events, even
// only frees, gets no note.
func TestNoMemoryNote(t *testing.T) {
	dir := t.TempDir()
	metaOnly := writeFile(t, dir, "meta.jsonl", []byte(jsonlTrace()))
	// A PyTorch trace written out as JSONL keeps its source tag (from a
	// review: profile and csv, which stream untapped, lost the hint).
	torchMeta := strings.Replace(jsonlTrace(), `"tags": {}`, `"tags": {"source": "chrome_trace"}`, 1)
	torchJSONL := writeFile(t, dir, "torch.jsonl", []byte(torchMeta))
	torchNoNewline := writeFile(t, dir, "torch-nonl.jsonl", []byte(strings.TrimRight(torchMeta, "\n"))) // its one line without a newline
	freesOnly := writeFile(t, dir, "frees.jsonl", []byte(jsonlTrace(memRec(5, "free", "x", "", "cuda:0", 8, "activation"))))
	torch := filepath.Join("..", "..", "testdata", "chrome", "torch-1.13-cpu.json")
	// From a user trial: tracemem's Chrome export read back was taken for a
	// PyTorch trace profiled without profile_memory.
	exported := exportedSample(t, dir)
	exportHint := `the trace is tracemem's own Chrome export, which holds memory as counters to view, not as memory events: analyze the trace it was made from, ` + regexp.QuoteMeta(sample(t)) + `; `
	// Made from standard input, it names no trace (from a mutation test: a
	// dangling comma went unseen).
	sampleData, err := os.ReadFile(sample(t))
	if err != nil {
		t.Fatal(err)
	}
	exportedStdin := filepath.Join(dir, "exported-stdin.json")
	if r := runCmd(t, bytes.NewReader(sampleData), "export", "--format", "chrome", "-o", exportedStdin, "-"); r.code != 0 {
		t.Fatalf("export chrome of standard input: %+v", r)
	}
	stdinHint := `the trace is tracemem's own Chrome export, which holds memory as counters to view, not as memory events: analyze the trace it was made from; `
	out := filepath.Join(dir, "out")
	for _, c := range []struct {
		args          []string
		note, noSpans string // regexps of the note after the file's name; noSpans for a trace without spans, when it differs
	}{
		{[]string{"export", "--format", "pprof", "-o", out}, `the pprof profile has no samples`, ""},
		{[]string{"export", "--format", "csv", "-o", out}, `the CSV has its header only`, ""},
		{[]string{"export", "--format", "chrome", "-o", out}, `the export has spans but no memory counters`, `the export has no spans either: it is empty`},
		{[]string{"profile"}, `the profile holds zeros`, ""},
	} {
		const torchHint = `the trace has no memory events \(PyTorch's profiler writes \[memory\] events with profile_memory=True, in builds with Kineto\); `
		for _, tc := range []struct {
			file, hint     string
			none, spanless bool
		}{
			{metaOnly, `the trace has no memory events; `, true, true},
			{torch, torchHint, true, false},
			{exported, exportHint, true, true}, // its spans are not read back: their categories are not PyTorch's
			{exportedStdin, stdinHint, true, true},
			{torchJSONL, torchHint, true, true},
			{torchNoNewline, torchHint, true, true},
			{freesOnly, ``, false, true},
			{sample(t), ``, false, false},
		} {
			r := runCmd(t, nil, append(c.args, tc.file)...)
			want := "^$"
			if note := c.note; tc.none {
				if tc.spanless && c.noSpans != "" { // from a review: it claimed spans
					note = c.noSpans
				}
				want = `^tracemem: note: ` + regexp.QuoteMeta(tc.file) + `: ` + tc.hint + note + "\n$"
			}
			if r.code != 0 || !regexp.MustCompile(want).MatchString(r.stderr) {
				t.Errorf("%s %s: exit status %d, stderr %q; want 0 and %q", strings.Join(c.args[:1], " "), tc.file, r.code, r.stderr, want)
			}
		}
	}
}

// handTrace is a profile made by hand: two devices, a category seen then
// gone, an allocation without op or span, pre-existing memory at the peak,
// and a span that never closed.
func handTrace() *trace {
	op := "matmul"
	p := &tracemem.MemoryProfile{
		Summary: tracemem.MemorySummary{PeakBytes: 1700, PeakTimestampNs: 2500, PeakDevice: "cuda:0"},
		Timeline: []tracemem.TimelinePoint{
			{TimestampNs: 1000, Device: "cuda:0", LiveBytes: 1200, ByCategory: addCat(catBytes(tracemem.CategoryOther, 200), tracemem.CategoryParameter, 1000)},
			{TimestampNs: 1500, Device: "cuda:1", LiveBytes: 64, ByCategory: catBytes(tracemem.CategoryGradient, 64)},
			{TimestampNs: 2500, Device: "cuda:0", LiveBytes: 1700, ByCategory: addCat(addCat(catBytes(tracemem.CategoryOther, 200), tracemem.CategoryParameter, 1000), tracemem.CategoryActivation, 500)},
			{TimestampNs: 3000, Device: "cuda:0", LiveBytes: 1000, ByCategory: addCat(addCat(catBytes(tracemem.CategoryOther, 0), tracemem.CategoryParameter, 1000), tracemem.CategoryActivation, 0)},
		},
		PeakBreakdown: []tracemem.LiveAllocation{
			{TensorID: "w", SpanID: "", Bytes: 1000, DType: "f32", Device: "cuda:0", Category: tracemem.CategoryParameter},
			{TensorID: "a", SpanID: "mm", OpName: &op, Bytes: 500, DType: "bf16", Device: "cuda:0", Category: tracemem.CategoryActivation},
		},
		ByDevice: []tracemem.DeviceMemoryStats{{Device: "cuda:0", PeakBytes: 1700, PeakTimestampNs: 2500}, {Device: "cuda:1", PeakBytes: 64, PeakTimestampNs: 1500}},
	}
	tree := newSpanTree()
	tree.addSpan(spanInfo{id: "root", name: "step", startNs: 500, kind: tracemem.SpanFunction})
	tree.addSpan(spanInfo{id: "mm", parent: "root", name: "matmul", startNs: 900, kind: tracemem.SpanOp, step: tracemem.StepForward})
	tree.endSpan("mm", 1700)
	return &trace{name: "hand", profile: p, tree: tree}
}

// TestChromeHandMade checks the counter series of each device (every
// category seen on it, 0 once gone), the microsecond timestamps, and the
// duration of a span that never closed (to the last timestamp).
func TestChromeHandMade(t *testing.T) {
	var b bytes.Buffer
	if err := writeChrome(&b, handTrace()); err != nil {
		t.Fatal(err)
	}
	var tr struct {
		TraceEvents []map[string]any `json:"traceEvents"`
	}
	if err := json.Unmarshal(b.Bytes(), &tr); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b.String())
	}
	var got []string
	for _, ev := range tr.TraceEvents {
		args, _ := json.Marshal(ev["args"])
		got = append(got, fmt.Sprintf("%v %v pid=%v ts=%v dur=%v %s", ev["ph"], ev["name"], ev["pid"], ev["ts"], ev["dur"], args))
	}
	want := []string{
		`M process_name pid=1 ts=<nil> dur=<nil> {"name":"spans"}`,
		`M process_name pid=2 ts=<nil> dur=<nil> {"name":"memory cuda:0"}`,
		`M process_name pid=3 ts=<nil> dur=<nil> {"name":"memory cuda:1"}`,
		`C cuda:0 bytes pid=2 ts=1 dur=<nil> {"activation":0,"other":200,"parameter":1000}`,
		`C cuda:1 bytes pid=3 ts=1.5 dur=<nil> {"gradient":64}`,
		`C cuda:0 bytes pid=2 ts=2.5 dur=<nil> {"activation":500,"other":200,"parameter":1000}`,
		`C cuda:0 bytes pid=2 ts=3 dur=<nil> {"activation":0,"other":0,"parameter":1000}`,
		`X step pid=1 ts=0.5 dur=2.5 {"closed":false,"id":"root"}`,
		`X matmul pid=1 ts=0.9 dur=1.7 {"id":"mm","step":"forward"}`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestSpanLanes: on random span sets, the spans of each thread of the Chrome
// export nest (each ends by the end of the one it starts in), each is drawn
// under its parent or under none (never under another span), every span is
// written once, and spans that nest as a whole (children inside their
// parents, siblings apart, none of no length) all stay on thread 1. The
// sets: nested ones (with spans of no length in half of them), loose ones,
// and small ones over a few ns, heavy in spans of no length, spans never
// closed and parents that form cycles (from a review: such a set drew a
// span of no length under its sibling).
func TestSpanLanes(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for n := range 30000 {
		tree := newSpanTree()
		mode := n % 3
		nested, zeroOK := mode == 0, n%6 != 0
		spans := 1 + rng.IntN(12)
		span := 50
		if mode == 2 {
			span = 2 + rng.IntN(12)
		}
		type iv struct{ start, end uint64 }
		var ivs []iv
		for i := range spans {
			s := spanInfo{id: "s" + strconv.Itoa(i), name: "n", startNs: uint64(rng.IntN(span)), closed: rng.IntN(5) > 0}
			s.durationNs = uint64(rng.IntN(span * 3 / 5))
			switch {
			case nested:
				// Inside a random earlier span, after its previous child.
				s.closed = true
				lo, hi := uint64(0), uint64(1000)
				if i > 0 {
					p := rng.IntN(i)
					s.parent = "s" + strconv.Itoa(p)
					lo, hi = ivs[p].start, ivs[p].end
					for j := p + 1; j < i; j++ {
						if tree.at(j).parent == s.parent {
							lo = max(lo, ivs[j].end)
						}
					}
				}
				if lo > hi {
					lo = hi
				}
				switch {
				case zeroOK:
					s.startNs = lo + uint64(rng.IntN(int(hi-lo)+1))
					s.durationNs = uint64(rng.IntN(int(hi-s.startNs) + 1))
				case hi > lo:
					s.startNs = lo + uint64(rng.IntN(int(hi-lo)))
					s.durationNs = 1 + uint64(rng.IntN(int(hi-s.startNs)))
				default: // no room left in the parent: a root of its own, after the rest
					s.parent, s.startNs, s.durationNs = "", 1000+100*uint64(i), 50
				}
			case mode == 2 && rng.IntN(4) == 0:
				s.durationNs = 0
				fallthrough
			case mode == 2:
				if rng.IntN(5) == 0 {
					s.parent = "s" + strconv.Itoa(rng.IntN(spans)) // any span: cycles too
				} else if i > 0 {
					p := rng.IntN(i)
					s.parent = "s" + strconv.Itoa(p)
					if rng.IntN(3) > 0 { // mostly inside the parent
						s.startNs = ivs[p].start + uint64(rng.IntN(int(ivs[p].end-ivs[p].start)+1))
						s.durationNs = uint64(rng.IntN(int(ivs[p].end-s.startNs) + 1))
					}
				}
			default:
				if rng.IntN(2) == 0 && i > 0 {
					s.parent = "s" + strconv.Itoa(rng.IntN(i))
				}
			}
			ivs = append(ivs, iv{s.startNs, s.startNs + s.durationNs})
			tree.addSpan(s)
		}
		endNs := uint64(60)
		if mode == 2 {
			endNs = uint64(rng.IntN(20))
		}
		sl, drawnUnder, zeroLength := checkSpanLanes(t, fmt.Sprintf("set %d", n), tree, endNs)
		if !nested || zeroLength {
			continue
		}
		parent := map[string]string{}
		for i := range tree.len() {
			parent[tree.at(i).id] = tree.at(i).parent
		}
		for j, p := range drawnUnder {
			if sl[j].lane != 1 || p != parent[sl[j].id] {
				t.Fatalf("set %d: nested span %s on thread %d under %q, want thread 1 under its parent %q", n, sl[j].id, sl[j].lane, p, parent[sl[j].id])
			}
		}
	}
}

// checkSpanLanes places the spans of tree (named set in errors) with
// spanLanes and checks that every span is written once, that the spans of
// each thread nest, and that each is drawn under its parent in the tree
// (cycles cut) or under none. It returns the spans as written, the span
// each is drawn under, and whether one has no length.
func checkSpanLanes(t testing.TB, set string, tree *spanTree, endNs uint64) (sl []viewerSlice, drawnUnder []string, zeroLength bool) {
	t.Helper()
	order, lanes := spanLanes(tree, endNs)
	for i, v := range slices.Sorted(slices.Values(order)) {
		if v != int32(i) || len(order) != tree.len() {
			t.Fatalf("%s: order %v is not every span once", set, order)
		}
	}
	stacks := map[int32][]uint64{}
	for _, i := range order {
		s := tree.at(int(i))
		end := s.startNs + min(s.durationNs, math.MaxUint64-s.startNs)
		if !s.closed {
			end = max(endNs, s.startNs)
		}
		st := stacks[lanes[i]]
		for len(st) > 0 && st[len(st)-1] <= s.startNs {
			st = st[:len(st)-1]
		}
		if len(st) > 0 && st[len(st)-1] < end {
			t.Fatalf("%s: span %s [%d, %d] on thread %d overlaps a span ending at %d without nesting", set, s.id, s.startNs, end, lanes[i], st[len(st)-1])
		}
		stacks[lanes[i]] = append(st, end)
		sl = append(sl, viewerSlice{lane: lanes[i], start: s.startNs, end: end, id: s.id})
		zeroLength = zeroLength || end == s.startNs
	}
	drawnUnder = viewerParents(sl)
	for j, p := range drawnUnder {
		parent := "" // in the tree, cycles cut
		if tp := tree.treeParent(order[j]); tp >= 0 {
			parent = tree.at(int(tp)).id
		}
		if p != "" && p != parent {
			t.Fatalf("%s: span %s drawn under %s, not its parent %q: %+v", set, sl[j].id, p, parent, sl)
		}
	}
	return sl, drawnUnder, zeroLength
}

// FuzzSpanLanes: spanLanes on arbitrary span sets, four bytes a span (its
// parent, start, length, and whether it closed), keeps every span under
// its parent or under none, as checkSpanLanes checks.
func FuzzSpanLanes(f *testing.F) {
	f.Add([]byte{255, 0, 100, 1, 0, 10, 40, 1, 0, 50, 70, 1, 0, 50, 0, 1}) // the review's case
	f.Add([]byte{255, 0, 10, 1, 255, 10, 0, 1, 255, 11, 9, 1})
	f.Add([]byte{1, 0, 5, 0, 0, 0, 5, 1}) // a cycle
	f.Fuzz(func(t *testing.T, data []byte) {
		n := len(data) / 4
		if n == 0 || n > 64 {
			return
		}
		tree := newSpanTree()
		for i := range n {
			b := data[4*i : 4*i+4]
			s := spanInfo{id: "s" + strconv.Itoa(i), name: "n", startNs: uint64(b[1] % 32), durationNs: uint64(b[2] % 32), closed: b[3]%4 != 0}
			if int(b[0]) < n {
				s.parent = "s" + strconv.Itoa(int(b[0]))
			}
			if b[2] == 255 {
				s.durationNs = math.MaxUint64
			}
			tree.addSpan(s)
		}
		checkSpanLanes(t, "fuzz", tree, uint64(data[0]%40))
	})
}

// TestSpanLanesCount: spans that never nest (k threads of back-to-back
// spans, staggered so that each overlaps k others without nesting) take k
// threads, also past the threads searched one by one (found in review: 100
// such threads gave 5935).
func TestSpanLanesCount(t *testing.T) {
	for _, k := range []int{1, 3, 64, 65, 100, 300} {
		tree := newSpanTree()
		for th := range k {
			for j := range 20 {
				tree.addSpan(spanInfo{id: fmt.Sprintf("t%d-%d", th, j), name: "op", startNs: uint64(th*3 + j*1000), closed: true, durationNs: 990})
			}
		}
		_, lanes := spanLanes(tree, 0)
		if got := slices.Max(lanes); got != int32(k) {
			t.Errorf("%d threads of spans overlapping without nesting: %d threads in the export, want %d", k, got, k)
		}
	}
}

// TestSpanLanesSameInterval: a child that starts and ends with its parent
// is written after it, whatever their order in the tree (viewers nest events
// of one interval in the order they come), on the parent's thread.
func TestSpanLanesSameInterval(t *testing.T) {
	tree := newSpanTree()
	tree.addSpan(spanInfo{id: "a", parent: "b", name: "child", startNs: 5, closed: true, durationNs: 5})
	tree.addSpan(spanInfo{id: "b", parent: "c", name: "parent", startNs: 5, closed: true, durationNs: 5})
	tree.addSpan(spanInfo{id: "c", name: "root", startNs: 5, closed: true, durationNs: 5})
	order, lanes := spanLanes(tree, 0)
	if want := []int32{2, 1, 0}; !slices.Equal(order, want) || lanes[0] != 1 || lanes[1] != 1 || lanes[2] != 1 {
		t.Errorf("order %v, threads %v; want %v, all on thread 1", order, lanes, want)
	}
	// Shallower first also against a root of the same interval added after
	// the child, when the parent is the first span added (found by
	// mutation: a child of span 0 taken for a root went unnoticed).
	tree = newSpanTree()
	tree.addSpan(spanInfo{id: "p", name: "parent", startNs: 5, closed: true, durationNs: 5})
	tree.addSpan(spanInfo{id: "c", parent: "p", name: "child", startNs: 5, closed: true, durationNs: 5})
	tree.addSpan(spanInfo{id: "r", name: "root", startNs: 5, closed: true, durationNs: 5})
	if order, _ := spanLanes(tree, 0); !slices.Equal(order, []int32{0, 2, 1}) {
		t.Errorf("order %v; want [0 2 1]: the roots p and r, then p's child c", order)
	}
	// Depths: a chain 100,000 deep added leaf first, then a cycle.
	deep := newSpanTree()
	const n = 100_000
	for i := range n {
		deep.addSpan(spanInfo{id: strconv.Itoa(i), parent: strconv.Itoa(i + 1), name: "n"})
	}
	deep.addSpan(spanInfo{id: "x", parent: "y", name: "x"})
	deep.addSpan(spanInfo{id: "y", parent: "x", name: "y"})
	deep.settle()
	d := spanDepths(deep)
	// Span n-1 names a parent the tree lacks: a root.
	if d[0] != n-1 || d[n-1] != 0 || d[n]+d[n+1] != 1 {
		t.Errorf("depths: leaf %d, root %d, cycle %d and %d; want %d, 0, and 0 and 1", d[0], d[n-1], d[n], d[n+1], n-1)
	}
}

// TestSpanLanesHeldBack: a thread held back from the spans of no length at
// the end of its last span is free again for any span after that time, the
// spans of no length included: a span goes on the lowest thread with no
// span open (found by mutation: releasing the held threads only for spans
// of some length, or only at that same time, went unnoticed).
func TestSpanLanesHeldBack(t *testing.T) {
	cases := []struct {
		name   string
		spans  []spanInfo
		want   []int32 // each span's thread, in the order added
		reason string
	}{
		{"no length later", []spanInfo{
			{id: "a", name: "a", startNs: 0, closed: true, durationNs: 10},
			{id: "z1", name: "z1", startNs: 10, closed: true},
			{id: "z2", name: "z2", startNs: 15, closed: true},
		}, []int32{1, 2, 1}, "z1 at a's end is kept off a's thread; z2, later, takes thread 1 again"},
		{"some length later", []spanInfo{
			{id: "a", name: "a", startNs: 0, closed: true, durationNs: 10},
			{id: "z1", name: "z1", startNs: 10, closed: true},
			{id: "b", name: "b", startNs: 15, closed: true, durationNs: 5},
		}, []int32{1, 2, 1}, "so does a span of some length"},
		{"two of no length at the end", []spanInfo{
			{id: "a", name: "a", startNs: 0, closed: true, durationNs: 10},
			{id: "z1", name: "z1", startNs: 10, closed: true},
			{id: "z2", name: "z2", startNs: 10, closed: true},
			{id: "z3", name: "z3", startNs: 12, closed: true},
		}, []int32{1, 2, 3, 1}, "each span of no length at a's end takes a thread of its own, and a later one thread 1"},
	}
	for _, c := range cases {
		tree := newSpanTree()
		for _, s := range c.spans {
			tree.addSpan(s)
		}
		if _, lanes := spanLanes(tree, 0); !slices.Equal(lanes, c.want) {
			t.Errorf("%s: %s: threads %v, want %v", c.name, c.reason, lanes, c.want)
		}
	}
}

// TestChromeEndSaturates: a closed span whose end is beyond 2^64 ns ends the
// data at the largest time, not at a time wrapped past 0, so a span never
// closed runs to it.
func TestChromeEndSaturates(t *testing.T) {
	tree := newSpanTree()
	tree.addSpan(spanInfo{id: "far", name: "far", startNs: math.MaxUint64 - 5, closed: true, durationNs: 10})
	tree.addSpan(spanInfo{id: "open", name: "open", startNs: 100})
	var b bytes.Buffer
	if err := writeChrome(&b, &trace{name: "t", profile: tracemem.AnalyzeMemory(&tracemem.TraceDocument{}), tree: tree}); err != nil {
		t.Fatal(err)
	}
	if want := `"ts":0.100,"dur":18446744073709551.515`; !strings.Contains(b.String(), want) {
		t.Errorf("the open span does not run to the largest time (%s):\n%s", want, b.String())
	}
}

// TestPprofHandMade checks the stacks of an allocation without span or op
// and of one with both, and the pre-existing sample that makes the total the
// peak.
func TestPprofHandMade(t *testing.T) {
	prof, err := buildPprof(handTrace())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range prof.Sample {
		got = append(got, fmt.Sprintf("%v %v", frameNames(s), s.Value))
	}
	want := []string{
		"[[no span]] [1 1000]",
		"[matmul step] [1 500]", // the op span names the op: once
		"[[pre-existing]] [0 200]",
	}
	if !slices.Equal(got, want) {
		t.Errorf("samples (leaf first) %q, want %q", got, want)
	}

	// The op is a frame of its own under any span but an op span of its
	// name (from a user trial: every stack named the op twice), or, in a
	// PyTorch trace, any span of its name (from a review: a region's
	// memory named the region twice).
	tr := handTrace()
	tr.tree.addSpan(spanInfo{id: "mod", parent: "root", name: "linear", startNs: 900, kind: tracemem.SpanModule})
	tr.tree.addSpan(spanInfo{id: "add", parent: "root", name: "add", startNs: 900, kind: tracemem.SpanOp})
	op := func(s string) *string { return &s }
	for _, c := range []struct {
		span, op string
		source   string // the run's source tag
		want     string
		reason   string
	}{
		{"mm", "matmul", "", "[matmul step]", "an op span of the op's name"},
		{"mm", "addmm", "", "[addmm matmul step]", "an op span of another name"},
		{"mod", "linear", "", "[linear linear step]", "a module of the op's name: the op runs inside it"},
		{"mod", "linear", "other", "[linear linear step]", "a run of another source is no PyTorch trace"},
		{"mod", "linear", "chrome_trace", "[linear step]", "a PyTorch trace: the op name is the name of the event's span, whatever its kind"},
		{"mod", "addmm", "chrome_trace", "[addmm linear step]", "a PyTorch trace, an op of another name (the reader makes none) is its own frame"},
		{"add", "", "", "[add step]", "no op name"},
	} {
		tr.run = nil
		if c.source != "" {
			tr.run = &runInfo{source: c.source}
		}
		tr.profile.PeakBreakdown = []tracemem.LiveAllocation{{TensorID: "x", SpanID: c.span, Bytes: 1, Device: "cuda:0"}}
		if c.op != "" {
			tr.profile.PeakBreakdown[0].OpName = op(c.op)
		}
		prof, err := buildPprof(tr)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(frameNames(prof.Sample[0])); got != c.want {
			t.Errorf("%s: stack (leaf first) %s, want %s", c.reason, got, c.want)
		}
	}
}

// TestPprofPyTorchRegion: in a PyTorch trace, memory allocated directly in
// a user annotation or a Python function (no op around it) has that span's
// name as its op name; the stack names it once (from a review, which saw
// my_region / my_region / ProfilerStep#0).
func TestPprofPyTorchRegion(t *testing.T) {
	trace := `{"traceEvents": [
{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#0", "pid": 1, "tid": 1, "ts": 1000, "dur": 1000},
{"ph": "X", "cat": "user_annotation", "name": "my_region", "pid": 1, "tid": 1, "ts": 1001, "dur": 900},
{"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 1010, "args": {"Bytes": 4096, "Addr": 4096, "Device Id": 0, "Device Type": 1}},
{"ph": "X", "cat": "python_function", "name": "model.py(10): forward", "pid": 1, "tid": 1, "ts": 1100, "dur": 100},
{"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 1110, "args": {"Bytes": 8192, "Addr": 8192, "Device Id": 0, "Device Type": 1}},
{"ph": "X", "cat": "cpu_op", "name": "aten::empty", "pid": 1, "tid": 1, "ts": 1150, "dur": 10},
{"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 1155, "args": {"Bytes": 16384, "Addr": 16384, "Device Id": 0, "Device Type": 1}}
]}`
	in := writeFile(t, t.TempDir(), "region.json", []byte(trace))
	r := runCmd(t, nil, "export", "--format", "pprof", in, "-o", "-")
	if r.code != 0 {
		t.Fatalf("export: exit %d: %s", r.code, r.stderr)
	}
	prof, err := profile.Parse(strings.NewReader(r.stdout))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range prof.Sample {
		got = append(got, fmt.Sprintf("%d %s", s.Value[1], strings.Join(frameNames(s), " / ")))
	}
	slices.Sort(got)
	want := []string{
		"16384 aten::empty / model.py(10): forward / my_region / ProfilerStep#0",
		"4096 my_region / ProfilerStep#0",
		"8192 model.py(10): forward / my_region / ProfilerStep#0",
	}
	if !slices.Equal(got, want) {
		t.Errorf("samples (bytes, stack leaf first):\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// frameNames returns the function names of a sample's frames, leaf first.
func frameNames(s *profile.Sample) []string {
	var names []string
	for _, l := range s.Location {
		names = append(names, l.Line[0].Function.Name)
	}
	return names
}

// writeAndParse writes prof as the export does and reads it back.
func writeAndParse(t *testing.T, prof *profile.Profile) *profile.Profile {
	t.Helper()
	var buf bytes.Buffer
	if err := prof.Write(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return back
}

// TestPprofLabelsAndFrames: what is written reads back the same. An empty
// label (a PyTorch trace has no dtype) is left out, since pprof reads it as
// absent; a span named like a frame of the export ("[pre-existing]", "[no
// span]") is a function of its own, so its samples stay apart from the
// frame's.
func TestPprofLabelsAndFrames(t *testing.T) {
	tr := handTrace()
	p := tr.profile
	p.PeakBreakdown[0].SpanID = ""                                // under "[no span]"
	p.PeakBreakdown[1].DType, p.PeakBreakdown[1].OpName = "", nil // no dtype; no op frame
	p.PeakBreakdown[1].SpanID = "odd"
	tr.tree.addSpan(spanInfo{id: "odd", name: "[pre-existing]", startNs: 600, kind: tracemem.SpanFunction})
	tr.tree.addSpan(spanInfo{id: "odd2", name: "[no span]", startNs: 600, kind: tracemem.SpanFunction})
	p.PeakBreakdown = append(p.PeakBreakdown, tracemem.LiveAllocation{TensorID: "b", SpanID: "odd2", Bytes: 0, DType: "f32", Device: "cuda:0"})
	prof, err := buildPprof(tr)
	if err != nil {
		t.Fatal(err)
	}
	back := writeAndParse(t, prof)
	if len(back.Sample) != len(prof.Sample) {
		t.Fatalf("%d samples read back, %d written", len(back.Sample), len(prof.Sample))
	}
	for i, s := range back.Sample {
		if !cmp.Equal(s.Label, prof.Sample[i].Label, cmpopts.EquateEmpty()) {
			t.Errorf("sample %d: labels %v read back as %v", i, prof.Sample[i].Label, s.Label)
		}
		for _, v := range s.Label {
			if len(v) != 1 || v[0] == "" {
				t.Errorf("sample %d: labels %v: an empty label was written", i, s.Label)
			}
		}
	}
	if _, ok := prof.Sample[1].Label["dtype"]; ok {
		t.Errorf("sample 1: empty dtype written as a label: %v", prof.Sample[1].Label)
	}
	// Samples 0 ("[no span]"), 1 (span "[pre-existing]"), 2 (span "[no
	// span]") and 3 (pre-existing memory): four different leaves.
	leaves := map[uint64]bool{}
	for _, s := range back.Sample {
		leaves[s.Location[0].ID] = true
	}
	if len(back.Sample) != 4 || len(leaves) != 4 {
		t.Errorf("%d samples with %d different leaves, want 4 and 4: span frames merged with the export's own", len(back.Sample), len(leaves))
	}
}

// TestPprofDeepStacks: a stack keeps at most maxStackFrames frames, the
// deepest ones, with "…" in place of the rest; at the bound exactly nothing
// is cut; samples of one span share its frames; and a span whose id is ""
// (the readers accept one) is a span, not "[no span]". The reference
// builds every stack from the whole path.
func TestPprofDeepStacks(t *testing.T) {
	const depth = 3*maxStackFrames + 5
	tree := newSpanTree()
	tree.addSpan(spanInfo{id: "", name: "empty id", kind: tracemem.SpanFunction}) // no span hangs under it: parent "" is none
	addChain(tree, depth, "")
	op := "mm"
	p := &tracemem.MemoryProfile{Summary: tracemem.MemorySummary{PeakDevice: "d"}}
	var want [][]string
	for _, d := range []int{0, maxStackFrames - 3, maxStackFrames - 2, maxStackFrames - 1, maxStackFrames, depth - 1} {
		for _, withOp := range []bool{false, true} {
			a := tracemem.LiveAllocation{TensorID: fmt.Sprint(d, withOp), SpanID: "s" + strconv.Itoa(d), Bytes: 1, Device: "d"}
			var names []string // leaf first
			if withOp {
				a.OpName = &op
				names = append(names, op)
			}
			for i := d; i >= 0; i-- {
				names = append(names, "n"+strconv.Itoa(i))
			}
			if len(names) > maxStackFrames {
				names = append(names[:maxStackFrames-1], elidedFrame)
			}
			p.PeakBreakdown = append(p.PeakBreakdown, a)
			want = append(want, names)
		}
	}
	p.PeakBreakdown = append(p.PeakBreakdown, tracemem.LiveAllocation{TensorID: "e", SpanID: "", Bytes: 1, Device: "d"})
	want = append(want, []string{"empty id"})
	// An op named like the elision frame: its frame is its own, not the
	// one that stands for the frames cut (from a mutation test: the frame
	// that cuts a stack full of spans and an op went unmarked, and merged
	// with such an op's).
	ellipsis := elidedFrame
	p.PeakBreakdown = append(p.PeakBreakdown, tracemem.LiveAllocation{TensorID: "op…", SpanID: "s0", OpName: &ellipsis, Bytes: 1, Device: "d"})
	want = append(want, []string{elidedFrame, "n0"})
	p.Summary.PeakBytes = uint64(len(p.PeakBreakdown))
	prof, err := buildPprof(&trace{name: "deep", profile: p, tree: tree})
	if err != nil {
		t.Fatal(err)
	}
	if len(prof.Sample) != len(want) {
		t.Fatalf("%d samples, want %d", len(prof.Sample), len(want))
	}
	for i, s := range prof.Sample {
		got := frameNames(s)
		if !slices.Equal(got, want[i]) {
			t.Errorf("sample %d (%s): %d frames %q...%q, want %d frames %q...%q", i, p.PeakBreakdown[i].TensorID,
				len(got), got[:min(3, len(got))], got[max(0, len(got)-3):], len(want[i]), want[i][:min(3, len(want[i]))], want[i][max(0, len(want[i])-3):])
		}
	}
	opLeaf := prof.Sample[len(prof.Sample)-1].Location[0]
	for i, s := range prof.Sample {
		if last := s.Location[len(s.Location)-1]; len(s.Location) == maxStackFrames && last == opLeaf {
			t.Errorf("sample %d (%s): the frame that stands for the frames cut is the op %q's", i, p.PeakBreakdown[i].TensorID, elidedFrame)
		}
	}
}

// TestPprofPreexistingCategories: pre-existing memory is split by
// category, so the profile's category labels add up to the peak by
// category, and its total to the peak. Two allocations share a category
// (from a mutation test: a split that kept only the last allocation of a
// category went unseen).
func TestPprofPreexistingCategories(t *testing.T) {
	ev := func(ts uint64, action tracemem.MemoryAction, id string, bytes uint64, c tracemem.Category) tracemem.MemoryEvent {
		return tracemem.MemoryEvent{TimestampNs: ts, Action: action, TensorID: id, Device: "d", Bytes: bytes, Category: c}
	}
	doc := &tracemem.TraceDocument{Memory: []tracemem.MemoryEvent{
		ev(1, tracemem.ActionAlloc, "a", 100, tracemem.CategoryActivation),
		ev(2, tracemem.ActionAlloc, "b", 30, tracemem.CategoryParameter),
		ev(2, tracemem.ActionAlloc, "c", 20, tracemem.CategoryParameter),
		ev(3, tracemem.ActionFree, "late-p", 1000, tracemem.CategoryParameter), // pre-existing, live at the peak
		ev(4, tracemem.ActionFree, "late-o", 7, tracemem.CategoryOther),
	}}
	p := tracemem.AnalyzeMemory(doc)
	if p.Summary.PeakBytes != 1157 || p.Summary.PeakTimestampNs != 2 {
		t.Fatalf("peak %d at %d, want 1157 at 2", p.Summary.PeakBytes, p.Summary.PeakTimestampNs)
	}
	prof, err := buildPprof(&trace{name: "pre", profile: p, tree: newSpanTree()})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	var total int64
	for _, s := range prof.Sample {
		got[strings.Join(s.Label["category"], ",")] += s.Value[1]
		total += s.Value[1]
		// A sample of pre-existing memory sums allocations of unknown sizes:
		// it has no object, so no size either.
		if _, ok := s.Label["tensor_id"]; !ok && (s.Value[0] != 0 || len(s.NumLabel) != 0) {
			t.Errorf("pre-existing sample %v: %d objects, numeric labels %v; want 0 and none", s.Label, s.Value[0], s.NumLabel)
		}
	}
	want := map[string]int64{}
	for c, b := range p.Summary.PeakByCategory.All() {
		want[c.String()] = int64(b)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("bytes by category label differ from the peak by category (-want +got):\n%s", diff)
	}
	if total != int64(p.Summary.PeakBytes) {
		t.Errorf("total %d, want the peak %d", total, p.Summary.PeakBytes)
	}
}

// TestCSVField checks that device names are quoted as encoding/csv reads
// them back.
func TestCSVField(t *testing.T) {
	for _, s := range []string{"cuda:0", "", "a,b", `say "hi"`, " lead", "two\nlines", "cpu"} {
		line := "1," + string(csvField(s)) + ",2\n"
		rec, err := csv.NewReader(strings.NewReader(line)).Read()
		if err != nil || len(rec) != 3 || rec[1] != s {
			t.Errorf("csvField(%q) = %s: read back as %q, %v", s, csvField(s), rec, err)
		}
	}
}

// TestWriteOutputRemovesOnlyWhatItMade: an output that fails is removed
// when the command created it, and left alone otherwise: a file that was
// there, or a symlink (which may point at a device the command must not
// delete, as -o /dev/full once did).
func TestWriteOutputRemovesOnlyWhatItMade(t *testing.T) {
	dir := t.TempDir()
	failing := func(w io.Writer) error {
		io.WriteString(w, "partial")
		return errors.New("disk on fire")
	}
	existing := writeFile(t, dir, "old.csv", []byte("old"))
	target := writeFile(t, dir, "target.csv", []byte("old"))
	link := filepath.Join(dir, "link.csv")
	haveLink := os.Symlink(target, link) == nil
	// Links to nothing, relative (as ln -s writes them) and through a
	// second link: the command creates the last target.
	dangling := filepath.Join(dir, "dangling.csv")
	os.Symlink("made.csv", dangling)
	chain := filepath.Join(dir, "chain.csv")
	os.Symlink("dangling2.csv", chain)
	os.Symlink(filepath.Join(dir, "made2.csv"), filepath.Join(dir, "dangling2.csv"))
	// A relative link reached through a linked directory: its target is
	// relative to the directory the link is in (sub/deep), not to the
	// path's text cleaned (dir), where another file waits.
	os.MkdirAll(filepath.Join(dir, "sub", "deep"), 0o755)
	os.Symlink(filepath.Join("sub", "deep"), filepath.Join(dir, "dirlink"))
	os.Symlink(filepath.Join("..", "z.csv"), filepath.Join(dir, "sub", "deep", "out.csv"))
	precious := writeFile(t, dir, "z.csv", []byte("precious"))
	for _, c := range []struct {
		name, path, reason string
		kept               bool
		made               string // the file the command creates, "" when none
	}{
		{"new", filepath.Join(dir, "new.csv"), "the command made it: an incomplete output is removed", false, ""},
		{"existing", existing, "a file that was there is not the command's to delete", true, ""},
		{"symlink", link, "a symlink is not the command's to delete", true, ""},
		{"symlink to nothing", dangling, "the link stays, and the file the command made at its end goes", true, filepath.Join(dir, "made.csv")},
		{"symlinks to nothing", chain, "likewise through two links", true, filepath.Join(dir, "made2.csv")},
		{"symlink to nothing in a linked directory", filepath.Join(dir, "dirlink", "out.csv"), "the target as the system finds it: sub/z.csv", true, filepath.Join(dir, "sub", "z.csv")},
	} {
		if strings.HasPrefix(c.name, "symlink") && !haveLink {
			t.Logf("%s: no symlinks here", c.name)
			continue
		}
		err := writeOutput(&env{}, c.path, failing)
		if err == nil || !strings.Contains(err.Error(), "disk on fire") || !strings.Contains(err.Error(), c.path) {
			t.Errorf("%s: error %v, want one naming the file and the cause", c.name, err)
		}
		_, serr := os.Lstat(c.path)
		if kept := serr == nil; kept != c.kept {
			t.Errorf("%s: kept %v, want %v: %s", c.name, kept, c.kept, c.reason)
		}
		if c.made != "" {
			if _, err := os.Lstat(c.made); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%s: %s: %v, want it removed: %s", c.name, c.made, err, c.reason)
			}
			// Written in full, it holds the output.
			if err := writeOutput(&env{}, c.path, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }); err != nil {
				t.Fatal(err)
			}
			if b, err := os.ReadFile(c.made); err != nil || string(b) != "new" {
				t.Errorf("%s: %s holds %q, %v; want \"new\"", c.name, c.made, b, err)
			}
		}
	}
	if b, err := os.ReadFile(precious); err != nil || string(b) != "precious" {
		t.Errorf("%s: %q, %v; a file no link leads to was written", precious, b, err)
	}
	// Written in full, a new file and an existing one hold the output.
	for _, p := range []string{filepath.Join(dir, "fresh.csv"), existing} {
		if err := writeOutput(&env{}, p, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }); err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(p); err != nil || string(b) != "new" {
			t.Errorf("%s: %q, %v; want \"new\"", p, b, err)
		}
	}
}

// manyPointsTrace writes a trace of n allocations then their n frees on
// one device: 2n memory events, so 2n timeline points when none are
// dropped.
func manyPointsTrace(t *testing.T, n int) string {
	t.Helper()
	var lines []string
	for i := range n {
		lines = append(lines, memRec(uint64(10+i), "alloc", "t"+strconv.Itoa(i), "root", "cuda:0", 400, "activation"))
	}
	for i := range n {
		lines = append(lines, memRec(uint64(10+n+i), "free", "t"+strconv.Itoa(i), "root", "cuda:0", 400, "activation"))
	}
	return writeTrace(t, "many.jsonl", lines...)
}

// timelineRows returns the CSV rows the export writes for the timeline of
// p, as encoding/csv reads them.
func timelineRows(p *tracemem.MemoryProfile) [][]string {
	var rows [][]string
	for _, pt := range p.Timeline {
		row := []string{strconv.FormatUint(pt.TimestampNs, 10), pt.Device, strconv.FormatUint(pt.LiveBytes, 10), strconv.FormatUint(pt.FreeBytes, 10)}
		for _, c := range tracemem.Categories {
			row = append(row, strconv.FormatUint(pt.ByCategory.Get(c), 10))
		}
		rows = append(rows, row)
	}
	return rows
}

// TestDefaultKeepsEveryPoint: without --max-points, export (CSV) and profile
// keep one timeline point per memory event, as the library does with
// default options, also past the 2000 points per device the report keeps.
func TestDefaultKeepsEveryPoint(t *testing.T) {
	path := manyPointsTrace(t, 1500)
	_, want := wantAnalysis(t, path, tracemem.Options{})
	if len(want.Timeline) != 3000 || len(want.ByDevice) != 1 {
		t.Fatalf("the trace has %d timeline points on %d devices, want 3000 on one: the test needs more than 2000 per device", len(want.Timeline), len(want.ByDevice))
	}
	r := runCmd(t, nil, "export", "--format", "csv", "-o", "-", path)
	if r.code != 0 {
		t.Fatalf("export: exit %d: %s", r.code, r.stderr)
	}
	rows, err := csv.NewReader(strings.NewReader(r.stdout)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) < 1 || !slices.EqualFunc(rows[1:], timelineRows(want), slices.Equal) {
		t.Errorf("export --format csv: %d rows, want the %d timeline points of the library's default analysis", len(rows)-1, len(want.Timeline))
	}

	r = runCmd(t, nil, "profile", path)
	if r.code != 0 {
		t.Fatalf("profile: exit %d: %s", r.code, r.stderr)
	}
	var got struct {
		Timeline []struct {
			TimestampNs uint64 `json:"timestamp_ns"`
			LiveBytes   uint64 `json:"live_bytes"`
		} `json:"timeline"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatal(err)
	}
	match := len(got.Timeline) == len(want.Timeline)
	for i := 0; match && i < len(got.Timeline); i++ {
		match = got.Timeline[i].TimestampNs == want.Timeline[i].TimestampNs && got.Timeline[i].LiveBytes == want.Timeline[i].LiveBytes
	}
	if !match {
		t.Errorf("profile: %d timeline points, want the %d of the library's default analysis", len(got.Timeline), len(want.Timeline))
	}
}

// TestOutputIsStdout: -o naming the file standard output writes to (as
// /dev/stdout does) writes through standard output, as -o - does: opened
// again, it was truncated, so `>> log.csv` lost the log's lines, and a
// group of commands writing to one file lost what came before (from a
// review).
func TestOutputIsStdout(t *testing.T) {
	dir := t.TempDir()
	want := runCmd(t, nil, "export", "--format", "csv", "--max-points", "3", "-o", "-", sample(t)).stdout
	for _, c := range []struct {
		name, reason string
		out          func(log string) string
	}{
		{"same path", "the path of the file stdout appends to", func(log string) string { return log }},
		{"link", "a symlink to it, as /dev/stdout is to the file of fd 1", func(log string) string {
			link := filepath.Join(dir, "link-"+filepath.Base(log))
			if err := os.Symlink(log, link); err != nil {
				t.Skipf("no symlink: %v", err)
			}
			return link
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			log := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".csv")
			if err := os.WriteFile(log, []byte("OLD\n"), 0o666); err != nil {
				t.Fatal(err)
			}
			stdout, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			code := run([]string{"export", "--format", "csv", "--max-points", "3", "-o", c.out(log), sample(t)}, strings.NewReader(""), stdout, &stderr)
			stdout.Close()
			got, err := os.ReadFile(log)
			if code != 0 || err != nil || string(got) != "OLD\n"+want {
				t.Errorf("%s: exit %d (%s), the file holds %q, %v; want OLD and then the output", c.reason, code, stderr.String(), got, err)
			}
		})
	}
}

// TestOutputCheckedFirst: an -o that the open after the analysis would
// refuse (a directory, a file in a directory that is not there, a path
// through a file) is reported before the trace is read, so on a trace
// whose third line is bad the error is the output's (from a review: a typo
// in -o cost the minutes of a big trace first), also through symlinks to
// nothing, followed to their target. Whether a file can be written is left
// to the open, after the trace.
func TestOutputCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	bad := writeFile(t, dir, "bad.jsonl", []byte(jsonlTrace(startRec("root", "root", "", 0), `{"kind": "memory", "oops": 1}`, endRec("root", 10))))
	file := writeFile(t, dir, "file.txt", []byte("x"))
	dangling, chain, loop := filepath.Join(dir, "dangling"), filepath.Join(dir, "chain"), filepath.Join(dir, "loop")
	if err := os.Symlink(filepath.Join(dir, "gone", "x"), dangling); err != nil {
		t.Skipf("no symlink: %v", err)
	}
	if err := os.Mkdir(filepath.Join(dir, "beside"), 0o777); err != nil {
		t.Fatal(err)
	}
	for _, l := range [][2]string{{"dangling", chain}, {"loop", loop}, {"gone/y", filepath.Join(dir, "relative")}, {"beside/y", filepath.Join(dir, "relative2")}} {
		if err := os.Symlink(l[0], l[1]); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name, out, want, reason string
	}{
		{"missing dir", filepath.Join(dir, "nodir", "x.html"), `^tracemem: -o .*/nodir/x\.html: no such file or directory\n$`, "a new file in a directory that is not there"},
		{"a directory", dir, `^tracemem: -o .*: is a directory\n$`, "a directory"},
		{"through a file", filepath.Join(file, "x.html"), `^tracemem: -o .*/file\.txt/x\.html: not a directory\n$`, "a path through a file"},
		{"dangling symlink", dangling, `^tracemem: -o .*/dangling: no such file or directory\n$`, "a symlink to a file in a missing directory (from an audit: it was told only after the trace)"},
		{"chain of symlinks", chain, `^tracemem: -o .*/chain: no such file or directory\n$`, "a symlink to that symlink"},
		{"relative symlink", filepath.Join(dir, "relative"), `^tracemem: -o .*/relative: no such file or directory\n$`, "a relative target, in a missing directory beside the link"},
		{"symlink loop", loop, `^tracemem: -o .*/loop: too many levels of symbolic links\n$`, "a symlink to itself"},
		{"relative symlink, its directory there", filepath.Join(dir, "relative2"), `^tracemem: .*bad\.jsonl: line 3: `, "a relative target whose directory is beside the link (not in the working directory): -o is fine, the trace's error comes"},
	} {
		for _, args := range [][]string{{"report", "-o", c.out, bad}, {"export", "--format", "csv", "-o", c.out, bad}} {
			r := runCmd(t, nil, args...)
			if r.code != 1 || !regexp.MustCompile(c.want).MatchString(r.stderr) {
				t.Errorf("%s: %s: exit %d, stderr %q; want 1 and %s", c.reason, args[0], r.code, r.stderr, c.want)
			}
		}
	}
}

// TestOutputLinkChains: -o may go through 40 symlinks to nothing, as on
// Linux, and the command makes the file at the end; through 41 it is an
// error before the trace is read (from a review: the early check followed
// 40 and the open 39, so a chain of 40 failed after the analysis).
func TestOutputLinkChains(t *testing.T) {
	dir := t.TempDir()
	bad := writeFile(t, dir, "bad.jsonl", []byte(jsonlTrace(startRec("root", "root", "", 0), `{"kind": "memory", "oops": 1}`, endRec("root", 10))))
	// c1 → end.csv, c2 → c1, ...: cN goes through N links.
	if err := os.Symlink("end.csv", filepath.Join(dir, "c1")); err != nil {
		t.Skipf("no symlink: %v", err)
	}
	for n := 2; n <= maxLinks+1; n++ {
		if err := os.Symlink("c"+strconv.Itoa(n-1), filepath.Join(dir, "c"+strconv.Itoa(n))); err != nil {
			t.Fatal(err)
		}
	}
	forty := filepath.Join(dir, "c"+strconv.Itoa(maxLinks))
	if r := runCmd(t, nil, "export", "--format", "csv", "-o", forty, sample(t)); r.code != 0 {
		t.Errorf("-o through %d links: exit %d, stderr %q; want the file made", maxLinks, r.code, r.stderr)
	} else if _, err := os.Stat(filepath.Join(dir, "end.csv")); err != nil {
		t.Errorf("-o through %d links: %v; want end.csv made", maxLinks, err)
	}
	os.Remove(filepath.Join(dir, "end.csv"))
	more := filepath.Join(dir, "c"+strconv.Itoa(maxLinks+1))
	r := runCmd(t, nil, "export", "--format", "csv", "-o", more, bad)
	if want := `^tracemem: -o .*/c41: too many levels of symbolic links\n$`; r.code != 1 || !regexp.MustCompile(want).MatchString(r.stderr) {
		t.Errorf("-o through %d links: exit %d, stderr %q; want 1 and %s", maxLinks+1, r.code, r.stderr, want)
	}
}

// TestOutputThroughLinkAndDotDot: the early check of -o takes the
// directory as written, as the system does: through a symlink L to a/b,
// L/../sub is a/sub, not ./sub (from a review: filepath.Dir cleaned it to
// sub, which is not there, and refused a path the open takes).
func TestOutputThroughLinkAndDotDot(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"a/b", "a/sub"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o777); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join("a", "b"), filepath.Join(dir, "L")); err != nil {
		t.Skipf("no symlink: %v", err)
	}
	out := filepath.Join(dir, "L") + "/../sub/new.csv" // not joined: Join would clean it
	if r := runCmd(t, nil, "export", "--format", "csv", "-o", out, sample(t)); r.code != 0 {
		t.Fatalf("export -o %s: exit %d, stderr %q; want it written", out, r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "a", "sub", "new.csv")); err != nil {
		t.Errorf("a/sub/new.csv: %v; want the output there", err)
	}
}

// TestExportOverwritesLongerFile: an existing output longer than the export
// is truncated: the file holds the export and nothing of its old tail.
func TestExportOverwritesLongerFile(t *testing.T) {
	want := runCmd(t, nil, "export", "--format", "csv", "-o", "-", sample(t))
	if want.code != 0 || want.stdout == "" {
		t.Fatalf("export -o -: exit %d: %s", want.code, want.stderr)
	}
	out := writeFile(t, t.TempDir(), "out.csv", bytes.Repeat([]byte("stale line\n"), 2*len(want.stdout)/11+1))
	if r := runCmd(t, nil, "export", "--format", "csv", "-o", out, sample(t)); r.code != 0 {
		t.Fatalf("export: exit %d: %s", r.code, r.stderr)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want.stdout {
		t.Errorf("%s holds %d bytes (ending %q), want the export's %d", out, len(got), got[max(0, len(got)-20):], len(want.stdout))
	}
}

// TestOutputErrorNamesPathOnce: an output that cannot be opened or written
// is named once, as the output ("-o PATH: REASON", so that it does not read
// as a fault of the trace), followed by the OS's reason alone, not by the
// "open PATH:" or "write PATH:" of Go's error.
func TestOutputErrorNamesPathOnce(t *testing.T) {
	missingDir := filepath.Join(t.TempDir(), "no", "such", "x.csv")
	for _, c := range []struct {
		name, path, want, reason string
	}{
		{"cannot open", missingDir, "tracemem: -o " + missingDir + ": no such file or directory\n", "the open fails: its *PathError is unwrapped"},
		{"cannot write", "/dev/full", "tracemem: -o /dev/full: no space left on device\n", "the write fails: its *PathError is unwrapped too"},
	} {
		if c.path == "/dev/full" {
			if _, err := os.Stat(c.path); err != nil {
				t.Logf("%s: no /dev/full here", c.name)
				continue
			}
		}
		r := runCmd(t, nil, "export", "--format", "csv", "-o", c.path, sample(t))
		if r.code != 1 || r.stderr != c.want {
			t.Errorf("%s: exit %d, stderr %q; want exit 1 and %q: %s", c.name, r.code, r.stderr, c.want, c.reason)
		}
	}
}

// TestCSVQuotingRules: a device name is quoted exactly when encoding/csv's
// Writer quotes it, and reads back whole, also by a reader that trims
// leading space outside quotes.
func TestCSVQuotingRules(t *testing.T) {
	cases := []struct{ name, s, reason string }{
		{"plain", "cuda:0", "nothing to quote"},
		{"leading space", " cuda:0", "a leading space is quoted, so that a reader trimming spaces keeps it"},
		{"leading tab", "\tcuda:1", "a leading tab is space too"},
		{"inner space", "cuda 0", "only a leading space needs quotes"},
		{"bare CR", "cu\rda", "a bare \\r is a line break to many readers"},
		{"line feed", "two\nlines", "a line break"},
		{"comma", "a,b", "the separator"},
		{"quote", `say "hi"`, "quotes are doubled"},
	}
	var lines []string
	for i, c := range cases {
		var b strings.Builder
		w := csv.NewWriter(&b)
		w.Write([]string{"1", c.s, "2"})
		w.Flush()
		if got := "1," + string(csvField(c.s)) + ",2\n"; got != b.String() {
			t.Errorf("%s: csvField(%q) gives the line %q, encoding/csv writes %q: %s", c.name, c.s, got, b.String(), c.reason)
		}
		lines = append(lines, memRec(uint64(10+i), "alloc", "t"+strconv.Itoa(i), "root", c.s, 100, "activation"))
	}
	// Through the command: every device column reads back as the
	// timeline's device, leading space and all.
	path := writeTrace(t, "devnames.jsonl", lines...)
	_, want := wantAnalysis(t, path, tracemem.Options{})
	r := runCmd(t, nil, "export", "--format", "csv", "-o", "-", path)
	if r.code != 0 {
		t.Fatalf("export: exit %d: %s", r.code, r.stderr)
	}
	cr := csv.NewReader(strings.NewReader(r.stdout))
	cr.TrimLeadingSpace = true
	rows, err := cr.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(want.Timeline)+1 {
		t.Fatalf("%d rows, want %d", len(rows)-1, len(want.Timeline))
	}
	for i, p := range want.Timeline {
		if got := rows[i+1][1]; got != p.Device {
			t.Errorf("row %d: device read back as %q, want %q", i+1, got, p.Device)
		}
	}
}

// chromeSpans parses a Chrome export and returns its complete events by
// span id.
func chromeSpans(t *testing.T, data []byte) map[string]chromeEvent {
	t.Helper()
	var tr struct {
		TraceEvents []chromeEvent `json:"traceEvents"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&tr); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, data)
	}
	m := map[string]chromeEvent{}
	for _, ev := range tr.TraceEvents {
		if ev.Ph == "X" {
			m[ev.Args["id"].(string)] = ev
		}
	}
	return m
}

// TestChromeOpenSpanEnd: a span that never closed ends at the latest time
// of the exported data: the last timeline point, span start or span end.
func TestChromeOpenSpanEnd(t *testing.T) {
	type span struct {
		id       string
		start    uint64
		closed   bool
		duration uint64
	}
	for _, c := range []struct {
		name    string
		points  []uint64 // memory event times
		spans   []span
		wantDur map[string]string
		reason  string
	}{
		{"last point", []uint64{10, 100}, []span{{"U1", 0, false, 0}, {"C", 50, true, 10}},
			map[string]string{"U1": "0.100", "C": "0.010"}, "the last timeline point is the latest"},
		{"latest start", []uint64{10, 20}, []span{{"U1", 0, false, 0}, {"U2", 50, false, 0}},
			map[string]string{"U1": "0.050", "U2": "0.000"}, "a span starting after the last point extends the data"},
		{"latest closed start", []uint64{10, 20}, []span{{"U1", 0, false, 0}, {"C", 50, true, 0}},
			map[string]string{"U1": "0.050", "C": "0.000"}, "so does a closed span of no duration"},
		{"latest end", []uint64{10, 20}, []span{{"U1", 0, false, 0}, {"C", 5, true, 70}},
			map[string]string{"U1": "0.075", "C": "0.070"}, "and a span ending after the last point"},
	} {
		doc := &tracemem.TraceDocument{}
		for i, ts := range c.points {
			doc.Memory = append(doc.Memory, tracemem.MemoryEvent{TimestampNs: ts, Action: tracemem.ActionAlloc, TensorID: strconv.Itoa(i), Device: "d", Bytes: 1, Category: tracemem.CategoryOther})
		}
		tree := newSpanTree()
		for _, s := range c.spans {
			tree.addSpan(spanInfo{id: s.id, name: s.id, startNs: s.start, closed: s.closed, durationNs: s.duration, kind: tracemem.SpanFunction})
		}
		var b bytes.Buffer
		if err := writeChrome(&b, &trace{name: "t", profile: tracemem.AnalyzeMemory(doc), tree: tree}); err != nil {
			t.Fatal(err)
		}
		got := chromeSpans(t, b.Bytes())
		for id, want := range c.wantDur {
			if d := got[id].Dur.String(); d != want {
				t.Errorf("%s: span %s: dur %s, want %s: %s", c.name, id, d, want, c.reason)
			}
		}
	}
}

// TestSpanLanesRules checks the thread each span gets, as spanLanes
// documents it: its parent's thread when the parent is the innermost span
// open there and holds it, else the lowest thread with nothing open, else a
// new one. A span is never put where a viewer would draw it under another
// span than its parent (from a user trial: the old rule, the first thread
// where a span nests in time, drew roots under unrelated spans).
func TestSpanLanesRules(t *testing.T) {
	type span struct {
		id, parent string
		start, end uint64
	}
	for _, c := range []struct {
		name   string
		spans  []span
		want   map[string]int32
		reason string
	}{
		{"nested", []span{{"R", "", 0, 100}, {"C", "R", 10, 20}},
			map[string]int32{"R": 1, "C": 1}, "spans that nest stay on thread 1"},
		{"roots one after another", []span{{"A", "", 0, 10}, {"A1", "A", 2, 5}, {"B", "", 10, 20}, {"B1", "B", 10, 12}},
			map[string]int32{"A": 1, "A1": 1, "B": 1, "B1": 1}, "a root that starts when the last one ends takes its thread again (steps of a training loop)"},
		{"longer child at the same start", []span{{"P", "", 0, 10}, {"C", "P", 0, 20}},
			map[string]int32{"C": 1, "P": 2}, "a child that outlasts its parent cannot be drawn under it, and the parent is not drawn under its child"},
		{"root inside a root", []span{{"A", "", 0, 100}, {"B", "", 10, 20}},
			map[string]int32{"A": 1, "B": 2}, "a root within another root's time is not drawn under it"},
		{"parent's thread", []span{{"A", "", 0, 100}, {"B", "", 50, 150}, {"C2", "B", 60, 70}},
			map[string]int32{"A": 1, "B": 2, "C2": 2}, "C2 fits in A's time too, but goes under its parent B"},
		{"lowest free thread", []span{{"A", "", 0, 100}, {"B", "", 10, 110}, {"D", "", 20, 300}, {"C", "", 150, 200}},
			map[string]int32{"A": 1, "B": 2, "D": 3, "C": 1}, "C takes thread 1, the lowest with nothing open, not D's, where it fits in time"},
		{"child overlapping a sibling", []span{{"P", "", 0, 100}, {"S", "P", 10, 50}, {"C", "P", 40, 60}},
			map[string]int32{"P": 1, "S": 1, "C": 2}, "C starts inside its sibling S: under P's thread it would be drawn under S"},
		{"child outlasting its parent", []span{{"P", "", 0, 50}, {"C", "P", 40, 60}},
			map[string]int32{"P": 1, "C": 2}, "C ends after P: it cannot be drawn under it"},
		{"no length at a sibling's start", []span{{"P", "", 0, 100}, {"S", "P", 10, 50}, {"Z", "P", 10, 10}},
			map[string]int32{"P": 1, "S": 1, "Z": 2}, "Z, of no length, comes after the longer S of the same start, which would hold it"},
		{"no length at a sibling's end", []span{{"P", "", 0, 100}, {"S", "P", 10, 50}, {"Z", "P", 50, 50}},
			map[string]int32{"P": 1, "S": 1, "Z": 2}, "viewers differ on whether S holds Z, which ends with it: Z goes elsewhere"},
		{"no length at its parent's end", []span{{"R", "", 0, 100}, {"P", "R", 10, 50}, {"S", "P", 10, 20}, {"Z", "P", 50, 50}},
			map[string]int32{"R": 1, "P": 1, "S": 1, "Z": 1}, "Z is inside P, which ends with it, as a memory event at a span's end is: under P"},
		{"sibling ending at the start", []span{{"P", "", 0, 100}, {"S", "P", 10, 50}, {"C", "P", 50, 60}},
			map[string]int32{"P": 1, "S": 1, "C": 1}, "a span that starts when its sibling ends is not held by it"},
		{"free thread with a span ending at a span of no length", []span{{"A", "", 0, 10}, {"B", "", 5, 20}, {"Z", "", 10, 10}, {"C", "", 10, 30}},
			map[string]int32{"A": 1, "B": 2, "C": 1, "Z": 3}, "Z, of no length, would end with A on thread 1: it takes a new thread, and C, which comes first (longer), thread 1"},
		{"free thread kept", []span{{"A", "", 0, 10}, {"Z", "", 10, 10}, {"D", "", 11, 20}},
			map[string]int32{"A": 1, "Z": 2, "D": 1}, "thread 1, which Z could not take, stays free for D"},
		{"overlap", []span{{"A", "", 0, 100}, {"B", "", 50, 150}},
			map[string]int32{"A": 1, "B": 2}, "spans that overlap without nesting take two threads"},
	} {
		tree := newSpanTree()
		for _, s := range c.spans {
			tree.addSpan(spanInfo{id: s.id, parent: s.parent, name: s.id, startNs: s.start, closed: true, durationNs: s.end - s.start, kind: tracemem.SpanFunction})
		}
		_, lanes := spanLanes(tree, 0)
		got := map[string]int32{}
		for i := range tree.len() {
			got[tree.at(i).id] = lanes[i]
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s: threads differ (-want +got): %s\n%s", c.name, c.reason, diff)
		}
	}
}

// TestChromeTraceName: the trace's file name is written as a JSON string,
// so that any name gives valid JSON and reads back the same, also as the
// command reads it to tell its own export.
func TestChromeTraceName(t *testing.T) {
	for _, c := range []struct{ name, file, reason string }{
		{"quote", `we"ird.jsonl`, "a quote would end the string"},
		{"backslash", `dir\x.jsonl`, "a backslash would escape what follows"},
		{"control", "tab\tnew\nline.jsonl", "control characters are not allowed in JSON strings"},
	} {
		var b bytes.Buffer
		if err := writeChrome(&b, &trace{name: c.file, profile: tracemem.AnalyzeMemory(&tracemem.TraceDocument{}), tree: newSpanTree()}); err != nil {
			t.Fatal(err)
		}
		var tr struct {
			OtherData struct {
				Trace string `json:"trace"`
			} `json:"otherData"`
		}
		if err := json.Unmarshal(b.Bytes(), &tr); err != nil || tr.OtherData.Trace != c.file {
			t.Errorf("%s: trace %q read back as %q, %v: %s", c.name, c.file, tr.OtherData.Trace, err, c.reason)
		}
		if got, ok := exportedFrom(b.Bytes()); got != c.file || !ok {
			t.Errorf("%s: exportedFrom = %q, %v; want %q, true", c.name, got, ok, c.file)
		}
	}
}

// exportedSample writes the Chrome export of the sample trace in dir and
// returns its path.
func exportedSample(t *testing.T, dir string) string {
	t.Helper()
	exported := filepath.Join(dir, "exported.json")
	if r := runCmd(t, nil, "export", "--format", "chrome", "-o", exported, sample(t)); r.code != 0 {
		t.Fatalf("export chrome: %+v", r)
	}
	return exported
}

// TestExportedFrom: the command tells its own Chrome export by its first
// bytes, and names the trace it was made from when it can.
func TestExportedFrom(t *testing.T) {
	for _, c := range []struct {
		name, head, want string
		ok               bool
		reason           string
	}{
		{"a file", chromeExportPrefix + `"run/a.jsonl"},"traceEvents":[`, "run/a.jsonl", true, "the name follows the prefix"},
		{"escapes", chromeExportPrefix + `"a\"b\\c\u00e9"}`, `a"b\cé`, true, "the name is a JSON string, unquoted"},
		{"standard input", chromeExportPrefix + `"<stdin>"}`, "", true, "standard input names no file to analyze"},
		{"cut", chromeExportPrefix + `"run/a.js`, "", true, "a name the head cuts is not named"},
		{"not a string", chromeExportPrefix + `null}`, "", true, "nor is a value that is no string"},
		{"bad UTF-8", chromeExportPrefix + "\"a\xff\"}", "", true, "nor a name that is not text"},
		{"PyTorch", `{"schemaVersion": 1, "traceEvents": []}`, "", false, "a profiler's trace is not the export"},
		{"another tool", `{"displayTimeUnit":"ms","otherData":{"tool":"other","trace":"a"}}`, "", false, "another tool's trace is not"},
		{"spaced", `{"displayTimeUnit": "ms", "otherData": {"tool": "tracemem", "trace": "a"}}`, "", false, "only the export's own bytes are told"},
		{"empty", ``, "", false, "nothing is no export"},
	} {
		got, ok := exportedFrom([]byte(c.head))
		if got != c.want || ok != c.ok {
			t.Errorf("%s: exportedFrom = %q, %v; want %q, %v (%s)", c.name, got, ok, c.want, c.ok, c.reason)
		}
	}
}

// TestPprofFunctions: the profile carries a comment naming the peak, and
// one function and one location per frame (an op and a span of one name
// are one frame), each function without a SystemName, as read back: pprof
// takes a function whose SystemName is its Name for one not demangled yet,
// and rewrites a name that looks like C++ (TestPprofNamesAsPprofShowsThem).
func TestPprofFunctions(t *testing.T) {
	prof, err := buildPprof(handTrace())
	if err != nil {
		t.Fatal(err)
	}
	back := writeAndParse(t, prof)
	wantComment := "tracemem: memory live on cuda:0 at the global peak, 2500 ns after the trace start: 1700 bytes"
	if !slices.Equal(back.Comments, []string{wantComment}) {
		t.Errorf("comments %q, want [%q]", back.Comments, wantComment)
	}
	var names []string
	for _, f := range back.Function {
		names = append(names, f.Name)
		if f.SystemName != "" {
			t.Errorf("function %q: system name %q, want none", f.Name, f.SystemName)
		}
	}
	slices.Sort(names)
	// The frames of the samples: "[no span]"; op matmul in span matmul
	// under step; "[pre-existing]".
	if want := []string{"[no span]", "[pre-existing]", "matmul", "step"}; !slices.Equal(names, want) {
		t.Errorf("functions %q, want each frame once: %q", names, want)
	}
	if len(back.Location) != len(back.Function) {
		t.Errorf("%d locations for %d functions, want one each", len(back.Location), len(back.Function))
	}
	// A trace without memory has nothing to say.
	empty, err := buildPprof(&trace{name: "e", profile: tracemem.AnalyzeMemory(&tracemem.TraceDocument{}), tree: newSpanTree()})
	if err != nil || len(empty.Comments) != 0 {
		t.Errorf("no memory: comments %q, %v; want none", empty.Comments, err)
	}
}

// TestPprofNamesAsPprofShowsThem runs the export's consumer, go tool pprof,
// on spans whose names look like C++ or hold brackets, as PyTorch's Python
// frames do: each must show as written, with its own bytes. pprof cleans up
// the name of a function it takes for one not demangled yet (a SystemName
// equal to its Name), dropping what lies between <> and () and merging
// names that differ there; it skips functions whose SystemName differs.
func TestPprofNamesAsPprofShowsThem(t *testing.T) {
	if testing.Short() {
		t.Skip("short: go tool pprof is built on its first use (about a minute)")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to run go tool pprof with: %v", err)
	}
	names := []string{"Linear<f32>::forward(x)", "Linear<bf16>::forward(x)", "<lambda>", "<listcomp>", "train.py(42): <module>", "std::vector<int>::push_back"}
	var recs []string
	for i, name := range names {
		id := fmt.Sprint("s", i)
		ts := uint64(10 * (i + 1))
		recs = append(recs, startRec(id, name, "root", ts), memRec(ts+1, "alloc", fmt.Sprint("t", i), id, "cuda:0", uint64(1000*(i+1)), "activation"), endRec(id, 5))
	}
	in := writeTrace(t, "names.jsonl", recs...)
	out := filepath.Join(t.TempDir(), "names.pb.gz")
	if r := runCmd(t, nil, "export", "--format", "pprof", in, "-o", out); r.code != 0 {
		t.Fatalf("export: exit %d: %s", r.code, r.stderr)
	}
	cmd := exec.Command(goCmd, "tool", "pprof", "-top", "-nodecount=100", "-unit=B", out)
	cmd.Env = append(os.Environ(), "PPROF_TMPDIR="+t.TempDir())
	top, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof: %v\n%s", err, top)
	}
	for i, name := range names {
		// A row of -top: flat flat% sum% cum cum% name.
		row := regexp.MustCompile(`(?m)^\s*` + fmt.Sprint(1000*(i+1)) + `B .* ` + regexp.QuoteMeta(name) + `$`)
		if !row.Match(top) {
			t.Errorf("go tool pprof -top shows no row of %d B for %q:\n%s", 1000*(i+1), name, top)
		}
	}
}

// TestPprofHugeValues: byte counts above the largest int64 are clamped to
// it and no lower one is touched; sums saturate instead of wrapping, so a
// breakdown that holds the whole (saturated) peak leaves no pre-existing
// sample.
func TestPprofHugeValues(t *testing.T) {
	for _, c := range []struct {
		v    uint64
		want int64
	}{
		{0, 0}, {math.MaxInt64 - 1, math.MaxInt64 - 1}, {math.MaxInt64, math.MaxInt64}, {math.MaxInt64 + 1, math.MaxInt64}, {math.MaxUint64, math.MaxInt64},
	} {
		if got := clampInt64(c.v); got != c.want {
			t.Errorf("clampInt64(%d) = %d, want %d", c.v, got, c.want)
		}
	}
	for _, c := range []struct{ a, b, want uint64 }{
		{1, 2, 3}, {math.MaxUint64 - 1, 1, math.MaxUint64}, {1 << 63, 1 << 63, math.MaxUint64}, {1 << 62, math.MaxUint64, math.MaxUint64},
	} {
		if got := addSat(c.a, c.b); got != c.want {
			t.Errorf("addSat(%d, %d) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
	alloc := func(id string, bytes uint64) tracemem.MemoryEvent {
		return tracemem.MemoryEvent{TimestampNs: 10, Action: tracemem.ActionAlloc, TensorID: id, Device: "d", Bytes: bytes, Category: tracemem.CategoryActivation}
	}
	for _, c := range []struct {
		name   string
		events []tracemem.MemoryEvent
		want   []string // the samples: leaf, values
		reason string
	}{
		{"below the largest int64", []tracemem.MemoryEvent{alloc("a", math.MaxInt64-1)},
			[]string{fmt.Sprint("op [1 ", int64(math.MaxInt64-1), "]")}, "2^63-2 bytes is kept as is"},
		{"saturated peak", []tracemem.MemoryEvent{alloc("a", 1<<62), alloc("b", math.MaxUint64)},
			[]string{fmt.Sprint("op [1 ", int64(1<<62), "]"), fmt.Sprint("op [1 ", int64(math.MaxInt64), "]")}, "the breakdown's sum saturates as the peak does: nothing pre-existing"},
	} {
		doc := &tracemem.TraceDocument{Memory: c.events}
		for i := range doc.Memory {
			doc.Memory[i].OpName = "op"
			doc.Memory[i].TimestampNs += uint64(i)
		}
		prof, err := buildPprof(&trace{name: "huge", profile: tracemem.AnalyzeMemory(doc), tree: newSpanTree()})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, s := range prof.Sample {
			got = append(got, fmt.Sprint(s.Location[0].Line[0].Function.Name, " ", s.Value))
		}
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: samples %q, want %q: %s", c.name, got, c.want, c.reason)
		}
	}
}

// stackCopied is the frames of a sample as buildPprof made them when each
// sample copied its span's stack, from the whole path walked: the
// reference its shared stacks are checked against.
func stackCopied(tree *spanTree, a *tracemem.LiveAllocation) []string {
	spans := []string{noSpanFrame}
	if tree.isSpan(a.SpanID) {
		spans = tree.pathNames(a.SpanID)
		slices.Reverse(spans)
		if len(spans) > maxStackFrames {
			spans = append(spans[:maxStackFrames-1], elidedFrame)
		}
	}
	// The op's frame is left out when the allocating span is an op span of
	// the op's name (spelled out here, not opNamesSpan, which buildPprof
	// calls; the tree is a candle-graph trace's).
	if s, ok := tree.span(a.SpanID); a.OpName == nil || ok && s.kind == tracemem.SpanOp && s.name == *a.OpName {
		return spans
	}
	stack := append([]string{*a.OpName}, spans...)
	if len(stack) > maxStackFrames {
		stack[maxStackFrames-1] = elidedFrame
		stack = stack[:maxStackFrames]
	}
	return stack
}

// TestPprofStacksAsCopied: on random forests of chains 0 to 40 spans deep
// and a few about maxStackFrames deep, with allocations of several ops (one
// an op span's own name, one none) spread over the spans in random order,
// every sample's frames are those the copy per sample gave.
func TestPprofStacksAsCopied(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	ops := []string{"mm", "add", "n3", "…"}
	for n := range 100 {
		tree := newSpanTree()
		spans := rng.IntN(41)
		if n%10 == 0 {
			spans = maxStackFrames - 2 + rng.IntN(5)
		}
		for i := range spans {
			s := spanInfo{id: "s" + strconv.Itoa(i), name: "n" + strconv.Itoa(i), kind: tracemem.SpanKind(rng.IntN(3))}
			if i > 0 && rng.IntN(10) > 0 {
				s.parent = "s" + strconv.Itoa(rng.IntN(i+2)) // mostly the one before, for depth
				if rng.IntN(2) == 0 {
					s.parent = "s" + strconv.Itoa(i-1)
				}
			}
			tree.addSpan(s)
		}
		p := &tracemem.MemoryProfile{Summary: tracemem.MemorySummary{PeakDevice: "d"}}
		for k := range 60 {
			a := tracemem.LiveAllocation{TensorID: strconv.Itoa(k), SpanID: "s" + strconv.Itoa(spans-1-rng.IntN(min(spans+2, 6))), Bytes: 1, Device: "d"}
			if r := rng.IntN(len(ops) + 1); r < len(ops) {
				a.OpName = &ops[r]
			}
			p.PeakBreakdown = append(p.PeakBreakdown, a)
		}
		p.Summary.PeakBytes = uint64(len(p.PeakBreakdown))
		p.ByDevice = []tracemem.DeviceMemoryStats{{Device: "d", PeakBytes: p.Summary.PeakBytes}}
		prof, err := buildPprof(&trace{name: "random", profile: p, tree: tree})
		if err != nil {
			t.Fatal(err)
		}
		for i := range p.PeakBreakdown {
			a := &p.PeakBreakdown[i]
			got := frameNames(prof.Sample[i])
			if want := stackCopied(tree, a); !slices.Equal(got, want) {
				t.Fatalf("forest %d, sample %d (span %q, op %q): %d frames %q, want %d %q", n, i, a.SpanID, opName(a.OpName), len(got), got, len(want), want)
			}
		}
	}
}

// TestPprofSamplesShareStacks: samples of one span and op share one stack,
// not a copy each (a copy of up to 1024 frames per sample: 15.7 s and 1.3
// GB for 40k allocs in a span 1100 deep).
func TestPprofSamplesShareStacks(t *testing.T) {
	const depth = 1100
	tree := newSpanTree()
	addChain(tree, depth, "")
	op := "x"
	p := &tracemem.MemoryProfile{Summary: tracemem.MemorySummary{PeakDevice: "d", PeakBytes: 100}, ByDevice: []tracemem.DeviceMemoryStats{{Device: "d", PeakBytes: 100}}}
	for k := range 100 {
		p.PeakBreakdown = append(p.PeakBreakdown, tracemem.LiveAllocation{TensorID: strconv.Itoa(k), SpanID: "s1099", OpName: &op, Bytes: 1, Device: "d"})
	}
	prof, err := buildPprof(&trace{name: "chainleaf", profile: p, tree: tree})
	if err != nil {
		t.Fatal(err)
	}
	first := prof.Sample[0].Location
	if len(first) != maxStackFrames || first[0].Line[0].Function.Name != op {
		t.Fatalf("the first sample has %d frames, leaf %s: want %d, leaf %s", len(first), first[0].Line[0].Function.Name, maxStackFrames, op)
	}
	for i, s := range prof.Sample[:len(p.PeakBreakdown)] {
		if &s.Location[0] != &first[0] {
			t.Fatalf("sample %d of span s1099 and op %s has a stack of its own, not the first sample's", i, op)
		}
	}
}

// TestStdoutIsTrace: standard output that is the trace's own file (`>>
// t.jsonl`) is refused, in every command, as -o naming the trace is: the
// output would be appended to the trace (from a check of the command: -o -
// and the text commands wrote into it, where -o /dev/stdout was refused with
// a message that spoke of overwriting).
func TestStdoutIsTrace(t *testing.T) {
	data, err := os.ReadFile(sample(t))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	other := writeFile(t, dir, "other.jsonl", data)
	for _, c := range []struct {
		name, reason string
		args         func(own string) []string
		stdin        bool // standard input is the trace too
		want         int
	}{
		{"summary", "a text command", func(own string) []string { return []string{"summary", own} }, false, 2},
		{"summary of several", "any of the traces", func(own string) []string { return []string{"summary", other, own} }, false, 2},
		{"profile", "the JSON profile", func(own string) []string { return []string{"profile", own} }, false, 2},
		{"profile of stdin", "the trace given as standard input", func(string) []string { return []string{"profile", "-"} }, true, 2},
		{"nodes", "a text command", func(own string) []string { return []string{"nodes", own} }, false, 2},
		{"export -o -", "-o - writes to standard output", func(own string) []string { return []string{"export", "--format", "csv", "-o", "-", own} }, false, 2},
		{"export -o stdout", "-o naming standard output's file writes through it, appending", func(own string) []string { return []string{"export", "--format", "csv", "-o", own, own} }, false, 2},
		{"report -o -", "likewise for report", func(own string) []string { return []string{"report", "-o", "-", own} }, false, 2},
		{"another file", "control: standard output appends to a file that is not the trace", func(string) []string { return []string{"profile", other} }, false, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			own := writeFile(t, t.TempDir(), "own.jsonl", data)
			stdout, err := os.OpenFile(own, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer stdout.Close()
			var stdin io.Reader = strings.NewReader("")
			if c.stdin {
				f, err := os.Open(own)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				stdin = f
			}
			var stderr bytes.Buffer
			code := run(c.args(own), stdin, stdout, &stderr)
			got, err := os.ReadFile(own)
			if err != nil {
				t.Fatal(err)
			}
			if c.want == 0 {
				if code != 0 || len(got) <= len(data) {
					t.Errorf("%s: exit %d (%s), %d bytes appended; want 0 and the output appended", c.reason, code, stderr.String(), len(got)-len(data))
				}
				return
			}
			want := "standard output is the trace "
			if c.stdin {
				want = "standard output is the file standard input reads the trace from" // not "the trace -"
			}
			if code != c.want || !strings.Contains(stderr.String(), want) || !bytes.Equal(got, data) {
				t.Errorf("%s: exit %d, stderr %q, trace changed %v; want %d, the trace refused as standard output, and left as it was", c.reason, code, stderr.String(), !bytes.Equal(got, data), c.want)
			}
		})
	}
}
