// example_test.go holds the runnable examples of the analyses.

package tracemem_test

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"math"
	"slices"
	"strings"

	"github.com/tracemem/tracemem"
)

// A small training step: a forward pass keeps an activation for backward,
// backward makes a gradient and frees the activation, the optimizer makes
// its state.
const exampleTrace = `{"kind":"meta","schema":"candle-graph/trace/6","run_id":"r","correlation_id":"c","entrypoint":"model::step","phase":"train","timestamp":"2026-12-01T00:00:00Z","capture_step":1,"warmup_steps":0,"device":"cuda:0","timing_mode":"host","tags":{}}
{"kind":"span_start","id":"step","name":"train_step","start_ns":0,"span_kind":"function","measured":true}
{"kind":"memory","timestamp_ns":1,"tensor_id":"w","span_id":"step","device":"cuda:0","bytes":4096,"action":"alloc","shape":[32,32],"dtype":"f32","category":"parameter"}
{"kind":"span_start","id":"fwd","parent_id":"step","name":"forward","start_ns":2,"span_kind":"module","measured":false,"step":"forward"}
{"kind":"span_start","id":"mm","parent_id":"fwd","name":"matmul","start_ns":3,"span_kind":"op","measured":false}
{"kind":"op","span_id":"mm","op_name":"matmul","inputs":["w"],"output":"x","shape":[64,32],"dtype":"f32","device":"cuda:0","duration_ns":2,"timestamp_ns":3,"input_storage_bytes":4096}
{"kind":"memory","timestamp_ns":3,"tensor_id":"x","span_id":"mm","op_name":"matmul","device":"cuda:0","bytes":8192,"action":"alloc","shape":[64,32],"dtype":"f32","category":"activation"}
{"kind":"memory","timestamp_ns":4,"tensor_id":"tmp","span_id":"mm","op_name":"matmul","device":"cuda:0","bytes":2048,"action":"alloc","shape":[512],"dtype":"f32","category":"activation"}
{"kind":"memory","timestamp_ns":5,"tensor_id":"tmp","span_id":"mm","device":"cuda:0","bytes":2048,"action":"free","shape":[512],"dtype":"f32","category":"activation"}
{"kind":"span_end","id":"mm","duration_ns":2}
{"kind":"span_end","id":"fwd","duration_ns":4}
{"kind":"span_start","id":"bwd","parent_id":"step","name":"backward","start_ns":7,"span_kind":"function","measured":false,"step":"backward"}
{"kind":"memory","timestamp_ns":8,"tensor_id":"gw","span_id":"bwd","op_name":"matmul_backward","device":"cuda:0","bytes":4096,"action":"alloc","shape":[32,32],"dtype":"f32","category":"gradient"}
{"kind":"memory","timestamp_ns":9,"tensor_id":"x","span_id":"bwd","device":"cuda:0","bytes":8192,"action":"free","shape":[64,32],"dtype":"f32","category":"activation"}
{"kind":"span_end","id":"bwd","duration_ns":3}
{"kind":"span_start","id":"opt","parent_id":"step","name":"optimizer","start_ns":10,"span_kind":"function","measured":false,"step":"optimizer"}
{"kind":"memory","timestamp_ns":10,"tensor_id":"m","span_id":"opt","op_name":"adam","device":"cuda:0","bytes":1024,"action":"alloc","shape":[256],"dtype":"f32","category":"optimizer"}
{"kind":"span_end","id":"opt","duration_ns":0}
{"kind":"span_end","id":"step","duration_ns":10}
`

// Read a trace, analyze it, print the peak and what was live at it.
func ExampleAnalyzeMemory() {
	doc, err := tracemem.ReadTrace(strings.NewReader(exampleTrace))
	if err != nil {
		log.Fatal(err)
	}
	p := tracemem.AnalyzeMemory(doc)
	fmt.Printf("peak %d B on %s at %d ns\n", p.Summary.PeakBytes, p.Summary.PeakDevice, p.Summary.PeakTimestampNs)
	for c, b := range p.Summary.PeakByCategory.All() {
		fmt.Printf("  %-10s %6d B\n", c, b)
	}
	for _, a := range p.PeakBreakdown {
		fmt.Printf("  %-4s %6d B %s\n", a.TensorID, a.Bytes, a.Category)
	}
	fmt.Printf("retained for backward: %d B\n", p.Summary.AutogradRetainedBytes)
	// Output:
	// peak 16384 B on cuda:0 at 8 ns
	//   parameter    4096 B
	//   activation   8192 B
	//   gradient     4096 B
	//   x      8192 B activation
	//   gw     4096 B gradient
	//   w      4096 B parameter
	// retained for backward: 8192 B
}

// Name the module path of each allocation live at the peak: a SpanTree is
// built once and asked for every entry.
func ExampleSpanTree() {
	doc, err := tracemem.ReadTrace(strings.NewReader(exampleTrace))
	if err != nil {
		log.Fatal(err)
	}
	p := tracemem.AnalyzeMemory(doc)
	tree := tracemem.NewSpanTree(doc)
	for _, a := range p.PeakBreakdown {
		fmt.Printf("%-3s %5d B  %s\n", a.TensorID, a.Bytes, strings.Join(tree.Path(a.SpanID), " > "))
	}
	// Output:
	// x    8192 B  train_step > forward > matmul
	// gw   4096 B  train_step > backward
	// w    4096 B  train_step
}

// The peak of a device during each span (a training step in a trace of
// several, say): its live bytes when the span starts or at any point until
// it ends, which is what a test asks of a step's budget.
func ExampleMemoryProfile_PeakBetween() {
	doc, err := tracemem.ReadTrace(strings.NewReader(exampleTrace))
	if err != nil {
		log.Fatal(err)
	}
	p := tracemem.AnalyzeMemory(doc)
	for _, s := range doc.Spans {
		end, closed := s.EndNs()
		if !closed {
			end = math.MaxUint64 // it ends with the trace
		}
		peak, _ := p.PeakBetween("cuda:0", s.StartNs, end)
		fmt.Printf("%-10s %2d-%2d ns  peak %5d B on cuda:0 at %2d ns\n", s.Name, s.StartNs, end, peak.LiveBytes, peak.TimestampNs)
	}
	// Output:
	// backward    7-10 ns  peak 16384 B on cuda:0 at  8 ns
	// forward     2- 6 ns  peak 14336 B on cuda:0 at  4 ns
	// matmul      3- 5 ns  peak 14336 B on cuda:0 at  4 ns
	// optimizer  10-10 ns  peak  9216 B on cuda:0 at 10 ns
	// train_step  0-10 ns  peak 16384 B on cuda:0 at  8 ns
}

// Print the spans whose subtrees held the most memory at once.
func ExampleNodeMemoryMetrics() {
	doc, err := tracemem.ReadTrace(strings.NewReader(exampleTrace))
	if err != nil {
		log.Fatal(err)
	}
	nodes := tracemem.NodeMemoryMetrics(doc, nil)
	// The result also has a node per op; keep the spans.
	var spans []string
	for _, s := range doc.Spans {
		spans = append(spans, s.ID)
	}
	slices.SortFunc(spans, func(a, b string) int {
		return cmp.Or(cmp.Compare(nodes[b].PeakBytes, nodes[a].PeakBytes), cmp.Compare(a, b))
	})
	for _, id := range spans[:min(5, len(spans))] {
		m := nodes[id]
		fmt.Printf("%-10s peak %5d B, left behind %5d B\n", id, m.PeakBytes, m.ResidualBytes)
	}
	// Output:
	// step       peak 16384 B, left behind  9216 B
	// fwd        peak 10240 B, left behind  8192 B
	// mm         peak 10240 B, left behind  8192 B
	// bwd        peak  4096 B, left behind  4096 B
	// opt        peak  1024 B, left behind  1024 B
}

// Feed events as they happen and read the answers at any moment: LiveBytes
// and Summary (or DeviceStats) after each event, as a budget check would,
// and the whole profile at the end. (Profile copies the timeline kept, a
// point per event by default, and builds the peak breakdown: a profiler
// that asks it often on a long run sets Options.MaxTimelinePoints.)
func ExampleAnalyzer() {
	a := tracemem.NewAnalyzer(tracemem.Options{})
	events := []tracemem.MemoryEvent{
		{TimestampNs: 10, TensorID: "a", Device: "cuda:0", Bytes: 100, Category: tracemem.CategoryActivation},
		{TimestampNs: 20, TensorID: "b", Device: "cuda:0", Bytes: 300, Category: tracemem.CategoryActivation},
		{TimestampNs: 30, TensorID: "b", Device: "cuda:0", Bytes: 300, Action: tracemem.ActionFree},
	}
	for i := range events {
		if err := a.Add(&events[i]); err != nil {
			log.Fatal(err)
		}
		// LiveBytes, DeviceStats and Summary are cheap; Profile builds
		// the timeline and the peak breakdown.
		live, _ := a.LiveBytes("cuda:0")
		fmt.Printf("after event %d: live %d B, peak %d B\n", i, live, a.Summary().PeakBytes)
	}
	p := a.Profile()
	fmt.Printf("%d allocations live at the peak, %d points\n", len(p.PeakBreakdown), len(p.Timeline))
	// Output:
	// after event 0: live 100 B, peak 100 B
	// after event 1: live 400 B, peak 400 B
	// after event 2: live 100 B, peak 400 B
	// 2 allocations live at the peak, 3 points
}

// Follow a trace as it is written, a line at a time (here from a string; a
// program following a growing file or a socket gives each line once its
// newline came), and read the answers whenever it suits: here at each
// span's end.
func ExampleAnalyzer_AddJSONLine() {
	a := tracemem.NewAnalyzer(tracemem.Options{MaxTimelinePoints: 100})
	sc := bufio.NewScanner(strings.NewReader(exampleTrace))
	sc.Buffer(nil, 64<<20) // records can be longer than the 64 KiB default
	for sc.Scan() {
		line := sc.Bytes()
		if err := a.AddJSONLine(line); err != nil {
			log.Fatal(err) // e.g. line 17: memory: out of order: timestamp_ns 9 comes after 10
		}
		// The line is a valid record: read a span's end from it again (if
		// it may be one: most lines are memory events), whatever its
		// spacing and the order of its members.
		var rec struct{ Kind, ID string }
		if bytes.Contains(line, []byte(`"span_end"`)) && json.Unmarshal(line, &rec) == nil && rec.Kind == "span_end" {
			s := a.Summary() // cheap: no timeline, no peak breakdown
			fmt.Printf("%s ended: peak %d B so far, %d allocs\n", rec.ID, s.PeakBytes, s.AllocCount)
		}
	}
	if err := sc.Err(); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("backward left %d B behind\n", a.NodeMetrics(nil)["bwd"].ResidualBytes)
	// Output:
	// mm ended: peak 14336 B so far, 3 allocs
	// fwd ended: peak 14336 B so far, 3 allocs
	// bwd ended: peak 16384 B so far, 4 allocs
	// opt ended: peak 16384 B so far, 5 allocs
	// step ended: peak 16384 B so far, 5 allocs
	// backward left 4096 B behind
}

// Stream a trace, and read it whole when its records come in an order a
// stream cannot take: in the second trace the backward span ends at 7 ns,
// but its span_end comes after the gradient it allocated at 8 ns.
func ExampleAnalyzeStream() {
	late := strings.Replace(exampleTrace, `{"kind":"span_end","id":"bwd","duration_ns":3}`, `{"kind":"span_end","id":"bwd","duration_ns":0}`, 1)
	for _, trace := range []string{exampleTrace, late} {
		p, nodes, err := tracemem.AnalyzeStream(strings.NewReader(trace), tracemem.Options{})
		if errors.Is(err, tracemem.ErrOutOfOrder) {
			fmt.Println("streaming:", err)
			doc, rerr := tracemem.ReadTrace(strings.NewReader(trace))
			if rerr != nil {
				log.Fatal(rerr)
			}
			p, nodes = tracemem.AnalyzeMemory(doc), tracemem.NodeMemoryMetrics(doc, nil)
		} else if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("peak %d B; backward left %d B behind\n", p.Summary.PeakBytes, nodes["bwd"].ResidualBytes)
	}
	// Output:
	// peak 16384 B; backward left 4096 B behind
	// streaming: line 15: span_end: out of order: span "bwd" ended at 7 ns, before memory events already replayed (up to 9 ns) that changed its bytes
	// peak 16384 B; backward left 0 B behind
}

// Keep at most 3 points per device. The last point is kept, so the state
// the trace ends in shows, and the 6 before it are cut into windows of 4
// (the smallest power of two w with 6 ≤ 2·w), each represented by its
// highest point, so the peak survives exactly.
func ExampleAnalyze() {
	doc, err := tracemem.ReadTrace(strings.NewReader(exampleTrace))
	if err != nil {
		log.Fatal(err)
	}
	p, err := tracemem.Analyze(doc, tracemem.Options{MaxTimelinePoints: 3})
	if err != nil {
		log.Fatal(err)
	}
	for _, pt := range p.Timeline {
		fmt.Printf("%d ns %s %d B\n", pt.TimestampNs, pt.Device, pt.LiveBytes)
	}
	fmt.Printf("peak %d B at %d ns\n", p.Summary.PeakBytes, p.Summary.PeakTimestampNs)
	// Output:
	// 4 ns cuda:0 14336 B
	// 8 ns cuda:0 16384 B
	// 10 ns cuda:0 9216 B
	// peak 16384 B at 8 ns
}

// Validate tells what an analysis would work around in a document built
// by hand: here a span id used twice and spans that are each other's
// parent; and what it would refuse: a memory event whose category is out of
// range.
func ExampleTraceDocument_Validate() {
	doc := &tracemem.TraceDocument{
		Schema: tracemem.SchemaV6,
		Spans: []tracemem.Span{
			{ID: "a", ParentID: "b", Name: "outer"},
			{ID: "b", ParentID: "a", Name: "inner"},
			{ID: "a", Name: "again"},
		},
		Memory: []tracemem.MemoryEvent{
			{TimestampNs: 5, TensorID: "t1", Device: "cuda:0", Bytes: 64, Category: tracemem.NumCategories},
		},
	}
	err := doc.Validate()
	var cycle *tracemem.SpanCycleError
	fmt.Println("cycle:", errors.As(err, &cycle))
	var bad *tracemem.EventError
	if errors.As(err, &bad) {
		fmt.Println("invalid event: memory index", bad.Index, bad.Field, bad.Value)
	}
	fmt.Println(err)
	// Output:
	// cycle: true
	// invalid event: memory index 0 category 5
	// span "a": duplicate span id
	// span "b": parent links form a cycle (a -> b); the link to its parent is cut
	// memory[0]: tensor "t1" at 5 ns: invalid category 5
}
