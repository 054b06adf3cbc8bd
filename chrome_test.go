// chrome_test.go tests ReadChromeTrace: hand-built fixtures per mapping rule, the Total Allocated rule, bad input, and a fuzz target.

package tracemem

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"
)

// The -update flag rewrites golden files; another test file may define it
// first, in which case it is shared.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the golden files under testdata/")
	}
}

func goldenUpdate() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// chromeFixture returns the reason and the trace of testdata/chrome/NAME.txtar.
func chromeFixture(t testing.TB, name string) (string, []byte) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "chrome", name+".txtar"))
	if err != nil {
		t.Fatal(err)
	}
	comment, files := parseTxtar(data)
	trace, ok := txtarGet(files, "trace.json")
	if !ok {
		t.Fatalf("%s: no trace.json", name)
	}
	return strings.TrimSpace(string(comment)), trace
}

func mustReadChrome(t testing.TB, data []byte) *TraceDocument {
	t.Helper()
	doc, err := ReadChromeTrace(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("ReadChromeTrace: %v", err)
	}
	return doc
}

// TestChromeGolden locks the whole imported document of every fixture
// (refresh with -update after checking the diff by eye).
func TestChromeGolden(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "chrome", "*.txtar"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".txtar")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			comment, files := parseTxtar(data)
			trace, _ := txtarGet(files, "trace.json")
			doc := mustReadChrome(t, trace)
			got, err := jsonv2.Marshal(doc, jsontext.WithIndent("  "), jsonv2.Deterministic(true))
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			if goldenUpdate() {
				out := formatTxtar(comment, []txtarFile{{Name: "trace.json", Data: trace}, {Name: "doc.json", Data: got}})
				if err := os.WriteFile(path, out, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, ok := txtarGet(files, "doc.json")
			if !ok {
				t.Fatalf("no doc.json; run with -update (%s)", strings.TrimSpace(string(comment)))
			}
			if d := cmp.Diff(string(want), string(got)); d != "" {
				t.Errorf("%s\ndocument differs (-want +got):\n%s", strings.TrimSpace(string(comment)), d)
			}
		})
	}
}

// memRow is the part of a MemoryEvent the mapping decides.
type memRow struct {
	Ts       uint64
	Tensor   string
	Action   MemoryAction
	Bytes    uint64
	Device   string
	Span     string
	Op       string
	Category Category
}

func memRows(doc *TraceDocument) []memRow {
	var rows []memRow
	for _, e := range doc.Memory {
		rows = append(rows, memRow{e.TimestampNs, e.TensorID, e.Action, e.Bytes, e.Device, e.SpanID, e.OpName, e.Category})
	}
	return rows
}

type spanRow struct {
	ID, Parent, Name string
	Kind             SpanKind
	Step             Step
	Start, Dur       uint64
}

func spanRows(doc *TraceDocument) []spanRow {
	var rows []spanRow
	for _, s := range doc.Spans {
		rows = append(rows, spanRow{s.ID, s.ParentID, s.Name, s.Kind, s.Step, s.StartNs, s.DurationNs})
	}
	return rows
}

const (
	alloc = ActionAlloc
	free  = ActionFree
)

// TestChromeAddrFixture checks the Addr form rule by rule on addr.txtar.
func TestChromeAddrFixture(t *testing.T) {
	_, trace := chromeFixture(t, "addr")
	doc := mustReadChrome(t, trace)
	const act, grad, opt, oth = CategoryActivation, CategoryGradient, CategoryOptimizer, CategoryOther
	// Times: ns since the earliest imported event, the [memory] at 990 µs.
	wantMem := []memRow{
		// baseline: Total Allocated 1512 - Bytes 512 = 1000 live before; the trace frees 300 of it (0x10000), so 700 stay.
		{0, "cuda:0#baseline", alloc, 700, "cuda:0", "baseline", "", oth}, // in its own span: no op is charged with it
		{0, "cuda:0@0x1000#0", alloc, 512, "cuda:0", "thread:0", "", oth}, // outside every span: the thread's root
		{35000, "cuda:0@0x2000#0", alloc, 256, "cuda:0", "2", "aten::empty", act},
		{40000, "cpu@0x1869f#0", alloc, 40, "cpu", "2", "aten::empty", act},         // at the span's end: contained
		{70000, "cuda:0@0x1000#0", free, 512, "cuda:0", "3", "aten::addmm", oth},    // the free names its alloc's id and category
		{80000, "cuda:0@0x1000#1", alloc, 1024, "cuda:0", "3", "aten::addmm", act},  // address reused: a new tensor
		{240000, "cuda:0@0x3000#0", alloc, 128, "cuda:0", "9", "aten::mul", grad},   // autograd thread: backward
		{260000, "cuda:0@0x10000#0", free, 300, "cuda:0", "8", "MulBackward0", oth}, // never allocated: pre-existing
		{530000, "cuda:0@0x2000#0", free, 256, "cuda:0", "5", "aten::add_", act},
		{530000, "cuda:0@0x5000#0", alloc, 64, "cuda:0", "5", "aten::add_", opt}, // equal ts: file order
		{810000, "cpu@0x1869f#0", free, 40, "cpu", "0", "ProfilerStep#3", act},
	}
	if d := cmp.Diff(wantMem, memRows(doc)); d != "" {
		t.Errorf("memory (-want +got):\n%s", d)
	}
	wantSpans := []spanRow{
		{"0", "", "ProfilerStep#3", SpanFunction, StepNone, 10000, 1000000},
		{"1", "0", "aten::linear", SpanOp, StepForward, 20000, 100000},
		{"2", "1", "aten::empty", SpanOp, StepForward, 30000, 10000},
		{"3", "1", "aten::addmm", SpanOp, StepForward, 50000, 50000},
		{"4", "0", "Optimizer.step#SGD.step", SpanFunction, StepOptimizer, 510000, 100000},
		{"5", "4", "aten::add_", SpanOp, StepOptimizer, 520000, 20000},
		{"6", "0", "Optimizer.zero_grad#SGD.zero_grad", SpanFunction, StepOptimizer, 710000, 10000},
		{"7", "", "autograd::engine::evaluate_function: MulBackward0", SpanOp, StepBackward, 210000, 100000},
		{"8", "7", "MulBackward0", SpanOp, StepBackward, 220000, 80000},
		{"9", "8", "aten::mul", SpanOp, StepBackward, 230000, 20000},
		{"baseline", "", "pre-existing memory", SpanFunction, StepNone, 0, 1010000},
		{"thread:0", "", "thread 100/1", SpanFunction, StepNone, 0, 1010000},
	}
	if d := cmp.Diff(wantSpans, spanRows(doc)); d != "" {
		t.Errorf("spans (-want +got):\n%s", d)
	}
	type opRow struct{ Span, Name, Device string }
	var ops []opRow
	for _, o := range doc.Ops {
		ops = append(ops, opRow{o.SpanID, o.OpName, o.Device})
	}
	wantOps := []opRow{{"1", "aten::linear", ""}, {"2", "aten::empty", "cuda:0"}, {"3", "aten::addmm", "cuda:0"},
		{"5", "aten::add_", "cuda:0"}, {"7", "autograd::engine::evaluate_function: MulBackward0", ""},
		{"8", "MulBackward0", "cuda:0"}, {"9", "aten::mul", "cuda:0"}}
	if d := cmp.Diff(wantOps, ops); d != "" {
		t.Errorf("ops (-want +got):\n%s", d)
	}
	// Samples: one per event with Total Allocated, the OOM event included;
	// cuda:0's capacity from deviceProperties, cpu's unknown (0).
	const capA100 = 85899345920
	type sampleRow struct {
		Ts                          uint64
		Device                      string
		Used, Free, Reserved, Capac uint64
	}
	var samples []sampleRow
	for _, s := range doc.DeviceMemory {
		if s.ReservedBytes == nil || s.CapacityBytes == nil {
			t.Fatalf("sample %+v: reserved or capacity absent", s)
		}
		samples = append(samples, sampleRow{s.TimestampNs, s.Device, s.UsedBytes, s.FreeBytes, *s.ReservedBytes, *s.CapacityBytes})
	}
	const r2m = 2097152
	wantSamples := []sampleRow{
		{0, "cuda:0", 1512, capA100 - 1512, r2m, capA100},
		{35000, "cuda:0", 1768, capA100 - 1768, r2m, capA100},
		{40000, "cpu", 40, 0, 4096, 0},
		{70000, "cuda:0", 1256, capA100 - 1256, r2m, capA100},
		{80000, "cuda:0", 2280, capA100 - 2280, r2m, capA100},
		{240000, "cuda:0", 2408, capA100 - 2408, r2m, capA100},
		{260000, "cuda:0", 2108, capA100 - 2108, r2m, capA100},
		{530000, "cuda:0", 1852, capA100 - 1852, r2m, capA100},
		{530000, "cuda:0", 1916, capA100 - 1916, r2m, capA100},
		{610000, "cuda:0", 1916, capA100 - 1916, r2m, capA100}, // [OutOfMemory]
		{810000, "cpu", 0, 0, 4096, 0},
	}
	if d := cmp.Diff(wantSamples, samples); d != "" {
		t.Errorf("device samples (-want +got):\n%s", d)
	}
	wantRun := Run{Phase: PhaseTrain, Device: "cuda:0", TimingMode: TimingHost,
		Tags: map[string]string{"source": "chrome_trace", "out_of_memory_events": "1",
			// The [OutOfMemory] event: 1 TiB asked at ts 1600 µs (610 µs
			// after the first event), at the end of Optimizer.step (span 4).
			"out_of_memory_first_device": "cuda:0", "out_of_memory_first_ns": "610000",
			"out_of_memory_first_bytes": "1099511627776", "out_of_memory_first_total_allocated": "1916",
			"out_of_memory_first_span": "4"}}
	if d := cmp.Diff(wantRun, doc.Run); d != "" {
		t.Errorf("run (-want +got):\n%s", d)
	}
	if doc.Schema != SchemaV6 {
		t.Errorf("schema %q", doc.Schema)
	}
	if err := doc.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

// TestChromeAddrlessFixture checks the Addr-less form on noaddr.txtar.
func TestChromeAddrlessFixture(t *testing.T) {
	_, trace := chromeFixture(t, "noaddr")
	doc := mustReadChrome(t, trace)
	const act, oth = CategoryActivation, CategoryOther
	wantMem := []memRow{
		{2, "cuda:1#0", alloc, 100, "cuda:1", "1", "aten::zeros", act},
		{2, "cuda:1#1", alloc, 100, "cuda:1", "1", "aten::zeros", act}, // 1000.0025 µs: the sub-ns digit is dropped
		{11, "cuda:1#2", alloc, 200, "cuda:1", "1", "aten::zeros", act},
		{30, "cuda:1#1", free, 100, "cuda:1", "2", "aten::relu", act}, // the most recent live block of that size
		{30, "cuda:1#2", free, 200, "cuda:1", "2", "aten::relu", act},
		{40, "cuda:1#pre0", free, 50, "cuda:1", "2", "aten::relu", oth}, // no live block of 50: pre-existing
		{600, "cuda:1#0", free, 100, "cuda:1", "thread:0", "", act},     // another thread, no span: its root
		{700, "cuda:1#pre1", free, 100, "cuda:1", "thread:0", "", oth},  // no live 100 left: pre-existing
		{800, "mps:0#0", alloc, 4, "mps:0", "thread:0", "", oth},
		{900, "device42:3#0", alloc, 8, "device42:3", "thread:0", "", oth},
		// the 0-byte event at 950 is neither an alloc nor a free
	}
	if d := cmp.Diff(wantMem, memRows(doc)); d != "" {
		t.Errorf("memory (-want +got):\n%s", d)
	}
	wantSpans := []spanRow{
		{"0", "", "ProfilerStep#1", SpanFunction, StepNone, 0, 100000},
		{"1", "0", "aten::zeros", SpanOp, StepForward, 1, 10},
		{"2", "0", "aten::relu", SpanOp, StepForward, 20, 500},
		{"3", "", "MulBackward0", SpanOp, StepBackward, 500, 300}, // legacy "CPU functions" op
		{"thread:0", "", "thread Process 7/Thread 2", SpanFunction, StepNone, 600, 350},
	}
	if d := cmp.Diff(wantSpans, spanRows(doc)); d != "" {
		t.Errorf("spans (-want +got):\n%s", d)
	}
	if len(doc.DeviceMemory) != 0 {
		t.Errorf("device samples without totals or capacity: %+v", doc.DeviceMemory)
	}
	if doc.Run.Phase != PhaseTrain || doc.Run.Device != "cuda:1" {
		t.Errorf("run phase %v device %q, want train cuda:1", doc.Run.Phase, doc.Run.Device)
	}
}

// TestChromeForms checks that the same trace in other clothes imports the same.
func TestChromeForms(t *testing.T) {
	_, addr := chromeFixture(t, "addr")
	want := mustReadChrome(t, addr)
	var obj struct {
		TraceEvents []json.RawMessage `json:"traceEvents"`
	}
	if err := json.Unmarshal(addr, &obj); err != nil {
		t.Fatal(err)
	}
	bare, _ := json.Marshal(obj.TraceEvents)
	withPropsOnly := func(b []byte) []byte { // deviceProperties after traceEvents
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return []byte(`{"traceEvents":` + string(m["traceEvents"]) + `,"deviceProperties":` + string(m["deviceProperties"]) + `}`)
	}
	for _, tc := range []struct {
		name, reason string
		data         []byte
		sameSamples  bool
	}{
		{"gzip", "gzip is detected by its magic bytes", rdGzip(t, addr), true},
		{"properties last", "deviceProperties may follow traceEvents", withPropsOnly(addr), true},
		{"bare array", "a bare array of events is a trace (no capacity then)", bare, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := mustReadChrome(t, tc.data)
			if d := cmp.Diff(memRows(want), memRows(got)); d != "" {
				t.Errorf("%s: memory differs:\n%s", tc.reason, d)
			}
			if d := cmp.Diff(spanRows(want), spanRows(got)); d != "" {
				t.Errorf("%s: spans differ:\n%s", tc.reason, d)
			}
			if tc.sameSamples {
				if d := cmp.Diff(want.DeviceMemory, got.DeviceMemory); d != "" {
					t.Errorf("%s: samples differ:\n%s", tc.reason, d)
				}
			} else if s := got.DeviceMemory[0]; *s.CapacityBytes != 0 || s.FreeBytes != 0 {
				t.Errorf("%s: capacity %d free %d, want 0 (unknown)", tc.reason, *s.CapacityBytes, s.FreeBytes)
			}
		})
	}
	// ReadTrace recognizes both forms and hands them over.
	for _, data := range [][]byte{addr, bare, rdGzip(t, addr)} {
		doc, err := ReadTrace(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("ReadTrace: %v", err)
		}
		if d := cmp.Diff(memRows(want), memRows(doc)); d != "" {
			t.Errorf("ReadTrace: memory differs:\n%s", d)
		}
	}
}

// TestChromeCapacityOnly checks that a device with a known capacity but no
// totals (an older trace with deviceProperties) still gets its capacity.
func TestChromeCapacityOnly(t *testing.T) {
	data := `{"deviceProperties":[{"id":1,"totalGlobalMem":1000}],"traceEvents":[
	{"name":"[memory]","ph":"i","ts":5,"pid":1,"tid":1,"args":{"Bytes":100,"Device Type":1,"Device Id":1}},
	{"name":"[memory]","ph":"i","ts":7,"pid":1,"tid":1,"args":{"Bytes":100,"Device Type":1,"Device Id":0}}]}`
	doc := mustReadChrome(t, []byte(data))
	if len(doc.DeviceMemory) != 1 {
		t.Fatalf("samples %+v, want one for cuda:1", doc.DeviceMemory)
	}
	s := doc.DeviceMemory[0]
	if s.Device != "cuda:1" || s.CapacityBytes == nil || *s.CapacityBytes != 1000 || s.TimestampNs != 0 || s.UsedBytes != 0 || s.ReservedBytes != nil {
		t.Errorf("sample %+v, want cuda:1 capacity 1000 at 0", s)
	}
	p := AnalyzeMemory(doc)
	for _, d := range p.ByDevice {
		want := map[string]uint64{"cuda:0": 0, "cuda:1": 1000}[d.Device]
		if d.CapacityBytes != want {
			t.Errorf("%s: capacity %d, want %d", d.Device, d.CapacityBytes, want)
		}
	}
}

// TestChromeExactNanoseconds checks that timestamps are read to the
// nanosecond as decimals: Kineto writes epoch microseconds with three
// decimals (1.7e15 µs), where a float64 of nanoseconds steps by 256.
func TestChromeExactNanoseconds(t *testing.T) {
	data := `{"traceEvents":[
	{"name":"step","ph":"X","cat":"user_annotation","ts":1700000000123456.788,"dur":0.005,"pid":1,"tid":1},
	{"name":"[memory]","ph":"i","ts":1700000000123456.789,"pid":1,"tid":1,"args":{"Bytes":100,"Device Type":1,"Device Id":0}},
	{"name":"[memory]","ph":"i","ts":1700000000123456.790,"pid":1,"tid":1,"args":{"Bytes":-100,"Device Type":1,"Device Id":0}},
	{"name":"[memory]","ph":"i","ts":1700000000123456.793,"pid":1,"tid":1,"args":{"Bytes":7,"Device Type":1,"Device Id":0}}]}`
	doc := mustReadChrome(t, []byte(data))
	var got []uint64
	for _, e := range doc.Memory {
		got = append(got, e.TimestampNs)
	}
	if want := []uint64{1, 2, 5}; !slices.Equal(got, want) {
		t.Errorf("memory at %v ns, want %v (the span's start is 0)", got, want)
	}
	if len(doc.Spans) != 1 || doc.Spans[0].DurationNs != 5 {
		t.Errorf("spans %+v, want one of 5 ns", doc.Spans)
	}
}

// TestChromeCapacityCUDAOnly checks that deviceProperties gives the
// capacity of cuda:<id> only: its ids are CUDA ordinals, and another device
// type with the same id is another device.
func TestChromeCapacityCUDAOnly(t *testing.T) {
	data := `{"deviceProperties":[{"id":0,"totalGlobalMem":1000}],"traceEvents":[
	{"name":"[memory]","ph":"i","ts":5,"pid":1,"tid":1,"args":{"Bytes":100,"Device Type":1,"Device Id":0}},
	{"name":"[memory]","ph":"i","ts":6,"pid":1,"tid":1,"args":{"Bytes":100,"Device Type":2,"Device Id":0}},
	{"name":"[memory]","ph":"i","ts":7,"pid":1,"tid":1,"args":{"Bytes":100,"Device Type":13,"Device Id":0}}]}`
	p := AnalyzeMemory(mustReadChrome(t, []byte(data)))
	got := make(map[string]uint64)
	for _, d := range p.ByDevice {
		got[d.Device] = d.CapacityBytes
	}
	if want := map[string]uint64{"cuda:0": 1000, "mkldnn:0": 0, "mps:0": 0}; !maps.Equal(got, want) {
		t.Errorf("capacities %v, want %v", got, want)
	}
}

// TestChromeManyDevices checks the capacities of a trace of 3000 devices,
// each cuda:<i> with its own, other types with none, read with the parser's
// device map emptied before build: a device's key comes from where it was
// interned, not from a scan of the map for each device, which made a read
// quadratic in the number of devices.
func TestChromeManyDevices(t *testing.T) {
	const n = 3000
	var b strings.Builder
	b.WriteString(`{"deviceProperties":[`)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"id":%d,"totalGlobalMem":%d}`, i, 1000+i)
	}
	b.WriteString(`],"traceEvents":[`)
	for i := range n {
		typ := 1
		if i%3 == 2 {
			typ = 13 // mps: a device of another type with the same id
		}
		fmt.Fprintf(&b, `{"name":"[memory]","ph":"i","ts":%d,"pid":1,"tid":1,"args":{"Bytes":8,"Total Allocated":8,"Device Type":%d,"Device Id":%d}},`, i, typ, i)
	}
	b.WriteString(`{"name":"[memory]","ph":"i","ts":0,"pid":1,"tid":1,"args":{"Bytes":8,"Device Type":1,"Device Id":0}}]}`)
	p := newChromeParser(strings.NewReader(b.String()))
	defer p.spans.release()
	defer p.mems.release()
	if err := p.parse(); err != nil {
		t.Fatal(err)
	}
	p.devices = nil
	doc := p.build()
	seen := 0
	for _, s := range doc.DeviceMemory {
		if s.UsedBytes == 0 {
			continue // a capacity sample
		}
		var typ string
		var id int
		if _, err := fmt.Sscanf(strings.Replace(s.Device, ":", " ", 1), "%s %d", &typ, &id); err != nil {
			t.Fatalf("device %q: %v", s.Device, err)
		}
		want := uint64(0)
		if typ == "cuda" {
			want = uint64(1000 + id)
		}
		if *s.CapacityBytes != want {
			t.Fatalf("%s: capacity %d, want %d", s.Device, *s.CapacityBytes, want)
		}
		seen++
	}
	if seen != n {
		t.Errorf("%d samples with a total, want %d", seen, n)
	}
}

// TestChromeCategories checks which duration events become spans, of which
// kind, and which become ops, by category.
func TestChromeCategories(t *testing.T) {
	var evs []string
	cats := []string{"cpu_op", "Operator", "user_annotation", "python_function", "kernel", "gpu_memcpy", "cuda_runtime", "gpu_user_annotation", "Trace"}
	for i, c := range cats {
		evs = append(evs, fmt.Sprintf(`{"name":"e.%s","ph":"X","cat":%q,"ts":%d,"dur":5,"pid":1,"tid":1}`, c, c, 10*i))
	}
	evs = append(evs, `{"name":"e.legacy","ph":"X","ts":200,"dur":5,"pid":"CPU functions","tid":1}`)
	doc := mustReadChrome(t, []byte("["+strings.Join(evs, ",")+"]"))
	spans := make(map[string]SpanKind)
	for _, s := range doc.Spans {
		spans[s.Name] = s.Kind
	}
	want := map[string]SpanKind{"e.cpu_op": SpanOp, "e.Operator": SpanOp, "e.legacy": SpanOp,
		"e.user_annotation": SpanFunction, "e.python_function": SpanFunction}
	if d := cmp.Diff(want, spans); d != "" {
		t.Errorf("spans by name (-want +got):\n%s", d)
	}
	var ops []string
	for _, o := range doc.Ops {
		ops = append(ops, o.OpName)
	}
	if d := cmp.Diff([]string{"e.cpu_op", "e.Operator", "e.legacy"}, ops); d != "" {
		t.Errorf("ops (-want +got):\n%s", d)
	}
}

// TestChromeLiberalProperties: deviceProperties that is not an array, or
// whose entries are not objects, is ignored rather than refused (it only
// gives capacities), and object keys written with escapes are read as
// their text.
func TestChromeLiberalProperties(t *testing.T) {
	ev := `[{"name":"[memory]","ph":"i","ts":5,"pid":1,"tid":1,"args":{"Bytes":100,"Device Type":1,"Device Id":0}}]`
	for _, c := range []struct {
		name, data string
		capacity   uint64 // of cuda:0
	}{
		{"not an array", `{"deviceProperties":{"id":0},"traceEvents":` + ev + `}`, 0},
		{"entries not objects", `{"deviceProperties":[7,"x",{"id":0,"totalGlobalMem":64}],"traceEvents":` + ev + `}`, 64},
		{"escaped keys", `{"device\u0050roperties":[{"\u0069d":0,"totalGlobalMem":32}],"trace\u0045vents":` + ev + `}`, 32},
		// 0 is a non-negative integer: read, as a capacity not known.
		{"zero memory", `{"deviceProperties":[{"id":0,"totalGlobalMem":0}],"traceEvents":` + ev + `}`, 0},
		// An entry without an id names no device: its memory is no one's.
		{"no id", `{"deviceProperties":[{"totalGlobalMem":64}],"traceEvents":` + ev + `}`, 0},
	} {
		doc, err := ReadChromeTrace(strings.NewReader(c.data))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		p := AnalyzeMemory(doc)
		if len(p.ByDevice) != 1 || p.ByDevice[0].CapacityBytes != c.capacity || p.Summary.AllocCount != 1 {
			t.Errorf("%s: devices %+v, %d allocs; want cuda:0 with capacity %d, 1 alloc", c.name, p.ByDevice, p.Summary.AllocCount, c.capacity)
		}
	}
}

// TestChromeNonFinite: old Kineto traces hold inf and nan in args it never
// reads (a Memcpy's "memory bandwidth (GB/s)" when its dur was 0, pytorch/
// kineto#105), which JSON has no syntax for; Python's json writes NaN and
// Infinity. They are read as the values they stand in for would be, and
// the trace reads as it does without them.
func TestChromeNonFinite(t *testing.T) {
	mem := memEvent("5", 100, 1, 0, "")
	clean := `{"traceEvents":[{"ph":"X","cat":"Memcpy","name":"Memcpy HtoD","pid":0,"tid":"stream 7","ts":1,"dur":0,"args":{"bytes":200,"memory bandwidth (GB/s)":0}},
	{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":"stream 7","ts":2,"dur":1,"args":{"est. achieved occupancy %":0,"blocks per SM":[0,1]}},` + mem + `]}`
	for _, c := range []struct{ name, from, to string }{
		{"inf", `"memory bandwidth (GB/s)":0`, `"memory bandwidth (GB/s)":inf`},
		{"nan", `"est. achieved occupancy %":0`, `"est. achieved occupancy %":-nan`},
		{"Python", `[0,1]`, `[NaN,-Infinity]`},
	} {
		in := strings.Replace(clean, c.from, c.to, 1)
		if in == clean {
			t.Fatalf("%s: %q not in the trace", c.name, c.from)
		}
		doc, err := ReadChromeTrace(strings.NewReader(in))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		want, err := ReadChromeTrace(strings.NewReader(clean))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, doc); diff != "" {
			t.Errorf("%s: differs from the trace without it (-want +got):\n%s", c.name, diff)
		}
		if got, err := ReadTrace(strings.NewReader(in)); err != nil || got.Memory[0].Bytes != 100 {
			t.Errorf("%s: ReadTrace: %v", c.name, err)
		}
	}

	// Before traceEvents (in metadata), where ReadTrace has not told the
	// format yet.
	early := strings.Replace(clean, `{"traceEvents":[`, `{"metadata":{"loss":NaN},"traceEvents":[`, 1)
	for name, read := range map[string]func(io.Reader) (*TraceDocument, error){"ReadTrace": ReadTrace, "ReadChromeTrace": ReadChromeTrace} {
		doc, err := read(strings.NewReader(early))
		if err != nil {
			t.Fatalf("%s, NaN before traceEvents: %v", name, err)
		}
		want, _ := ReadChromeTrace(strings.NewReader(clean))
		if diff := cmp.Diff(want, doc); diff != "" {
			t.Errorf("%s, NaN before traceEvents: differs from the trace without it (-want +got):\n%s", name, diff)
		}
		_, err = read(iotest.HalfReader(strings.NewReader(early)))
		if !errors.Is(err, ErrInvalidJSON) || !strings.Contains(err.Error(), "NaN is not a JSON number") || !strings.Contains(err.Error(), "io.Seeker") {
			t.Errorf("%s, NaN before traceEvents, from a reader that cannot seek: %v; want an error wrapping ErrInvalidJSON that names NaN and io.Seeker", name, err)
		}
	}

	// Read twice: from where the reader was, gzipped or not, and from a
	// file; a reader that cannot seek gets an error that says so.
	in := strings.Replace(clean, `"memory bandwidth (GB/s)":0`, `"memory bandwidth (GB/s)":inf`, 1)
	want, err := ReadChromeTrace(strings.NewReader(clean))
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(in))
	zw.Close()
	path := filepath.Join(t.TempDir(), "trace.json")
	if err := os.WriteFile(path, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	offset := strings.NewReader("skip" + in)
	offset.Seek(4, io.SeekStart)
	for name, read := range map[string]func() (*TraceDocument, error){
		"gzip":           func() (*TraceDocument, error) { return ReadChromeTrace(bytes.NewReader(gz.Bytes())) },
		"ReadTrace gzip": func() (*TraceDocument, error) { return ReadTrace(bytes.NewReader(gz.Bytes())) },
		"file":           func() (*TraceDocument, error) { return ReadTraceFile(path) },
		"offset":         func() (*TraceDocument, error) { return ReadChromeTrace(offset) },
	} {
		doc, err := read()
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if diff := cmp.Diff(want, doc); diff != "" {
			t.Errorf("%s: (-want +got):\n%s", name, diff)
		}
	}
	tok := strings.Index(in, "inf")
	for name, read := range map[string]func() (*TraceDocument, error){
		"ReadChromeTrace": func() (*TraceDocument, error) { return ReadChromeTrace(iotest.HalfReader(strings.NewReader(in))) },
		"ReadTrace":       func() (*TraceDocument, error) { return ReadTrace(iotest.HalfReader(strings.NewReader(in))) },
		"ReadTrace -inf": func() (*TraceDocument, error) {
			return ReadTrace(iotest.HalfReader(strings.NewReader(strings.Replace(in, "inf", "-inf", 1))))
		},
		"ReadTrace NaN": func() (*TraceDocument, error) {
			return ReadTrace(iotest.HalfReader(strings.NewReader(strings.Replace(in, "inf", "NaN", 1))))
		},
	} {
		_, err := read()
		var pe *ParseError
		if !errors.As(err, &pe) || !errors.Is(err, ErrInvalidJSON) || pe.Offset != int64(tok) ||
			!strings.Contains(pe.Msg, " is not a JSON number") || !strings.Contains(pe.Msg, "io.Seeker") || pe.Kind != "traceEvents[0]" {
			t.Errorf("%s from a reader that cannot seek: %v; want a *ParseError at offset %d wrapping ErrInvalidJSON that names the number and io.Seeker", name, err, tok)
		}
	}
}

// TestChromeNearJSONAtBufferEnds: near-JSON reads the same wherever the
// decoder's buffer ends in it: a '+' at its end, the nan after it not read
// yet, was taken for invalid JSON, and the error of a reader that cannot
// seek named "N" for N/A (from an independent check, which found it at
// offsets 2^k+31). A reader of one byte at a time ends the buffer at every
// byte; a plain one is tried at every offset up to past 1 KiB. In an
// event's args and before traceEvents (where ReadTrace has not told the
// format yet).
func TestChromeNearJSONAtBufferEnds(t *testing.T) {
	ev := `{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":"stream 7","ts":3,"dur":2,"args":{"x":%s}},` + memEvent("5", 100, 1, 0, "")
	places := []struct{ name, format string }{
		{"in args", `{"pad":"%s","traceEvents":[` + ev + `]}`},
		{"before traceEvents", `{"pad":"%s","x":%s,"traceEvents":[` + strings.Replace(ev, "%s", "0", 1) + `]}`},
	}
	want, err := ReadChromeTrace(strings.NewReader(fmt.Sprintf(places[0].format, "", "0")))
	if err != nil {
		t.Fatal(err)
	}
	type reader struct {
		name string
		read func(io.Reader) (*TraceDocument, error)
	}
	readers := []reader{{"ReadChromeTrace", ReadChromeTrace}, {"ReadTrace", ReadTrace}}
	check := func(r reader, tok, place, in string, seekable, oneByte bool) {
		t.Helper()
		at := strings.Index(in, tok)
		var src io.Reader = strings.NewReader(in)
		if oneByte {
			src = &oneByteSeeker{strings.NewReader(in)}
		}
		if seekable {
			got, err := r.read(src)
			if err != nil {
				t.Fatalf("%s, %s %s at offset %d (one byte a read %v): %v", r.name, tok, place, at, oneByte, err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("%s, %s %s at offset %d (one byte a read %v): differs from the trace with 0 there (-want +got):\n%s", r.name, tok, place, at, oneByte, diff)
			}
			return
		}
		what := " is not a JSON number"
		if strings.HasSuffix(tok, "N/A") {
			what = " is not a JSON value"
		}
		_, err := r.read(struct{ io.Reader }{src})
		var pe *ParseError
		if !errors.As(err, &pe) || !errors.Is(err, ErrInvalidJSON) || pe.Offset != int64(at) || !strings.Contains(pe.Msg, tok+what) {
			t.Fatalf("%s, %s %s at offset %d (one byte a read %v), from a reader that cannot seek: %v; want an error at that offset naming %s", r.name, tok, place, at, oneByte, err, tok)
		}
	}
	for _, tok := range []string{"+nan", "+Infinity", "+N/A", "-N/A", "N/A", "-inf", "NaN", "infinity"} {
		for _, pl := range places {
			for _, r := range readers {
				in := fmt.Sprintf(pl.format, "", tok)
				check(r, tok, pl.name, in, true, true)
				check(r, tok, pl.name, in, false, true)
			}
		}
	}
	maxPad := 1100
	if testing.Short() {
		maxPad = 300
	}
	for _, tok := range []string{"+nan", "+N/A"} {
		for _, pl := range places {
			for pad := range maxPad {
				in := fmt.Sprintf(pl.format, strings.Repeat("a", pad), tok)
				for _, r := range readers {
					check(r, tok, pl.name, in, true, false)
				}
			}
		}
	}
}

// oneByteSeeker reads one byte at a time, and seeks.
type oneByteSeeker struct{ *strings.Reader }

func (r *oneByteSeeker) Read(p []byte) (int, error) { return r.Reader.Read(p[:min(len(p), 1)]) }

// TestChromeRepairs: a trace with the other near-JSON older PyTorch
// profilers wrote (Windows paths unescaped, N/A, raw control characters in
// strings) reads as the trace with them repaired, from a reader that can
// seek; from one that cannot, the error names the defect, where it is, and
// how such a trace is read (from a trial on public traces).
func TestChromeRepairs(t *testing.T) {
	mem := memEvent("5", 100, 1, 0, "")
	clean := `{"traceEvents":[{"ph":"X","cat":"python_function","name":"C:/Users/me/proj/x.py(12): forward","pid":1,"tid":1,"ts":1,"dur":9},
	{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":"stream 7","ts":2,"dur":1,"args":{"est. achieved occupancy %":0}},
	{"ph":"X","cat":"cpu_op","name":"aten::add x","pid":1,"tid":1,"ts":4,"dur":2},` + mem + `]}`
	want, err := ReadChromeTrace(strings.NewReader(clean))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, from, to string
		at             int    // event index of the defect
		msg            string // what the error from a reader that cannot seek says
	}{
		{"Windows path", `C:/Users/me/proj/x.py`, `C:\Users\me\proj\x.py`, 0, "invalid escape `\\U` in a string (PyTorch's profiler on Windows wrote file paths unescaped)"},
		{"N/A", `"est. achieved occupancy %":0`, `"est. achieved occupancy %":N/A`, 1, "N/A is not a JSON value (older PyTorch profilers wrote such values)"},
		{"control character", "aten::add x", "aten::add\tx", 2, "control character U+0009 in a string"},
	} {
		in := strings.Replace(clean, c.from, c.to, 1)
		if in == clean {
			t.Fatalf("%s: %q not in the trace", c.name, c.from)
		}
		for name, read := range map[string]func(io.Reader) (*TraceDocument, error){"ReadChromeTrace": ReadChromeTrace, "ReadTrace": ReadTrace} {
			doc, err := read(strings.NewReader(in))
			if err != nil {
				t.Fatalf("%s: %s: %v", c.name, name, err)
			}
			if diff := cmp.Diff(want, doc); diff != "" {
				t.Errorf("%s: %s: differs from the trace repaired by hand (-want +got):\n%s", c.name, name, diff)
			}
			_, err = read(iotest.HalfReader(strings.NewReader(in)))
			var pe *ParseError
			wantMsg := "invalid JSON: " + c.msg + "; a trace with them is read from a file, or another io.Seeker"
			if !errors.As(err, &pe) || !errors.Is(err, ErrInvalidJSON) || pe.Msg != wantMsg ||
				pe.Offset != int64(strings.Index(in, c.to)+strings.IndexAny(c.to, "\\N\t")) || pe.Kind != fmt.Sprintf("traceEvents[%d]", c.at) {
				t.Errorf("%s: %s from a reader that cannot seek: %v; want a *ParseError at the defect in traceEvents[%d] wrapping ErrInvalidJSON, saying %q", c.name, name, err, c.at, wantMsg)
			}
		}
	}

	// Where a value is needed, N/A is one of the wrong type.
	_, err = ReadChromeTrace(strings.NewReader(`[` + strings.Replace(mem, `"Bytes":100`, `"Bytes":N/A`, 1) + `]`))
	if err == nil || !strings.HasSuffix(err.Error(), "traceEvents[0]: args.Bytes: not an integer in a [memory] event") {
		t.Errorf("Bytes N/A: %v; want it to be no integer", err)
	}
	// Before traceEvents, where ReadTrace has not told the format yet; a
	// valid escape in a path stays what JSON says it is.
	early := strings.Replace(clean, `{"traceEvents":[`, `{"metadata":{"script":"C:\work\new\x.py"},"traceEvents":[`, 1)
	for name, read := range map[string]func(io.Reader) (*TraceDocument, error){"ReadTrace": ReadTrace, "ReadChromeTrace": ReadChromeTrace} {
		doc, err := read(strings.NewReader(early))
		if err != nil {
			t.Fatalf("%s, a path before traceEvents: %v", name, err)
		}
		if diff := cmp.Diff(want, doc); diff != "" {
			t.Errorf("%s, a path before traceEvents: (-want +got):\n%s", name, diff)
		}
		if _, err := read(iotest.HalfReader(strings.NewReader(early))); err == nil || !strings.Contains(err.Error(), "invalid escape `\\w` in a string") {
			t.Errorf("%s, a path before traceEvents, from a reader that cannot seek: %v", name, err)
		}
	}
	// What only looks like a repairable defect is invalid JSON, named as
	// the decoder names it, with no advice (from a review): control
	// characters and backslashes outside strings (a binary file, NUL
	// padding), and in strings the defect the string has, not the word
	// before it.
	for _, c := range []struct{ name, in, msg string }{
		{"binary file", "\x18\x00\x00\x00abc", "not a trace: invalid JSON: invalid character '\\x18' at start of value"},
		{"NUL padding", "{\"traceEvents\":[]}\n\x00\x00", "invalid JSON: invalid character '\\x00' at start of value"},
		{"backslash as a value", `[{"ph":"X","name":"k","cat":"kernel","args":{"a":\q}}]`, `invalid JSON: invalid character '\\' at start of value`},
		{"bad escape after nan", `[{"ph":"X","name":"k","cat":"kernel","args":{"a":"nan\q"}}]`, "invalid JSON: invalid escape `\\q` in a string (PyTorch's profiler on Windows wrote file paths unescaped); a trace with them is read from a file, or another io.Seeker"},
		// The escape is named in backquotes when it is printable ASCII
		// other than a backquote, else quoted as Go quotes it.
		{"bad escape of a space", `[{"ph":"X","name":"k","cat":"kernel","args":{"a":"\ "}}]`, "invalid JSON: invalid escape `\\ ` in a string (PyTorch's profiler on Windows wrote file paths unescaped); a trace with them is read from a file, or another io.Seeker"},
		{"bad escape of a tilde", `[{"ph":"X","name":"k","cat":"kernel","args":{"a":"\~"}}]`, "invalid JSON: invalid escape `\\~` in a string (PyTorch's profiler on Windows wrote file paths unescaped); a trace with them is read from a file, or another io.Seeker"},
		{"bad escape of a backquote", "[{\"ph\":\"X\",\"name\":\"k\",\"cat\":\"kernel\",\"args\":{\"a\":\"\\`\"}}]", "invalid JSON: invalid escape \"\\\\`\" in a string (PyTorch's profiler on Windows wrote file paths unescaped); a trace with them is read from a file, or another io.Seeker"},
		{"bad escape of a non-ASCII byte", `[{"ph":"X","name":"k","cat":"kernel","args":{"a":"\é"}}]`, "invalid JSON: invalid escape \"\\\\\\xc3\" in a string (PyTorch's profiler on Windows wrote file paths unescaped); a trace with them is read from a file, or another io.Seeker"},
		{"signed N/A", `[{"ph":"X","name":"k","cat":"kernel","args":{"a":-N/A}}]`, "invalid JSON: -N/A is not a JSON value (older PyTorch profilers wrote such values); a trace with them is read from a file, or another io.Seeker"},
		{"N/A right after a number", `[{"ph":"X","name":"k","x":1N/A}]`, `invalid JSON: invalid character 'N' after object value (expecting ',' or '}')`},
		{"inf right after a number", `[{"ph":"X","name":"k","x":0inf}]`, `invalid JSON: invalid character 'i' after object value (expecting ',' or '}')`},
		{"N/A after a value and a space", `[{"ph":"X","name":"k","x":1 N/A}]`, `invalid JSON: invalid character 'N' after object value (expecting ',' or '}')`},
		{"nan right after a string", `[{"ph":"X","name":"k","x":["a"nan]}]`, `invalid JSON: invalid character 'n' after array element (expecting ',' or ']')`},
		{"nan after an event and a space", `{"traceEvents":[{"ph":"X"} nan]}`, `invalid JSON: invalid character 'n' after array element (expecting ',' or ']')`},
		{"nan as a name", `{"traceEvents":[{nan}]}`, `invalid JSON: invalid character 'a' in literal null (expecting 'u')`},
	} {
		for name, in := range map[string]io.Reader{"a pipe": iotest.HalfReader(strings.NewReader(c.in)), "a file": strings.NewReader(c.in)} {
			_, err := ReadTrace(in)
			var pe *ParseError
			if name == "a file" && strings.Contains(c.msg, "io.Seeker") {
				if err != nil {
					t.Errorf("%s, from %s: %v; want it repaired", c.name, name, err)
				}
				continue
			}
			if !errors.As(err, &pe) || pe.Msg != c.msg {
				t.Errorf("%s, from %s: %v; want the message %q", c.name, name, err, c.msg)
			}
		}
	}
	// A defect right after the events' '[' is where the decoder's buffer
	// starts, and a value may begin there: it is named as anywhere else.
	if _, err := ReadTrace(iotest.HalfReader(strings.NewReader(`[NaN]`))); err == nil || err.Error() != "offset 1: traceEvents[0]: invalid JSON: NaN is not a JSON number (older PyTorch profilers wrote such numbers); a trace with them is read from a file, or another io.Seeker" {
		t.Errorf("NaN as the first event, from a pipe: %v; want the defect named", err)
	}
	// A word that only starts like a non-finite number, cut by the end of
	// the input, sends a seekable input to a second read; there, repaired,
	// the error is the decoder's, with no advice to read it again.
	if _, err := ReadTrace(strings.NewReader(`{"traceEvents":[infin`)); err == nil || err.Error() != "offset 16: traceEvents[0]: invalid JSON: invalid character 'i' at start of value" {
		t.Errorf("a cut word, read again: %v; want the decoder's error", err)
	}
	// Text that is no trace gets no advice to read it from a file: it
	// would fail the same.
	if _, err := ReadTrace(strings.NewReader(`{"x": "C:\Users", "kind": "meta"}`)); err == nil || strings.Contains(err.Error(), "io.Seeker") || !strings.Contains(err.Error(), "invalid escape `\\U`") {
		t.Errorf("not a trace, from a reader that can seek: %v; want the defect named, without advice", err)
	}
}

// TestChromeUnknownCapacity checks that totals on a device of unknown
// capacity do not make the analysis take the peak total for its capacity.
func TestChromeUnknownCapacity(t *testing.T) {
	data := `[{"name":"[memory]","ph":"i","ts":5,"pid":1,"tid":1,"args":{"Bytes":100,"Device Type":0,"Device Id":-1,"Total Allocated":100}},
	{"name":"[memory]","ph":"i","ts":6,"pid":1,"tid":1,"args":{"Bytes":-100,"Device Type":0,"Device Id":-1,"Total Allocated":0}}]`
	p := AnalyzeMemory(mustReadChrome(t, []byte(data)))
	if len(p.ByDevice) != 1 || p.ByDevice[0].CapacityBytes != 0 {
		t.Errorf("by_device %+v, want cpu with capacity 0 (unknown)", p.ByDevice)
	}
	for _, tp := range p.Timeline {
		if tp.FreeBytes != 0 {
			t.Errorf("point %+v: free bytes with an unknown capacity", tp)
		}
	}
}

func TestChromeDeviceNames(t *testing.T) {
	for _, tc := range []struct {
		typ, id int64
		want    string
	}{
		{0, -1, "cpu"}, {0, 0, "cpu"}, {1, 0, "cuda:0"}, {1, 7, "cuda:7"}, {6, 1, "hip:1"}, {8, 0, "maia:0"},
		{9, 2, "xla:2"}, {12, 0, "xpu:0"}, {13, 0, "mps:0"}, {13, -1, "mps"}, {14, 0, "meta:0"},
		{15, 3, "hpu:3"}, {19, 0, "mtia:0"}, {20, 1, "privateuseone:1"}, {21, 0, "device21:0"},
		{-3, 0, "device-3:0"}, {99, -1, "device99"},
	} {
		if got := chromeDeviceName(tc.typ, tc.id); got != tc.want {
			t.Errorf("chromeDeviceName(%d, %d) = %q, want %q", tc.typ, tc.id, got, tc.want)
		}
	}
}

// TestChromeOneDevicePerName: events whose Device Type and Id give one
// device name are one device, so their blocks pair with each other and
// their ids do not collide: the CPU whatever its Device Id, and any
// negative Device Id of a type.
func TestChromeOneDevicePerName(t *testing.T) {
	addr := func(a int) string { return fmt.Sprintf(`,"Addr":%d`, a) }
	for _, tc := range []struct {
		name, why string
		events    []string
		want      Anomalies
		peak      uint64
		device    string
	}{
		{"cpu ids, Addr", "a CPU block allocated under Device Id -1 is freed under Device Id 0",
			[]string{memEvent("1", 64, 0, -1, addr(16)), memEvent("2", -64, 0, 0, addr(16))}, Anomalies{}, 64, "cpu"},
		{"cpu ids, no Addr", "the free pairs with the block of the same size",
			[]string{memEvent("1", 64, 0, 0, ""), memEvent("2", -64, 0, -1, "")}, Anomalies{}, 64, "cpu"},
		{"negative ids, two blocks", "Device Id -1 and -2 are one cuda device: two blocks, not one id twice",
			[]string{memEvent("1", 100, 1, -1, ""), memEvent("2", 200, 1, -2, "")}, Anomalies{}, 300, "cuda"},
		{"negative ids, Addr", "the block at one address pairs across the two ids",
			[]string{memEvent("1", 100, 1, -1, addr(16)), memEvent("2", -100, 1, -2, addr(16)), memEvent("3", 100, 1, -2, addr(16))},
			Anomalies{}, 100, "cuda"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := mustReadChrome(t, []byte("["+strings.Join(tc.events, ",")+"]"))
			p := AnalyzeMemory(doc)
			if p.Anomalies != tc.want || p.Summary.PeakBytes != tc.peak || p.Summary.PeakDevice != tc.device || len(p.ByDevice) != 1 {
				t.Errorf("%s: anomalies %+v, peak %d on %q, %d devices; want %+v, %d on %q, 1 device",
					tc.why, p.Anomalies, p.Summary.PeakBytes, p.Summary.PeakDevice, len(p.ByDevice), tc.want, tc.peak, tc.device)
			}
		})
	}
}

// TestChromeBaselineFromLaterTotal: when a device's first events have no
// Total Allocated, the baseline comes from the first that has one, less the
// net Bytes of every event up to it, so live bytes still equal the totals.
func TestChromeBaselineFromLaterTotal(t *testing.T) {
	in := "[" + strings.Join([]string{
		memEvent("1", 100, 1, 0, ""),
		memEvent("2", 50, 1, 0, ""),
		memEvent("3", -100, 1, 0, `,"Addr":1,"Total Allocated":1050`), // no Addr before: a pre-existing free of 100
		memEvent("4", 8, 1, 0, `,"Total Allocated":1058`),
	}, ",") + "]"
	doc := mustReadChrome(t, []byte(in))
	var live []uint64
	for i, tp := range AnalyzeMemory(doc).Timeline {
		if !strings.HasSuffix(doc.Memory[i].TensorID, "#baseline") {
			live = append(live, tp.LiveBytes)
		}
	}
	// B = 1050 − (100 + 50 − 100) = 1000, of which the pre-existing free
	// covers 100: a baseline allocation of 900 and a pool of 100.
	if want := []uint64{1100, 1150, 1050, 1058}; !slices.Equal(live, want) {
		t.Errorf("live bytes after each event = %v, want %v", live, want)
	}
	if got := doc.Run.Tags["total_allocated_mismatches"]; got != "" {
		t.Errorf("total_allocated_mismatches = %q on a consistent trace", got)
	}
}

// refDecimal is the slow reference of parseDecimal: exact rational
// arithmetic, truncated toward zero.
func refDecimal(s string, scale int) (int64, bool, uint8) {
	if s == "" || strings.ContainsAny(s, " _xX/") || strings.HasPrefix(s, ".") || strings.Contains(s, "e.") {
		return 0, false, decSyntax
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return 0, false, decSyntax
	}
	r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)))
	q := new(big.Int).Quo(r.Num(), r.Denom())
	if !q.IsInt64() {
		return 0, false, decRange
	}
	exact := new(big.Int).Rem(r.Num(), r.Denom()).Sign() == 0
	return q.Int64(), exact, decOK
}

func TestChromeParseDecimal(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		scale    int
		want     int64
		exact    bool
		res      uint8
	}{
		{"integer µs", "1700000000123456", 3, 1700000000123456000, true, decOK},
		{"fraction to ns", "1700000000123456.789", 3, 1700000000123456789, true, decOK},
		{"short fraction", "12.5", 3, 12500, true, decOK},
		{"sub-ns digits truncate", "1.23456", 3, 1234, false, decOK},
		{"exponent", "1.5e3", 3, 1500000, true, decOK},
		{"negative exponent", "15E-1", 3, 1500, true, decOK},
		{"negative", "-2.5", 3, -2500, true, decOK},
		{"plus sign", "+2.5", 3, 2500, true, decOK}, // in a string ("ts": "+2.5"); from a mutation test
		{"zero", "0", 3, 0, true, decOK},
		{"trailing zeros of fraction", "7.000000000000000000000000", 0, 7, true, decOK},
		{"many digits", "123456789012345678901234567890e-20", 0, 1234567890, false, decOK},
		{"a digit beyond the mantissa, not zero", "18446744073709551705e-2", 0, 184467440737095517, false, decOK}, // the 20th digit does not fit: dropped, though the kept digits divide evenly (from a mutation test)
		{"overflow", "9300000000000000", 3, 0, false, decRange},
		{"int64 max", "9223372036854775807", 0, math.MaxInt64, true, decOK},
		{"int64 min", "-9223372036854775808", 0, math.MinInt64, true, decOK},
		{"beyond int64", "9223372036854775808", 0, 0, false, decRange},
		{"not a number", "abc", 3, 0, false, decSyntax},
		{"empty", "", 3, 0, false, decSyntax},
		{"dot only", ".", 3, 0, false, decSyntax},
		{"dangling exponent", "1e", 3, 0, false, decSyntax},
		{"huge exponent", "1e300", 3, 0, false, decRange},
		{"huge negative", "-1e300", 0, 0, false, decRange},
		{"zero with a huge exponent", "0e99999999", 0, 0, true, decOK},
		{"below int64 min", "-9223372036854775809", 0, 0, false, decRange},
		{"trailing junk after a huge number", "1e300x", 3, 0, false, decSyntax},
		{"a million digits then their exponent", "1" + strings.Repeat("0", 1e6) + "e-1000000", 0, 1, true, decOK},
		{"a tiny mantissa with a huge exponent", "0." + strings.Repeat("0", 1e6) + "1e2000000", 0, 0, false, decRange},
	} {
		v, exact, res := parseDecimal([]byte(tc.in), tc.scale)
		if res != tc.res || (res == decOK && (v != tc.want || exact != tc.exact)) {
			in := tc.in
			if len(in) > 60 {
				in = in[:30] + "..." + in[len(in)-30:] // the long cases are a million digits
			}
			t.Errorf("%s: parseDecimal(%q, %d) = %d, %v, %d; want %d, %v, %d", tc.name, in, tc.scale, v, exact, res, tc.want, tc.exact, tc.res)
		}
	}
	// Against the rational reference on random decimals.
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		var b strings.Builder
		switch rng.IntN(8) {
		case 0, 1:
			b.WriteByte('-')
		case 2:
			b.WriteByte('+')
		}
		b.WriteString(strconv.FormatUint(rng.Uint64()>>rng.UintN(64), 10))
		if rng.IntN(2) == 0 {
			b.WriteByte('.')
			for range 1 + rng.IntN(12) {
				b.WriteByte(byte('0' + rng.IntN(10)))
			}
		}
		if rng.IntN(4) == 0 {
			fmt.Fprintf(&b, "e%d", rng.IntN(30)-15)
		}
		s, scale := b.String(), rng.IntN(4)
		v, exact, res := parseDecimal([]byte(s), scale)
		rv, rexact, rres := refDecimal(s, scale)
		if res != rres || (res == decOK && (v != rv || exact != rexact)) {
			t.Fatalf("parseDecimal(%q, %d) = %d, %v, %d; reference %d, %v, %d", s, scale, v, exact, res, rv, rexact, rres)
		}
	}
}

// memEvent renders one [memory] event.
func memEvent(ts string, bytes int64, typ, id int, extra string) string {
	return fmt.Sprintf(`{"name":"[memory]","ph":"i","ts":%s,"pid":1,"tid":1,"args":{"Bytes":%d,"Device Type":%d,"Device Id":%d%s}}`, ts, bytes, typ, id, extra)
}

// TestChromeBaselineSaturates: the baseline's sums saturate instead of
// wrapping. In each case the first total says less was there before the
// trace than nothing: a mismatch and no baseline (from a review: these
// wrapped, to a baseline of 2 bytes and of 9 EB).
func TestChromeBaselineSaturates(t *testing.T) {
	const big = math.MaxInt64
	for _, c := range []struct{ name, reason, in string }{
		{"net beyond 2⁶³", "two allocs of 2⁶³−1 bytes, then a total of 0: the net bytes saturate",
			`[` + memEvent("1", big, 1, 0, `,"Addr":1`) + `,` + memEvent("2", big, 1, 0, `,"Addr":2,"Total Allocated":0`) + `]`},
		{"total of −2⁶³", "a broken total (read as a sample of 0) minus the net bytes saturates",
			`[` + memEvent("1", 5, 1, 0, `,"Total Allocated":-9223372036854775808`) + `]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc, err := ReadChromeTrace(strings.NewReader(c.in))
			if err != nil {
				t.Fatal(err)
			}
			for _, ev := range doc.Memory {
				if strings.HasSuffix(ev.TensorID, "#baseline") {
					t.Errorf("%s: a baseline of %d bytes, want none", c.reason, ev.Bytes)
				}
			}
			if got := doc.Run.Tags["total_allocated_mismatches"]; got != "1" {
				t.Errorf("%s: total_allocated_mismatches = %q, want 1", c.reason, got)
			}
		})
	}
}

// TestChromeInvalidUTF8: each byte that is not UTF-8 in names (of ops, of
// annotations, of a thread's pid and tid, with escapes or without), and an
// unpaired surrogate escape, read as U+FFFD, so the document is one the
// writers take and the other readers could have made (from a review:
// WriteJSONL and WriteJSON refused it, and a name with escapes kept them
// undecoded).
func TestChromeInvalidUTF8(t *testing.T) {
	in := "[" + `{"name":"step\xff","ph":"X","cat":"user_annotation","ts":0,"dur":10,"pid":"p\xfe","tid":"t\xfd"},` +
		`{"name":"aten::mm\xff","ph":"X","cat":"cpu_op","ts":1,"dur":5,"pid":"p\xfe","tid":"t\xfd"},` +
		`{"name":"esc\xff\xfe\u00e9\n","ph":"X","cat":"cpu_op","ts":2,"dur":1,"pid":"p\xfe","tid":"t\xfd"},` + // with escapes too
		`{"name":"half\ud800","ph":"X","cat":"cpu_op","ts":3,"dur":1,"pid":"p\xfe","tid":"t\xfd"},` + // an unpaired surrogate
		`{"name":"two\xff\xfe","ph":"X","cat":"cpu_op","ts":4,"dur":1,"pid":"p\xfe","tid":"t\xfd"},` + // two bytes: two U+FFFD, as with escapes

		strings.Replace(memEvent("20", 8, 1, 0, ""), `"pid":1,"tid":1`, `"pid":"p\xfe","tid":"t\xfd"`, 1) + "]" // outside the spans: under the thread's root
	in = strings.NewReplacer(`\xff`, "\xff", `\xfe`, "\xfe", `\xfd`, "\xfd").Replace(in)
	doc, err := ReadChromeTrace(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range doc.Spans {
		names = append(names, s.Name)
	}
	for _, o := range doc.Ops {
		names = append(names, o.OpName)
	}
	for _, want := range []string{"step\uFFFD", "aten::mm\uFFFD", "thread p\uFFFD/t\uFFFD", "esc\uFFFD\uFFFDé\n", "half\uFFFD", "two\uFFFD\uFFFD"} {
		if !slices.Contains(names, want) {
			t.Errorf("no name %q in %q", want, names)
		}
	}
	for _, n := range names {
		if !utf8.ValidString(n) {
			t.Errorf("name %q is not UTF-8", n)
		}
	}
	if err := doc.WriteJSONL(io.Discard); err != nil {
		t.Errorf("WriteJSONL: %v", err)
	}
	if err := doc.WriteJSON(io.Discard); err != nil {
		t.Errorf("WriteJSON: %v", err)
	}
}

// TestChromeDuplicateTraceEventsOffset: the error of a second traceEvents
// points at its name.
func TestChromeDuplicateTraceEventsOffset(t *testing.T) {
	in := `{"traceEvents":[], "traceEvents":[]}`
	_, err := ReadChromeTrace(strings.NewReader(in))
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Offset != int64(strings.LastIndex(in, `"traceEvents"`)) {
		t.Errorf("error %v, want one at offset %d", err, strings.LastIndex(in, `"traceEvents"`))
	}
}

// TestChromeEmpty: empty input, or white space alone, is ErrEmptyTrace
// itself, as ReadTrace gives it, not a *ParseError (from an API review: it
// was "offset 0: empty input", where the README says an empty input has no
// place to name).
func TestChromeEmpty(t *testing.T) {
	for _, in := range []string{"", " \n\t"} {
		_, err := ReadChromeTrace(strings.NewReader(in))
		_, rerr := ReadTrace(strings.NewReader(in))
		if err != ErrEmptyTrace || rerr != ErrEmptyTrace {
			t.Errorf("ReadChromeTrace(%q) = %v, ReadTrace = %v; want ErrEmptyTrace from both", in, err, rerr)
		}
	}
}

func TestChromeErrors(t *testing.T) {
	ok := memEvent("1", 8, 1, 0, "")
	for _, tc := range []struct {
		name, reason, in string
		is               error  // a sentinel the error must wrap, or nil
		msg              string // a part of the message
		kind             string // ParseError.Kind
	}{
		{"not JSON", "text", "hello", ErrUnknownFormat, "not a Chrome trace: not JSON", ""},
		{"not JSON, invalid JSON", "input that is not JSON wraps ErrInvalidJSON too", "hello", ErrInvalidJSON, "not a Chrome trace: not JSON", ""},
		{"number", "a JSON number", "42", ErrUnknownFormat, "neither an array of events nor an object with traceEvents", ""},
		{"object without events", "a candle document", `{"schema":"candle-graph/trace/6","memory":[]}`, ErrUnknownFormat, "without traceEvents", ""},
		{"traceEvents not array", "wrong type", `{"traceEvents":{}}`, ErrUnknownFormat, "traceEvents is not an array", ""},
		{"event not object", "an array of numbers", `[` + ok + `,3]`, nil, "an event is a JSON number, not an object", "traceEvents[1]"},
		{"first event not object", "the offset is the value's, not a previous event's", ` [ "x"]`, nil, "an event is a JSON string, not an object", "traceEvents[0]"},
		{"Bytes beyond int64", "a size that would wrap to a negative one (a free)", `[` + strings.Replace(ok, `"Bytes":8`, `"Bytes":18446744073709551615`, 1) + `]`, nil, "args.Bytes: out of range (beyond ±2⁶³)", "traceEvents[0]"},
		{"Bytes beyond int64 below", "a negative size beyond int64", `[` + strings.Replace(ok, `"Bytes":8`, `"Bytes":-9223372036854775809`, 1) + `]`, nil, "args.Bytes: out of range", "traceEvents[0]"},
		{"Bytes exponent beyond int64", "an exponent is allowed, a value beyond int64 is not", `[` + strings.Replace(ok, `"Bytes":8`, `"Bytes":1e19`, 1) + `]`, nil, "args.Bytes: out of range", "traceEvents[0]"},
		{"Device Type beyond int64", "a device type that would wrap to -1", `[` + strings.Replace(ok, `"Device Type":1`, `"Device Type":18446744073709551615`, 1) + `]`, nil, "args.Device Type: out of range", "traceEvents[0]"},
		{"Device Id beyond int64", "a device id that would wrap", `[` + strings.Replace(ok, `"Device Id":0`, `"Device Id":18446744073709551616`, 1) + `]`, nil, "args.Device Id: out of range", "traceEvents[0]"},
		{"Total Allocated beyond int64", "a total that would wrap", `[` + memEvent("1", 1, 1, 0, `,"Total Allocated":18446744073709551615`) + `]`, nil, "args.Total Allocated: out of range", "traceEvents[0]"},
		{"Total Reserved beyond int64", "a total that would wrap", `[` + memEvent("1", 1, 1, 0, `,"Total Reserved":99999999999999999999`) + `]`, nil, "args.Total Reserved: out of range", "traceEvents[0]"},
		{"ts beyond int64", "a time beyond int64 ns", `[` + memEvent("1e17", 1, 1, 0, "") + `]`, nil, "ts: out of range", "traceEvents[0]"},
		{"ts in a string beyond int64", "a number in a string is out of range like one outside, not \"not a number\"", `[` + memEvent(`"1e300"`, 1, 1, 0, "") + `]`, nil, "ts: out of range (beyond 2⁶³ ns)", "traceEvents[0]"},
		{"ts in a string not a number", "a string that is not a number", `[` + memEvent(`"soon"`, 1, 1, 0, "") + `]`, nil, "ts: not a number", "traceEvents[0]"},
		{"op dur in a string beyond int64", "likewise for a duration", `[{"name":"aten::mm","ph":"X","cat":"cpu_op","ts":1,"dur":"-1e30","pid":1,"tid":1}]`, nil, "dur: out of range (beyond 2⁶³ ns) in event \"aten::mm\"", "traceEvents[0]"},
		{"op dur beyond int64", "a duration beyond int64 ns", `[{"name":"aten::mm","ph":"X","cat":"cpu_op","ts":1,"dur":1e300,"pid":1,"tid":1}]`, nil, "dur: out of range (beyond 2⁶³ ns) in event \"aten::mm\"", "traceEvents[0]"},
		{"op ts beyond int64 ns", "a time that fits 64 bits in µs but not in ns: the message must not say it is beyond 64 bits", `[{"name":"aten::mm","ph":"X","cat":"cpu_op","ts":1740461679479712123,"dur":5,"pid":1,"tid":1}]`, nil, "ts: out of range (beyond 2⁶³ ns) in event \"aten::mm\"", "traceEvents[0]"},
		{"deviceProperties memory beyond int64", "a capacity beyond int64", `{"deviceProperties":[{"id":0,"totalGlobalMem":1e20}],"traceEvents":[]}`, nil, "totalGlobalMem: out of range", "deviceProperties[0]"},
		{"Bytes string", "Bytes must be numeric", `[` + ok + `,` + ok + `,` + ok + `,` + strings.Replace(ok, `"Bytes":8`, `"Bytes":"8"`, 1) + `]`, nil, "args.Bytes: not an integer", "traceEvents[3]"},
		{"Bytes fraction", "Bytes must be an integer", `[` + strings.Replace(ok, `"Bytes":8`, `"Bytes":8.5`, 1) + `]`, nil, "args.Bytes: not an integer", "traceEvents[0]"},
		{"Bytes missing", "Bytes is required", `[` + strings.Replace(ok, `"Bytes":8,`, ``, 1) + `]`, nil, "args.Bytes: missing in a [memory] event", "traceEvents[0]"},
		{"Device Type missing", "the device is required", `[` + strings.Replace(ok, `"Device Type":1,`, ``, 1) + `]`, nil, "args.Device Type: missing", "traceEvents[0]"},
		{"Device Id null", "the device is required", `[` + strings.Replace(ok, `"Device Id":0`, `"Device Id":null`, 1) + `]`, nil, "args.Device Id: not an integer", "traceEvents[0]"},
		{"args missing", "no args at all", `[{"name":"[memory]","ph":"i","ts":1,"pid":1,"tid":1}]`, nil, "args.Bytes: missing", "traceEvents[0]"},
		{"ts missing", "a memory event needs a time", `[{"name":"[memory]","ph":"i","pid":1,"tid":1,"args":{"Bytes":1,"Device Type":1,"Device Id":0}}]`, nil, "ts: missing", "traceEvents[0]"},
		{"ts garbage", "a time that is not a number", `[` + memEvent(`"soon"`, 1, 1, 0, "") + `]`, nil, "ts: not a number", "traceEvents[0]"},
		{"Addr beyond uint64", "an address beyond 64 bits", `[` + memEvent("1", 1, 1, 0, `,"Addr":18446744073709551616`) + `]`, nil, "args.Addr: out of range (beyond 64 bits)", "traceEvents[0]"},
		{"Bytes of 2⁶³", "a size that fits 64 bits but not int64: the message must not say it is beyond 64 bits (from a review)", `[` + strings.Replace(ok, `"Bytes":8`, `"Bytes":9223372036854775808`, 1) + `]`, nil, "args.Bytes: out of range (beyond ±2⁶³)", "traceEvents[0]"},
		{"hex Addr beyond uint64", "likewise in hex: out of range, not \"not an integer\"", `[` + memEvent("1", 1, 1, 0, `,"Addr":"0x10000000000000000"`) + `]`, nil, "args.Addr: out of range (beyond 64 bits)", "traceEvents[0]"},
		{"Addr bad", "a present Addr must be an integer", `[` + memEvent("1", 1, 1, 0, `,"Addr":"0xZZ"`) + `]`, nil, "args.Addr: not an integer", "traceEvents[0]"},
		{"traceEvents twice", "JSON readers differ on which of two to keep; merging them is neither (from a review)", `{"traceEvents":[` + ok + `],"traceEvents":[` + ok + `]}`, ErrInvalidJSON, "traceEvents: duplicate field", ""},
		{"Total Allocated bad", "a present total must be an integer", `[` + memEvent("1", 1, 1, 0, `,"Total Allocated":true`) + `]`, nil, "args.Total Allocated: not an integer", "traceEvents[0]"},
		{"OOM Bytes bad", "OOM events have the same args", `[{"name":"[OutOfMemory]","ph":"i","ts":1,"pid":1,"tid":1,"args":{"Bytes":[],"Device Type":1,"Device Id":0}}]`, nil, "args.Bytes: not an integer in a [OutOfMemory] event", "traceEvents[0]"},
		{"op without ts", "a host op needs a time", `[{"name":"aten::mm","ph":"X","cat":"cpu_op","dur":3,"pid":1,"tid":1}]`, nil, "ts: missing in event \"aten::mm\"", "traceEvents[0]"},
		{"op bad dur", "a host op's dur must be a number", `[{"name":"aten::mm","ph":"X","cat":"cpu_op","ts":1,"dur":"x","pid":1,"tid":1}]`, nil, "dur: not a number in event \"aten::mm\"", "traceEvents[0]"},
		{"Bytes NaN", "a non-finite size is read, and refused, as a value that is not a number", `[` + strings.Replace(ok, `"Bytes":8`, `"Bytes":NaN`, 1) + `]`, nil, "args.Bytes: not an integer in a [memory] event", "traceEvents[0]"},
		{"Bytes -inf", "likewise with a sign", `[` + strings.Replace(ok, `"Bytes":8`, `"Bytes":-inf`, 1) + `]`, nil, "args.Bytes: not an integer", "traceEvents[0]"},
		{"ts Infinity", "a non-finite time", `[` + memEvent("Infinity", 1, 1, 0, "") + `]`, nil, "ts: not a number", "traceEvents[0]"},
		{"op dur inf", "a non-finite duration", `[{"name":"aten::mm","ph":"X","cat":"cpu_op","ts":1,"dur":inf,"pid":1,"tid":1}]`, nil, "dur: not a number in event \"aten::mm\"", "traceEvents[0]"},
		{"nan in a word", "nan inside a longer word is still invalid JSON", `[{"name":"x","ph":"X","args":{"a":nanx}}]`, ErrInvalidJSON, "invalid JSON", "traceEvents[0]"},
		{"truncated", "the input ends inside an event", `[` + ok + `,{"name":"[memory]","ts":`, io.ErrUnexpectedEOF, "unexpected end of input", "traceEvents[1]"},
		{"syntax error", "bad JSON inside an event wraps ErrInvalidJSON", `[` + ok + `,` + ok + `,{"name" 1}]`, ErrInvalidJSON, "invalid JSON", "traceEvents[2]"},
		{"truncated, invalid JSON", "input that ends inside an event is not valid JSON", `[` + ok + `,{"name":"[memory]","ts":`, ErrInvalidJSON, "unexpected end of input", "traceEvents[1]"},
		{"data after", "a second value: two JSON texts are not one", `[] []`, ErrInvalidJSON, "data after the trace", ""},
		{"number after", "a second value, after white space", "{\"traceEvents\":[]} \n 5", ErrInvalidJSON, "data after the trace", ""},
		{"deviceProperties id bad", "a device id that is not an integer", `{"deviceProperties":[{"id":"zero","totalGlobalMem":1}],"traceEvents":[]}`, nil, "id: not an integer", "deviceProperties[0]"},
		{"object syntax error", "bad JSON between the top-level keys", `{"traceEvents":[],1}`, nil, "invalid JSON", ""},
		{"syntax error before the events", "no event has been read yet: the error names none", `{"schemaVersion":1,2}`, nil, "invalid JSON: object member name must be a string", ""},
		{"deviceProperties bad", "a capacity that is not an integer", `{"deviceProperties":[{"id":0,"totalGlobalMem":"lots"}],"traceEvents":[]}`, nil, "totalGlobalMem: not a non-negative integer", "deviceProperties[0]"},
		{"deviceProperties second bad", "the offset is that of the entry at fault, not of the first or of the end of it", `{"deviceProperties": [{"id": 0, "totalGlobalMem": 85097971712}, {"id": 1, "name": "x", "totalGlobalMem": -1}], "traceEvents": []}`, nil, "totalGlobalMem: not a non-negative integer", "deviceProperties[1]"},
		{"corrupt gzip", "a gzip stream that breaks", string(corruptGzip(t)), gzip.ErrChecksum, "read: gzip: invalid checksum", ""},
		{"gzip padding then data", "bytes other than zero after the gzip padding are not padding", string(rdGzip(t, []byte(`{"traceEvents":[]}`))) + "\x00\x00x", gzip.ErrHeader, "bytes other than zero after the padding", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := ReadChromeTrace(strings.NewReader(tc.in))
			if err == nil {
				t.Fatalf("%s: no error, doc %+v", tc.reason, doc)
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("%s: %v is not a *ParseError", tc.reason, err)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("%s: %v does not wrap %v", tc.reason, err, tc.is)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("%s: error %q does not say %q", tc.reason, err, tc.msg)
			}
			if pe.Kind != tc.kind {
				t.Errorf("%s: error %q: kind %q, want %q", tc.reason, err, pe.Kind, tc.kind)
			}
			// A message that starts with a field's name has it in Field.
			if f, _, ok := strings.Cut(tc.msg, ": "); ok && (strings.HasPrefix(f, "args.") || slices.Contains([]string{"ts", "dur", "id", "totalGlobalMem"}, f)) && pe.Field != f {
				t.Errorf("%s: error %q: field %q, want %q", tc.reason, err, pe.Field, f)
			}
			if off, ok := wantChromeOffset(tc.in, pe); ok && pe.Offset != off {
				t.Errorf("%s: error %q: offset %d, want %d", tc.reason, err, pe.Offset, off)
			}
		})
	}
}

// TestChromeNearJSONErrors: near-JSON in input that is no Chrome trace
// even when repaired, or where a value must be an event, is named as what
// it is, at its place (from an independent check: nan alone was "invalid
// character 'a' in literal null" at offset 1, [nan] "an event is a JSON
// string", an object with nan and no traceEvents was "nan is not a JSON
// number", wrapping no ErrUnknownFormat); and input cut short is so at its
// end, not where the last token ended.
func TestChromeNearJSONErrors(t *testing.T) {
	for _, tc := range []struct {
		name, reason, in string
		is               error // a sentinel the error must wrap
		msg              string
		off              int64
	}{
		{"nan alone", "a non-finite number is no trace, repaired or not", "nan", ErrUnknownFormat, "offset 0: not a Chrome trace: nan is not a JSON number", 0},
		{"event nan", "the repairs read nan as an empty string, which the message must not call all it is", "[nan]", nil, "offset 1: traceEvents[0]: an event is an empty string, or a non-finite number or N/A (read as one), not an object", 1},
		{"event N/A", "likewise N/A", "[ -N/A ]", nil, "an event is an empty string, or a non-finite number or N/A", 2},
		{"event empty string", "a real string is named as before", `[""]`, nil, "an event is a JSON string, not an object", 1},
		{"object without traceEvents", "what is wrong with the object is that it has no traceEvents, not its nan", `{"x":nan}`, ErrUnknownFormat, "offset 0: not a Chrome trace: an object without traceEvents", 0},
		{"traceEvents nan", "likewise a traceEvents that is no array", `{"traceEvents":nan}`, ErrUnknownFormat, "offset 15: not a Chrome trace: traceEvents is not an array", 15},
		{"cut after a word", "input cut short right after a non-finite number ends at its end, not after the \"\" the repairs made of it", `{"traceEvents":[],"zz":infinity`, io.ErrUnexpectedEOF, "offset 31: unexpected end of input", 31},
		{"cut after white space", "and after white space, at the end of the input", "{\"traceEvents\":[]  \n ", io.ErrUnexpectedEOF, "offset 21: unexpected end of input", 21},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadChromeTrace(strings.NewReader(tc.in))
			var pe *ParseError
			if !errors.As(err, &pe) || tc.is != nil && !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.msg) || pe.Offset != tc.off {
				t.Errorf("%s: %v; want a *ParseError at offset %d saying %q (wrapping %v)", tc.reason, err, tc.off, tc.msg, tc.is)
			}
		})
	}
}

// wantChromeOffset returns the offset an error about input in (valid JSON up
// to the error) should give, when the test knows it: the start of event i
// for an error about traceEvents[i] (of a bare array or of the object's
// traceEvents) that is not a syntax error, the start of entry i for one
// about deviceProperties[i], the start of a traceEvents that is no array,
// and the start of the data after the trace.
func wantChromeOffset(in string, pe *ParseError) (int64, bool) {
	var i int
	if _, err := fmt.Sscanf(pe.Kind, "deviceProperties[%d]", &i); err == nil {
		return memberOffset(in, "deviceProperties", i)
	}
	if strings.HasSuffix(pe.Msg, "traceEvents is not an array") {
		return memberOffset(in, "traceEvents", -1)
	}
	if pe.Msg == "data after the trace" {
		d := jsontext.NewDecoder(strings.NewReader(in))
		if _, err := d.ReadValue(); err != nil {
			return 0, false
		}
		rest := in[d.InputOffset():]
		return int64(len(in) - len(strings.TrimLeft(rest, " \t\r\n"))), true
	}
	if _, err := fmt.Sscanf(pe.Kind, "traceEvents[%d]", &i); err != nil || pe.Err != nil {
		return 0, false
	}
	if !strings.HasPrefix(strings.TrimSpace(in), "[") {
		return memberOffset(in, "traceEvents", i)
	}
	return elementOffset(jsontext.NewDecoder(strings.NewReader(in)), i)
}

// elementOffset reads the '[' of an array from d and returns the offset of
// its element i.
func elementOffset(d *jsontext.Decoder, i int) (int64, bool) {
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != '[' {
		return 0, false
	}
	for ; i > 0; i-- {
		if _, err := d.ReadValue(); err != nil {
			return 0, false
		}
	}
	return valueOffset(d)
}

// valueOffset reads a value from d and returns its offset.
func valueOffset(d *jsontext.Decoder) (int64, bool) {
	v, err := d.ReadValue()
	if err != nil {
		return 0, false
	}
	return d.InputOffset() - int64(len(v)), true
}

// memberOffset returns the offset of the value of the top-level object's
// member name in (valid JSON), or of element i of that value when i >= 0.
func memberOffset(in, name string, i int) (int64, bool) {
	d := jsontext.NewDecoder(strings.NewReader(in))
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != '{' {
		return 0, false
	}
	for d.PeekKind() == '"' {
		k, err := d.ReadToken()
		if err != nil {
			return 0, false
		}
		if k.String() != name {
			if _, err := d.ReadValue(); err != nil {
				return 0, false
			}
			continue
		}
		if i >= 0 {
			return elementOffset(d, i)
		}
		return valueOffset(d)
	}
	return 0, false
}

// corruptGzip returns a gzip stream whose checksum is wrong.
func corruptGzip(t testing.TB) []byte {
	z := rdGzip(t, []byte(`[`+memEvent("1", 8, 1, 0, "")+`]`))
	z[len(z)-8] ^= 0xff // the CRC-32 of the trailer
	return z
}

// TestChromeErrorOffset checks that an event's error names its byte offset.
func TestChromeErrorOffset(t *testing.T) {
	ok := memEvent("1", 8, 1, 0, "")
	bad := strings.Replace(ok, `"Bytes":8`, `"Bytes":true`, 1)
	in := "[\n" + ok + ",\n" + bad + "\n]"
	_, err := ReadChromeTrace(strings.NewReader(in))
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("%v is not a *ParseError", err)
	}
	if want := int64(strings.Index(in, bad)); pe.Offset != want {
		t.Errorf("offset %d, want %d (%v)", pe.Offset, want, err)
	}
}

// refSpan is a span of the slow attribution reference.
type refSpan struct {
	start, end int64
	file       int
	ext        int64 // "External id"; -1 none
	extText    bool  // the id written as a string, which does not count
}

// TestChromeSpanAttribution compares the one-pass nesting and attribution
// with a slow reference on random nested span trees: a span's parent is the
// last span before it (by start, longer first, file order) that contains
// it, or that it starts strictly inside and ends at most 1 µs after, its
// parent and their ancestors then ending no earlier than it (writers of
// whole microseconds round a child out of its parent); an event's span is
// the last span (same order) that contains its ts. Some children end 1 µs after their parent,
// as such writers make them, and some 2 µs, which is no rounding. Spans of
// one interval nest by file order, or by External id where all of them
// have one (an integer: an id in a string does not count).
func TestChromeSpanAttribution(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for iter := range 300 {
		var spans []refSpan
		var gen func(lo, hi int64, depth int)
		gen = func(lo, hi int64, depth int) {
			t := lo
			for t < hi && depth < 5 && rng.IntN(3) != 0 {
				s := min(t+int64(rng.IntN(3)), hi)
				e := min(s+int64(rng.IntN(int(hi-s)+1)), hi)
				written := e
				if depth > 0 && e == hi && rng.IntN(3) == 0 {
					written += 1 + int64(rng.IntN(2)) // out of its parent by 1 µs (rounding) or 2
				}
				spans = append(spans, refSpan{start: s, end: written})
				for rng.IntN(6) == 0 { // an identical twin
					spans = append(spans, refSpan{start: s, end: written})
				}
				gen(s, e, depth+1)
				t = e // siblings may touch
			}
		}
		gen(0, 60, 0)
		rng.Shuffle(len(spans), func(i, j int) { spans[i], spans[j] = spans[j], spans[i] })
		ids := rng.IntN(3) // none, all, or some spans with an External id
		for i := range spans {
			spans[i].ext = -1
			if ids == 1 || ids == 2 && rng.IntN(4) != 0 {
				spans[i].ext = int64(rng.IntN(2 * len(spans))) // some equal
				spans[i].extText = rng.IntN(10) == 0
			}
		}
		var evs []int64
		for range 1 + rng.IntN(30) {
			evs = append(evs, int64(rng.IntN(64)))
		}
		var b strings.Builder
		b.WriteString("[")
		for i, s := range spans {
			spans[i].file = i
			args := ""
			switch {
			case s.ext >= 0 && s.extText:
				args = fmt.Sprintf(`,"args":{"Input Dims":[[2,3]],"External id":"%d"}`, s.ext)
			case s.ext >= 0:
				args = fmt.Sprintf(`,"args":{"Input Dims":[[2,3]],"External id":%d,"Sequence number":1}`, s.ext)
			}
			fmt.Fprintf(&b, `{"name":"s%d","ph":"X","cat":"cpu_op","ts":%d,"dur":%d,"pid":1,"tid":1%s},`, i, s.start, s.end-s.start, args)
		}
		for i, ts := range evs {
			fmt.Fprintf(&b, `{"name":"[memory]","ph":"i","ts":%d,"pid":1,"tid":1,"args":{"Bytes":%d,"Device Type":1,"Device Id":0}},`, ts, i+1)
		}
		// An anchor at -1 so that times are not rebased.
		b.WriteString(`{"name":"[memory]","ph":"i","ts":-1,"pid":1,"tid":2,"args":{"Bytes":1,"Device Type":1,"Device Id":0}}]`)
		doc := mustReadChrome(t, []byte(b.String()))

		order := slices.Clone(spans)
		slices.SortStableFunc(order, func(a, b refSpan) int {
			if a.start != b.start {
				return int(a.start - b.start)
			}
			return int(b.end - a.end)
		})
		for i := 0; i < len(order); {
			j, all := i, true
			for ; j < len(order) && order[j].start == order[i].start && order[j].end == order[i].end; j++ {
				all = all && order[j].ext >= 0 && !order[j].extText
			}
			if all {
				slices.SortStableFunc(order[i:j], func(a, b refSpan) int { return int(a.ext - b.ext) })
			}
			i = j
		}
		name := func(file int) string { return "s" + strconv.Itoa(file) }
		byName := make(map[string]Span)
		for _, s := range doc.Spans {
			byName[s.Name] = s
		}
		idName := make(map[string]string)
		for _, s := range doc.Spans {
			idName[s.ID] = s.Name
		}
		parent := make([]int, len(order))
		for i := range order {
			s := &order[i]
			parent[i] = -1
			for j := i - 1; j >= 0; j-- {
				o := order[j]
				if o.start <= s.start && s.end <= o.end {
					parent[i] = j
					break
				}
				if o.start <= s.start && s.start < o.end && s.end-o.end <= 1 {
					parent[i] = j
					// Its ancestors end with it, in the reference's
					// later checks too.
					for k := j; k >= 0 && order[k].end < s.end; k = parent[k] {
						order[k].end = s.end
					}
					break
				}
			}
		}
		for i, s := range order {
			want := ""
			if parent[i] >= 0 {
				want = name(order[parent[i]].file)
			}
			got := byName[name(s.file)]
			written := spans[s.file]
			if p := idName[got.ParentID]; p != want {
				t.Fatalf("iter %d: span %s [%d,%d]: parent %q, want %q", iter, name(s.file), written.start, written.end, p, want)
			}
			if got.DurationNs != uint64(s.end-s.start)*1000 {
				t.Fatalf("iter %d: span %s [%d,%d]: %d ns, want %d µs", iter, name(s.file), written.start, written.end, got.DurationNs, s.end-s.start)
			}
		}
		for _, m := range doc.Memory {
			if m.Bytes == 1 {
				continue // the anchor
			}
			ts := int64(m.TimestampNs) - 1000 // rebased on the anchor at -1 µs
			want := ""
			for j := len(order) - 1; j >= 0; j-- {
				if o := order[j]; o.start*1000 <= ts && ts <= o.end*1000 {
					want = name(o.file)
					break
				}
			}
			got := idName[m.SpanID]
			if want == "" {
				want = "thread 1/1"
			}
			if got != want {
				t.Fatalf("iter %d: event at %d: span %q, want %q", iter, ts, got, want)
			}
		}
	}
}

// refNestSpans is the slow reference of nestSpans, the loop it replaced: a
// rounded child raises its ancestors' ends one by one, so a read was
// quadratic in the depth of a chain of them. It counts its steps as
// nestSpans does.
func refNestSpans(spans []chromeSpan) (steps int) {
	var stack []int32
	for i := range spans {
		s := &spans[i]
		if i > 0 && spans[i-1].thread != s.thread {
			stack = stack[:0]
		}
		for len(stack) > 0 {
			top := &spans[stack[len(stack)-1]]
			if s.end <= top.end {
				break
			}
			if s.start < top.end && uint64(s.end)-uint64(top.end) <= 1000 { // 1 µs, the rule (not chromeRoundingNs)
				for k := len(stack) - 1; k >= 0 && spans[stack[k]].end < s.end; k-- {
					spans[stack[k]].end = s.end
					steps++
				}
				break
			}
			stack = stack[:len(stack)-1]
			steps++
		}
		if len(stack) > 0 {
			s.parent = stack[len(stack)-1]
		}
		stack = append(stack, int32(i))
	}
	return steps
}

// nestSorted sorts spans as spanTree does.
func nestSorted(spans []chromeSpan) {
	slices.SortFunc(spans, func(a, b chromeSpan) int {
		if a.thread != b.thread {
			return int(a.thread - b.thread)
		}
		if a.start != b.start {
			return int(a.start - b.start)
		}
		if a.end != b.end {
			return int(b.end - a.end)
		}
		return int(a.file - b.file)
	})
	for i := range spans {
		spans[i].parent = -1
	}
}

// TestNestSpansReference compares nestSpans with the loop it replaced on
// random traces of 1 to 3 threads: nested trees up to 30 deep whose spans
// end 0 to 2000 ns after their parent as often as inside it, creeping chains
// of up to 300 spans (each starting and ending 0 to 2000 ns after the one
// before, as in a trace rounded to whole µs), identical twins, and spans
// anywhere. Parents and ends must be the same, and the steps at most 2 a
// span.
func TestNestSpansReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for iter := range 400 {
		var spans []chromeSpan
		add := func(thread int32, s, e int64) {
			spans = append(spans, chromeSpan{thread: thread, start: s, end: e, file: int32(len(spans))})
			for rng.IntN(8) == 0 {
				spans = append(spans, chromeSpan{thread: thread, start: s, end: e, file: int32(len(spans))})
			}
		}
		var gen func(thread int32, lo, hi int64, depth int)
		gen = func(thread int32, lo, hi int64, depth int) {
			for t := lo; t < hi && depth < 30 && rng.IntN(4) != 0; {
				if rng.IntN(6) == 0 {
					s, e := t, t+int64(rng.IntN(3000))
					for range 1 + rng.IntN(300) {
						add(thread, s, e)
						s += int64(rng.IntN(2001))
						e += int64(rng.IntN(2001))
					}
					t = e
					continue
				}
				s := min(t+int64(rng.IntN(2000)), hi)
				e := min(s+int64(rng.IntN(int(hi-s)+1)), hi)
				written := e
				if rng.IntN(2) == 0 {
					written += int64(rng.IntN(2001))
				}
				add(thread, s, written)
				gen(thread, s, e, depth+1)
				t = e - int64(rng.IntN(2))*int64(rng.IntN(1000))
			}
		}
		threads := 1 + rng.IntN(3)
		for th := range threads {
			gen(int32(th), 0, 1_000_000, 0)
			for range rng.IntN(20) {
				s := int64(rng.IntN(1_000_000))
				add(int32(th), s, s+int64(rng.IntN(100_000)))
			}
		}
		nestSorted(spans)
		want := slices.Clone(spans)
		refNestSpans(want)
		steps := nestSpans(spans)
		for i := range spans {
			if spans[i].parent != want[i].parent || spans[i].end != want[i].end {
				t.Fatalf("iter %d: span %d [%d,%d]: parent %d, end %d; reference %d, %d", iter, i, spans[i].start, want[i].end, spans[i].parent, spans[i].end, want[i].parent, want[i].end)
			}
		}
		if steps > 2*len(spans) {
			t.Fatalf("iter %d: %d steps for %d spans", iter, steps, len(spans))
		}
	}
}

// TestNestSpansSteps counts the steps nestSpans takes on a chain of 20000
// spans, each starting and ending 1 ns after the one before: each is the
// child of the one before by the rounding rule, and all end with the last.
// Raising each ancestor's end one by one took 2 × 10⁸ steps.
func TestNestSpansSteps(t *testing.T) {
	const n = 20_000
	spans := make([]chromeSpan, n)
	for i := range spans {
		spans[i] = chromeSpan{start: int64(i), end: int64(i) + 1000, file: int32(i)}
	}
	nestSorted(spans)
	steps := nestSpans(spans)
	for i, s := range spans {
		if s.parent != int32(i)-1 || s.end != n-1+1000 {
			t.Fatalf("span %d: parent %d, end %d; want %d, %d", i, s.parent, s.end, i-1, n-1+1000)
		}
	}
	// Each span leaves the stack once (n steps), and the chain's rounded
	// ends merge runs at most once a span.
	if steps < n || steps > 2*n {
		t.Errorf("%d steps for %d spans, want %d to %d", steps, n, n, 2*n)
	}
}

// TestChromeTiesByExternalID checks how spans of one interval on one thread
// nest: by External id where all have one, else by file order.
func TestChromeTiesByExternalID(t *testing.T) {
	op := func(name string, tid int, args string) string {
		return fmt.Sprintf(`{"ph":"X","cat":"cpu_op","name":%q,"pid":1,"tid":%d,"ts":100,"dur":5%s}`, name, tid, args)
	}
	id := func(n int) string { return fmt.Sprintf(`,"args":{"Device":1,"External id":%d}`, n) }
	mem := `{"ph":"i","s":"t","name":"[memory]","pid":1,"tid":1,"ts":102,"args":{"Device Type":1,"Device Id":0,"Bytes":512}}`
	// A run longer than a sort's small-slice cut-off, with ids repeated:
	// ids order it, and file order the spans that share an id.
	ext := func(i int) int { return []int{5, 1, 3}[i%3] }
	longRun, longParent, prev := []string{mem}, make(map[string]string), ""
	for i := range 30 {
		longRun = append(longRun, op(fmt.Sprintf("s%02d", i), 1, id(ext(i))))
	}
	for _, e := range []int{1, 3, 5} {
		for i := range 30 {
			if ext(i) == e {
				name := fmt.Sprintf("s%02d", i)
				longParent[name], prev = prev, name
			}
		}
	}
	for _, tc := range []struct {
		name, reason string
		events       []string
		parent       map[string]string // span name -> parent name
		memSpan      string            // the memory event's span
	}{
		{"child first", "Kineto 1.8 writes ops as they end, and numbers them as they start",
			[]string{op("aten::empty", 1, id(69)), op("aten::zeros", 1, id(68)), mem},
			map[string]string{"aten::empty": "aten::zeros", "aten::zeros": ""}, "aten::empty"},
		{"parent first", "the ids agree with file order",
			[]string{op("aten::zeros", 1, id(68)), op("aten::empty", 1, id(69)), mem},
			map[string]string{"aten::empty": "aten::zeros", "aten::zeros": ""}, "aten::empty"},
		{"three", "a run of three, ids in neither file order nor its reverse",
			[]string{op("b", 1, id(2)), op("c", 1, id(3)), op("a", 1, id(1)), mem},
			map[string]string{"a": "", "b": "a", "c": "b"}, "c"},
		{"no ids", "the legacy profiler writes none, parents first: file order",
			[]string{op("aten::zeros", 1, ""), op("aten::empty", 1, ""), mem},
			map[string]string{"aten::empty": "aten::zeros", "aten::zeros": ""}, "aten::empty"},
		{"one without", "ids of some spans of a run cannot order the run: file order",
			[]string{op("aten::empty", 1, id(69)), op("aten::zeros", 1, ""), mem},
			map[string]string{"aten::zeros": "aten::empty", "aten::empty": ""}, "aten::zeros"},
		{"id in a string", "not an integer: as if absent",
			[]string{op("aten::empty", 1, `,"args":{"External id":"69"}`), op("aten::zeros", 1, id(68)), mem},
			map[string]string{"aten::zeros": "aten::empty", "aten::empty": ""}, "aten::zeros"},
		{"negative id", "not an id: as if absent",
			[]string{op("aten::empty", 1, id(-1)), op("aten::zeros", 1, id(68)), mem},
			map[string]string{"aten::zeros": "aten::empty", "aten::empty": ""}, "aten::zeros"},
		{"equal ids", "file order among equal ids",
			[]string{op("aten::empty", 1, id(7)), op("aten::zeros", 1, id(7)), mem},
			map[string]string{"aten::zeros": "aten::empty", "aten::empty": ""}, "aten::zeros"},
		{"args first", "args before name and cat are read all the same",
			[]string{`{"args":{"External id":69},"ph":"X","name":"aten::empty","cat":"cpu_op","pid":1,"tid":1,"ts":100,"dur":5}`,
				op("aten::zeros", 1, id(68)), mem},
			map[string]string{"aten::empty": "aten::zeros", "aten::zeros": ""}, "aten::empty"},
		{"no cat", "the legacy profiler's ops in process \"CPU functions\" have no cat: their args are read, not skipped as a kernel's, and their ids count",
			[]string{`{"ph":"X","name":"aten::empty","pid":"CPU functions","tid":1,"ts":100,"dur":5,"args":{"External id":69}}`,
				`{"ph":"X","name":"aten::zeros","pid":"CPU functions","tid":1,"ts":100,"dur":5,"args":{"External id":68}}`,
				strings.Replace(mem, `"pid":1`, `"pid":"CPU functions"`, 1)},
			map[string]string{"aten::empty": "aten::zeros", "aten::zeros": ""}, "aten::empty"},
		{"annotation", "a user annotation's id counts as an op's",
			[]string{op("aten::mm", 1, id(12)), `{"ph":"X","cat":"user_annotation","name":"block","pid":1,"tid":1,"ts":100,"dur":5,"args":{"External id":11}}`, mem},
			map[string]string{"aten::mm": "block", "block": ""}, "aten::mm"},
		{"other thread", "a tie across threads is no nesting",
			[]string{op("aten::empty", 2, id(69)), op("aten::zeros", 1, id(68)), mem},
			map[string]string{"aten::empty": "", "aten::zeros": ""}, "aten::zeros"},
		{"id 0", "0 is an id: the outermost of its run, and at its head",
			[]string{op("a", 1, id(0)), op("b", 1, id(5)), op("c", 1, id(3)), mem},
			map[string]string{"a": "", "b": "c", "c": "a"}, "b"},
		{"one interval on two threads", "a run ends with its thread, even where the next thread's first span has the same interval",
			[]string{
				`{"ph":"X","cat":"cpu_op","name":"p","pid":1,"tid":1,"ts":0,"dur":200,"args":{"External id":1}}`,
				`{"ph":"X","cat":"cpu_op","name":"x","pid":1,"tid":1,"ts":100,"dur":5,"args":{"External id":5}}`,
				`{"ph":"X","cat":"cpu_op","name":"y","pid":1,"tid":2,"ts":100,"dur":5,"args":{"External id":3}}`, mem},
			map[string]string{"p": "", "x": "p", "y": ""}, "x"},
		{"long run", "30 spans, ids repeated: a stable sort (file order among equal ids) past the small-slice cut-off",
			longRun, longParent, prev},
	} {
		doc := mustReadChrome(t, []byte("["+strings.Join(tc.events, ",")+"]"))
		names := make(map[string]string)
		for _, s := range doc.Spans {
			names[s.ID] = s.Name
		}
		got := make(map[string]string)
		for _, s := range doc.Spans {
			if s.Measured {
				got[s.Name] = names[s.ParentID]
			}
		}
		if d := cmp.Diff(tc.parent, got); d != "" {
			t.Errorf("%s (%s): parents (-want +got):\n%s", tc.name, tc.reason, d)
		}
		if len(doc.Memory) != 1 || names[doc.Memory[0].SpanID] != tc.memSpan {
			t.Errorf("%s (%s): memory %+v, want it in %s", tc.name, tc.reason, doc.Memory, tc.memSpan)
		}
	}

}

// allocatorTrace renders a random allocator history as a Chrome trace:
// blocks live before the trace (some freed during it), allocations at
// reused addresses, equal timestamps, three devices, with the allocator's
// Total Allocated after every event. It returns the trace, and per device
// the totals in time order (ties in file order) of the events that are
// allocations or frees.
func allocatorTrace(rng *rand.Rand, withAddr bool) ([]byte, map[string][]uint64) {
	type dev struct {
		typ, id int
		name    string
	}
	devs := []dev{{1, 0, "cuda:0"}, {0, -1, "cpu"}, {1, 1, "cuda:1"}}
	type blk struct {
		addr uint64
		size int64
	}
	live := make([][]blk, len(devs))
	total := make([]int64, len(devs))
	nextAddr := uint64(0x7f0000000000)
	var freeAddrs []uint64
	newAddr := func() uint64 {
		if len(freeAddrs) > 0 && rng.IntN(2) == 0 {
			i := rng.IntN(len(freeAddrs))
			a := freeAddrs[i]
			freeAddrs = slices.Delete(freeAddrs, i, i+1)
			return a
		}
		nextAddr += 512
		return nextAddr
	}
	sizes := []int64{512, 1024, 1024, 4096, 1 << 20}
	for d := range devs {
		for range rng.IntN(4) {
			b := blk{newAddr(), sizes[rng.IntN(len(sizes))]}
			live[d] = append(live[d], b)
			total[d] += b.size
		}
	}
	totals := make(map[string][]uint64)
	var buf strings.Builder
	buf.WriteString(`{"traceEvents":[`)
	ts := int64(1_700_000_000_000_000) // ns
	n := 5 + rng.IntN(60)
	for i := range n {
		if rng.IntN(3) != 0 {
			ts += int64(rng.IntN(5000))
		}
		d := rng.IntN(len(devs))
		var b blk
		var bytes int64
		if len(live[d]) > 0 && rng.IntN(2) == 0 {
			j := rng.IntN(len(live[d]))
			b = live[d][j]
			live[d] = slices.Delete(live[d], j, j+1)
			freeAddrs = append(freeAddrs, b.addr)
			bytes = -b.size
		} else {
			b = blk{newAddr(), sizes[rng.IntN(len(sizes))]}
			live[d] = append(live[d], b)
			bytes = b.size
		}
		total[d] += bytes
		totals[devs[d].name] = append(totals[devs[d].name], uint64(total[d]))
		if i > 0 {
			buf.WriteString(",")
		}
		addr := ""
		if withAddr {
			addr = fmt.Sprintf(`,"Addr":%d`, b.addr)
		}
		fmt.Fprintf(&buf, `{"ph":"i","cat":"cpu_instant_event","s":"t","name":"[memory]","pid":1,"tid":1,"ts":%d.%03d,"args":{"Total Reserved":%d,"Total Allocated":%d,"Bytes":%d%s,"Device Id":%d,"Device Type":%d}}`,
			ts/1000, ts%1000, total[d]+4096, total[d], bytes, addr, devs[d].id, devs[d].typ)
	}
	buf.WriteString(`]}`)
	return []byte(buf.String()), totals
}

// checkTotals checks the Total Allocated rule: the analysis' live bytes
// after every imported event equal its Total Allocated; the only other
// points are the baselines, placed first on their device.
func checkTotals(t *testing.T, doc *TraceDocument, totals map[string][]uint64) {
	t.Helper()
	p := AnalyzeMemory(doc)
	if len(p.Timeline) != len(doc.Memory) {
		t.Fatalf("%d points for %d events", len(p.Timeline), len(doc.Memory))
	}
	got := make(map[string][]uint64)
	for i, tp := range p.Timeline {
		ev := &doc.Memory[i]
		if ev.Device != tp.Device || ev.TimestampNs != tp.TimestampNs {
			t.Fatalf("point %d %+v is not the one of event %+v", i, tp, ev)
		}
		if strings.HasSuffix(ev.TensorID, "#baseline") {
			if len(got[tp.Device]) != 0 {
				t.Fatalf("baseline of %s after its first event", tp.Device)
			}
			continue
		}
		got[tp.Device] = append(got[tp.Device], tp.LiveBytes)
	}
	if d := cmp.Diff(totals, got); d != "" {
		t.Fatalf("live bytes after each event != Total Allocated (-total +live):\n%s", d)
	}
}

func TestChromeTotalAllocatedFixture(t *testing.T) {
	_, trace := chromeFixture(t, "addr")
	var obj struct {
		TraceEvents []struct {
			Name string
			Ts   json.Number
			Args struct {
				Bytes      int64
				Total      *uint64 `json:"Total Allocated"`
				DeviceType int     `json:"Device Type"`
				DeviceID   int     `json:"Device Id"`
			}
		}
	}
	if err := json.Unmarshal(trace, &obj); err != nil {
		t.Fatal(err)
	}
	type ev struct {
		ts    float64
		dev   string
		total uint64
	}
	// The fixture's devices, named here rather than by the reader's
	// chromeDeviceName, which would then check itself.
	names := map[[2]int]string{{1, 0}: "cuda:0", {0, -1}: "cpu"}
	var evs []ev
	for _, e := range obj.TraceEvents {
		if e.Name != "[memory]" || e.Args.Bytes == 0 {
			continue
		}
		f, _ := e.Ts.Float64()
		dev, ok := names[[2]int{e.Args.DeviceType, e.Args.DeviceID}]
		if !ok {
			t.Fatalf("fixture event at %v µs on device type %d id %d: name it here", f, e.Args.DeviceType, e.Args.DeviceID)
		}
		evs = append(evs, ev{f, dev, *e.Args.Total})
	}
	slices.SortStableFunc(evs, func(a, b ev) int { // by time; fractions of a µs too
		switch {
		case a.ts < b.ts:
			return -1
		case a.ts > b.ts:
			return 1
		}
		return 0
	})
	totals := make(map[string][]uint64)
	for _, e := range evs {
		totals[e.dev] = append(totals[e.dev], e.total)
	}
	checkTotals(t, mustReadChrome(t, trace), totals)
}

// TestChromeTotalAllocatedRandom checks the Total Allocated rule on every
// event of random allocator histories, in both forms, and that the
// baseline is as small as the trace allows: pre-existing frees are counted
// as such and the never-freed rest is one allocation.
func TestChromeTotalAllocatedRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	n := 500
	if testing.Short() {
		n = 100
	}
	for i := range n {
		withAddr := i%2 == 0
		data, totals := allocatorTrace(rng, withAddr)
		doc, err := ReadChromeTrace(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("trace %d: %v\n%s", i, err, data)
		}
		t.Run("", func(t *testing.T) {
			defer func() {
				if t.Failed() {
					t.Logf("trace (addr %v):\n%s", withAddr, data)
				}
			}()
			checkTotals(t, doc, totals)
			if doc.Run.Tags["total_allocated_mismatches"] != "" {
				t.Errorf("mismatches reported on a consistent trace")
			}
		})
		if t.Failed() {
			return
		}
	}
}

// TestChromeTotalAllocatedMismatch checks that an inconsistent trace is
// flagged instead of silently disagreeing with its totals.
func TestChromeTotalAllocatedMismatch(t *testing.T) {
	for _, tc := range []struct {
		name, reason, in, want string
	}{
		{"jump", "a total that does not follow Bytes", `[` + memEvent("1", 100, 1, 0, `,"Total Allocated":100`) + `,` + memEvent("2", 100, 1, 0, `,"Total Allocated":500`) + `]`, "1"},
		{"negative baseline", "a first total below the event's own Bytes", `[` + memEvent("1", 100, 1, 0, `,"Total Allocated":40`) + `]`, "1"},
		{"lost once", "one event lost counts once: the totals after it are checked against the one that jumped (from a review: every event after a loss counted)",
			`[` + memEvent("1", 100, 1, 0, `,"Total Allocated":100`) + `,` + memEvent("2", 10, 1, 0, `,"Total Allocated":160`) + `,` + memEvent("3", -10, 1, 0, `,"Total Allocated":150`) + `,` + memEvent("4", 20, 1, 0, `,"Total Allocated":170`) + `]`, "1"},
		{"lost twice", "two losses count twice",
			`[` + memEvent("1", 100, 1, 0, `,"Total Allocated":100`) + `,` + memEvent("2", 10, 1, 0, `,"Total Allocated":160`) + `,` + memEvent("3", -10, 1, 0, `,"Total Allocated":150`) + `,` + memEvent("4", 20, 1, 0, `,"Total Allocated":140`) + `,` + memEvent("5", 1, 1, 0, `,"Total Allocated":141`) + `]`, "2"},
		{"lost on two devices", "each device's totals are its own",
			`[` + memEvent("1", 100, 1, 0, `,"Total Allocated":100`) + `,` + memEvent("2", 100, 1, 1, `,"Total Allocated":100`) + `,` + memEvent("3", 10, 1, 0, `,"Total Allocated":150`) + `,` + memEvent("4", 10, 1, 1, `,"Total Allocated":110`) + `,` + memEvent("5", 10, 1, 0, `,"Total Allocated":160`) + `]`, "1"},
		{"consistent", "totals that follow Bytes from a baseline", `[` + memEvent("1", 100, 1, 0, `,"Total Allocated":140`) + `,` + memEvent("2", -40, 1, 0, `,"Total Allocated":100`) + `]`, ""},
	} {
		doc := mustReadChrome(t, []byte(tc.in))
		if got := doc.Run.Tags["total_allocated_mismatches"]; got != tc.want {
			t.Errorf("%s (%s): total_allocated_mismatches = %q, want %q", tc.name, tc.reason, got, tc.want)
		}
	}
}

// TestChromeRunPhase checks that phase is train only with a backward span.
func TestChromeRunPhase(t *testing.T) {
	for _, tc := range []struct {
		name, reason, span string
		want               Phase
	}{
		{"infer", "no backward span", "aten::mm", PhaseInfer},
		{"Backward0", "a backward node", "MmBackward0", PhaseTrain},
		{"Backward1", "a backward node", "SomeBackward1", PhaseTrain},
		{"engine", "the autograd engine", "autograd::engine::evaluate_function: MmBackward0", PhaseTrain},
		{"Backward", "a backward node as PyTorch 1.9 and before named it", "MmBackward", PhaseTrain},
		{"AccumulateGrad", "the engine's own node, outside evaluate_function in older traces", "torch::autograd::AccumulateGrad", PhaseTrain},
		{"optimizer", "optimizer alone is not train", "Optimizer.step#Adam.step", PhaseInfer},
	} {
		in := fmt.Sprintf(`[{"name":%q,"ph":"X","cat":"cpu_op","ts":1,"dur":5,"pid":1,"tid":1}]`, tc.span)
		if got := mustReadChrome(t, []byte(in)).Run.Phase; got != tc.want {
			t.Errorf("%s (%s): phase %v, want %v", tc.name, tc.reason, got, tc.want)
		}
	}
}

// FuzzReadChromeTrace checks that no input makes ReadChromeTrace panic,
// that errors are *ParseError (or a gzip header error), and that every
// accepted document is valid (spans, time order, no 0-byte events, every
// event in a known span) and goes through AnalyzeMemory (one point per
// event) and NodeMemoryMetrics (every span has metrics).
func FuzzReadChromeTrace(f *testing.F) {
	for _, name := range []string{"addr", "noaddr"} {
		_, trace := chromeFixture(f, name)
		f.Add(trace)
	}
	real, err := os.ReadFile(filepath.Join("testdata", "chrome", "torch-1.13-cpu.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(real) // what PyTorch itself writes
	f.Add([]byte(`[` + memEvent("1.5", -8, 1, 0, `,"Addr":4096,"Total Allocated":0`) + `]`))
	f.Add([]byte(`{"traceEvents":[{"name":"a","ph":"X","cat":"cpu_op","ts":"1e3","dur":-1,"pid":"p","tid":2}]}`))
	f.Add([]byte(`[{"name":"k","ph":"X","cat":"kernel","ts":1,"dur":0,"args":{"bw":inf,"o":-NaN}},` + memEvent("2", 8, 1, 0, `,"x":[Infinity]`) + `]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := ReadChromeTrace(bytes.NewReader(data))
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) && !strings.HasPrefix(err.Error(), "gzip") && err != ErrEmptyTrace {
				t.Fatalf("error %v (%T) is neither a *ParseError nor ErrEmptyTrace", err, err)
			}
			if !utf8.ValidString(err.Error()) {
				t.Fatalf("error text is not valid UTF-8: %q", err)
			}
			checkChromeErrorOffset(t, data, pe)
			return
		}
		if err := doc.Validate(); err != nil {
			t.Fatalf("invalid document: %v", err)
		}
		if !slices.IsSortedFunc(doc.Memory, func(a, b MemoryEvent) int { return cmpU64(a.TimestampNs, b.TimestampNs) }) {
			t.Fatalf("memory not in time order")
		}
		ids := make(map[string]bool)
		byID := make(map[string]Span)
		for _, s := range doc.Spans {
			ids[s.ID] = true
			byID[s.ID] = s
		}
		end := func(s Span) uint64 { return addSat(s.StartNs, s.DurationNs) }
		for _, s := range doc.Spans {
			if p, ok := byID[s.ParentID]; ok && (s.StartNs < p.StartNs || end(s) > end(p)) {
				t.Fatalf("span %+v is not inside its parent %+v", s, p)
			}
		}
		for _, m := range doc.Memory {
			if !ids[m.SpanID] {
				t.Fatalf("event %+v names an unknown span", m)
			}
			if m.Bytes == 0 {
				t.Fatalf("0-byte event %+v", m)
			}
		}
		p := AnalyzeMemory(doc)
		if len(p.Timeline) != len(doc.Memory) {
			t.Fatalf("%d points for %d events", len(p.Timeline), len(doc.Memory))
		}
		m := NodeMemoryMetrics(doc, nil)
		for _, s := range doc.Spans {
			if _, ok := m[s.ID]; !ok {
				t.Fatalf("no node metrics for span %q", s.ID)
			}
		}
	})
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestChromeAddrAnomalies checks what address identity does with a trace
// that lost events: an alloc at a live address keeps the id (a duplicate
// alloc for the analysis), a second free of an address names the last id
// (a double free), and a free of an unknown address is pre-existing.
func TestChromeAddrAnomalies(t *testing.T) {
	ev := func(ts string, bytes int64, addr int) string {
		return memEvent(ts, bytes, 1, 0, fmt.Sprintf(`,"Addr":%d`, addr))
	}
	in := "[" + strings.Join([]string{
		ev("1", 100, 4096), ev("2", 100, 4096), ev("3", -100, 4096), ev("4", -100, 4096),
		memEvent("5", 100, 1, 0, `,"Addr":"0x1000"`), // an address in a hex string is the same address
		ev("6", -64, 8192),
		// The top of the address space, beyond int64, in both forms.
		memEvent("7", 32, 1, 0, `,"Addr":18446744073709551615`),
		memEvent("8", -32, 1, 0, `,"Addr":"0xffffffffffffffff"`),
	}, ",") + "]"
	doc := mustReadChrome(t, []byte(in))
	var ids []string
	for _, m := range doc.Memory {
		ids = append(ids, m.TensorID)
	}
	want := []string{"cuda:0@0x1000#0", "cuda:0@0x1000#0", "cuda:0@0x1000#0", "cuda:0@0x1000#0", "cuda:0@0x1000#1", "cuda:0@0x2000#0",
		"cuda:0@0xffffffffffffffff#0", "cuda:0@0xffffffffffffffff#0"}
	if d := cmp.Diff(want, ids); d != "" {
		t.Errorf("tensor ids (-want +got):\n%s", d)
	}
	p := AnalyzeMemory(doc)
	if want := (Anomalies{UnmatchedFrees: 1, DoubleFrees: 1, DuplicateAllocs: 1}); p.Anomalies != want {
		t.Errorf("anomalies %+v, want %+v", p.Anomalies, want)
	}
	if p.Summary.PreexistingBytes != 64 {
		t.Errorf("preexisting %d, want 64", p.Summary.PreexistingBytes)
	}
}

// TestChromeSteps checks the step of spans: markers, inheritance and
// ProfilerStep scoping.
func TestChromeSteps(t *testing.T) {
	x := func(name string, ts, dur int, tid int) string {
		return fmt.Sprintf(`{"name":%q,"ph":"X","cat":"cpu_op","ts":%d,"dur":%d,"pid":1,"tid":%d}`, name, ts, dur, tid)
	}
	in := "[" + strings.Join([]string{
		x("aten::before", 0, 5, 1),      // outside any ProfilerStep: none
		x("ProfilerStep#7", 10, 100, 1), // the step itself: none
		x("aten::linear", 11, 10, 1),    // forward
		x("aten::mm", 12, 2, 1),         // forward, inherited
		x("Optimizer.step#Adam.step", 30, 20, 1),
		x("aten::add_", 31, 1, 1),   // optimizer, inherited
		x("MulBackward0", 32, 2, 1), // a backward marker wins over optimizer
		x("aten::mul", 33, 1, 1),    // backward, inherited
		x("Optimizer.zero_grad#Adam.zero_grad", 60, 5, 1),
		// The autograd engine's prefix alone marks backward (no BackwardN suffix).
		x("autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", 70, 10, 1),
		x("aten::detach", 71, 1, 1),  // backward, inherited
		x("SumBackward1", 10, 50, 2), // another thread: no ProfilerStep there
		x("aten::ones", 11, 1, 2),    // backward, inherited
		x("aten::neg", 200, -3, 1),   // a negative dur is 0
		// PyTorch 1.9 and before: nodes without the number, and the
		// engine's own nodes, on a backward thread without the engine's scope.
		x("MmBackward", 300, 10, 3),
		x("aten::t", 301, 1, 3), // backward, inherited
		x("torch::autograd::AccumulateGrad", 320, 10, 3),
		x("aten::new_empty_strided", 321, 1, 3), // backward, inherited
	}, ",") + "]"
	doc := mustReadChrome(t, []byte(in))
	got := make(map[string]Step)
	for _, s := range doc.Spans {
		got[s.Name] = s.Step
		if s.Name == "aten::neg" && s.DurationNs != 0 {
			t.Errorf("negative dur gave %d ns", s.DurationNs)
		}
	}
	want := map[string]Step{
		"aten::before": StepNone, "ProfilerStep#7": StepNone, "aten::linear": StepForward, "aten::mm": StepForward,
		"Optimizer.step#Adam.step": StepOptimizer, "aten::add_": StepOptimizer, "MulBackward0": StepBackward,
		"aten::mul": StepBackward, "Optimizer.zero_grad#Adam.zero_grad": StepOptimizer, "SumBackward1": StepBackward,
		"aten::ones": StepBackward, "aten::neg": StepNone,
		"autograd::engine::evaluate_function: torch::autograd::AccumulateGrad": StepBackward, "aten::detach": StepBackward,
		"MmBackward": StepBackward, "aten::t": StepBackward,
		"torch::autograd::AccumulateGrad": StepBackward, "aten::new_empty_strided": StepBackward,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("steps (-want +got):\n%s", d)
	}
}

// TestChromeBackwardNames checks which names mark the autograd engine's
// work.
func TestChromeBackwardNames(t *testing.T) {
	for _, tc := range []struct {
		name, reason string
		want         bool
	}{
		{"autograd::engine::evaluate_function: MmBackward0", "the engine's scope", true},
		{"autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", "the engine's scope, around its own node", true},
		{"MmBackward0", "an op's node, as PyTorch 1.10 and later name it", true},
		{"SomeBackward1", "a second version of a node", true},
		{"ConvolutionBackward12", "numbers of more than one digit", true},
		{"MmBackward", "an op's node, as PyTorch 1.9 and before named it", true},
		{"MyFunctionBackward", "a custom autograd.Function's node", true},
		{"torch::autograd::AccumulateGrad", "the engine's own node, which makes .grad", true},
		{"struct torch::autograd::AccumulateGrad", "the same, as MSVC names a struct", true},
		{"torch::autograd::CopySlices", "another of the engine's own nodes", true},
		{"aten::convolution_backward", "an aten op: backward only inside a backward span", false},
		{"BackwardHook", "Backward not at the end", false},
		{"MmBackward0x", "not a number after Backward", false},
		{"MmBackwards", "not Backward at the end", false},
		{"autograd::engine", "the engine's name cut short", false},
		{"ProfilerStep#1", "a step", false},
		{"", "no name", false},
		{"call autograd::engine::evaluate_function: MmBackward0 later", "the engine's scope only at the start of a name (from a test audit: a match anywhere passed)", false},
		{"my torch::autograd::AccumulateGrad", "the engine's own nodes only at the start", false},
		{"struct  torch::autograd::AccumulateGrad", "after exactly one \"struct \"", false},
	} {
		if got := isBackwardName([]byte(tc.name)); got != tc.want {
			t.Errorf("isBackwardName(%q) = %v, want %v (%s)", tc.name, got, tc.want, tc.reason)
		}
	}
}

// TestChromeRunDevice checks that the run's device is the one with the most
// [memory] events, ties to the smallest name.
func TestChromeRunDevice(t *testing.T) {
	for _, tc := range []struct {
		name, reason string
		evs          [][3]int // device type, device id, bytes
		want         string
	}{
		{"most events", "cpu has more events than cuda", [][3]int{{1, 0, 8}, {0, -1, 8}, {0, -1, 8}}, "cpu"},
		{"tie", "a tie goes to the smallest name", [][3]int{{1, 1, 8}, {1, 0, 8}}, "cuda:0"},
		{"tie, smallest first", "the device seen first keeps a tie when its name is the smallest", [][3]int{{1, 0, 8}, {1, 1, 8}}, "cuda:0"},
		{"none", "no memory events, no device", nil, ""},
		{"zero bytes", "events of 0 bytes give no memory event, so they do not count", [][3]int{{1, 0, 0}, {1, 0, 0}, {0, -1, 8}}, "cpu"},
		{"only zero bytes", "a device with no memory event is not the run's", [][3]int{{1, 0, 0}}, ""},
	} {
		var evs []string
		for i, e := range tc.evs {
			evs = append(evs, memEvent(strconv.Itoa(i), int64(e[2]), e[0], e[1], ""))
		}
		doc := mustReadChrome(t, []byte("["+strings.Join(evs, ",")+"]"))
		if doc.Run.Device != tc.want {
			t.Errorf("%s (%s): device %q, want %q", tc.name, tc.reason, doc.Run.Device, tc.want)
		}
	}
}

// TestChromeOutOfMemory checks that an [OutOfMemory] event is no allocation
// and no span of its own, but gives a device sample and is counted.
func TestChromeOutOfMemory(t *testing.T) {
	in := `[` + memEvent("1", 100, 1, 0, `,"Addr":64,"Total Allocated":100,"Total Reserved":128`) + `,
	{"name":"[OutOfMemory]","ph":"i","ts":2,"pid":1,"tid":9,"args":{"Bytes":1073741824,"Total Allocated":100,"Total Reserved":128,"Device Type":1,"Device Id":0}}]`
	doc := mustReadChrome(t, []byte(in))
	if len(doc.Memory) != 1 || doc.Memory[0].Bytes != 100 {
		t.Errorf("memory %+v, want the one alloc", doc.Memory)
	}
	if len(doc.Spans) != 1 || doc.Spans[0].Name != "thread 1/1" {
		t.Errorf("spans %+v, want only the root of thread 1/1", doc.Spans)
	}
	if len(doc.DeviceMemory) != 2 || doc.DeviceMemory[1].TimestampNs != 1000 || doc.DeviceMemory[1].UsedBytes != 100 {
		t.Errorf("samples %+v, want two, the second at 1000 ns", doc.DeviceMemory)
	}
	if doc.Run.Tags["out_of_memory_events"] != "1" {
		t.Errorf("tags %v, want out_of_memory_events 1", doc.Run.Tags)
	}
}

// TestChromeMappingEdges checks mapping rules on small hand-computed traces
// (times in ns since the earliest event): each case's rows and ops are
// worked out from the ReadChromeTrace doc, not from the reader's output.
func TestChromeMappingEdges(t *testing.T) {
	const act, opt, oth = CategoryActivation, CategoryOptimizer, CategoryOther
	x := func(name, cat string, ts, dur int) string {
		return fmt.Sprintf(`{"name":%q,"ph":"X","cat":%q,"ts":%d,"dur":%d,"pid":1,"tid":1}`, name, cat, ts, dur)
	}
	addr := func(a int) string { return fmt.Sprintf(`,"Addr":%d`, a) }
	oom := func(ts, typ, id int) string {
		return fmt.Sprintf(`{"name":"[OutOfMemory]","ph":"i","ts":%d,"pid":1,"tid":1,"args":{"Bytes":1048576,"Device Type":%d,"Device Id":%d}}`, ts, typ, id)
	}
	type opRow struct{ Span, Name, Device string }
	for _, tc := range []struct {
		name, reason string
		events       []string
		mem          []memRow
		ops          []opRow
	}{
		{"duplicate alloc category", "an allocation at a live address keeps the id but is an allocation made under its own span: its category is that span's step, and the free carries the latest allocation's",
			[]string{
				x("ProfilerStep#1", "user_annotation", 0, 100),
				x("aten::empty", "cpu_op", 10, 10),
				x("Optimizer.step#SGD.step", "user_annotation", 50, 20),
				memEvent("15", 8, 1, 0, addr(64)), memEvent("60", 8, 1, 0, addr(64)), memEvent("80", -8, 1, 0, addr(64)),
			},
			[]memRow{
				{15000, "cuda:0@0x40#0", alloc, 8, "cuda:0", "1", "aten::empty", act},
				{60000, "cuda:0@0x40#0", alloc, 8, "cuda:0", "2", "Optimizer.step#SGD.step", opt},
				{80000, "cuda:0@0x40#0", free, 8, "cuda:0", "0", "ProfilerStep#1", opt},
			},
			[]opRow{{"1", "aten::empty", "cuda:0"}}},
		{"child rounded out of its parent", "PyTorch 1.x writes whole µs, rounded down apart: an op ending 1 µs after the Optimizer.step it starts in is its child (its allocations optimizer, not activation, also the one in the µs past its parent's written end), and one ending 2 µs after is not",
			[]string{
				x("ProfilerStep#1", "user_annotation", 0, 100),
				x("Optimizer.step#SGD.step", "user_annotation", 10, 10),
				x("aten::add_", "cpu_op", 15, 6), // ends at 21, 1 µs after its parent
				x("Optimizer.step#SGD.step", "user_annotation", 30, 10),
				x("aten::mul_", "cpu_op", 35, 7), // ends at 42: 2 µs is no rounding
				memEvent("16", 8, 1, 0, addr(64)), memEvent("21", 8, 1, 0, addr(192)), memEvent("36", 8, 1, 0, addr(128)),
			},
			[]memRow{
				{16000, "cuda:0@0x40#0", alloc, 8, "cuda:0", "2", "aten::add_", opt},
				{21000, "cuda:0@0xc0#0", alloc, 8, "cuda:0", "2", "aten::add_", opt},
				{36000, "cuda:0@0x80#0", alloc, 8, "cuda:0", "4", "aten::mul_", act},
			},
			[]opRow{{"2", "aten::add_", "cuda:0"}, {"4", "aten::mul_", "cuda:0"}}},
		{"one address on two devices", "a block is (device, address): the same address on another device is another tensor, not a duplicate alloc",
			[]string{memEvent("1", 8, 1, 0, addr(4096)), memEvent("2", 16, 1, 1, addr(4096)), memEvent("3", -8, 1, 0, addr(4096)), memEvent("4", -16, 1, 1, addr(4096))},
			[]memRow{
				{0, "cuda:0@0x1000#0", alloc, 8, "cuda:0", "thread:0", "", oth},
				{1000, "cuda:1@0x1000#0", alloc, 16, "cuda:1", "thread:0", "", oth},
				{2000, "cuda:0@0x1000#0", free, 8, "cuda:0", "thread:0", "", oth},
				{3000, "cuda:1@0x1000#0", free, 16, "cuda:1", "thread:0", "", oth},
			}, nil},
		{"args before name", "JSON members come in any order: a memory event's args before its name are still read",
			[]string{`{"args":{"Bytes":8,"Device Type":1,"Device Id":0,"Addr":32},"ph":"i","ts":1,"pid":1,"tid":1,"name":"[memory]"}`},
			[]memRow{{0, "cuda:0@0x20#0", alloc, 8, "cuda:0", "thread:0", "", oth}}, nil},
		{"upper-case hex Addr", "an Addr string in 0X hex is the same address as its decimal number (be liberal in what you accept)",
			[]string{memEvent("1", 8, 1, 0, `,"Addr":"0X1000"`), memEvent("2", -8, 1, 0, addr(4096))},
			[]memRow{
				{0, "cuda:0@0x1000#0", alloc, 8, "cuda:0", "thread:0", "", oth},
				{1000, "cuda:0@0x1000#0", free, 8, "cuda:0", "thread:0", "", oth},
			}, nil},
		{"decimal Addr strings", "an Addr string may hold a decimal integer, of one digit or more (and a cpu_op event whose ph is empty is no span, and no error)",
			[]string{memEvent("1", 8, 1, 0, `,"Addr":"4096"`), memEvent("2", 8, 1, 0, `,"Addr":"7"`), `{"name":"x","ph":"","cat":"cpu_op","ts":3,"dur":2,"pid":1,"tid":1}`, memEvent("4", -8, 1, 0, addr(4096))},
			[]memRow{
				{0, "cuda:0@0x1000#0", alloc, 8, "cuda:0", "thread:0", "", oth},
				{1000, "cuda:0@0x7#0", alloc, 8, "cuda:0", "thread:0", "", oth},
				{3000, "cuda:0@0x1000#0", free, 8, "cuda:0", "thread:0", "", oth},
			}, nil},
		{"baselines out of file order", "each baseline goes just before its device's first event in time, whatever order the devices first appear in the file",
			[]string{memEvent("5", 10, 1, 1, `,"Total Allocated":110`), memEvent("1", 20, 1, 0, `,"Total Allocated":220`)},
			[]memRow{
				{0, "cuda:0#baseline", alloc, 200, "cuda:0", "baseline", "", oth},
				{0, "cuda:0#0", alloc, 20, "cuda:0", "thread:0", "", oth},
				{4000, "cuda:1#baseline", alloc, 100, "cuda:1", "baseline", "", oth},
				{4000, "cuda:1#0", alloc, 10, "cuda:1", "thread:0", "", oth},
			}, nil},
		{"threads by pid and tid", "spans nest per (pid, tid): pid 11 tid 2 is another thread than pid 1 tid 12, though their texts join alike",
			[]string{`{"name":"aten::mm","ph":"X","cat":"cpu_op","ts":0,"dur":100,"pid":1,"tid":12}`,
				`{"name":"[memory]","ph":"i","ts":50,"pid":11,"tid":2,"args":{"Bytes":8,"Device Type":1,"Device Id":0}}`},
			[]memRow{{50000, "cuda:0#0", alloc, 8, "cuda:0", "thread:0", "", oth}},
			[]opRow{{"0", "aten::mm", ""}}},
		{"OOM gives no op device", "an op's device is that of its first memory event; an [OutOfMemory] event is none",
			[]string{x("aten::mm", "cpu_op", 0, 10), x("aten::empty", "cpu_op", 20, 10), oom(2, 1, 1), memEvent("3", 8, 1, 0, ""), oom(25, 1, 1)},
			[]memRow{{3000, "cuda:0#0", alloc, 8, "cuda:0", "0", "aten::mm", oth}},
			[]opRow{{"0", "aten::mm", "cuda:0"}, {"1", "aten::empty", ""}}},
		{"zero bytes give no op device", "an event of 0 bytes is no memory event, so it does not give its op a device either",
			[]string{x("aten::zeros", "cpu_op", 10, 10), memEvent("11", 0, 1, 0, ""), memEvent("12", 64, 0, -1, "")},
			[]memRow{{2000, "cpu#0", alloc, 64, "cpu", "0", "aten::zeros", oth}},
			[]opRow{{"0", "aten::zeros", "cpu"}}},
		{"rounding is 1 µs to the ns", "a child ending 1.001 µs after the span it starts in is not rounded into it: its allocations are not optimizer (found by mutation testing: only whole µs were tested)",
			[]string{
				x("Optimizer.step#SGD.step", "user_annotation", 10, 10),
				`{"name":"aten::add_","ph":"X","cat":"cpu_op","ts":15,"dur":6.001,"pid":1,"tid":1}`,
				memEvent("20.5", 8, 1, 0, addr(64)),
			},
			[]memRow{{10500, "cuda:0@0x40#0", alloc, 8, "cuda:0", "1", "aten::add_", oth}},
			[]opRow{{"1", "aten::add_", "cuda:0"}}},
		{"legacy rule needs no category", "an event of pid \"CPU functions\" is a legacy op only without a category: a kernel there is no op (found by mutation testing)",
			[]string{
				`{"name":"aten::add","ph":"X","ts":0,"dur":10,"tid":1,"pid":"CPU functions","args":{}}`,
				`{"name":"void gemm_kernel","ph":"X","cat":"kernel","ts":2,"dur":5,"tid":1,"pid":"CPU functions","args":{}}`,
			},
			nil,
			[]opRow{{"0", "aten::add", ""}}},
		{"optimizer name is a prefix", "a span is optimizer when its name starts with \"Optimizer.step#\", not when it holds it (found by mutation testing)",
			[]string{x("wrap Optimizer.step#SGD.step", "user_annotation", 0, 10), memEvent("5", 8, 1, 0, "")},
			[]memRow{{5000, "cuda:0#0", alloc, 8, "cuda:0", "0", "wrap Optimizer.step#SGD.step", oth}},
			nil},
		{"span end saturates", "a span whose end passes 2⁶³ ns ends at the largest time, and holds the events after its start (found by mutation testing: the end wrapped)",
			[]string{`{"name":"aten::a","ph":"X","cat":"cpu_op","ts":9000000000000000,"dur":1000000000000000,"pid":1,"tid":1}`, memEvent("9000000000000001", 8, 1, 0, "")},
			[]memRow{{1000, "cuda:0#0", alloc, 8, "cuda:0", "0", "aten::a", oth}},
			[]opRow{{"0", "aten::a", "cuda:0"}}},
		{"op device from the first event in the file at one ts", "two memory events of an op at the same ts: its device is the first's in the file (found by mutation testing)",
			[]string{x("aten::add", "cpu_op", 0, 10), memEvent("5", 8, 0, -1, ""), memEvent("5", 8, 1, 0, "")},
			[]memRow{{5000, "cpu#0", alloc, 8, "cpu", "0", "aten::add", oth}, {5000, "cuda:0#0", alloc, 8, "cuda:0", "0", "aten::add", oth}},
			[]opRow{{"0", "aten::add", "cpu"}}},
		{"pid and tid as text", `pid 1 and pid "1" are one process, tid 1 and tid "1" one thread: the event is in the op (from a clean-room check)`,
			[]string{x("aten::mm", "cpu_op", 10, 10), `{"name":"[memory]","ph":"i","ts":15,"pid":"1","tid":"1","args":{"Bytes":8,"Device Type":1,"Device Id":0}}`},
			[]memRow{{5000, "cuda:0#0", alloc, 8, "cuda:0", "0", "aten::mm", oth}},
			[]opRow{{"0", "aten::mm", "cuda:0"}}},
		{"event where one span ends and the next begins", "of two spans that touch, the later holds the event at the instant they share, even when the earlier has a child ending there",
			[]string{x("a", "cpu_op", 0, 10), x("a_child", "cpu_op", 5, 5), x("b", "cpu_op", 10, 10), memEvent("10", 8, 1, 0, "")},
			[]memRow{{10000, "cuda:0#0", alloc, 8, "cuda:0", "2", "b", oth}},
			[]opRow{{"0", "a", ""}, {"1", "a_child", ""}, {"2", "b", "cuda:0"}}},
		{"pre-existing free numbers its address", "a free of an address never allocated is tensor #0 there, so the next allocation at it is #1",
			[]string{memEvent("10", -8, 1, 0, addr(4096)), memEvent("20", 8, 1, 0, addr(4096))},
			[]memRow{{0, "cuda:0@0x1000#0", free, 8, "cuda:0", "thread:0", "", oth}, {10000, "cuda:0@0x1000#1", alloc, 8, "cuda:0", "thread:0", "", oth}},
			nil},
		{"Bytes with an integer value", "64.0 and 6.4e1 are the integer 64",
			[]string{`{"name":"[memory]","ph":"i","ts":0,"pid":1,"tid":1,"args":{"Bytes":64.0,"Device Type":1,"Device Id":0,"Addr":1}}`,
				`{"name":"[memory]","ph":"i","ts":1,"pid":1,"tid":1,"args":{"Bytes":-6.4e1,"Device Type":1,"Device Id":0,"Addr":1}}`},
			[]memRow{{0, "cuda:0@0x1#0", alloc, 64, "cuda:0", "thread:0", "", oth}, {1000, "cuda:0@0x1#0", free, 64, "cuda:0", "thread:0", "", oth}},
			nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := mustReadChrome(t, []byte("["+strings.Join(tc.events, ",")+"]"))
			if d := cmp.Diff(tc.mem, memRows(doc)); d != "" {
				t.Errorf("%s: memory (-want +got):\n%s", tc.reason, d)
			}
			var ops []opRow
			for _, o := range doc.Ops {
				ops = append(ops, opRow{o.SpanID, o.OpName, o.Device})
			}
			if d := cmp.Diff(tc.ops, ops); d != "" {
				t.Errorf("%s: ops (-want +got):\n%s", tc.reason, d)
			}
			if err := doc.Validate(); err != nil {
				t.Errorf("%s: Validate: %v", tc.reason, err)
			}
		})
	}
}

// TestChromeBaselineEdges: the run's device counts the trace's own
// allocations and frees, not the synthetic baselines; a device whose events
// all have Bytes = 0 gets no baseline, only samples (from a clean-room
// check).
func TestChromeBaselineEdges(t *testing.T) {
	// xpu:0 has 1000 bytes from before the trace, and one event; cuda:0
	// one event: a tie that the smaller name breaks.
	doc := mustReadChrome(t, []byte(`[`+memEvent("0", 64, 12, 0, `,"Total Allocated":1064`)+`,`+memEvent("1", 64, 1, 0, "")+`]`))
	if got := doc.Run.Device; got != "cuda:0" {
		t.Errorf("run device %q, want cuda:0 (1 event each; xpu:0's baseline is not an event of the trace)", got)
	}
	if rows := memRows(doc); len(rows) != 3 || rows[0].Tensor != "xpu:0#baseline" {
		t.Errorf("memory %+v, want xpu:0's baseline first", rows)
	}
	doc = mustReadChrome(t, []byte(`[`+memEvent("0", 0, 1, 1, `,"Total Allocated":512`)+`,`+memEvent("1", 64, 1, 0, "")+`]`))
	want := []memRow{{1000, "cuda:0#0", alloc, 64, "cuda:0", "thread:0", "", CategoryOther}}
	if d := cmp.Diff(want, memRows(doc)); d != "" {
		t.Errorf("a device of Bytes = 0 events only: memory (-want +got):\n%s", d)
	}
	if len(doc.DeviceMemory) != 1 || doc.DeviceMemory[0].Device != "cuda:1" || doc.DeviceMemory[0].UsedBytes != 512 {
		t.Errorf("samples %+v, want one of cuda:1 with 512 bytes used", doc.DeviceMemory)
	}
}

// TestChromeNoRootWithoutEvent: an event outside every span that gives no
// memory event (0 bytes, or [OutOfMemory]) makes no thread root, which
// nothing would name; its total still gives a device sample.
func TestChromeNoRootWithoutEvent(t *testing.T) {
	for _, tc := range []struct{ name, reason, event string }{
		{"zero bytes", "an event of 0 bytes neither allocates nor frees",
			memEvent("30", 0, 1, 0, `,"Total Allocated":0`)},
		{"out of memory", "an [OutOfMemory] event is not an allocation",
			`{"name":"[OutOfMemory]","ph":"i","ts":30,"pid":1,"tid":2,"args":{"Bytes":64,"Device Type":1,"Device Id":0,"Total Allocated":0}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := mustReadChrome(t, []byte("["+tc.event+"]"))
			if len(doc.Spans) != 0 || len(doc.Memory) != 0 || len(doc.DeviceMemory) != 1 {
				t.Errorf("%s: %d spans, %d memory events, %d samples; want 0, 0, 1", tc.reason, len(doc.Spans), len(doc.Memory), len(doc.DeviceMemory))
			}
		})
	}
}

// TestChromeTruncatedSyntaxError: input cut short is a JSON syntax error
// like any other: it wraps the decoder's *jsontext.SyntacticError, as the
// doc says, and io.ErrUnexpectedEOF.
func TestChromeTruncatedSyntaxError(t *testing.T) {
	for _, in := range []string{`{"traceEvents": [{"ph":"X"`, `[{"name":"[memory]","ts":`} {
		_, err := ReadChromeTrace(strings.NewReader(in))
		var se *jsontext.SyntacticError
		if !errors.As(err, &se) || !errors.Is(err, io.ErrUnexpectedEOF) || !errors.Is(err, ErrInvalidJSON) {
			t.Errorf("%q: %v; want it to wrap a *jsontext.SyntacticError, io.ErrUnexpectedEOF and ErrInvalidJSON", in, err)
		}
	}
}

// TestChromeFirstOOM: the first [OutOfMemory] event in time is described by
// the out_of_memory_first_* tags: device, time, request, Total Allocated
// when given and the innermost span when in one (from a review: only the
// count was kept, which says nothing of where memory ran out).
func TestChromeFirstOOM(t *testing.T) {
	oom := func(ts string, bytes int64, id int, extra string) string {
		return strings.Replace(memEvent(ts, bytes, 1, id, extra), `"[memory]"`, `"[OutOfMemory]"`, 1)
	}
	span := `{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":10,"dur":10}`
	for _, c := range []struct {
		name, reason, in string
		want             map[string]string
	}{
		{"in a span", "all five tags; the time counts from the trace's first event (5 µs)",
			`[` + memEvent("5", 100, 1, 0, `,"Total Allocated":100`) + `,` + span + `,` + oom("15", 1<<30, 0, `,"Total Allocated":100`) + `]`,
			map[string]string{"device": "cuda:0", "ns": "10000", "bytes": "1073741824", "total_allocated": "100", "span": "0"}},
		{"first in time", "of two, the earlier one, though it comes later in the file",
			`[` + memEvent("5", 100, 1, 0, "") + `,` + span + `,` + oom("30", 7, 1, "") + `,` + oom("12.5", 9, 0, `,"Total Allocated":100`) + `]`,
			map[string]string{"device": "cuda:0", "ns": "7500", "bytes": "9", "total_allocated": "100", "span": "0"}},
		{"outside spans, no total", "no span tag outside every span, no total tag without Total Allocated; a device of no other event",
			`[` + memEvent("5", 100, 1, 0, "") + `,` + span + `,` + oom("25", 64, 1, "") + `]`,
			map[string]string{"device": "cuda:1", "ns": "20000", "bytes": "64"}},
		{"none", "no [OutOfMemory] event, no tags", `[` + memEvent("5", 100, 1, 0, "") + `]`, map[string]string{}},
	} {
		doc := mustReadChrome(t, []byte(c.in))
		got := map[string]string{}
		for k, v := range doc.Run.Tags {
			if rest, ok := strings.CutPrefix(k, "out_of_memory_first_"); ok {
				got[rest] = v
			}
		}
		if d := cmp.Diff(c.want, got); d != "" {
			t.Errorf("%s (%s): tags (-want +got):\n%s", c.name, c.reason, d)
		}
	}
}

// TestChromeNullIsAbsent: JSON null for an optional field reads as the field
// left out, as in the candle-graph readers (from an independent check, which
// found "Addr": null refused as "not an integer"); for a required field it
// is still an error.
func TestChromeNullIsAbsent(t *testing.T) {
	op := func(args string) string {
		return `{"name":"aten::empty","ph":"X","cat":"cpu_op","ts":10,"dur":5,"pid":1,"tid":1` + args + `}`
	}
	for _, tc := range []struct {
		name, reason  string
		with, without string // the trace with the field null, and without it
	}{
		{"Addr", "an event with a null address is paired by size, as one without Addr",
			`[` + memEvent("12", 8, 1, 0, `,"Addr":null`) + `,` + memEvent("13", -8, 1, 0, `,"Addr":null`) + `]`,
			`[` + memEvent("12", 8, 1, 0, "") + `,` + memEvent("13", -8, 1, 0, "") + `]`},
		{"Total Allocated", "no total: no baseline and no device sample",
			`[` + memEvent("12", 8, 1, 0, `,"Total Allocated":null,"Total Reserved":64`) + `]`,
			`[` + memEvent("12", 8, 1, 0, `,"Total Reserved":64`) + `]`},
		{"Total Reserved", "a sample without a reserved size",
			`[` + memEvent("12", 8, 1, 0, `,"Total Allocated":40,"Total Reserved":null`) + `]`,
			`[` + memEvent("12", 8, 1, 0, `,"Total Allocated":40`) + `]`},
		{"dur", "a span of no duration",
			`[` + strings.Replace(op(""), `"dur":5`, `"dur":null`, 1) + `,` + memEvent("10", 8, 1, 0, "") + `]`,
			`[` + strings.Replace(op(""), `"dur":5,`, ``, 1) + `,` + memEvent("10", 8, 1, 0, "") + `]`},
		{"External id", "no id to order spans of one interval by",
			`[` + op(`,"args":{"External id":null}`) + `,` + op(`,"args":{"External id":3}`) + `,` + memEvent("12", 8, 1, 0, "") + `]`,
			`[` + op(`,"args":{}`) + `,` + op(`,"args":{"External id":3}`) + `,` + memEvent("12", 8, 1, 0, "") + `]`},
		{"deviceProperties totalGlobalMem", "no capacity",
			`{"deviceProperties":[{"id":0,"totalGlobalMem":null}],"traceEvents":[` + memEvent("12", 8, 1, 0, "") + `]}`,
			`{"deviceProperties":[{"id":0}],"traceEvents":[` + memEvent("12", 8, 1, 0, "") + `]}`},
		{"deviceProperties id", "an entry naming no device",
			`{"deviceProperties":[{"id":null,"totalGlobalMem":64}],"traceEvents":[` + memEvent("12", 8, 1, 0, "") + `]}`,
			`{"deviceProperties":[{"totalGlobalMem":64}],"traceEvents":[` + memEvent("12", 8, 1, 0, "") + `]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadChromeTrace(strings.NewReader(tc.with))
			if err != nil {
				t.Fatalf("%s: %v", tc.reason, err)
			}
			want := mustReadChrome(t, []byte(tc.without))
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("%s: null read otherwise than left out (-left out +null):\n%s", tc.reason, d)
			}
		})
	}
	for _, tc := range []struct{ field, in, msg string }{
		{"Bytes", `[` + strings.Replace(memEvent("12", 8, 1, 0, ""), `"Bytes":8`, `"Bytes":null`, 1) + `]`, "traceEvents[0]: args.Bytes: not an integer in a [memory] event"},
		{"Device Type", `[` + strings.Replace(memEvent("12", 8, 1, 0, ""), `"Device Type":1`, `"Device Type":null`, 1) + `]`, "traceEvents[0]: args.Device Type: not an integer in a [memory] event"},
		{"ts", `[` + memEvent("null", 8, 1, 0, "") + `]`, "traceEvents[0]: ts: not a number in a [memory] event"},
		{"op ts", `[` + strings.Replace(op(""), `"ts":10`, `"ts":null`, 1) + `]`, `traceEvents[0]: ts: not a number in event "aten::empty"`},
	} {
		_, err := ReadChromeTrace(strings.NewReader(tc.in))
		if err == nil || !strings.HasSuffix(err.Error(), tc.msg) {
			t.Errorf("%s null: err %v; want one ending %q (the field is required)", tc.field, err, tc.msg)
		}
	}
}

// TestChromeOtherPhasesMakeNoSpan: only complete events ("X") make spans;
// a begin and end pair of a host op, a flow and a counter are ignored, as
// the doc says, and memory in them goes to the thread's root.
func TestChromeOtherPhasesMakeNoSpan(t *testing.T) {
	ev := func(ph string) string {
		return `{"name":"aten::mm","ph":"` + ph + `","cat":"cpu_op","ts":1,"pid":1,"tid":1,"id":1}`
	}
	doc := mustReadChrome(t, []byte(`[`+ev("B")+`,`+memEvent("2", 8, 1, 0, "")+`,`+ev("E")+`,`+ev("s")+`,`+ev("f")+`,`+ev("C")+`,`+ev("M")+`]`))
	if len(doc.Ops) != 0 || len(doc.Spans) != 1 || doc.Spans[0].Name == "aten::mm" || len(doc.Memory) != 1 || doc.Memory[0].SpanID != doc.Spans[0].ID {
		t.Errorf("spans %+v, ops %+v, memory %+v; want the thread's root span alone, no op, and the allocation in the root", doc.Spans, doc.Ops, doc.Memory)
	}
	x := mustReadChrome(t, []byte(`[`+strings.Replace(ev("X"), `"ts":1`, `"ts":1,"dur":5`, 1)+`,`+memEvent("2", 8, 1, 0, "")+`]`))
	if len(x.Ops) != 1 || x.Memory[0].OpName != "aten::mm" {
		t.Errorf("the same op as an X event: ops %+v, memory %+v; want one op holding the allocation (else this test shows nothing)", x.Ops, x.Memory)
	}
}

// checkChromeErrorOffset checks the offset of an error about plain JSON (no
// gzip, no repairs) against wantChromeOffset, where that knows it.
func checkChromeErrorOffset(t *testing.T, data []byte, pe *ParseError) {
	t.Helper()
	if pe == nil || !json.Valid(data) {
		return
	}
	if off, ok := wantChromeOffset(string(data), pe); ok && pe.Offset != off {
		t.Fatalf("%v: offset %d, want %d", pe, pe.Offset, off)
	}
}

// TestReadTraceNearJSONBeforeFormat: near-JSON before any key that tells the
// format is read again as a Chrome trace when the input can seek; when that
// read fails without finding one (no traceEvents or deviceProperties), the
// error is the first read's, as from a pipe: the same place and sentinels,
// where it was the Chrome reader's error about later text (a comma, the
// input's end), wrapping no ErrUnknownFormat.
func TestReadTraceNearJSONBeforeFormat(t *testing.T) {
	for _, tc := range []struct {
		name, reason, in string
		msg              string // from a file, and from a pipe with the hint
		line             int
		off              int64
		chrome           bool // a Chrome trace: the repaired read's error
	}{
		{"trailing comma", "the tab is the first defect; the comma after it is only a Chrome reader's",
			"{\"a\":\"\t\",}", "line 1: invalid JSON before any key that tells the trace's format: control character U+0009 in a string", 1, 6, false},
		{"cut short", "input that ends after the tab was called cut short at its end",
			"{\"schema\":\"candle-graph/trace/6\",\"g\tx", "line 1: invalid JSON before any key that tells the trace's format: control character U+0009 in a string", 1, 35, false},
		{"JSONL", "a JSONL trace gives the first read's error (before too: the second read found an object without traceEvents)",
			"{\"a\":\"\t\",\"kind\":\"meta\"}\n{\"kind\":\"span_start\"}\n", "line 1: invalid JSON before any key that tells the trace's format: control character U+0009 in a string", 1, 6, false},
		{"second line", "lines are counted to the defect",
			"\n{\"a\":\n\"x\\q\",}", "line 3: invalid JSON before any key that tells the trace's format: invalid escape `\\q` in a string", 3, 2, false},
		{"deviceProperties alone", "an object with deviceProperties and no traceEvents is no Chrome trace: the first error stands (from the re-run of the check: it became `not a Chrome trace`)",
			"{\"a\":\"\t\",\"deviceProperties\":[]}", "line 1: invalid JSON before any key that tells the trace's format: control character U+0009 in a string", 1, 6, false},
		{"traceEvents not an array", "likewise a traceEvents that is not an array",
			`{"a":nan,"traceEvents":5}`, "line 1: invalid JSON before any key that tells the trace's format: nan is not a JSON number", 1, 5, false},
		{"document with traceEvents", "a document (run before traceEvents) is not repaired: it read as an empty Chrome trace from a file, with no error",
			`{"a":nan,"run":{},"traceEvents":[]}`, "line 1: invalid JSON before any key that tells the trace's format: nan is not a JSON number", 1, 5, false},
		{"Chrome after traceEvents", "a Chrome trace's error is the repaired read's",
			`{"a":"C:\Users","traceEvents":[],}`, "offset 32: invalid JSON: invalid character ',' at start of value", 0, 32, true},
		{"Chrome deviceProperties", "deviceProperties tells a Chrome trace too",
			`{"a":"C:\Users","deviceProperties":[{"id":"x"}],"traceEvents":[]}`, "offset 36: deviceProperties[0]: id: not an integer", 0, 36, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, from := range []struct {
				name string
				r    io.Reader
			}{{"file", strings.NewReader(tc.in)}, {"pipe", struct{ io.Reader }{strings.NewReader(tc.in)}}} {
				_, err := ReadTrace(from.r)
				if from.name == "pipe" && tc.chrome {
					continue // the first read's error, with the hint: tested below
				}
				var pe *ParseError
				if !errors.As(err, &pe) || !strings.HasPrefix(err.Error(), tc.msg) || pe.Line != tc.line || pe.Offset != tc.off ||
					!errors.Is(err, ErrInvalidJSON) && !tc.chrome || errors.Is(err, ErrUnknownFormat) == tc.chrome {
					t.Errorf("%s: from a %s: %v; want a *ParseError at line %d, offset %d, %q (ErrUnknownFormat: %v)", tc.reason, from.name, err, tc.line, tc.off, tc.msg, !tc.chrome)
				}
				if from.name == "pipe" && !strings.HasSuffix(err.Error(), "; a trace with them is read from a file, or another io.Seeker") {
					t.Errorf("%s: from a pipe: %v; want the hint to read it from a file", tc.reason, err)
				}
			}
		})
	}
}
