// example_read_test.go holds the runnable examples of reading and writing traces.

package tracemem_test

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/tracemem/tracemem"
)

func ExampleReadTrace() {
	trace := `{"kind":"meta","schema":"candle-graph/trace/6","run_id":"demo","correlation_id":"demo/1","entrypoint":"train::step","phase":"train","timestamp":"2026-12-01T00:00:00Z","capture_step":1,"warmup_steps":0,"device":"cuda:0","timing_mode":"host","tags":{}}
{"kind":"span_start","id":"root","name":"train::step","start_ns":0,"span_kind":"function","measured":true}
{"kind":"memory","timestamp_ns":10,"tensor_id":"a","span_id":"root","device":"cuda:0","bytes":4096,"action":"alloc","shape":[32,32],"dtype":"f32","category":"activation","op_name":"matmul"}
{"kind":"memory","timestamp_ns":20,"tensor_id":"a","span_id":"root","device":"cuda:0","bytes":4096,"action":"free","shape":[32,32],"dtype":"f32"}
{"kind":"span_end","id":"root","duration_ns":30}
`
	doc, err := tracemem.ReadTrace(strings.NewReader(trace))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(doc.Run.RunID, doc.Run.Phase, len(doc.Spans), "span,", len(doc.Memory), "memory events")
	for _, ev := range doc.Memory {
		fmt.Println(ev.TimestampNs, ev.Action, ev.TensorID, ev.Bytes, ev.Category)
	}
	end, closed := doc.Spans[0].EndNs()
	fmt.Println("root ends at", end, closed)

	// Bad input gets an error that says where and what.
	_, err = tracemem.ReadTrace(strings.NewReader(strings.Replace(trace, `"free"`, `"fre"`, 1)))
	fmt.Println(err)
	var perr *tracemem.ParseError
	if errors.As(err, &perr) {
		fmt.Println("line", perr.Line, "kind", perr.Kind)
	}
	_, err = tracemem.ReadTrace(strings.NewReader(""))
	fmt.Println(errors.Is(err, tracemem.ErrEmptyTrace))
	// Output:
	// demo train 1 span, 2 memory events
	// 10 alloc a 4096 activation
	// 20 free a 4096 other
	// root ends at 30 true
	// line 4: memory: unknown action "fre" (want alloc or free)
	// line 4 kind memory
	// true
}

func ExampleTraceDocument_WriteJSONL() {
	doc := &tracemem.TraceDocument{
		Schema: tracemem.SchemaV6,
		Run:    tracemem.Run{RunID: "r", Device: "cpu"},
		Spans:  []tracemem.Span{{ID: "s", Name: "step", Kind: tracemem.SpanFunction, Closed: true, DurationNs: 5}},
		Memory: []tracemem.MemoryEvent{{TimestampNs: 1, TensorID: "t", SpanID: "s", Device: "cpu", Bytes: 8,
			Shape: []uint64{2}, DType: "f32"}},
	}
	if err := doc.WriteJSONL(os.Stdout); err != nil {
		fmt.Println(err)
	}
	// Output:
	// {"kind":"meta","schema":"candle-graph/trace/6","run_id":"r","correlation_id":"","entrypoint":"","phase":"train","timestamp":"","capture_step":0,"warmup_steps":0,"device":"cpu","timing_mode":"host","tags":{}}
	// {"kind":"span_start","id":"s","name":"step","start_ns":0,"span_kind":"function","measured":false}
	// {"kind":"memory","timestamp_ns":1,"tensor_id":"t","span_id":"s","device":"cpu","bytes":8,"action":"alloc","shape":[2],"dtype":"f32","category":"other"}
	// {"kind":"span_end","id":"s","duration_ns":5}
}

func ExampleReadChromeTrace() {
	trace := `{"traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "aten::empty", "pid": 1, "tid": 1, "ts": 100, "dur": 10},
  {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 1, "ts": 105.5,
   "args": {"Addr": 4096, "Bytes": 1024, "Total Allocated": 5120, "Device Type": 1, "Device Id": 0}},
  {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 1, "ts": 120,
   "args": {"Addr": 4096, "Bytes": -1024, "Total Allocated": 4096, "Device Type": 1, "Device Id": 0}}
]}`
	doc, err := tracemem.ReadChromeTrace(strings.NewReader(trace))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range doc.Memory {
		fmt.Printf("%d ns %v %s %d B op %q span %s\n", m.TimestampNs, m.Action, m.TensorID, m.Bytes, m.OpName, m.SpanID)
	}
	p := tracemem.AnalyzeMemory(doc)
	fmt.Println("peak", p.Summary.PeakBytes, "on", p.Summary.PeakDevice)
	// Output:
	// 5500 ns alloc cuda:0#baseline 4096 B op "" span baseline
	// 5500 ns alloc cuda:0@0x1000#0 1024 B op "aten::empty" span 0
	// 20000 ns free cuda:0@0x1000#0 1024 B op "" span thread:0
	// peak 5120 on cuda:0
}
