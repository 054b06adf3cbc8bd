// reader_test.go holds the table and golden tests of ReadTrace and ReadTraceFile.

package tracemem

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
	"unsafe"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"
	"github.com/tracemem/tracemem/internal/gen"
	"github.com/tracemem/tracemem/internal/gzipread"
	"github.com/tracemem/tracemem/internal/prefault"
)

// Lines of a small valid trace, used to build test inputs.
const (
	tMeta      = `{"kind":"meta","schema":"candle-graph/trace/6","run_id":"r","correlation_id":"r/1","entrypoint":"main","phase":"train","timestamp":"2026-12-01T00:00:00Z","capture_step":3,"warmup_steps":1,"device":"cuda:0","timing_mode":"host","tags":{"a":"b"}}`
	tMetaV7    = `{"kind":"meta","schema":"candle-graph/trace/7","run_id":"r","correlation_id":"r/1","entrypoint":"main","phase":"train","timestamp":"2026-12-01T00:00:00Z","capture_step":3,"warmup_steps":1,"device":"cuda:0","timing_mode":"host","tags":{"a":"b"}}`
	tRoot      = `{"kind":"span_start","id":"root","name":"step","start_ns":0,"span_kind":"function","measured":true}`
	tChild     = `{"kind":"span_start","id":"c","parent_id":"root","name":"fwd","start_ns":5,"span_kind":"module","measured":false,"step":"forward"}`
	tRootEnd   = `{"kind":"span_end","id":"root","duration_ns":100}`
	tMem       = `{"kind":"memory","timestamp_ns":10,"tensor_id":"t1","span_id":"root","device":"cuda:0","bytes":400,"action":"alloc","shape":[10,10],"dtype":"f32","category":"activation","op_name":"matmul"}`
	tMemNoCat  = `{"kind":"memory","timestamp_ns":20,"tensor_id":"t1","span_id":"root","device":"cuda:0","bytes":400,"action":"free","shape":[10,10],"dtype":"f32"}`
	tOp        = `{"kind":"op","span_id":"root","op_name":"matmul","inputs":["a","b"],"output":"t1","shape":[10,10],"dtype":"f32","device":"cuda:0","duration_ns":5,"timestamp_ns":10,"input_storage_bytes":800}`
	tTensor    = `{"kind":"tensor","span_id":"root","tensor_id":"w","shape":[4,4],"dtype":"bf16","device":"cuda:0","requires_grad":true,"category":"parameter"}`
	tDevMem    = `{"kind":"device_memory","timestamp_ns":0,"device":"cuda:0","used_bytes":10,"free_bytes":90,"capacity_bytes":100}`
	tGradient  = `{"kind":"gradient","event_id":"g1","root":"model","key":"w","state":"present","norm":1.5}`
	tEdge      = `{"kind":"edge","from_span":"root","to_span":"c","duration_ns":7}`
	tChildEnd  = `{"kind":"span_end","id":"c","duration_ns":10}`
	memPrefix  = `{"kind":"memory","timestamp_ns":10,"tensor_id":"t1","span_id":"root","device":"cuda:0","action":"alloc","shape":[10,10],"dtype":"f32",`
	metaPrefix = `{"kind":"meta","schema":"candle-graph/trace/6","run_id":"r","correlation_id":"r/1","entrypoint":"main","timestamp":"2026-12-01T00:00:00Z","capture_step":3,"warmup_steps":1,"device":"cuda:0","timing_mode":"host","tags":{},`
)

func rdLines(ls ...string) string { return strings.Join(ls, "\n") + "\n" }

// rdManyFields returns a record of the given kind with n more fields, f0 to
// f(n-1).
func rdManyFields(kind string, n int) string {
	var b strings.Builder
	b.WriteString(`{"kind":"` + kind + `"`)
	for i := range n {
		fmt.Fprintf(&b, `,"f%d":%d`, i, i)
	}
	return b.String() + "}"
}

func rdU64(v uint64) *uint64 { return new(v) }

// fullDoc is the document of rdLines(tMeta, tRoot, tChild, tOp, tTensor, tMem,
// tDevMem, tMemNoCat, tGradient, tEdge, tChildEnd, tRootEnd), built by hand.
func rdFullDoc() *TraceDocument {
	return &TraceDocument{
		Schema: SchemaV6,
		Run: Run{RunID: "r", CorrelationID: "r/1", Entrypoint: "main", Phase: PhaseTrain,
			Timestamp: "2026-12-01T00:00:00Z", CaptureStep: 3, WarmupSteps: 1, Device: "cuda:0",
			TimingMode: TimingHost, Tags: map[string]string{"a": "b"}},
		Spans: []Span{
			{ID: "c", ParentID: "root", Name: "fwd", Kind: SpanModule, StartNs: 5, Closed: true, DurationNs: 10, Step: StepForward},
			{ID: "root", Name: "step", Kind: SpanFunction, Measured: true, Closed: true, DurationNs: 100},
		},
		Ops: []Op{{SpanID: "root", OpName: "matmul", Inputs: []string{"a", "b"}, Output: "t1", Shape: []uint64{10, 10},
			DType: "f32", Device: "cuda:0", DurationNs: 5, TimestampNs: 10, StorageBytes: rdU64(400), InputStorageBytes: 800}},
		Tensors: []Tensor{{SpanID: "root", TensorID: "w", Shape: []uint64{4, 4}, DType: "bf16", Device: "cuda:0",
			RequiresGrad: true, StorageBytes: rdU64(32), Category: CategoryParameter}},
		Memory: []MemoryEvent{
			{TimestampNs: 10, TensorID: "t1", SpanID: "root", OpName: "matmul", Device: "cuda:0", Bytes: 400,
				Action: ActionAlloc, Shape: []uint64{10, 10}, DType: "f32", Category: CategoryActivation},
			{TimestampNs: 20, TensorID: "t1", SpanID: "root", Device: "cuda:0", Bytes: 400,
				Action: ActionFree, Shape: []uint64{10, 10}, DType: "f32", Category: CategoryOther},
		},
		DeviceMemory: []DeviceMemorySample{{Device: "cuda:0", UsedBytes: 10, FreeBytes: 90, CapacityBytes: rdU64(100)}},
		Gradients:    []Gradient{{EventID: "g1", Root: "model", Key: "w", State: GradientPresent, Norm: new(1.5)}},
		Edges:        []Edge{{FromSpan: "root", ToSpan: "c", DurationNs: 7}},
	}
}

func rdFullTrace() string {
	return rdLines(tMeta, tRoot, tChild, tOp, tTensor, tMem, tDevMem, tMemNoCat, tGradient, tEdge, tChildEnd, tRootEnd)
}

// rdGzip returns b gzip-compressed.
func rdGzip(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestReadTraceValid checks documents of valid inputs against documents
// built by hand.
func TestReadTraceValid(t *testing.T) {
	minimal := func(f func(*TraceDocument)) *TraceDocument {
		d := &TraceDocument{Schema: SchemaV6, Run: rdFullDoc().Run}
		f(d)
		return d
	}
	// docPrefix is a document up to its sections: schema and a run, which
	// minimalDoc has.
	const docPrefix = `{"schema":"candle-graph/trace/6","run":{"run_id":"r","correlation_id":"c","entrypoint":"e","phase":"train","timestamp":"t","capture_step":0,"warmup_steps":0,"device":"d","timing_mode":"host","tags":{}},`
	minimalDoc := func(f func(*TraceDocument)) *TraceDocument {
		d := &TraceDocument{Schema: SchemaV6, Run: Run{RunID: "r", CorrelationID: "c", Entrypoint: "e", Phase: PhaseTrain, Timestamp: "t", Device: "d", TimingMode: TimingHost}}
		f(d)
		return d
	}
	rootSpan := Span{ID: "root", Name: "step", Kind: SpanFunction, Measured: true, Closed: true, DurationNs: 100}
	docJSON, err := json.Marshal(rdFullDoc())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, reason string
		input        string
		want         *TraceDocument
	}{
		{"full", "every record kind lands in its section; spans sorted by id, closed from span_end; tensor storage_bytes derived (4x4 bf16 = 32)",
			rdFullTrace(), rdFullDoc()},
		{"blank lines", "blank and white-space lines, CRLF endings and a last line without newline are fine",
			"\n" + strings.ReplaceAll(strings.TrimSuffix(rdFullTrace(), "\n"), "\n", "\r\n \t\r\n\n"), rdFullDoc()},
		{"gzip", "a gzip stream is detected by its magic bytes", string(rdGzip(t, []byte(rdFullTrace()))), rdFullDoc()},
		{"document form", "the document JSON is detected by content", string(docJSON), rdFullDoc()},
		{"gzip document", "gzip then document form", string(rdGzip(t, docJSON)), rdFullDoc()},
		{"gzip padded", "zero bytes after the last gzip member are padding, as gzip(1) takes them", string(rdGzip(t, []byte(rdFullTrace()))) + strings.Repeat("\x00", 4096), rdFullDoc()},
		{"document schema escaped", "the schema's value is a JSON string: its escapes are decoded before it is checked",
			strings.Replace(string(docJSON), `"candle-graph/trace/6"`, `"\u0063andle-graph\/trace\/6"`, 1), rdFullDoc()},
		{"kind not first", "the JSONL is detected by a top-level kind anywhere in the first object",
			rdLines(`{"schema":"candle-graph/trace/6","run_id":"r","correlation_id":"r/1","entrypoint":"main","phase":"train","timestamp":"2026-12-01T00:00:00Z","capture_step":3,"warmup_steps":1,"device":"cuda:0","timing_mode":"host","tags":{"a":"b"},"kind":"meta"}`),
			minimal(func(*TraceDocument) {})},
		{"skipped record, many fields", "20 distinct names in a skipped record, checked through a map, are no duplicates",
			rdLines(tMeta, rdManyFields("later", 20), `{"x":1,"kind":"later","y":2}`), minimal(func(*TraceDocument) {})},
		{"known record, many fields", "40 distinct unknown names in a span_start, checked through a set, are no duplicates",
			rdLines(tMeta, strings.Replace(tRoot, `{"kind"`, `{`+strings.TrimSuffix(strings.TrimPrefix(rdManyFields("x", 40), `{"kind":"x",`), "}")+`,"kind"`, 1), tRootEnd),
			minimal(func(d *TraceDocument) {
				d.Spans = []Span{{ID: "root", Name: "step", Kind: SpanFunction, Measured: true, Closed: true, DurationNs: 100}}
			})},
		{"unknown kinds and fields", "unknown record kinds and unknown fields are ignored",
			rdLines(tMeta, `{"kind":"future_thing","x":[1,{"y":null}]}`, strings.Replace(tRoot, `{"kind"`, `{"extra":{"deep":[1,2,"x"]},"kind"`, 1), tRootEnd),
			minimal(func(d *TraceDocument) {
				d.Spans = []Span{{ID: "root", Name: "step", Kind: SpanFunction, Measured: true, Closed: true, DurationNs: 100}}
			})},
		{"unclosed span", "a span without span_end is not closed and has no duration",
			rdLines(tMeta, tRoot), minimal(func(d *TraceDocument) {
				d.Spans = []Span{{ID: "root", Name: "step", Kind: SpanFunction, Measured: true}}
			})},
		{"absent optionals", "absent op output, storage_bytes with an unknown dtype, category, op_name stay absent",
			rdLines(tMeta, `{"kind":"op","span_id":"s","op_name":"x","inputs":[],"output":null,"shape":[4],"dtype":"weird","device":"d","duration_ns":1,"timestamp_ns":2,"input_storage_bytes":0}`,
				`{"kind":"memory","timestamp_ns":1,"tensor_id":"t","span_id":"s","device":"d","bytes":1,"action":"alloc","shape":[],"dtype":"u8","category":null,"op_name":null}`,
				`{"kind":"device_memory","timestamp_ns":0,"device":"d","used_bytes":1,"free_bytes":2,"reserved_bytes":null}`,
				`{"kind":"gradient","event_id":"e","root":"m","key":"k","state":"missing","norm":null}`),
			minimal(func(d *TraceDocument) {
				d.Ops = []Op{{SpanID: "s", OpName: "x", Shape: []uint64{4}, DType: "weird", Device: "d", DurationNs: 1, TimestampNs: 2}}
				d.Memory = []MemoryEvent{{TimestampNs: 1, TensorID: "t", SpanID: "s", Device: "d", Bytes: 1, DType: "u8"}}
				d.DeviceMemory = []DeviceMemorySample{{Device: "d", UsedBytes: 1, FreeBytes: 2}}
				d.Gradients = []Gradient{{EventID: "e", Root: "m", Key: "k", State: GradientMissing}}
			})},
		{"norms from 0 to 9", "a norm that starts with 0 or 9 is a number like any other (found by mutation: 0.25 read as not a number went unseen)",
			rdLines(tMeta, strings.Replace(tGradient, `"norm":1.5`, `"norm":0.25`, 1), strings.Replace(tGradient, `"norm":1.5`, `"norm":9.5`, 1)),
			minimal(func(d *TraceDocument) {
				g := rdFullDoc().Gradients[0]
				g.Norm = new(0.25)
				h := g
				h.Norm = new(9.5)
				d.Gradients = []Gradient{g, h}
			})},
		{"null arrays and objects", "null is empty for shape, inputs and tags (documented; from a clean-room check)",
			rdLines(strings.Replace(tMeta, `"tags":{"a":"b"}`, `"tags":null`, 1),
				`{"kind":"op","span_id":"s","op_name":"x","inputs":null,"shape":null,"dtype":"u8","device":"d","duration_ns":1,"timestamp_ns":2,"input_storage_bytes":0}`,
				`{"kind":"memory","timestamp_ns":1,"tensor_id":"t","span_id":"s","device":"d","bytes":1,"action":"alloc","shape":null,"dtype":"u8"}`),
			minimal(func(d *TraceDocument) {
				d.Run.Tags = nil
				d.Ops = []Op{{SpanID: "s", OpName: "x", DType: "u8", Device: "d", DurationNs: 1, TimestampNs: 2, StorageBytes: rdU64(1)}}
				d.Memory = []MemoryEvent{{TimestampNs: 1, TensorID: "t", SpanID: "s", Device: "d", Bytes: 1, DType: "u8"}}
			})},
		{"explicit storage_bytes", "an explicit storage_bytes is kept even when it differs from shape x dtype",
			rdLines(tMeta, strings.Replace(tOp, `"input_storage_bytes":800`, `"input_storage_bytes":800,"storage_bytes":7`, 1)),
			minimal(func(d *TraceDocument) { d.Ops = rdFullDoc().Ops; d.Ops[0].StorageBytes = rdU64(7) })},
		{"schema 7", "schema /7: output_dense_bytes and input_dense_bytes map, storage_id, device_intervals and terminal are ignored",
			rdLines(tMetaV7,
				`{"kind":"op","span_id":"root","op_name":"matmul","inputs":["a","b"],"output":"t1","shape":[10,10],"dtype":"f32","device":"cuda:0","duration_ns":5,"timestamp_ns":10,"input_dense_bytes":800,"output_dense_bytes":9}`,
				`{"kind":"memory","timestamp_ns":10,"tensor_id":"t1","span_id":"root","device":"cuda:0","bytes":400,"action":"alloc","shape":[10,10],"dtype":"f32","category":"activation","op_name":"matmul","storage_id":17}`,
				`{"kind":"device_intervals","intervals":[[0,1]]}`, `{"kind":"terminal","status":"ok"}`),
			minimal(func(d *TraceDocument) {
				d.Schema = SchemaV7
				d.Ops = rdFullDoc().Ops
				d.Ops[0].StorageBytes = rdU64(9)
				d.Memory = rdFullDoc().Memory[:1]
			})},
		{"/7 names in a /6 trace", "output_dense_bytes and input_dense_bytes are read in either schema (documented; from a clean-room check)",
			rdLines(tMeta,
				`{"kind":"op","span_id":"root","op_name":"matmul","inputs":["a","b"],"output":"t1","shape":[10,10],"dtype":"f32","device":"cuda:0","duration_ns":5,"timestamp_ns":10,"input_dense_bytes":800,"output_dense_bytes":9}`),
			minimal(func(d *TraceDocument) {
				d.Ops = rdFullDoc().Ops
				d.Ops[0].StorageBytes = rdU64(9)
			})},
		{"escapes", "escaped strings are decoded (names and values)",
			rdLines(tMeta, `{"k\u0069nd":"memory","timestamp_ns":1,"tensor_id":"t\"1\\","span_id":"s","device":"cuda:\u0030","bytes":1,"action":"alloc","shape":[1],"dtype":"u8","category":"other"}`),
			minimal(func(d *TraceDocument) {
				d.Memory = []MemoryEvent{{TimestampNs: 1, TensorID: `t"1\`, SpanID: "s", Device: "cuda:0", Bytes: 1, Shape: []uint64{1}, DType: "u8"}}
			})},
		{"max uint64", "18446744073709551615 is the largest value an unsigned field takes",
			rdLines(tMeta, memPrefix+`"bytes":18446744073709551615}`),
			minimal(func(d *TraceDocument) {
				d.Memory = []MemoryEvent{{TimestampNs: 10, TensorID: "t1", SpanID: "root", Device: "cuda:0", Bytes: 1<<64 - 1,
					Shape: []uint64{10, 10}, DType: "f32"}}
			})},
		{"long line", "a line far beyond 64 KiB (and the 256 KiB read buffer) is read whole",
			rdLines(strings.Replace(tMeta, `"tags":{"a":"b"}`, `"tags":{"a":"`+strings.Repeat("x", 1<<20)+`"}`, 1)),
			minimal(func(d *TraceDocument) { d.Run.Tags = map[string]string{"a": strings.Repeat("x", 1<<20)} })},
		{"JSONL span_start closed ignored", "closed is a field of the document's spans only: a span_start's closed is an unknown field, and the span_end closes the span",
			rdLines(tMeta, strings.Replace(tRoot, `"measured":true`, `"measured":true,"closed":true`, 1), tRootEnd),
			minimal(func(d *TraceDocument) { d.Spans = []Span{rootSpan} })},
		{"shape with spaces", "white space around the elements of a shape is JSON's; the elements are read the same",
			rdLines(tMeta, strings.Replace(tMem, `[10,10]`, `[ 10 , 10 ]`, 1)),
			minimal(func(d *TraceDocument) { d.Memory = rdFullDoc().Memory[:1] })},
		{"nesting depth 10000", "an object nested 10000 deep (the record is depth 1) is within the limit jsontext has too",
			rdLines(tMeta, strings.Replace(tRoot, `{"kind":"span_start",`, `{"kind":"span_start","x":`+strings.Repeat("[", 9998)+`{}`+strings.Repeat("]", 9998)+`,`, 1), tRootEnd),
			minimal(func(d *TraceDocument) { d.Spans = []Span{rootSpan} })},
		{"JSONL span_start duration ignored", "duration_ns is a field of span_end: on a span_start it is an unknown field, and a span without span_end has no duration",
			rdLines(tMeta, strings.Replace(tRoot, `"measured":true`, `"measured":true,"duration_ns":5`, 1)),
			minimal(func(d *TraceDocument) {
				d.Spans = []Span{{ID: "root", Name: "step", Kind: SpanFunction, Measured: true}}
			})},
		{"document run schema ignored", "a document's schema is its top-level key; a schema inside run is an unknown field, whatever its type",
			strings.Replace(docPrefix, `"run":{`, `"run":{"schema":1,`, 1) + `"spans":[]}`,
			minimalDoc(func(*TraceDocument) {})},
		{"document span span_kind ignored", "a document span's kind is kind; span_kind (JSONL's name) is an unknown field there",
			docPrefix + `"spans":[{"id":"a","name":"n","kind":"op","span_kind":"module","measured":true,"start_ns":0,"closed":false,"duration_ns":0}]}`,
			minimalDoc(func(d *TraceDocument) { d.Spans = []Span{{ID: "a", Name: "n", Kind: SpanOp, Measured: true}} })},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadTrace(strings.NewReader(tc.input))
			if err != nil {
				t.Fatalf("%s: %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s: document (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

// TestReadTraceErrors checks that bad input gives an error that says where
// and what, and wraps the right sentinel or type.
func TestReadTraceErrors(t *testing.T) {
	docPrefix := `{"schema":"candle-graph/trace/6","run":{"run_id":"r","correlation_id":"c","entrypoint":"e","phase":"train","timestamp":"t","capture_step":0,"warmup_steps":0,"device":"d","timing_mode":"host","tags":{}},`
	badGzip := rdGzip(t, []byte(rdFullTrace()))
	truncGzip := badGzip[:len(badGzip)/2]
	crcGzip := bytes.Clone(badGzip)
	crcGzip[len(crcGzip)-6] ^= 0xff // the CRC-32 of the trailer
	headerGzip := append([]byte{0x1f, 0x8b, 0x99}, badGzip[3:]...)
	var zipped bytes.Buffer
	zw := zip.NewWriter(&zipped)
	if w, err := zw.Create("trace.jsonl"); err != nil {
		t.Fatal(err)
	} else if _, err := io.WriteString(w, rdFullTrace()); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, reason string
		input        string
		want         string // regexp of the error text
		is           error  // sentinel the error wraps; nil: none checked
		line         int    // ParseError.Line; 0: not a JSONL ParseError
	}{
		{"empty", "no bytes at all", "", `^empty trace$`, ErrEmptyTrace, 0},
		{"white space", "only white space", " \n\r\n\t\n", `^empty trace$`, ErrEmptyTrace, 0},
		{"empty gzip", "a gzip stream of nothing", string(rdGzip(t, nil)), `^empty trace$`, ErrEmptyTrace, 0},
		{"not json", "plain text", "hello world\n", `^line 1: not a trace: invalid JSON: invalid character 'h' at start of value`, ErrUnknownFormat, 1},
		{"not json, invalid JSON", "input that is not JSON wraps ErrInvalidJSON too, as errors.go says", "hello world\n", `^line 1: not a trace: invalid JSON`, ErrInvalidJSON, 1},
		{"bad first object", "a syntax error in the first object, before the format is known", `{"schema":"candle-graph/trace/6", oops}`, `^line 1: invalid JSON before any key that tells the trace's format: `, ErrInvalidJSON, 1},
		{"PyTorch defect before traceEvents", "a syntax error in what comes before traceEvents (deviceProperties, in PyTorch's traces) is invalid JSON of a format not yet known, not a file that is no trace (from a check of the command)", "{\"schemaVersion\": 1,\n\"deviceProperties\": [{\"id\": 0},\n],\n\"traceEvents\": []}", `^line 2: invalid JSON before any key that tells the trace's format: invalid character ',' at start of value within "/deviceProperties"$`, ErrUnknownFormat, 2},
		{"unknown object", "an object that is no trace; the message lists every deciding key, as ReadTrace's doc does", `{"foo":1}`, `^line 1: not a trace: the first object has none of the keys "kind" \(JSONL\), "traceEvents" \(PyTorch\) or "schema", "run", "spans", "ops", "tensors", "memory", "device_memory", "gradients", "edges" \(document\)$`, ErrUnknownFormat, 1},
		{"unknown object after blank lines", "the line is that of the object", "\n\n\n{\"name\":\"package.json\"}", `^line 4: not a trace: the first object has none of the keys`, ErrUnknownFormat, 4},
		{"NaN before kind", "a non-finite number before the deciding key: read again as a Chrome trace, which it is not, it is invalid JSON of no known format", `{"x": nan, "kind": "meta"}`, `^line 1: invalid JSON before any key that tells the trace's format: nan is not a JSON number`, ErrUnknownFormat, 1},
		{"NaN before spans", "likewise in what would be a document", `{"schema": NaN, "spans": []}`, `^line 1: invalid JSON before any key that tells the trace's format: NaN is not a JSON number`, ErrUnknownFormat, 1},
		{"NaN alone", "a non-finite word alone is no trace", "\nNaN", `^line 2: not a trace: invalid JSON: NaN is not a JSON number`, ErrUnknownFormat, 2},
		{"schema only", "an object with only schema is a document (and then lacks run)", `{"schema":"candle-graph/trace/6"}`, `^offset 0: run: missing required field`, nil, 0},
		{"edges only", "edges is a document key", `{"edges":[]}`, `^offset 0: schema: missing required field`, nil, 0},
		{"half a gzip magic", "gzip is told by both magic bytes", "\x1f{}", `^line 1: not a trace: invalid JSON`, ErrInvalidJSON, 1},
		{"truncated first object", "input cut inside its first object is truncated, not empty", `{"schema": "x"`, `^line 1: truncated input`, nil, 1},
		{"number", "a trace is an object or an array; the line is that of the value", "\n42 17\n", `^line 2: not a trace: want a JSON object or array, got 42$`, ErrUnknownFormat, 2},
		{"string", "a trace is an object or an array", `"abc"`, `^line 1: not a trace: want a JSON object or array, got string "abc"$`, ErrUnknownFormat, 1},
		{"null", "null is JSON, but not a trace", "null", `^line 1: not a trace: want a JSON object or array, got null$`, ErrUnknownFormat, 1},
		{"text like null", "text that starts as null would is invalid JSON, not null", "\nnope", `^line 2: not a trace: invalid JSON: .*literal null`, ErrInvalidJSON, 2},
		{"text like true", "likewise for true", "trouble", `^line 1: not a trace: invalid JSON: `, ErrInvalidJSON, 1},
		{"text like a number", "and for a number", "-x", `^line 1: not a trace: invalid JSON: .*in number`, ErrInvalidJSON, 1},
		{"text after null", "a literal glued to more text is invalid JSON too (found in review)", "nulls", `^line 1: not a trace: invalid JSON: `, ErrInvalidJSON, 1},
		{"text after a number", "likewise after a number", "42x", `^line 1: not a trace: invalid JSON: `, ErrInvalidJSON, 1},
		{"missing meta", "the first record is not meta", rdLines(tRoot, tMeta), `^line 1: span_start: the first record must be meta$`, ErrMissingMeta, 1},
		{"unknown kind before meta", "meta comes first, even before a record that would be skipped", rdLines(`{"kind":"later"}`, tMeta), `^line 1: the first record must be meta$`, ErrMissingMeta, 1},
		{"no meta", "records of unknown kinds only: the first is not meta", rdLines(`{"kind":"other"}`, `{"kind":"other"}`), `^line 1: the first record must be meta$`, ErrMissingMeta, 1},
		{"second meta", "meta appears twice", rdLines(tMeta, tRoot, tMeta), `^line 3: meta: second meta record \(the first is on line 1\)$`, nil, 3},
		{"wrong schema", "schema /5 is not read", rdLines(strings.Replace(tMeta, "trace/6", "trace/5", 1)),
			`^line 1: meta: schema: unsupported schema "candle-graph/trace/5" \(want candle-graph/trace/6 or candle-graph/trace/7\)$`, ErrUnsupportedSchema, 1},
		// The schema before the other fields: a trace of another schema may
		// differ in any of them, and callers test ErrUnsupportedSchema (from
		// a user trial: a /8 meta without run_id was "run_id: missing
		// required field").
		{"newer schema, a field gone", "a schema not read is named before a required field it does not have",
			rdLines(strings.Replace(strings.Replace(tMeta, "trace/6", "trace/8", 1), `"run_id":"r",`, "", 1)),
			`^line 1: meta: schema: unsupported schema "candle-graph/trace/8" \(want candle-graph/trace/6 or candle-graph/trace/7\)$`, ErrUnsupportedSchema, 1},
		{"newer schema, a value unknown", "and before a value of an enumeration this schema does not have, wherever the schema sits",
			rdLines(`{"kind":"meta","phase":"eval","schema":"candle-graph/trace/8"}`),
			`^line 1: meta: schema: unsupported schema "candle-graph/trace/8" `, ErrUnsupportedSchema, 1},
		{"newer schema, kind last", "likewise when kind is not the first member",
			rdLines(`{"phase":"eval","schema":"candle-graph/trace/8","kind":"meta"}`),
			`^line 1: meta: schema: unsupported schema "candle-graph/trace/8" `, ErrUnsupportedSchema, 1},
		{"newer schema, escaped", "the schema is compared unescaped",
			rdLines(`{"kind":"meta","phase":"eval","schema":"candle-graph\/trace\/8"}`),
			`^line 1: meta: schema: unsupported schema "candle-graph/trace/8" `, ErrUnsupportedSchema, 1},
		{"escaped supported schema", "an escaped /6 is /6: the other fields are checked",
			rdLines(`{"kind":"meta","phase":"eval","schema":"candle-graph\/trace\/6"}`),
			`^line 1: meta: unknown phase "eval" \(want train or infer\)$`, nil, 1},
		{"schema not a string", "a schema of the wrong type is a field error in member order, not a schema not read",
			rdLines(`{"kind":"meta","schema":8,"phase":"eval"}`), `^line 1: meta: schema: want a string, got 8$`, nil, 1},
		{"invalid json", "a broken record", rdLines(tMeta, `{"kind":"memory",,}`), `^line 2: memory: invalid JSON at column 18: invalid character ','`, ErrInvalidJSON, 2},
		{"truncated last line", "the stream stops inside a record: cut short, as io.ErrUnexpectedEOF says in every form (from a user trial)", rdLines(tMeta) + tMem[:50], `^line 2: memory: truncated record: the input ends inside a JSON value$`, io.ErrUnexpectedEOF, 2},
		{"truncated line before a newline", "a line that ends inside a record, then a newline: the record is cut, but the input is not known to be", rdLines(tMeta, tMem[:50]), `^line 2: memory: truncated record: the line ends inside a JSON value$`, ErrInvalidJSON, 2},
		{"minus without digits", "a '-' needs a digit (found by mutation: a '-' alone passed the number scanner)", rdLines(tMeta, memPrefix+`"bytes":-x}`), `^line 2: memory: invalid JSON at column \d+: invalid character 'x' in number$`, ErrInvalidJSON, 2},
		{"string line not ASCII", "a later line that is a string with bytes beyond ASCII is no record (found by mutation: its UTF-8 check could read before the line)", rdLines(tMeta, `"é"`), `^line 2: want a JSON object, got string "é"$`, ErrInvalidJSON, 2},
		{"input ends after an array element", "cut after an element, before ',' or ']'", rdLines(tMeta) + `{"kind":"memory","shape":[10`, `^line 2: memory: truncated record: the input ends inside a JSON value$`, io.ErrUnexpectedEOF, 2},
		// Numbers cut after '.', 'e' or a sign (found by mutation: checks of
		// the line's end in the number scanner went untested, one of them a
		// panic when reversed).
		{"exponent without digits", "an exponent needs a digit", rdLines(tMeta, memPrefix+`"bytes":1e}`), `^line 2: memory: invalid JSON at column \d+: invalid character '\}' in number \(want a digit in the exponent\)$`, ErrInvalidJSON, 2},
		{"fraction without digits", "a '.' needs a digit", rdLines(tMeta, memPrefix+`"bytes":1.}`), `^line 2: memory: invalid JSON at column \d+: invalid character '\}' in number \(want a digit after '\.'\)$`, ErrInvalidJSON, 2},
		{"input ends after e", "the number is cut, not wrong", rdLines(tMeta) + memPrefix + `"bytes":1e`, `^line 2: memory: truncated record: the input ends inside a JSON value$`, io.ErrUnexpectedEOF, 2},
		{"input ends after e+", "likewise after the exponent's sign", rdLines(tMeta) + memPrefix + `"bytes":1e+`, `^line 2: memory: truncated record: the input ends inside a JSON value$`, io.ErrUnexpectedEOF, 2},
		{"input ends after '.'", "likewise after the point", rdLines(tMeta) + memPrefix + `"bytes":1.`, `^line 2: memory: truncated record: the input ends inside a JSON value$`, io.ErrUnexpectedEOF, 2},
		{"string cut by CRLF", "a CR before the LF that ends the line ends it too, inside the string (found by mutation)", tMeta + "\r\n" + `{"kind":"memory","tensor_id":"ab` + "\r\n" + tMeta, `^line 2: memory: truncated record: the line ends inside a JSON value$`, ErrInvalidJSON, 2},
		{"input ends with CR in a string", "a CR as the input's last byte ends it inside the string (a mutant read past it)", tMeta + "\r\n" + `{"kind":"memory","tensor_id":"ab` + "\r", `^line 2: memory: truncated record: the input ends inside a JSON value$`, io.ErrUnexpectedEOF, 2},
		{"control character before LF", "only CR may come before the LF that cuts a string; another control character is invalid where it stands", tMeta + "\n" + `{"kind":"memory","tensor_id":"a` + "\x01\n", `^line 2: memory: invalid JSON at column 32: invalid control character byte 0x1 in string$`, ErrInvalidJSON, 2},
		{"literal cut by the newline", "a literal cut short by the line's end is a record cut short, as a string is, not an invalid character 0xa in it (from the check of AddJSONLine: the same line without its newline said the former)", rdLines(tMeta, `{"kind":"memory","a":fal`), `^line 2: memory: truncated record: the line ends inside a JSON value$`, ErrInvalidJSON, 2},
		{"number cut by the newline", "likewise a number that wants more digits", rdLines(tMeta, `{"kind":"memory","bytes":1e+`), `^line 2: memory: truncated record: the line ends inside a JSON value$`, ErrInvalidJSON, 2},
		{"minus cut by CRLF", "and a sign cut by CRLF", tMeta + "\r\n" + `{"kind":"memory","bytes":-` + "\r\n" + tMeta, `^line 2: memory: truncated record: the line ends inside a JSON value$`, ErrInvalidJSON, 2},
		{"literal broken by CR", "a CR inside a line is no line end: an invalid character in the literal", rdLines(tMeta, `{"kind":"memory","a":fa`+"\rlse}"), `^line 2: memory: invalid JSON at column 24: invalid character byte 0xd in literal false$`, ErrInvalidJSON, 2},
		{"byte-order mark on a later line", "a BOM at a line's start, as cat of files written on Windows leaves, is named, not shown as an invalid byte 0xef (from the check of AddJSONLine)", rdLines(tMeta, "  \ufeff"+tMem), `^line 2: invalid JSON at column 3: a byte-order mark \(U\+FEFF\) before the record; remove it$`, ErrInvalidJSON, 2},
		{"object over two lines", "a record must fit on one line", rdLines(tMeta, `{"kind":"memory",`, `"bytes":1}`), `^line 2: memory: truncated record: the line ends inside a JSON value$`, ErrInvalidJSON, 2},
		{"two objects on a line", "one object a line, named by the first one's kind", rdLines(tMeta, tRoot+" "+tRootEnd), `^line 2: span_start: want one JSON object a line`, ErrInvalidJSON, 2},
		{"two objects on a line, kind not first", "named by its kind wherever kind sits (the slow path reads it after the object)",
			rdLines(tMeta, `{"id":"x","kind":"span_end","duration_ns":1} {}`), `^line 2: span_end: want one JSON object a line, found more after it at column 46$`, ErrInvalidJSON, 2},
		{"two objects on a line, kind not a string", "no kind to name; the text after the object is reported first, as on the fused path",
			rdLines(tMeta, `{"id":"x","kind":7} {}`), `^line 2: want one JSON object a line, found more after it at column 21$`, ErrInvalidJSON, 2},
		{"array line", "a record is an object: JSON, but not one JSON object a line", rdLines(tMeta, `[1,2]`), `^line 2: want a JSON object, got an array$`, ErrInvalidJSON, 2},
		{"bad line after meta", "a line that is no JSON names no record kind, not the kind of the line before", rdLines(tMeta, `nope`), `^line 2: invalid JSON at column 2: `, ErrInvalidJSON, 2},
		{"cut array after memory", "likewise for a line cut short that is no object", rdLines(tMeta, tMem, `[1,2`), `^line 3: truncated record: the line ends inside a JSON value$`, ErrInvalidJSON, 3},
		{"invalid utf8", "strings must be UTF-8", rdLines(tMeta, strings.Replace(tMem, "t1", "t\xff", 1)), `^line 2: memory: invalid JSON at column \d+: invalid UTF-8`, ErrInvalidJSON, 2},
		{"control char", "raw control characters are not allowed in strings", rdLines(tMeta, strings.Replace(tMem, "t1", "t\x01", 1)), `invalid control character`, ErrInvalidJSON, 2},
		{"control char 0x1f", "likewise the last control character (from a mutation test: 0x1f was not tried)", rdLines(tMeta, strings.Replace(tMem, "t1", "t\x1f", 1)), `invalid control character byte 0x1f in string$`, ErrInvalidJSON, 2},
		{"invalid utf8 0x80", "likewise the lowest byte that is not ASCII, alone (from a mutation test)", rdLines(tMeta, strings.Replace(tMem, "t1", "t\x80", 1)), `^line 2: memory: invalid JSON at column \d+: invalid UTF-8`, ErrInvalidJSON, 2},
		{"DEL at the start of a value", "DEL (0x7f) is not printable: named by its code (from a mutation test)", rdLines(tMeta, "{\"kind\":\"edge\",\"x\":\x7f}"), `^line 2: edge: invalid JSON at column 20: invalid character byte 0x7f at the start of a value$`, ErrInvalidJSON, 2},
		{"trailing comma in an array", "JSON has no trailing comma, in an ignored field too (from a mutation test)", rdLines(tMeta, `{"kind":"edge","x":[1,],"from_span":"a","to_span":"b","duration_ns":1}`), `^line 2: edge: invalid JSON at column 23: invalid character ']'`, ErrInvalidJSON, 2},
		{"trailing comma in a shape", "nor in a field that is read", rdLines(tMeta, strings.Replace(tMem, `"shape":[10,10]`, `"shape":[10,10,]`, 1)), `^line 2: memory: invalid JSON at column \d+: invalid character ']'`, ErrInvalidJSON, 2},
		{"empty schema", "an empty schema is a schema other than /6 and /7 (from a mutation test)", rdLines(strings.Replace(tMeta, "candle-graph/trace/6", "", 1)), `^line 1: meta: schema: unsupported schema "" \(want candle-graph/trace/6 or candle-graph/trace/7\)$`, ErrUnsupportedSchema, 1},
		{"CRLF before a value that is no trace", "the line of the first value counts CRLF line ends (from a mutation test)", "\r\n\r\n42\n", `^line 3: not a trace: want a JSON object or array, got 42$`, ErrUnknownFormat, 3},
		{"duplicate field after a renamed one", "a duplicate names the other name only when this record gave it (from a mutation test: the record before had)",
			rdLines(tMeta, strings.Replace(tOp, `"input_storage_bytes":800`, `"input_storage_bytes":800,"output_dense_bytes":4`, 1), strings.Replace(tOp, `"input_storage_bytes":800`, `"input_storage_bytes":800,"storage_bytes":4,"storage_bytes":4`, 1)),
			`^line 3: op: storage_bytes: duplicate field$`, ErrInvalidJSON, 3},
		{"missing kind", "every record has a kind", rdLines(tMeta, `{"id":"x"}`), `^line 2: kind: missing required field$`, nil, 2},
		{"kind not string", "kind is a string", rdLines(tMeta, `{"kind":7}`), `^line 2: kind: want a string, got 7$`, nil, 2},
		{"unknown action", "the example of the issue", rdLines(tMeta, strings.Replace(tMem, `"alloc"`, `"alocate"`, 1)),
			`^line 2: memory: unknown action "alocate" \(want alloc or free\)$`, nil, 2},
		{"unknown category", "categories are an enumeration", rdLines(tMeta, strings.Replace(tMem, `"activation"`, `"weights"`, 1)),
			`^line 2: memory: unknown category "weights" \(want other, parameter, activation, gradient or optimizer\)$`, nil, 2},
		{"unknown span kind", "span_kind is an enumeration", rdLines(tMeta, strings.Replace(tRoot, `"function"`, `"fn"`, 1)),
			`^line 2: span_start: unknown span_kind "fn" \(want function, op or module\)$`, nil, 2},
		{"unknown step", "step is an enumeration", rdLines(tMeta, strings.Replace(tChild, `"forward"`, `"fwd"`, 1)),
			`^line 2: span_start: unknown step "fwd" \(want forward, backward or optimizer\)$`, nil, 2},
		{"unknown phase", "phase is an enumeration", rdLines(strings.Replace(tMeta, `"train"`, `"eval"`, 1)),
			`^line 1: meta: unknown phase "eval" \(want train or infer\)$`, nil, 1},
		{"unknown timing mode", "timing_mode is an enumeration", rdLines(strings.Replace(tMeta, `"host"`, `"wall"`, 1)),
			`^line 1: meta: unknown timing_mode "wall"`, nil, 1},
		{"unknown state", "gradient state is an enumeration", rdLines(tMeta, strings.Replace(tGradient, `"present"`, `"nan"`, 1)),
			`^line 2: gradient: unknown state "nan" \(want present, missing, zero or non_finite\)$`, nil, 2},
		{"negative", "unsigned fields reject negative numbers", rdLines(tMeta, memPrefix+`"bytes":-5}`),
			`^line 2: memory: bytes: want an unsigned integer, got negative number -5$`, nil, 2},
		{"fractional", "unsigned fields reject fractions", rdLines(tMeta, memPrefix+`"bytes":1.5}`),
			`^line 2: memory: bytes: want an unsigned integer in plain digits, got 1.5$`, nil, 2},
		{"fraction of 0.5", "a number that starts with 0 is a number, not a value of another type", rdLines(tMeta, memPrefix+`"bytes":0.5}`),
			`^line 2: memory: bytes: want an unsigned integer in plain digits, got 0.5$`, nil, 2},
		{"fraction of 9.5", "a number that starts with 9 is a number, not a value of another type", rdLines(tMeta, memPrefix+`"bytes":9.5}`),
			`^line 2: memory: bytes: want an unsigned integer in plain digits, got 9.5$`, nil, 2},
		{"whole number with a fraction", "100.0 is not plain digits either (issue 2), and the message does not call a whole number non-integer (from a user trial: it did)", rdLines(tMeta, memPrefix+`"bytes":100.0}`),
			`^line 2: memory: bytes: want an unsigned integer in plain digits, got 100.0$`, nil, 2},
		{"exponent", "unsigned fields take plain digits only", rdLines(tMeta, memPrefix+`"bytes":1e3}`),
			`^line 2: memory: bytes: want an unsigned integer in plain digits, got 1e3$`, nil, 2},
		{"overflow", "2^64 does not fit (no silent wrap)", rdLines(tMeta, memPrefix+`"bytes":18446744073709551616}`),
			`^line 2: memory: bytes: number 18446744073709551616 overflows uint64$`, nil, 2},
		{"string for number", "wrong type", rdLines(tMeta, memPrefix+`"bytes":"400"}`),
			`^line 2: memory: bytes: want an unsigned integer, got string "400"$`, nil, 2},
		{"number for string", "wrong type", rdLines(tMeta, strings.Replace(tMem, `"device":"cuda:0"`, `"device":0`, 1)),
			`^line 2: memory: device: want a string, got 0$`, nil, 2},
		{"two-byte number for string", "a value of two bytes whose inside equals the last string (\"\" at first) is still checked for its type", rdLines(tMeta, strings.Replace(tMem, `"span_id":"root"`, `"span_id":12`, 1)),
			`^line 2: memory: span_id: want a string, got 12$`, nil, 2},
		{"bool type", "measured is a boolean", rdLines(tMeta, strings.Replace(tRoot, `"measured":true`, `"measured":1`, 1)),
			`^line 2: span_start: measured: want a boolean, got 1$`, nil, 2},
		{"shape element", "shape elements are unsigned integers; Field names the element, shape[1], as it names inputs[1] (from an independent check: it was shape, with \"element 1\" in Msg)", rdLines(tMeta, strings.Replace(tMem, `[10,10]`, `[10,-1]`, 1)),
			`^line 2: memory: shape\[1\]: want an unsigned integer, got negative number -1$`, nil, 2},
		{"shape type", "shape is an array", rdLines(tMeta, strings.Replace(tMem, `[10,10]`, `"10x10"`, 1)),
			`^line 2: memory: shape: want an array of unsigned integers, got string "10x10"$`, nil, 2},
		{"inputs element", "inputs are strings", rdLines(tMeta, strings.Replace(tOp, `["a","b"]`, `["a",2]`, 1)),
			`^line 2: op: inputs\[1\]: want a string, got 2$`, nil, 2},
		{"tags value", "tags map strings to strings", rdLines(strings.Replace(tMeta, `{"a":"b"}`, `{"a":1}`, 1)),
			`^line 1: meta: tags.a: want a string, got 1$`, nil, 1},
		{"norm overflow", "a norm beyond float64", rdLines(tMeta, strings.Replace(tGradient, `1.5`, `1e999`, 1)),
			`^line 2: gradient: norm: number 1e999 is out of the float64 range$`, nil, 2},
		{"missing bytes", "required memory field", rdLines(tMeta, strings.Replace(tMem, `"bytes":400,`, ``, 1)),
			`^line 2: memory: bytes: missing required field$`, nil, 2},
		{"missing schema", "required meta field", rdLines(strings.Replace(tMeta, `"schema":"candle-graph/trace/6",`, ``, 1)),
			`^line 1: meta: schema: missing required field$`, nil, 1},
		{"missing tags", "required meta field", rdLines(strings.Replace(tMeta, `,"tags":{"a":"b"}`, ``, 1)),
			`^line 1: meta: tags: missing required field$`, nil, 1},
		{"missing span kind", "required span_start field", rdLines(tMeta, strings.Replace(tRoot, `"span_kind":"function",`, ``, 1)),
			`^line 2: span_start: span_kind: missing required field$`, nil, 2},
		{"missing duration", "required span_end field", rdLines(tMeta, tRoot, `{"kind":"span_end","id":"root"}`),
			`^line 3: span_end: duration_ns: missing required field$`, nil, 3},
		{"missing input storage", "required op field", rdLines(tMeta, strings.Replace(tOp, `,"input_storage_bytes":800`, ``, 1)),
			`^line 2: op: input_storage_bytes: missing required field \(or input_dense_bytes, its name since schema /7\)$`, nil, 2},
		{"missing requires_grad", "required tensor field", rdLines(tMeta, strings.Replace(tTensor, `"requires_grad":true,`, ``, 1)),
			`^line 2: tensor: requires_grad: missing required field$`, nil, 2},
		{"missing free_bytes", "required device_memory field", rdLines(tMeta, strings.Replace(tDevMem, `"free_bytes":90,`, ``, 1)),
			`^line 2: device_memory: free_bytes: missing required field$`, nil, 2},
		{"missing state", "required gradient field", rdLines(tMeta, strings.Replace(tGradient, `"state":"present",`, ``, 1)),
			`^line 2: gradient: state: missing required field$`, nil, 2},
		{"missing to_span", "required edge field", rdLines(tMeta, strings.Replace(tEdge, `"to_span":"c",`, ``, 1)),
			`^line 2: edge: to_span: missing required field$`, nil, 2},
		{"required null", "null is no value for a required field", rdLines(tMeta, strings.Replace(tMem, `"tensor_id":"t1"`, `"tensor_id":null`, 1)),
			`^line 2: memory: tensor_id: want a string, got null$`, nil, 2},
		{"duplicate field", "a field given twice is ambiguous", rdLines(tMeta, strings.Replace(tMem, `"bytes":400`, `"bytes":400,"bytes":500`, 1)),
			`^line 2: memory: bytes: duplicate field$`, ErrInvalidJSON, 2},
		{"duplicate field, skipped kind", "a record of a kind that is skipped still names a field once (found by FuzzReadTraceReference)",
			rdLines(tMeta, `{"kind":"later","a":1,"a":2}`), `^line 2: a: duplicate field$`, ErrInvalidJSON, 2},
		{"duplicate field, skipped kind, many fields", "past 16 members the names go through a map", rdLines(tMeta, strings.Replace(rdManyFields("later", 20), "}", `,"f7":1}`, 1)),
			`^line 2: f7: duplicate field$`, ErrInvalidJSON, 2},
		{"duplicate kind, skipped kind, many fields", "kind given again after 20 other names", rdLines(tMeta, strings.Replace(rdManyFields("later", 20), "}", `,"kind":"later"}`, 1)),
			`^line 2: kind: duplicate field$`, ErrInvalidJSON, 2},
		{"duplicate unknown field, known kind, many fields", "an ignored field given again after 20 others: past 16 the names go through a set",
			rdLines(tMeta, strings.Replace(tMem, "}", strings.TrimPrefix(strings.Replace(rdManyFields("x", 20), "}", `,"f19":1}`, 1), `{"kind":"x"`), 1)),
			`^line 2: memory: f19: duplicate field$`, ErrInvalidJSON, 2},
		{"duplicate unknown field, known kind, early name", "a name from before the set took over is in it",
			rdLines(tMeta, strings.Replace(tMem, "}", strings.TrimPrefix(strings.Replace(rdManyFields("x", 20), "}", `,"f2":1}`, 1), `{"kind":"x"`), 1)),
			`^line 2: memory: f2: duplicate field$`, ErrInvalidJSON, 2},
		{"data after a skipped record", "a record of an unknown kind is skipped, but its line must still hold one object", rdLines(tMeta, `{"kind":"later"} {"kind":"later"}`),
			`^line 2: want one JSON object a line, found more after it at column 18$`, nil, 2},
		{"duplicate kind, skipped kind", "kind first, then again, in a skipped record", rdLines(tMeta, `{"kind":"later","kind":"later"}`),
			`^line 2: kind: duplicate field$`, ErrInvalidJSON, 2},
		{"duplicate field, kind not first", "the collecting path: kind comes after the names given twice", rdLines(tMeta, `{"\u0061":1,"a":2,"kind":"later"}`),
			`^line 2: a: duplicate field$`, ErrInvalidJSON, 2},
		{"duplicate span", "span ids are unique", rdLines(tMeta, tRoot, tMem, tRoot),
			`^line 4: span_start: id: duplicate span id "root" \(first on line 2\)$`, nil, 4},
		{"unknown span_end", "span_end of a span never started", rdLines(tMeta, tRoot, tChildEnd),
			`^line 3: span_end: span "c": end of an unknown span$`, nil, 3},
		{"second span_end", "a span ends once", rdLines(tMeta, tRoot, tRootEnd, tRootEnd),
			`^line 4: span_end: span "root": span ended twice$`, nil, 4},
		{"duplicate span, then a bad line", "a duplicate found when the ids are sorted at the end still comes before an error on a later line",
			rdLines(tMeta, tRoot, tRoot, `{"kind":"memory"`), `^line 3: span_start: id: duplicate span id "root" \(first on line 2\)$`, nil, 3},
		{"duplicate span, then an unknown span_end", "likewise before a span error on a later line",
			rdLines(tMeta, tRoot, tRoot, tChildEnd), `^line 3: span_start: id: duplicate span id "root" \(first on line 2\)$`, nil, 3},
		{"duplicates, the later id first", "the first duplicate in line order is reported, not the first in id order",
			rdLines(tMeta, tRoot, tChild, tRoot, tChild), `^line 4: span_start: id: duplicate span id "root" \(first on line 2\)$`, nil, 4},
		{"an id thrice", "the second span_start of an id is the duplicate, and names the first",
			rdLines(tMeta, tRoot, tChild, tChild, tRoot, tChild), `^line 4: span_start: id: duplicate span id "c" \(first on line 3\)$`, nil, 4},
		{"corrupt gzip header", "gzip magic but a bad header", string(headerGzip), `^gzip: `, gzip.ErrHeader, 0},
		{"truncated gzip", "gzip stream cut in half", string(truncGzip), `unexpected EOF`, io.ErrUnexpectedEOF, 0},
		{"gzip checksum", "gzip stream with a wrong CRC", string(crcGzip), `gzip: `, gzip.ErrChecksum, 0},
		{"gzip padding then data, JSONL", "bytes other than zero after the padding are not padding", string(rdGzip(t, []byte(rdFullTrace()))) + "\x00\x00x", `bytes other than zero after the padding`, gzip.ErrHeader, 0},
		{"gzip padding then data, document", "likewise for the document form, whose decoder drops an error that comes with data and reads again", string(rdGzip(t, []byte(docPrefix+`"spans":[]}`))) + "\x00\x00x", `bytes other than zero after the padding`, gzip.ErrHeader, 0},
		// A document's schema after the value at fault: the schema's error
		// when it is one this package does not read, as in the JSONL form.
		{"doc, newer schema after the run", "a run of another schema, then the schema: the schema is named (offset of its value)",
			`{"run":{"phase":"eval"},"schema":"candle-graph/trace/8","spans":[]}`,
			`^offset 33: schema: unsupported schema "candle-graph/trace/8" \(want candle-graph/trace/6 or candle-graph/trace/7\)$`, ErrUnsupportedSchema, 0},
		{"doc, newer schema after a section", "read on past the rest of the section, and the sections after it, to the schema",
			`{"memory":[{"bytes":"x"},{"bytes":1},[]],"spans":[{"id":{}}],"other":{"a":[1,{"b":2}]},"schema":"candle-graph/trace/8"}`,
			`^offset 96: schema: unsupported schema "candle-graph/trace/8" `, ErrUnsupportedSchema, 0},
		{"doc, newer schema after a section not an array", "likewise after a section of the wrong type",
			`{"memory":7,"schema":"candle-graph\/trace\/8"}`, `^offset 21: schema: unsupported schema "candle-graph/trace/8" `, ErrUnsupportedSchema, 0},
		{"doc, newer schema after a run not an object", "and after a run of the wrong type",
			`{"run":[],"schema":"x"}`, `^offset 19: schema: unsupported schema "x" `, ErrUnsupportedSchema, 0},
		{"doc, supported schema after the error", "a schema this package reads leaves the first error",
			`{"memory":[{"bytes":"x"}],"schema":"candle-graph/trace/6"}`, `^offset 20: memory: bytes: want an unsigned integer, got string "x"$`, nil, 0},
		{"doc, schema not a string after the error", "so does a schema that is not a string",
			`{"memory":[{"bytes":"x"}],"schema":8}`, `^offset 20: memory: bytes: want an unsigned integer, got string "x"$`, nil, 0},
		{"doc, no schema after the error", "and none at all",
			`{"memory":[{"bytes":"x"}],"spans":[]}`, `^offset 20: memory: bytes: want an unsigned integer, got string "x"$`, nil, 0},
		{"doc, invalid JSON before the schema", "invalid JSON stands: the token stream cannot be read on",
			`{"memory":[x],"schema":"candle-graph/trace/8"}`, `^offset 11: memory: invalid JSON`, ErrInvalidJSON, 0},
		{"doc, invalid JSON after the error", "as does invalid JSON between the error and the schema",
			`{"memory":[{"bytes":"x"}],"spans":[}],"schema":"candle-graph/trace/8"}`, `^offset 20: memory: bytes: want an unsigned integer, got string "x"$`, nil, 0},
		{"doc bad number", "document errors name the byte offset", docPrefix + `"memory":[{"timestamp_ns":1,"tensor_id":"t","span_id":"s","device":"d","bytes":-1,"action":"alloc","shape":[],"dtype":"u8"}]}`,
			`^offset \d+: memory: bytes: want an unsigned integer, got negative number -1$`, nil, 0},
		{"doc missing field", "document elements have required fields", docPrefix + `"spans":[{"id":"a","name":"n","kind":"op","measured":true,"start_ns":0,"closed":false}]}`,
			`^offset \d+: spans: duration_ns: missing required field$`, nil, 0},
		{"doc open span duration", "a span that is not closed has no duration; the offset is its duration's (from an independent check: it was the span's)", docPrefix + `"spans":[{"id":"a","name":"n","kind":"op","measured":true,"start_ns":0,"closed":false,"duration_ns":5}]}`,
			fmt.Sprintf(`^offset %d: spans: duration_ns: want 0 for a span that is not closed, got 5$`, len(docPrefix)+len(`"spans":[{"id":"a","name":"n","kind":"op","measured":true,"start_ns":0,"closed":false,"duration_ns":`)), nil, 0},
		{"doc open span duration first", "likewise with the duration before closed", docPrefix + `"spans":[{"duration_ns": 7,"id":"a","name":"n","kind":"op","measured":true,"start_ns":0,"closed":false}]}`,
			fmt.Sprintf(`^offset %d: spans: duration_ns: want 0 for a span that is not closed, got 7$`, len(docPrefix)+len(`"spans":[{"duration_ns": `)), nil, 0},
		{"doc duplicate span", "document span ids are unique", docPrefix + `"spans":[{"id":"a","name":"n","kind":"op","measured":true,"start_ns":0,"closed":false,"duration_ns":0},{"id":"a","name":"n","kind":"op","measured":true,"start_ns":0,"closed":false,"duration_ns":0}]}`,
			`^offset \d+: spans: id: duplicate span id "a" \(first at offset \d+\)$`, nil, 0},
		{"doc duplicate span, then a bad element", "a duplicate found when the ids are sorted at the end still comes before an error after it",
			docPrefix + `"spans":[{"id":"a","name":"n","kind":"op","measured":true,"start_ns":0,"closed":false,"duration_ns":0},{"id":"a","name":"n","kind":"op","measured":true,"start_ns":0,"closed":false,"duration_ns":0},{"id":"b"}]}`,
			`^offset \d+: spans: id: duplicate span id "a" \(first at offset \d+\)$`, nil, 0},
		{"doc duplicate span, then no run", "likewise before an error found at the document's end",
			`{"schema":"candle-graph/trace/6","spans":[{"id":"a","name":"n","kind":"op","measured":true,"start_ns":0,"closed":false,"duration_ns":0},{"id":"a","name":"n","kind":"op","measured":true,"start_ns":0,"closed":false,"duration_ns":0}]}`,
			`^offset 136: spans: id: duplicate span id "a" \(first at offset 42\)$`, nil, 0},
		{"doc wrong schema", "the document schema is checked", strings.Replace(docPrefix, "trace/6", "trace/9", 1) + `"spans":[]}`,
			`^offset 10: schema: unsupported schema`, ErrUnsupportedSchema, 0},
		{"doc missing run", "run is required", `{"schema":"candle-graph/trace/6","spans":[]}`, `^offset 0: run: missing required field$`, nil, 0},
		{"doc truncated", "the document stops early, in the section it names (from a user trial: it named none)", docPrefix + `"spans":[{"id":"a"`, `^offset \d+: spans: truncated document`, io.ErrUnexpectedEOF, 0},
		{"doc span kind", "an unknown span kind is named by the document's field, kind (span_kind is JSONL's)", docPrefix + `"spans":[{"id":"a","name":"n","kind":"modul","measured":true,"start_ns":0,"closed":false,"duration_ns":0}]}`,
			`^offset \d+: spans: unknown kind "modul" \(want function, op or module\)$`, nil, 0},
		{"doc section type", "sections are arrays", docPrefix + `"memory":{}}`, `^offset \d+: memory: want an array, got an object$`, nil, 0},
		{"doc trailing data", "one document: two JSON texts are not one, and the offset is the second's", docPrefix + `"spans":[]}  {}`, fmt.Sprintf(`^offset %d: more data after the document$`, len(docPrefix)+len(`"spans":[]}  `)), ErrInvalidJSON, 0},
		{"doc trailing junk", "text after the document that is not JSON is more data after it, and the offset is not said twice (from a user trial)", docPrefix + `"spans":[]} x`, fmt.Sprintf(`^offset %d: more data after the document: invalid character 'x' at start of value$`, len(docPrefix)+len(`"spans":[]} `)), ErrInvalidJSON, 0},
		{"doc trailing junk after white space", "the offset is the junk's past any amount of white space, not where the decoder's buffer ended (from an API review: past about 1000 spaces it stayed at one offset)", docPrefix + `"spans":[]}` + strings.Repeat(" ", 100_000) + `x`, fmt.Sprintf(`^offset %d: more data after the document: invalid character 'x' at start of value$`, len(docPrefix)+len(`"spans":[]}`)+100_000), ErrInvalidJSON, 0},
		{"doc trailing value after white space", "likewise for a second JSON text", docPrefix + `"spans":[]}` + strings.Repeat("\n", 100_000) + `{}`, fmt.Sprintf(`^offset %d: more data after the document$`, len(docPrefix)+len(`"spans":[]}`)+100_000), ErrInvalidJSON, 0},
		{"doc trailing truncated value", "a value cut short after the document is more data too, not a truncated document", docPrefix + `"spans":[]} {"a":`, fmt.Sprintf(`^offset %d: more data after the document$`, len(docPrefix)+len(`"spans":[]} `)), ErrInvalidJSON, 0},
		{"doc syntax error in a section", "the decoder's text keeps where (the JSON pointer) but not its own copy of the offset", docPrefix + `"spans":[{"id" 1}]}`, `^offset \d+: spans: invalid JSON: invalid character '1' after object name \(expecting ':'\) within "/spans/0/id"$`, ErrInvalidJSON, 0},
		{"byte-order mark inside", "U+FEFF not at the start is an invalid character like any other (from a review)", `{"a":` + "\ufeff" + `1}`, `^line 1: invalid JSON before any key that tells the trace's format: invalid character '\\ufeff' at start of value within "/a"$`, ErrUnknownFormat, 1},
		{"doc trailing object with a syntax error", "the reason for data after a document names no JSON pointer into that data, which the document does not have (from a review)", docPrefix + `"spans":[]} {"a" 1}`, fmt.Sprintf(`^offset %d: more data after the document: invalid character '1' after object name \(expecting ':'\)$`, len(docPrefix)+len(`"spans":[]} `)), ErrInvalidJSON, 0},
		{"byte-order mark", "a UTF-8 byte-order mark is named, not shown as an invisible invalid character (from a user trial)", "\ufeff" + tMeta, `^line 1: not a trace: invalid JSON: a byte-order mark \(U\+FEFF\) before the first value; remove it$`, ErrUnknownFormat, 1},
		{"gzip inside gzip", "a trace gzipped twice is named so, not shown as the control character it starts with (from a user trial)", string(rdGzip(t, rdGzip(t, []byte(rdFullTrace())))), `^gzip: the data inside is gzip again \(the trace was compressed twice\); decompress it once, and read what that gives$`, gzipread.ErrTwice, 0},
		{"zip", "a zip archive is named by its magic bytes", zipped.String(), `^line 1: not a trace: a zip archive; extract the trace first$`, ErrUnknownFormat, 1},
		{"zstd", "likewise zstd, which the reader does not decompress", "\x28\xb5\x2f\xfd\x04\x58", `^line 1: not a trace: zstd data; decompress it first \(gzip is read as is\)$`, ErrUnknownFormat, 1},
		{"bzip2", "likewise bzip2", "BZh91AY&SY", `^line 1: not a trace: bzip2 data; decompress it first \(gzip is read as is\)$`, ErrUnknownFormat, 1},
		{"byte-order mark, gzipped", "the bytes gzip reads ahead come back with the rest, so a byte-order mark inside gzip is named too (from a review: it was not)", string(rdGzip(t, []byte("\ufeff"+tMeta))), `^line 1: not a trace: invalid JSON: a byte-order mark \(U\+FEFF\) before the first value; remove it$`, ErrUnknownFormat, 1},
		{"zstd inside gzip", "likewise another compression inside gzip", string(rdGzip(t, []byte("\x28\xb5\x2f\xfd\x04\x58"))), `^line 1: not a trace: zstd data; decompress it first \(gzip is read as is\)$`, ErrUnknownFormat, 1},
		{"xz", "likewise xz", "\xfd7zXZ\x00\x00\x04", `^line 1: not a trace: xz data; decompress it first \(gzip is read as is\)$`, ErrUnknownFormat, 1},
		{"doc open span duration 1", "an open span's duration must be 0: 1 is the smallest wrong value",
			docPrefix + `"spans":[{"id":"a","name":"n","kind":"op","measured":true,"start_ns":0,"closed":false,"duration_ns":1}]}`,
			`^offset \d+: spans: duration_ns: want 0 for a span that is not closed, got 1$`, nil, 0},
		{"output_dense_bytes negative", "an error names the field as written: the /7 name output_dense_bytes, not storage_bytes",
			rdLines(tMetaV7, strings.Replace(tOp, `"input_storage_bytes":800`, `"input_storage_bytes":800,"output_dense_bytes":-1`, 1)),
			`^line 2: op: output_dense_bytes: want an unsigned integer, got negative number -1$`, nil, 0},
		{"nesting depth 10001 in JSONL", "nested one deeper than the limit (the record is depth 1), in a field that is ignored: still refused",
			rdLines(tMeta, `{"kind":"edge","x":`+strings.Repeat("[", 10000)+strings.Repeat("]", 10000)+`,"from_span":"a","to_span":"b","duration_ns":1}`),
			`^line 2: edge: invalid JSON at column 10019: exceeded the maximum nesting depth$`, ErrInvalidJSON, 2},
		{"object nesting depth 10001 in JSONL", "likewise for objects (from a mutation test: only arrays were tried)",
			rdLines(tMeta, `{"kind":"edge","x":`+strings.Repeat(`{"a":`, 10000)+"1"+strings.Repeat("}", 10000)+`,"from_span":"a","to_span":"b","duration_ns":1}`),
			`^line 2: edge: invalid JSON at column \d+: exceeded the maximum nesting depth$`, ErrInvalidJSON, 2},
		{"nesting depth 10001 in a document", "likewise in the document form, counted from the document",
			docPrefix + `"edges":[{"x":` + strings.Repeat("[", 9998) + strings.Repeat("]", 9998) + `}]}`,
			`^offset \d+: edges: invalid JSON: exceeded max depth within "/edges/0/`, ErrInvalidJSON, 0},
		{"both names of storage_bytes", "storage_bytes and its /7 name output_dense_bytes are one field: the error says so, since no name is written twice (from a clean-room check)",
			rdLines(tMetaV7, strings.Replace(tOp, `"input_storage_bytes":800`, `"input_storage_bytes":800,"storage_bytes":4,"output_dense_bytes":4`, 1)),
			`^line 2: op: output_dense_bytes: duplicate field \(also given as storage_bytes, its name before schema /7\)$`, ErrInvalidJSON, 0},
		{"both names of input_storage_bytes", "likewise input_dense_bytes, /7 name first",
			rdLines(tMetaV7, strings.Replace(tOp, `"input_storage_bytes":800`, `"input_dense_bytes":800,"input_storage_bytes":800`, 1)),
			`^line 2: op: input_storage_bytes: duplicate field \(also given as input_dense_bytes, its name since schema /7\)$`, ErrInvalidJSON, 0},
		{"both names on a tensor", "a tensor's storage_bytes has the /7 name too",
			rdLines(tMetaV7, strings.Replace(tTensor, `"requires_grad":true`, `"requires_grad":true,"output_dense_bytes":8,"storage_bytes":8`, 1)),
			`^line 2: tensor: storage_bytes: duplicate field \(also given as output_dense_bytes, its name since schema /7\)$`, ErrInvalidJSON, 0},
		{"both names in the document form", "the document form reads records with the same parser",
			docPrefix + `"ops":[` + strings.Replace(strings.Replace(tOp, `"kind":"op",`, ``, 1), `"input_storage_bytes":800`, `"input_storage_bytes":800,"output_dense_bytes":4,"storage_bytes":4`, 1) + `]}`,
			`^offset \d+: ops: storage_bytes: duplicate field \(also given as output_dense_bytes, its name since schema /7\)$`, ErrInvalidJSON, 0},
		{"one name twice", "storage_bytes given twice is a plain duplicate",
			rdLines(tMetaV7, strings.Replace(tOp, `"input_storage_bytes":800`, `"input_storage_bytes":800,"storage_bytes":4,"storage_bytes":4`, 1)),
			`^line 2: op: storage_bytes: duplicate field$`, ErrInvalidJSON, 0},
		{"exponent upper case", "1E3 is a number with an exponent like 1e3: not plain digits, not an overflow",
			rdLines(tMeta, memPrefix+`"bytes":1E3}`),
			`^line 2: memory: bytes: want an unsigned integer in plain digits, got 1E3$`, nil, 0},
		{"negative fraction", "a negative number is reported as negative first, even when it is also fractional",
			rdLines(tMeta, memPrefix+`"bytes":-1.5}`),
			`^line 2: memory: bytes: want an unsigned integer, got negative number -1.5$`, nil, 0},
		{"value of exactly 40 bytes", "a value is shortened only beyond 40 bytes: one of exactly 40 is shown whole, with no ellipsis",
			rdLines(tMeta, memPrefix+`"bytes":"`+strings.Repeat("x", 38)+`"}`),
			`^line 2: memory: bytes: want an unsigned integer, got string "x{38}"$`, nil, 0},
		{"value cut inside a character", "a long value is cut between characters, so that the message stays valid UTF-8 (é is 2 bytes: 19 of them and the quote fill 39 of the 40)",
			rdLines(tMeta, memPrefix+`"bytes":"`+strings.Repeat("é", 30)+`"}`),
			`^line 2: memory: bytes: want an unsigned integer, got string "(é){19}\.\.\.$`, nil, 0},
		{"first value cut inside a character", "a first value that is not a trace is cut between characters too, and said to be cut",
			"\"" + strings.Repeat("é", 30) + "\"",
			`^line 1: not a trace: want a JSON object or array, got string "(é){19}\.\.\.$`, ErrUnknownFormat, 0},
		{"value not UTF-8", "bytes of a value that are not UTF-8 (a top-level string the scanner has not checked) show as U+FFFD, so that the message stays valid UTF-8",
			"\"\x95\"",
			`^line 1: not a trace: want a JSON object or array, got string "\x{FFFD}"$`, ErrUnknownFormat, 0},
		{"norm a string", "norm is a number: a string is the wrong type, not a number out of range",
			rdLines(tMeta, strings.Replace(tGradient, `1.5`, `"1.5"`, 1)),
			`^line 2: gradient: norm: want a number, got string "1.5"$`, nil, 0},
		{"duplicate kind, known kind first", "kind given twice names no record kind, whichever path reads the line: as when kind is not first",
			rdLines(tMeta, strings.Replace(tMem, `"kind":"memory",`, `"kind":"memory","kind":"memory",`, 1)),
			`^line 2: kind: duplicate field$`, ErrInvalidJSON, 0},
		{"data after a record, column", "the column of the data after a record is that of its first byte, past the white space (the fused path of a known kind)",
			rdLines(tMeta, tRoot+"  "+tRootEnd),
			`^line 2: span_start: want one JSON object a line, found more after it at column ` + strconv.Itoa(len(tRoot)+3) + `$`, ErrInvalidJSON, 0},
		{"first missing field", "of several missing fields the first in field order is named: tensor_id before bytes",
			rdLines(tMeta, strings.Replace(strings.Replace(tMem, `"tensor_id":"t1",`, ``, 1), `"bytes":400,`, ``, 1)),
			`^line 2: memory: tensor_id: missing required field$`, nil, 0},
		{"doc span missing kind", "a document span's kind is named kind, also when missing (span_kind is JSONL's name)",
			docPrefix + `"spans":[{"id":"a","name":"n","measured":true,"start_ns":0,"closed":false,"duration_ns":0}]}`,
			`^offset \d+: spans: kind: missing required field$`, nil, 0},
		{"doc empty schema", "an empty schema is no supported schema",
			strings.Replace(docPrefix, `"candle-graph/trace/6"`, `""`, 1) + `"spans":[]}`,
			`^offset 10: schema: unsupported schema ""`, ErrUnsupportedSchema, 0},
		{"carriage return inside a string", "a CR not followed by LF inside a string is a control character, not the end of the line",
			rdLines(tMeta, strings.Replace(tMem, `"t1"`, "\"t\rx\"", 1)),
			`^line 2: memory: invalid JSON at column \d+: invalid control character byte 0xd in string$`, ErrInvalidJSON, 0},
		{"overflow by a carry into the high word", "18446744073709551620 is 2^64+4: the multiply by 10 overflows (high word 1), no silent wrap",
			rdLines(tMeta, memPrefix+`"bytes":18446744073709551620}`),
			`^line 2: memory: bytes: number 18446744073709551620 overflows uint64$`, nil, 0},
		{"schema then unknown keys", "a first object with schema and no deciding key is a document, whatever comes after schema",
			`{"schema":"candle-graph/trace/6","foo":1}`,
			`^offset 0: run: missing required field$`, nil, 0},
		{"plus infinity before kind", "a non-finite number with a plus sign is named whole, sign and all",
			`{"x": +inf, "kind": "meta"}`,
			`^line 1: invalid JSON before any key that tells the trace's format: \+inf is not a JSON number`, ErrUnknownFormat, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := ReadTrace(strings.NewReader(tc.input))
			if err == nil {
				t.Fatalf("%s: no error; document %+v", tc.reason, doc)
			}
			if !utf8.ValidString(err.Error()) {
				t.Errorf("%s: error %q is not valid UTF-8", tc.reason, err)
			}
			if !regexp.MustCompile(tc.want).MatchString(err.Error()) {
				t.Errorf("%s: error %q does not match %q", tc.reason, err, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("%s: error %q does not wrap %v", tc.reason, err, tc.is)
			}
			if tc.line > 0 {
				perr, ok := errors.AsType[*ParseError](err)
				if !ok {
					t.Fatalf("%s: error %q is not a *ParseError", tc.reason, err)
				}
				if perr.Line != tc.line {
					t.Errorf("%s: ParseError.Line = %d, want %d", tc.reason, perr.Line, tc.line)
				}
			}
		})
	}
}

// TestReadTraceSpanErrorsTyped checks that the span errors of ReadTrace are
// the Analyzer's: a caller that tests for *SpanError catches them from a read
// as from a stream (they were plain ParseErrors, found by a user trial).
func TestReadTraceSpanErrorsTyped(t *testing.T) {
	for _, tc := range []struct {
		name, reason, in string
		stream           bool // AnalyzeStream refuses the same input with the same *SpanError
		want             SpanError
	}{
		{"duplicate span", "a second span_start of an id", rdLines(tMeta, tRoot, tRoot), true, SpanError{"root", "duplicate span id"}},
		{"unknown span_end", "the end of a span never started", rdLines(tMeta, tRoot, tChildEnd), true, SpanError{"c", "end of an unknown span"}},
		{"second span_end", "a span ends once", rdLines(tMeta, tRoot, tRootEnd, tRootEnd), true, SpanError{"root", "span ended twice"}},
		{"document duplicate span", "the document form has unique span ids too",
			`{"schema":"candle-graph/trace/6","run":{"run_id":"r","correlation_id":"c","entrypoint":"e","phase":"train","timestamp":"t","capture_step":0,"warmup_steps":0,"device":"d","timing_mode":"host","tags":{}},"spans":[` +
				`{"id":"a","name":"n","kind":"op","measured":true,"start_ns":0,"closed":false,"duration_ns":0},{"id":"a","name":"n","kind":"op","measured":true,"start_ns":0,"closed":false,"duration_ns":0}]}`,
			false, SpanError{"a", "duplicate span id"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadTrace(strings.NewReader(tc.in))
			var se *SpanError
			var pe *ParseError
			if !errors.As(err, &se) || !errors.As(err, &pe) {
				t.Fatalf("ReadTrace: %v: want a *ParseError wrapping a *SpanError (%s)", err, tc.reason)
			}
			if *se != tc.want {
				t.Errorf("ReadTrace: %+v, want %+v (%s)", *se, tc.want, tc.reason)
			}
			if !tc.stream {
				return
			}
			_, _, err = AnalyzeStream(strings.NewReader(tc.in), Options{})
			var sse *SpanError
			if !errors.As(err, &sse) || *sse != *se {
				t.Errorf("AnalyzeStream: %v, want the *SpanError %+v of ReadTrace", err, *se)
			}
		})
	}
}

// TestReadTraceSpanRecords compares the JSONL reader's span assembly with a
// reference that looks every span_start and span_end up in a map of the ids
// seen, as the reader did before it checked duplicates at the end and found
// a span_end's span among the last few opened: random starts and ends
// (nested, ended out of order or long after, ids used again, ends of
// unknown spans, second ends, lines that are not records) give the same
// spans or the same first error.
func TestReadTraceSpanRecords(t *testing.T) {
	type want struct {
		spans map[string]Span // by id, on success
		line  int             // the first error's line, 0 for none
		msg   string          // its text, "" for a line that is not a record
	}
	reference := func(lines []string, ids []string, ends []uint64) want {
		type started struct {
			line int
			span Span
		}
		seen := map[string]*started{}
		for i, l := range lines {
			line := i + 2 // after meta
			id := ids[i]
			switch {
			case strings.Contains(l, `"span_start"`):
				if s, dup := seen[id]; dup {
					return want{line: line, msg: fmt.Sprintf("line %d: span_start: id: duplicate span id %q (first on line %d)", line, id, s.line)}
				}
				seen[id] = &started{line, Span{ID: id, Name: "n", StartNs: uint64(i), Kind: SpanModule}}
			case strings.Contains(l, `"span_end"`):
				s, ok := seen[id]
				switch {
				case !ok:
					return want{line: line, msg: fmt.Sprintf("line %d: span_end: span %q: end of an unknown span", line, id)}
				case s.span.Closed:
					return want{line: line, msg: fmt.Sprintf("line %d: span_end: span %q: span ended twice", line, id)}
				}
				s.span.Closed, s.span.DurationNs = true, ends[i]
			default:
				return want{line: line}
			}
		}
		w := want{spans: map[string]Span{}}
		for id, s := range seen {
			w.spans[id] = s.span
		}
		return w
	}
	rng := rand.New(rand.NewPCG(7, 7))
	for trial := range 3000 {
		n := 1 + rng.IntN(60)
		var lines, ids []string
		var ends []uint64
		var open []string // started, in start order
		next := 0
		for len(lines) < n {
			i := len(lines)
			var l, id string
			switch r := rng.IntN(20); {
			case r < 9 || len(open) == 0: // a new span, or now and then an id used before
				id = fmt.Sprint("s", next)
				if next > 0 && rng.IntN(40) == 0 {
					id = fmt.Sprint("s", rng.IntN(next))
				} else {
					next++
				}
				open = append(open, id)
				l = fmt.Sprintf(`{"kind":"span_start","id":%q,"name":"n","start_ns":%d,"span_kind":"module","measured":false}`, id, i)
			case r < 19: // the end of the last span opened, or one opened long before, or another
				k := len(open) - 1
				switch rng.IntN(6) {
				case 0:
					k = rng.IntN(len(open))
				case 1:
					k = 0
				}
				id = open[k]
				if rng.IntN(30) > 0 {
					open = slices.Delete(open, k, k+1)
				}
				if rng.IntN(50) == 0 {
					id = fmt.Sprint("s", next+1) // never started
				}
				l = fmt.Sprintf(`{"kind":"span_end","id":%q,"duration_ns":%d}`, id, 1000+i)
			default:
				if rng.IntN(10) > 0 { // not every trial should fail
					continue
				}
				l = `{"kind":"memory"}` // no fields
			}
			lines, ids, ends = append(lines, l), append(ids, id), append(ends, uint64(1000+i))
		}
		w := reference(lines, ids, ends)
		in := rdLines(append([]string{tMeta}, lines...)...)
		doc, err := ReadTrace(strings.NewReader(in))
		if w.line != 0 {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Line != w.line || w.msg != "" && err.Error() != w.msg {
				t.Fatalf("trial %d: error %v, want one on line %d %q\ninput:\n%s", trial, err, w.line, w.msg, in)
			}
			continue
		}
		if err != nil {
			t.Fatalf("trial %d: %v\ninput:\n%s", trial, err, in)
		}
		got := map[string]Span{}
		for _, s := range doc.Spans {
			got[s.ID] = s
		}
		if diff := cmp.Diff(w.spans, got); diff != "" || !slices.IsSortedFunc(doc.Spans, func(a, b Span) int { return strings.Compare(a.ID, b.ID) }) {
			t.Fatalf("trial %d: spans (-reference +ReadTrace), or not sorted by id:\n%s\ninput:\n%s", trial, diff, in)
		}
	}
}

// TestReadTraceDocOffset checks that a document error names the byte offset
// of the value at fault, also after a gzip layer.
func TestReadTraceDocOffset(t *testing.T) {
	doc := `{"schema":"candle-graph/trace/6","run":{"run_id":"r","correlation_id":"c","entrypoint":"e","phase":"train","timestamp":"t","capture_step":0,"warmup_steps":0,"device":"d","timing_mode":"host","tags":{}},` +
		"\n  " + `"memory":[{"timestamp_ns":1,"tensor_id":"t","span_id":"s","device":"d","bytes":1,"action":"alloc","shape":[],"dtype":"u8"},` +
		"\n  " + `{"timestamp_ns":1,"tensor_id":"t","span_id":"s","device":"d","bytes":1,"action":"freee","shape":[],"dtype":"u8"}]}`
	want := int64(strings.Index(doc, `"freee"`))
	for _, in := range []string{doc, string(rdGzip(t, []byte(doc)))} {
		_, err := ReadTrace(strings.NewReader(in))
		perr, ok := errors.AsType[*ParseError](err)
		if !ok {
			t.Fatalf("error %v is not a *ParseError", err)
		}
		if perr.Offset != want || perr.Line != 0 || perr.Kind != "memory" || perr.Field != "" {
			t.Errorf("got %+v, want offset %d in memory", perr, want)
		}
		if _, ok := errors.AsType[*EnumError](err); !ok {
			t.Errorf("error %v does not wrap the *EnumError", err)
		}
	}
}

// TestReadTraceDocElementOffset: in the document form too, an error of a
// list's element or a tag names that element's offset (marked ⟨), not the
// list's or the tags' (from the check of AddJSONLine, which found the tags'
// start in JSONL).
func TestReadTraceDocElementOffset(t *testing.T) {
	run := `{"run_id":"r","correlation_id":"c","entrypoint":"e","phase":"train","timestamp":"t","capture_step":0,"warmup_steps":0,"device":"d","timing_mode":"host","tags":`
	for _, c := range []struct{ name, in, field string }{
		{"shape element", `{"schema":"candle-graph/trace/6","memory":[{"timestamp_ns":1,"tensor_id":"t","span_id":"s","device":"d","bytes":1,"action":"alloc","shape":[1, ⟨-2],"dtype":"u8"}]}`, "shape[1]"},
		{"input element", `{"schema":"candle-graph/trace/6","ops":[{"span_id":"s","op_name":"mm","inputs":["a",⟨null]}]}`, "inputs[1]"},
		{"duplicate tag", `{"schema":"candle-graph/trace/6","run":` + run + `{"a":"1","a":⟨"2"}}}`, "tags.a"},
		{"tag of another type", `{"schema":"candle-graph/trace/6","run":` + run + `{"a":⟨[]}}}`, "tags.a"},
	} {
		want := int64(strings.Index(c.in, "⟨"))
		_, err := ReadTrace(strings.NewReader(strings.Replace(c.in, "⟨", "", 1)))
		perr, ok := errors.AsType[*ParseError](err)
		if !ok {
			t.Fatalf("%s: error %v is not a *ParseError", c.name, err)
		}
		if perr.Offset != want || perr.Field != c.field {
			t.Errorf("%s: %v: Offset %d, Field %q; want %d, %q", c.name, err, perr.Offset, perr.Field, want, c.field)
		}
	}
}

// TestReadTraceChrome checks that Chrome traces are handed to ReadChromeTrace.
func TestReadTraceChrome(t *testing.T) {
	for _, in := range []string{`{"schemaVersion":1,"deviceProperties":[{"id":0}],"traceEvents":[]}`, `[]`, ` [{"ph":"X","name":"a","ts":1,"dur":1}]`} {
		got, err := ReadTrace(strings.NewReader(in))
		want, werr := ReadChromeTrace(strings.NewReader(in))
		if (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() {
			t.Errorf("%s: ReadTrace error %v, ReadChromeTrace error %v", in, err, werr)
		}
		if errors.Is(err, ErrUnknownFormat) {
			t.Errorf("%s: detected as unknown format", in)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: (-ReadChromeTrace +ReadTrace):\n%s", in, diff)
		}
	}
}

// TestReadTraceFile checks the path in errors and reading a gzip file.
func TestReadTraceFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.trace") // the name says nothing of the format
	if err := os.WriteFile(good, rdGzip(t, []byte(rdFullTrace())), 0o644); err != nil {
		t.Fatal(err)
	}
	doc, err := ReadTraceFile(good)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rdFullDoc(), doc); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte(rdLines(tMeta, memPrefix+`"bytes":-1}`)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = ReadTraceFile(bad)
	if want := bad + ": line 2: memory: bytes: "; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %v, want prefix %q", err, want)
	}
	if perr, ok := errors.AsType[*ParseError](err); !ok || perr.Path != bad {
		t.Errorf("error %v: want a *ParseError with Path %q", err, bad)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err = ReadTraceFile(empty); !errors.Is(err, ErrEmptyTrace) || !strings.HasPrefix(err.Error(), empty+": ") {
		t.Errorf("empty file: error %v, want ErrEmptyTrace prefixed with the path", err)
	}
	if _, err = ReadTraceFile(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: error %v, want os.ErrNotExist", err)
	}
	// A directory is not a trace at fault: reading it fails at offset 0.
	_, err = ReadTraceFile(dir)
	if perr, ok := errors.AsType[*fs.PathError](err); !ok || perr.Path != dir || err.Error() != "read "+dir+": is a directory, not a trace file" {
		t.Errorf("directory: error %v, want a *fs.PathError naming it a directory", err)
	}
}

// rdErrReader returns data and then err.
type rdErrReader struct {
	data []byte
	err  error
}

func (r *rdErrReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

// TestReadTraceDocumentDuplicateNames: the document form finds names given
// twice where the JSONL form does (its own keys, an element's fields, tags)
// and, as JSONL, ignores them inside the values of ignored fields.
func TestReadTraceDocumentDuplicateNames(t *testing.T) {
	pre := `{"schema":"candle-graph/trace/6","run":{"run_id":"r","correlation_id":"c","entrypoint":"e","phase":"train","timestamp":"t","capture_step":0,"warmup_steps":0,"device":"d","timing_mode":"host","tags":{}},`
	mem := `{"timestamp_ns":1,"tensor_id":"t","span_id":"","device":"d","bytes":1,"action":"alloc","shape":[],"dtype":"u8",` + `"x":{"a":1,"a":2}}`
	doc, err := ReadTrace(strings.NewReader(pre + `"memory":[` + mem + `]}`))
	if err != nil {
		t.Fatalf("a name given twice inside an ignored field: %v", err)
	}
	jsonl, err := ReadTrace(strings.NewReader(rdLines(`{"kind":"meta","schema":"candle-graph/trace/6","run_id":"r","correlation_id":"c","entrypoint":"e","phase":"train","timestamp":"t","capture_step":0,"warmup_steps":0,"device":"d","timing_mode":"host","tags":{}}`,
		`{"kind":"memory",`+mem[1:])))
	if err != nil {
		t.Fatalf("JSONL: %v", err)
	}
	if d := cmp.Diff(jsonl, doc); d != "" {
		t.Errorf("the two forms differ (-jsonl +document):\n%s", d)
	}
	for _, c := range []struct{ name, in, at, want string }{
		{"section twice", pre + `"memory":[], "memory":[]}`, `"memory"`, "memory: duplicate field"},
		{"unknown key twice", pre + `"zz":1, "zz":2}`, `"zz":2`, "zz: duplicate field"},
	} {
		_, err := ReadTrace(strings.NewReader(c.in))
		want := fmt.Sprintf("offset %d: %s", strings.LastIndex(c.in, c.at), c.want)
		if err == nil || err.Error() != want || !errors.Is(err, ErrInvalidJSON) {
			t.Errorf("%s: error %v, want %q wrapping ErrInvalidJSON", c.name, err, want)
		}
	}
	for _, c := range []struct{ name, in, want string }{
		{"element field twice", pre + `"memory":[` + strings.Replace(mem, `"dtype":"u8"`, `"dtype":"u8","bytes":2`, 1) + `]}`, `^offset \d+: memory: bytes: duplicate field$`},
		{"run field twice", strings.Replace(pre, `"run_id":"r"`, `"run_id":"r","run_id":"s"`, 1) + `"memory":[]}`, `^offset \d+: run: run_id: duplicate field$`},
		{"tag twice", strings.Replace(pre, `"tags":{}`, `"tags":{"a":"b","a":"c"}`, 1) + `"memory":[]}`, `^offset \d+: run: tags.a: duplicate field$`},
	} {
		if _, err := ReadTrace(strings.NewReader(c.in)); err == nil || !regexp.MustCompile(c.want).MatchString(err.Error()) {
			t.Errorf("%s: error %v, want one matching %s", c.name, err, c.want)
		}
	}
}

// TestReadTraceDetectionLenient: deciding the format does not apply rules
// that belong to a format's reader. A name given twice, or a string that is
// not UTF-8, in a member read before the deciding one, is left to the
// reader of the format: ignored where that reader ignores it.
func TestReadTraceDetectionLenient(t *testing.T) {
	run := `"run":{"run_id":"r","correlation_id":"c","entrypoint":"e","phase":"train","timestamp":"t","capture_step":0,"warmup_steps":0,"device":"d","timing_mode":"host","tags":{}}`
	for _, c := range []struct{ name, in string }{
		{"document", `{"schema":"candle-graph/trace/6","foo":{"a":1,"a":2},` + run + `}`},
		{"JSONL meta", rdLines(`{"x":{"a":1,"a":2},"kind":"meta","schema":"candle-graph/trace/6","run_id":"r","correlation_id":"c","entrypoint":"e","phase":"train","timestamp":"t","capture_step":0,"warmup_steps":0,"device":"d","timing_mode":"host","tags":{}}`)},
		{"Chrome, name twice", `{"foo":{"a":1,"a":2},"traceEvents":[]}`},
		{"Chrome, not UTF-8", "{\"foo\":\"\xff\",\"traceEvents\":[]}"},
	} {
		if _, err := ReadTrace(strings.NewReader(c.in)); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	// The document's own rule: its keys are given once, reported at the
	// offset of the second, in the document's terms.
	in := `{"schema":"candle-graph/trace/6","schema":"candle-graph/trace/6",` + run + `}`
	_, err := ReadTrace(strings.NewReader(in))
	if want := fmt.Sprintf("offset %d: schema: duplicate field", strings.LastIndex(in, `"schema"`)); err == nil || err.Error() != want {
		t.Errorf("schema twice: error %v, want %q", err, want)
	}
}

// TestReadTraceEscapedKind: a kind written with escapes is that kind, not
// an unknown one to skip.
func TestReadTraceEscapedKind(t *testing.T) {
	plain, err := ReadTrace(strings.NewReader(rdLines(tMeta, tRoot)))
	if err != nil {
		t.Fatal(err)
	}
	esc, err := ReadTrace(strings.NewReader(rdLines(tMeta, strings.Replace(tRoot, `"span_start"`, `"span\u005fstart"`, 1))))
	if err != nil {
		t.Fatal(err)
	}
	if len(esc.Spans) != 1 {
		t.Fatalf("spans %+v: the escaped span_start was skipped", esc.Spans)
	}
	if d := cmp.Diff(plain, esc); d != "" {
		t.Errorf("escaped kind (-plain +escaped):\n%s", d)
	}
}

// TestReadTraceIOError checks that I/O errors are wrapped, with the line.
func TestReadTraceIOError(t *testing.T) {
	boom := errors.New("boom")
	_, err := ReadTrace(&rdErrReader{data: []byte(rdLines(tMeta, tRoot)), err: boom})
	if !errors.Is(err, boom) {
		t.Fatalf("error %v does not wrap the reader's error", err)
	}
	if perr, ok := errors.AsType[*ParseError](err); !ok || perr.Line != 3 {
		t.Errorf("error %v: want a *ParseError on line 3", err)
	}
	// The error comes inside a line longer than the buffer, of white space
	// so far, which is not held: it is still that line's.
	_, err = ReadTrace(&rdErrReader{data: []byte(tMeta + "\n" + strings.Repeat(" ", 300<<10)), err: boom})
	if perr, ok := errors.AsType[*ParseError](err); !ok || perr.Line != 2 || !errors.Is(err, boom) {
		t.Errorf("error %v: want a *ParseError on line 2 wrapping the reader's", err)
	}
	_, err = ReadTrace(&rdErrReader{data: []byte(`{"schema":"candle-graph/trace/6","run":{`), err: boom})
	if !errors.Is(err, boom) {
		t.Errorf("document: error %v does not wrap the reader's error", err)
	}
	// A read that fails anywhere in a document is a read error, not invalid
	// JSON, though the decoder reports it as a syntax error.
	docJSON, err := json.Marshal(rdFullDoc())
	if err != nil {
		t.Fatal(err)
	}
	for n := 1; n < len(docJSON); n += 7 {
		_, err := ReadTrace(&rdErrReader{data: docJSON[:n], err: boom})
		if !errors.Is(err, boom) || errors.Is(err, ErrInvalidJSON) || errors.Is(err, ErrEmptyTrace) {
			t.Errorf("document cut at %d: error %v: want the reader's error, not invalid JSON", n, err)
		}
	}
	// A gzip stream cut anywhere, even before its first byte of content,
	// is a truncated stream, not an empty trace.
	gz := rdGzip(t, []byte(rdFullTrace()))
	for n := 10; n < len(gz); n += 5 {
		_, err := ReadTrace(bytes.NewReader(gz[:n]))
		if !errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, ErrEmptyTrace) || !strings.Contains(err.Error(), "gzip") {
			t.Errorf("gzip cut at %d of %d: error %v: want a truncated gzip stream", n, len(gz), err)
		}
	}
}

// TestReadTraceInterned checks that repeated strings and shapes share memory.
func TestReadTraceInterned(t *testing.T) {
	doc, err := ReadTrace(strings.NewReader(rdFullTrace()))
	if err != nil {
		t.Fatal(err)
	}
	a, b := doc.Memory[0], doc.Memory[1]
	if rdStrData(a.Device) != rdStrData(b.Device) || rdStrData(a.DType) != rdStrData(doc.Ops[0].DType) {
		t.Error("device / dtype strings are not shared")
	}
	if &a.Shape[0] != &b.Shape[0] {
		t.Error("equal shapes are not shared")
	}
}

// TestReadTraceInternedEscapes: interning goes by the decoded string. A
// raw value that reads like an escape (`a\\u0041`, the text a\u0041) and
// one with the escape (`a\u0041`, the text aA) are two strings; the raw
// form of one is never taken for the other.
func TestReadTraceInternedEscapes(t *testing.T) {
	rec := func(ts int, id, dev string) string {
		return fmt.Sprintf(`{"kind":"memory","timestamp_ns":%d,"tensor_id":%q,"span_id":"","device":"%s","bytes":64,"action":"alloc","shape":[16],"dtype":"f32","category":"activation"}`, ts, id, dev)
	}
	meta := `{"kind":"meta","schema":"candle-graph/trace/6","run_id":"r","correlation_id":"c","entrypoint":"e","phase":"train","timestamp":"t","capture_step":0,"warmup_steps":0,"device":"d","timing_mode":"host","tags":{}}`
	for _, order := range [][2]string{{`a\\u0041`, `a\u0041`}, {`a\u0041`, `a\\u0041`}} {
		doc, err := ReadTrace(strings.NewReader(meta + "\n" + rec(1, "t1", order[0]) + "\n" + rec(2, "t2", order[1]) + "\n" + rec(3, "t3", order[0]) + "\n"))
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{`a\\u0041`: `a\u0041`, `a\u0041`: "aA"}
		for i, raw := range []string{order[0], order[1], order[0]} {
			if got := doc.Memory[i].Device; got != want[raw] {
				t.Errorf("order %q: record %d device %q, want %q", order, i, got, want[raw])
			}
		}
	}
}

func rdStrData(s string) *byte { return unsafe.StringData(s) }

// updateGolden reports whether -update was given (the flag is defined by
// another test file or here).
func rdUpdate() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// TestReadGolden runs testdata/read/*.txtar: each holds a one-line reason
// (the comment), an input (input.jsonl or input.json; input.gz.hex for a
// gzip stream written as hex is not used) and either want.json (the
// document, as WriteJSON writes it) or error (a regexp of the error).
// -update rewrites want.json.
func TestReadGolden(t *testing.T) {
	paths, err := filepath.Glob("testdata/read/*.txtar")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			comment, files := parseTxtar(raw)
			reason := strings.TrimSpace(string(comment))
			if reason == "" {
				t.Fatal("no reason")
			}
			input, ok := txtarGet(files, "input.jsonl")
			if !ok {
				if input, ok = txtarGet(files, "input.json"); !ok {
					t.Fatal("no input.jsonl or input.json")
				}
			}
			doc, err := ReadTrace(bytes.NewReader(input))
			if pat, ok := txtarGet(files, "error"); ok {
				if err == nil {
					t.Fatalf("%s: no error", reason)
				}
				if re := strings.TrimSpace(string(pat)); !regexp.MustCompile(re).MatchString(err.Error()) {
					t.Errorf("%s: error %q does not match %q", reason, err, re)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s: %v", reason, err)
			}
			var got bytes.Buffer
			if err := json.MarshalWrite(&got, doc, json.Deterministic(true), jsontext.WithIndent("  ")); err != nil {
				t.Fatal(err)
			}
			got.WriteByte('\n')
			want, _ := txtarGet(files, "want.json")
			if rdUpdate() {
				for i := range files {
					if files[i].Name == "want.json" {
						files[i].Data = got.Bytes()
					}
				}
				if _, ok := txtarGet(files, "want.json"); !ok {
					files = append(files, txtarFile{Name: "want.json", Data: got.Bytes()})
				}
				if err := os.WriteFile(path, formatTxtar(comment, files), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if diff := cmp.Diff(string(want), got.String()); diff != "" {
				t.Errorf("%s: document (-want +got):\n%s", reason, diff)
			}
			// the golden document read back is the same document
			back, err := ReadTrace(bytes.NewReader(want))
			if err != nil {
				t.Fatalf("reading want.json: %v", err)
			}
			if diff := cmp.Diff(doc, back); diff != "" {
				t.Errorf("want.json read back differs (-got +back):\n%s", diff)
			}
		})
	}
}

// rdKindLast rewrites every JSONL line that starts with {"kind":"X", so
// that kind is the last member instead: the decoder's fused path (kind
// first) and its collecting path (kind elsewhere) must agree.
func rdKindLast(in string) string {
	var out strings.Builder
	for _, line := range strings.SplitAfter(in, "\n") {
		body := strings.TrimRight(line, "\n")
		if m := rdKindFirst.FindStringSubmatch(body); m != nil {
			body = "{" + m[2] + `,"kind":"` + m[1] + `"}`
		}
		out.WriteString(body)
		if strings.HasSuffix(line, "\n") {
			out.WriteByte('\n')
		}
	}
	return out.String()
}

var rdKindFirst = regexp.MustCompile(`^\{"kind":\s*"([a-z_]*)",\s*(.*)\}$`)

// TestReadTraceKindPosition checks that the two decoding paths agree: on
// valid traces the documents are equal, on the error table the errors are.
func TestReadTraceKindPosition(t *testing.T) {
	var g bytes.Buffer
	if _, err := gen.Write(&g, gen.Config{Seed: 7, MemoryEvents: 2000, Devices: 2, Anomalies: true}); err != nil {
		t.Fatal(err)
	}
	for name, in := range map[string]string{"full": rdFullTrace(), "generated": g.String()} {
		moved := rdKindLast(in)
		if moved == in {
			t.Fatalf("%s: nothing moved", name)
		}
		a, err := ReadTrace(strings.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		b, err := ReadTrace(strings.NewReader(moved))
		if err != nil {
			t.Fatalf("%s with kind last: %v", name, err)
		}
		if diff := cmp.Diff(a, b); diff != "" {
			t.Errorf("%s: (-kind first +kind last):\n%s", name, diff)
		}
	}
	for _, in := range []string{
		rdLines(tMeta, strings.Replace(tMem, `"alloc"`, `"alocate"`, 1)),
		rdLines(tMeta, memPrefix+`"bytes":-5}`),
		rdLines(tMeta, memPrefix+`"bytes":-5,"kind":"memory"}`), // a duplicate kind is reported before a field error (from a review)
		rdLines(tMeta, memPrefix+`"bytes":18446744073709551616}`),
		rdLines(tMeta, strings.Replace(tMem, `"bytes":400,`, ``, 1)),
		rdLines(tMeta, strings.Replace(tMem, `"bytes":400`, `"bytes":400,"bytes":500`, 1)),
		rdLines(tMeta, tRoot, tMem, tRoot),
		rdLines(tRoot, tMeta),
		rdLines(tMeta, tRoot, tMeta),
		rdLines(strings.Replace(tMeta, "trace/6", "trace/5", 1)),
		rdLines(tMeta, `{"kind":"unknown","a":1}`, tRoot),
	} {
		_, errA := ReadTrace(strings.NewReader(in))
		_, errB := ReadTrace(strings.NewReader(rdKindLast(in)))
		if (errA == nil) != (errB == nil) || errA != nil && errA.Error() != errB.Error() {
			t.Errorf("%q:\nkind first: %v\nkind last:  %v", in, errA, errB)
		}
	}
}

// TestReadTraceKindFaultsAnyPosition: a line's faults around "kind" give
// one error wherever kind sits (the fused path reads a kind that comes
// first, the other path the rest): text after the object first, named by
// the record's kind when it has one; then a duplicate kind, also after a
// first kind that is no kind (from a review).
func TestReadTraceKindFaultsAnyPosition(t *testing.T) {
	for _, c := range []struct {
		name, reason string
		lines        []string // the same faults, kind in different places
		want         string   // a regular expression
	}{
		{"text after", "named by the kind", []string{`{"kind":"span_end","id":"x","duration_ns":1} x`, `{"id":"x","kind":"span_end","duration_ns":1} x`, `{"id":"x","duration_ns":1,"kind":"span_end"} x`},
			`^line 2: span_end: want one JSON object a line, found more after it at column 46$`},
		{"duplicate kind, text after", "the text after first; two kinds name no record kind", []string{`{"kind":"memory","kind":"op"} x`, `{"a":1,"kind":"memory","kind":"op"} x`},
			`^line 2: want one JSON object a line, found more after it at column \d+$`},
		{"kind not a string, text after", "no kind to name", []string{`{"kind":7} x`, `{"a":1,"kind":7} x`},
			`^line 2: want one JSON object a line, found more after it at column \d+$`},
		{"kind not a string, then again", "a duplicate kind outranks a bad first one", []string{`{"kind":7,"kind":"memory"}`, `{"a":1,"kind":7,"kind":"memory"}`, `{"kind":"memory","kind":7}`},
			`^line 2: kind: duplicate field$`},
		{"skipped kind, a duplicate, then kind again", "the second kind comes before the other duplicate (from a review: the skipped record's check found the other first)",
			[]string{`{"kind":"zzz","a":1,"a":2,"kind":"x"}`, `{"b":0,"kind":"zzz","a":1,"a":2,"kind":"x"}`,
				`{"kind":"zzz",` + strings.Repeat(`"f":0,`, 20) + `"kind":"x"}`, `{"b":0,"kind":"zzz",` + strings.Repeat(`"f":0,`, 20) + `"kind":"x"}`},
			`^line 2: kind: duplicate field$`},
		{"duplicate kind, then a syntax error", "the syntax error first, naming no kind, as the text after the object",
			[]string{`{"kind":"memory","kind":"memory",}`, `{"a":1,"kind":"memory","kind":"memory",}`},
			`^line 2: invalid JSON at column \d+: `},
		{"kind escaped, then again", "an escaped kind is read on the other path: the same error", []string{`{"kind":"\u006dx","kind":"memory"}`, `{"a":1,"kind":"me\u006dory","kind":"memory"}`},
			`^line 2: kind: duplicate field$`},
	} {
		for _, l := range c.lines {
			_, err := ReadTrace(strings.NewReader(rdLines(tMeta, l)))
			if err == nil || !regexp.MustCompile(c.want).MatchString(err.Error()) {
				t.Errorf("%s: %s: error %v, want one matching %s (%s)", c.name, l, err, c.want, c.reason)
			}
		}
	}
}

// TestReadTraceFieldErrorThenSyntax: a line with a bad field and also bad
// JSON (cut short, text after the object, a syntax error after the field)
// gives the error of the JSON, which wraps ErrInvalidJSON, wherever "kind"
// sits in it. From a review: with "kind" first, the fused path stopped at
// the field and never saw the rest.
func TestReadTraceFieldErrorThenSyntax(t *testing.T) {
	cases := []struct {
		name, reason     string
		kindFirst, other string
	}{
		{"cut short", "a truncated line is reported as truncated",
			`{"kind":"memory","bytes":-5,"timestamp_ns":1,"dev`, `{"bytes":-5,"kind":"memory","timestamp_ns":1,"dev`},
		{"text after", "text after the object is reported",
			memPrefix + `"bytes":-5} garbage`, `{"bytes":-5,` + memPrefix[1:len(memPrefix)-1] + `} garbage`},
		{"syntax after", "a syntax error after the field is reported",
			`{"kind":"memory","bytes":-5,,}`, `{"bytes":-5,"kind":"memory",,}`},
		{"duplicate kind, text after", "a duplicate kind is a field error too",
			`{"kind":"memory","kind":"memory","a":1} x`, `{"a":1,"kind":"memory","kind":"memory"} x`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, errA := ReadTrace(strings.NewReader(rdLines(tMeta, c.kindFirst)))
			_, errB := ReadTrace(strings.NewReader(rdLines(tMeta, c.other)))
			if !errors.Is(errA, ErrInvalidJSON) || !errors.Is(errB, ErrInvalidJSON) {
				t.Fatalf("%s: want errors wrapping ErrInvalidJSON:\nkind first: %v\nother:      %v", c.reason, errA, errB)
			}
			// With kind first, the error may name the record's kind: the
			// rest must agree.
			var pa, pb *ParseError
			if !errors.As(errA, &pa) || !errors.As(errB, &pb) || pa.Line != pb.Line || pa.Field != pb.Field || pa.Msg != pb.Msg {
				t.Errorf("%s: the errors differ:\nkind first: %v\nother:      %v", c.reason, errA, errB)
			}
			_, _, errS := AnalyzeStream(strings.NewReader(rdLines(tMeta, c.kindFirst)), Options{})
			if errS == nil || errS.Error() != errA.Error() {
				t.Errorf("AnalyzeStream: %v, want %v", errS, errA)
			}
		})
	}
}

// TestReadTracePrefaultChangesNothing: with sections big enough for the
// helper that maps chunks in ahead (internal/prefault) to start, both
// forms read the same document with it (GOMAXPROCS 2) and without it
// (GOMAXPROCS 1); a read that fails after such chunks still fails the same.
func TestReadTracePrefaultChangesNothing(t *testing.T) {
	var jsonl bytes.Buffer
	if _, err := gen.Write(&jsonl, gen.Config{Seed: 5, MemoryEvents: 40_000, Devices: 2, Spans: 5_000}); err != nil {
		t.Fatal(err)
	}
	first, err := ReadTrace(bytes.NewReader(jsonl.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	// The memory section's chunks double up to 1<<15 events: the last one
	// made is that big.
	if n := 1 << 15 * int(unsafe.Sizeof(MemoryEvent{})); len(first.Memory) < 1<<15 || n < prefault.MinBytes {
		t.Fatalf("%d memory events, chunks of %d bytes: too few for the helper to start", len(first.Memory), n)
	}
	var doc bytes.Buffer
	if err := first.WriteJSON(&doc); err != nil {
		t.Fatal(err)
	}
	broken := append(slices.Clip(jsonl.Bytes()), "{\"kind\": \"memory\"\n"...)
	for _, c := range []struct {
		name, reason string
		in           []byte
	}{
		{"jsonl", "the JSONL reader's sections", jsonl.Bytes()},
		{"document", "the document reader's sections", doc.Bytes()},
		{"broken", "an error after full chunks: the helpers are stopped on the way out", broken},
	} {
		read := func(procs int) (*TraceDocument, string) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			d, err := ReadTrace(bytes.NewReader(c.in))
			if err != nil {
				return d, err.Error()
			}
			return d, ""
		}
		before := prefault.Pending()
		with, withErr := read(2)
		without, withoutErr := read(1)
		// Every helper started is stopped by the time ReadTrace returns
		// (from a test audit: an error path that left the last chunk's
		// helper running, and its huge-page advice in place, passed).
		if n := prefault.Pending() - before; n != 0 {
			t.Errorf("%s (%s): %d helpers not stopped after the reads", c.name, c.reason, n)
		}
		if withErr != withoutErr {
			t.Errorf("%s (%s): error %q with the helper, %q without", c.name, c.reason, withErr, withoutErr)
		}
		if !cmp.Equal(without, with) {
			diff := cmp.Diff(without, with)
			t.Errorf("%s (%s): the document differs with the helper (-without +with):\n%s", c.name, c.reason, diff[:min(len(diff), 2000)])
		}
		if c.name != "broken" && withErr != "" {
			t.Errorf("%s: %s", c.name, withErr)
		}
		if c.name == "broken" && withErr == "" {
			t.Errorf("%s: no error", c.name)
		}
	}
}

// TestChunkedReserve: a reserved section keeps its values in order, and
// slice hands out the reserved block itself only when the count ends
// within 1/16 of it (or 64 values); otherwise it copies, leaving no room.
func TestChunkedReserve(t *testing.T) {
	defer func(old int) { maxChunk = old }(maxChunk)
	maxChunk = 8
	for _, c := range []struct {
		name, reason string
		before       int // values added before reserve
		total        int // reserve's argument
		n            int // values added in all
		wantBlock    bool
		wantShared   bool // slice returns the reserved block (when there is one)
	}{
		{"exact", "the estimate was right: no copy", 20, 2000, 2000, true, true},
		{"within 1/16", "120 values of slack, within 2000/16 = 125: kept", 20, 2000, 1880, true, true},
		{"over 1/16", "200 values of slack: copied out to the exact length", 20, 2000, 1800, true, false},
		{"overflow", "the estimate was low: chunks take the rest, then one copy", 20, 2000, 2500, true, false},
		{"at the start", "nothing to move into the block", 0, 100, 100, true, true},
		{"one chunk", "a chunk or less is left to the chunks", 3, 5, 8, false, false},
		{"below the count", "reserving fewer than are there does nothing", 50, 40, 60, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var ch chunked[int]
			i := 0
			for ; i < c.before; i++ {
				ch.add(&i)
			}
			ch.reserve(c.total)
			block := ch.cur
			if got := cap(block) == c.total; got != c.wantBlock {
				t.Fatalf("%s: reserve(%d) after %d values: cur has cap %d", c.reason, c.total, c.before, cap(block))
			}
			for ; i < c.n; i++ {
				ch.add(&i)
			}
			got := ch.slice()
			if want := intsUpTo(c.n); !slices.Equal(got, want) {
				t.Fatalf("%s: slice() = %d values, not 0..%d in order", c.reason, len(got), c.n-1)
			}
			if cap(got) != len(got) {
				t.Errorf("%s: slice() has cap %d for %d values", c.reason, cap(got), len(got))
			}
			if shared := unsafe.SliceData(got) == unsafe.SliceData(block); c.wantBlock && shared != c.wantShared {
				t.Errorf("%s: slice() returned the reserved block: %v, want %v", c.reason, shared, c.wantShared)
			}
		})
	}
}

func intsUpTo(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// TestExpect: a section is expected to go on growing at the rate it grew,
// with 1/32 to spare, and never to take more memory than the input left.
func TestExpect(t *testing.T) {
	for _, c := range []struct {
		name             string
		n, grown         int
		over, rest, elem int64
		want             int
		reason           string
	}{
		{"not growing", 100, 0, 1000, 15000, 8, 100, "a section that did not grow is left to its chunks"},
		{"nothing left", 100, 50, 1000, 0, 8, 100, "the input is all read"},
		{"nothing read", 100, 50, 0, 15000, 8, 100, "no rate to go by"},
		{"same rate", 100, 50, 1000, 15000, 8, 873, "750 more at the same rate, plus 23"},
		{"bounded", 10, 1000, 1000, 100_000, 100, 1010, "103125 more at that rate would take 10 MB for 100 kB of input"},
	} {
		if got := expect(c.n, c.grown, c.over, c.rest, c.elem); got != c.want {
			t.Errorf("%s: expect(%d, %d, %d, %d, %d) = %d, want %d (%s)", c.name, c.n, c.grown, c.over, c.rest, c.elem, got, c.want, c.reason)
		}
	}
}

// TestSizer: the sizer notes the counts at a thirty-second of the input and
// reserves at a sixteenth, at the rate of growth in between: a preamble
// before the first step does not count.
func TestSizer(t *testing.T) {
	defer func(old int) { maxChunk = old }(maxChunk)
	maxChunk = 8
	if z := newSizer(-1); z.at != -1 {
		t.Errorf("unknown size: the sizer acts at %d, want never (-1)", z.at)
	}
	if z := newSizer(0); z.at != -1 {
		t.Errorf("size 0: the sizer acts at %d, want never (-1)", z.at)
	}
	var sec sections
	var mem MemoryEvent
	var op Op
	addMem := func(n int) {
		for range n {
			sec.mem.add(&mem)
		}
	}
	addMem(40) // the preamble: 40 events in the first 10 kB
	sec.ops.add(&op)
	z := newSizer(320_000)
	if z.at != 10_000 {
		t.Fatalf("size 320000: first step at %d, want 10000", z.at)
	}
	z.step(&sec, 10_000)
	if z.at != 20_000 || cap(sec.mem.cur) == 0 || sec.mem.full != nil && cap(sec.mem.cur) > maxChunk {
		t.Fatalf("after noting: next step at %d (want 20000), or a section was reserved early", z.at)
	}
	addMem(50) // 50 events in the next 10 kB
	z.step(&sec, 20_000)
	// 90 + 50/10000 × 300000 × 33/32 = 90 + 1546.875
	if got := cap(sec.mem.cur); got != 1636 {
		t.Errorf("memory section reserved for %d events, want 1636 (the rate after the preamble)", got)
	}
	if got := cap(sec.ops.cur); got > maxChunk {
		t.Errorf("ops section, which did not grow, reserved for %d", got)
	}
	if z.at != -1 {
		t.Errorf("after reserving: next step at %d, want never (-1)", z.at)
	}
}

// TestInputSize: the size of what is left to read, from readers that tell
// it without being read; -1 from the others.
func TestInputSize(t *testing.T) {
	data := []byte("0123456789abcdef")
	read := bytes.NewReader(data)
	if _, err := read.Read(make([]byte, 6)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Seek(4, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	for _, c := range []struct {
		name string
		r    io.Reader
		want int64
	}{
		{"bytes.Reader", bytes.NewReader(data), 16},
		{"bytes.Reader partly read", read, 10},
		{"strings.Reader", strings.NewReader("abc"), 3},
		{"bytes.Buffer", bytes.NewBuffer(data), 16},
		{"file at offset 4", f, 12},
		{"pipe", pr, -1},
		{"a plain reader", io.MultiReader(bytes.NewReader(data)), -1},
	} {
		if got := inputSize(c.r); got != c.want {
			t.Errorf("%s: inputSize = %d, want %d", c.name, got, c.want)
		}
	}
}

// TestReadTraceSizeHint: the input's size only sizes the sections. Right,
// too small, too big or unknown, it gives the same document, or the same
// error; so does ReadTrace from a file, a bytes.Reader and a plain reader.
func TestReadTraceSizeHint(t *testing.T) {
	defer func(old int) { maxChunk = old }(maxChunk)
	maxChunk = 16 // so that small sections are reserved
	var g bytes.Buffer
	if _, err := gen.Write(&g, gen.Config{Seed: 13, MemoryEvents: 3000, Devices: 2, Anomalies: true, SampleEvery: 5}); err != nil {
		t.Fatal(err)
	}
	broken := append(slices.Clip(g.Bytes()), "{\"kind\": \"memory\"\n"...)
	for _, in := range []struct {
		name string
		data []byte
	}{{"generated", g.Bytes()}, {"broken at the end", broken}, {"full", []byte(rdFullTrace())}} {
		size := int64(len(in.data))
		want, wantErr := readJSONL(bytes.NewReader(in.data), -1, nil)
		for _, c := range []struct {
			name   string
			size   int64
			reason string
		}{
			{"exact", size, "the sections are reserved a sixteenth in"},
			{"too small", size / 5, "reserved early and too small: chunks take the rest"},
			{"too big", size * 5, "reserved too big: copied out at the end"},
			{"one byte", 1, "reserved after the first record, before any section has a value"},
		} {
			got, err := readJSONL(bytes.NewReader(in.data), c.size, nil)
			if fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Errorf("%s, size %s (%s): error %v, want %v", in.name, c.name, c.reason, err, wantErr)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s, size %s (%s): (-unknown size +this size):\n%s", in.name, c.name, c.reason, diff[:min(len(diff), 2000)])
			}
		}
		path := filepath.Join(t.TempDir(), "trace")
		if err := os.WriteFile(path, in.data, 0o644); err != nil {
			t.Fatal(err)
		}
		gz := rdGzip(t, in.data)
		gzPath := path + ".gz"
		if err := os.WriteFile(gzPath, gz, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, r := range []struct {
			name string
			read func() (*TraceDocument, error)
		}{
			{"ReadTraceFile", func() (*TraceDocument, error) { return ReadTraceFile(path) }},
			{"bytes.Reader", func() (*TraceDocument, error) { return ReadTrace(bytes.NewReader(in.data)) }},
			{"plain reader", func() (*TraceDocument, error) { return ReadTrace(io.MultiReader(bytes.NewReader(in.data))) }},
			{"ReadTraceFile of gzip", func() (*TraceDocument, error) { return ReadTraceFile(gzPath) }},
			{"gzip in a bytes.Reader", func() (*TraceDocument, error) { return ReadTrace(bytes.NewReader(gz)) }},
			{"gzip in a plain reader", func() (*TraceDocument, error) { return ReadTrace(io.MultiReader(bytes.NewReader(gz))) }},
		} {
			got, err := r.read()
			if (err == nil) != (wantErr == nil) {
				t.Errorf("%s, %s: error %v, want %v", in.name, r.name, err, wantErr)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s, %s: (-want +got):\n%s", in.name, r.name, diff[:min(len(diff), 2000)])
			}
		}
	}
}

// TestReadTraceSizeHintSavesCopy: told the input's size, the reader puts
// the memory section of a trace whose records come at a steady rate in one
// block handed out as is, and so allocates less than without the size, by
// at least half that section, which it then copies at the end.
func TestReadTraceSizeHintSavesCopy(t *testing.T) {
	defer func(old int) { maxChunk = old }(maxChunk)
	maxChunk = 64
	lines := []string{tMeta, tRoot}
	for range 20_000 {
		lines = append(lines, tMem)
	}
	in := []byte(rdLines(append(lines, tRootEnd)...))
	allocated := func(size int64) (uint64, *TraceDocument) {
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		doc, err := readJSONL(bytes.NewReader(in), size, nil)
		runtime.ReadMemStats(&m1)
		if err != nil {
			t.Fatal(err)
		}
		return m1.TotalAlloc - m0.TotalAlloc, doc
	}
	unknown, doc := allocated(-1)
	known, _ := allocated(int64(len(in)))
	section := uint64(len(doc.Memory)) * uint64(unsafe.Sizeof(MemoryEvent{}))
	if known+section/2 > unknown {
		t.Errorf("allocated %d bytes with the size, %d without: want a saving of at least half the memory section (%d bytes)", known, unknown, section)
	}
}

// TestReadTraceGzipSizeSavesCopy: told the compressed input's size, the
// reader estimates the decompressed size from the ratio so far, and so
// spares the memory section's copy of a gzipped trace too.
func TestReadTraceGzipSizeSavesCopy(t *testing.T) {
	// Records at a steady rate, as in TestReadTraceSizeHintSavesCopy, but
	// with ids and sizes that do not repeat, so that they compress as a
	// trace does (a few times) rather than to nothing.
	rng := rand.New(rand.NewPCG(5, 5))
	lines := []string{tMeta, tRoot}
	for i := range 40_000 {
		lines = append(lines, fmt.Sprintf(`{"kind":"memory","timestamp_ns":%d,"tensor_id":"t%d","span_id":"root","device":"cuda:0","bytes":%d,"action":"alloc","shape":[4],"dtype":"f32","category":"activation"}`,
			i, rng.Uint64(), rng.Uint32()))
	}
	gz := rdGzip(t, []byte(rdLines(append(lines, tRootEnd)...)))
	unknown, doc := allocatedByRead(t, io.MultiReader(bytes.NewReader(gz)))
	known, _ := allocatedByRead(t, bytes.NewReader(gz))
	section := uint64(len(doc.Memory)) * uint64(unsafe.Sizeof(MemoryEvent{}))
	if known+section/2 > unknown {
		t.Errorf("allocated %d bytes with the compressed size (%d bytes), %d without: want a saving of at least half the memory section (%d bytes)", known, len(gz), unknown, section)
	}
}

// allocatedByRead returns the bytes ReadTrace of r allocated, and the
// document it read.
func allocatedByRead(t *testing.T, r io.Reader) (uint64, *TraceDocument) {
	t.Helper()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	doc, err := ReadTrace(r)
	runtime.ReadMemStats(&m1)
	if err != nil {
		t.Fatal(err)
	}
	return m1.TotalAlloc - m0.TotalAlloc, doc
}

// TestReadTraceGzipBombSizing reads a gzip stream whose start compresses a
// thousand times over (blank lines, then one record repeated) and whose rest
// barely compresses: estimated from its start, its size was taken for a
// thousand times what it is, and the sections were reserved for records that
// never came (a 6 MB file ran out of memory; found by a resource review).
// With the compressed size known, a wrong estimate may cost no more than
// the memory of maxRatio times that size (before: 4 times as much as without
// it, 100 MB against 24; now 46).
func TestReadTraceGzipBombSizing(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 24 MB of JSONL")
	}
	var b bytes.Buffer
	b.WriteString(tMeta + "\n" + tRoot + "\n")
	blank := strings.Repeat(" ", 1<<16-1) + "\n"
	for range 128 { // 8 MB
		b.WriteString(blank)
	}
	rec := `{"kind":"memory","timestamp_ns":0,"tensor_id":"t","span_id":"root","device":"cuda:0","bytes":8,"action":"alloc","shape":[8],"dtype":"u8","category":"activation"}` + "\n"
	for b.Len() < 16<<20 {
		b.WriteString(rec)
	}
	rng := rand.New(rand.NewPCG(7, 7))
	for range 20_000 {
		fmt.Fprintf(&b, `{"kind":"memory","timestamp_ns":1,"tensor_id":"%016x%016x","span_id":"root","device":"cuda:0","bytes":8,"action":"free","shape":[8],"dtype":"u8"}`+"\n", rng.Uint64(), rng.Uint64())
	}
	b.WriteString(tRootEnd + "\n")
	gz := rdGzip(t, b.Bytes())
	unknown, _ := allocatedByRead(t, io.MultiReader(bytes.NewReader(gz)))
	known, _ := allocatedByRead(t, bytes.NewReader(gz))
	if limit := unknown + 64*uint64(len(gz)); known > limit { // 64: maxRatio
		t.Errorf("allocated %d bytes with the compressed size (%d bytes, of %d decompressed), %d without: want at most %d more", known, len(gz), b.Len(), unknown, limit-unknown)
	}
}

// spaces reads as n spaces, without holding them.
type spaces int64

func (n *spaces) Read(p []byte) (int, error) {
	if *n <= 0 {
		return 0, io.EOF
	}
	k := int(min(int64(len(p)), int64(*n)))
	for i := range p[:k] {
		p[i] = ' '
	}
	*n -= spaces(k)
	return k, nil
}

// TestLongBlankLine checks that white space longer than the line buffer,
// alone on a line or before a record, is not held (a 522 KB gzip stream of a
// 512 MiB blank line ran a command out of memory; found by a resource
// review), and that the lines and columns of errors count it.
func TestLongBlankLine(t *testing.T) {
	const n = 64 << 20
	trace := func(tail string) io.Reader {
		s1, s2 := spaces(n), spaces(n)
		return io.MultiReader(strings.NewReader(tMeta+"\n"), &s1, strings.NewReader("\n"),
			&s2, strings.NewReader(tRoot+"\n"+tail+tRootEnd+"\n"))
	}
	a, doc := allocatedByRead(t, trace(""))
	if len(doc.Spans) != 1 || !doc.Spans[0].Closed {
		t.Fatalf("ReadTrace: %d spans, want the one closed", len(doc.Spans))
	}
	if a > n/8 {
		t.Errorf("ReadTrace allocated %d bytes for %d bytes of white space, want at most %d", a, 2*n, n/8)
	}
	for _, c := range []struct{ name, tail, want string }{
		{"text after the record", tMem + " x\n", fmt.Sprintf("line 4: memory: want one JSON object a line, found more after it at column %d", len(tMem)+2)},
		{"syntax", "{]\n", "line 4: invalid JSON at column 2: "},
		{"text after, after white space", strings.Repeat(" ", 300<<10) + tMem + " x\n", fmt.Sprintf("line 4: memory: want one JSON object a line, found more after it at column %d", 300<<10+len(tMem)+2)},
		{"syntax after white space", strings.Repeat(" ", 300<<10) + "{]\n", fmt.Sprintf("line 4: invalid JSON at column %d: ", 300<<10+2)},
	} {
		_, err := ReadTrace(trace(c.tail))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: %v, want %s...", c.name, err, c.want)
		}
	}
}

// TestEstimateSize: a compressed input's decompressed size is what it gave
// so far plus the rest at the same ratio (at most maxRatio).
func TestEstimateSize(t *testing.T) {
	for _, c := range []struct {
		name                string
		out, consumed, size int64
		want                int64
	}{
		{"nothing consumed", 0, 0, 1 << 20, -1},
		{"too little consumed", 1 << 20, minEstimated - 1, 1 << 20, -1},
		{"nothing out yet", 0, minEstimated, 1 << 20, -1},
		{"ratio 10", 10 * minEstimated, minEstimated, 4 * minEstimated, 40 * minEstimated},
		{"ratio 1000, the rest at maxRatio", 1000 * minEstimated, minEstimated, 4 * minEstimated, (1000 + 3*maxRatio) * minEstimated},
		{"a small input all consumed", 5000, 1000, 1000, 5000},
	} {
		if got := estimateSize(c.out, c.consumed, c.size); got != c.want {
			t.Errorf("%s: estimateSize(%d, %d, %d) = %d, want %d", c.name, c.out, c.consumed, c.size, got, c.want)
		}
	}
}

// TestReadTraceDocumentValueErrors: in the document form, run must be an
// object, a section an array (or null) and each element an object; the
// error names the exact byte offset of the value at fault and its place.
func TestReadTraceDocumentValueErrors(t *testing.T) {
	const schema = `{"schema":"candle-graph/trace/6",`
	const run = `"run":{"run_id":"r","correlation_id":"c","entrypoint":"e","phase":"train","timestamp":"t","capture_step":0,"warmup_steps":0,"device":"d","timing_mode":"host","tags":{}}`
	const span = `{"id":"a","name":"n","kind":"op","measured":true,"start_ns":0,"closed":false,"duration_ns":0}`
	tests := []struct {
		name, reason string
		input        string
		at           string // the value at fault: its last occurrence in input
		want         string // the error after "offset N: "
	}{
		{"run a number", "run is an object", schema + `"run": 5}`, `5}`, `run: want an object, got 5`},
		{"run an array", "run is an object, not an array of one", schema + `"run":[{}]}`, `[{}]`, `run: want an object, got an array`},
		{"section an object", "a section is an array", schema + run + `, "memory": {}}`, `{}}`, `memory: want an array, got an object`},
		{"section a string", "a section is an array", schema + run + `,"ops":"x"}`, `"x"`, `ops: want an array, got string "x"`},
		{"element a number", "each element of a section is an object", schema + run + `,"spans":[` + span + `, 1]}`, `1]`, `spans: want an object, got 1`},
		{"element an array", "each element of a section is an object", schema + run + `,"edges":[ []]}`, `[]]`, `edges: want an object, got an array`},
		{"duplicate span", "a span id given twice names both offsets", schema + run + `,"spans":[` + span + `,` + span + `]}`, span,
			fmt.Sprintf(`spans: id: duplicate span id "a" (first at offset %d)`, len(schema+run+`,"spans":[`))},
		{"schema", "an unsupported schema is reported at its value", `{ "schema" :  "x", "run":{}}`, `"x"`, `schema: unsupported schema "x" (want candle-graph/trace/6 or candle-graph/trace/7)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadTrace(strings.NewReader(tc.input))
			want := fmt.Sprintf("offset %d: %s", strings.LastIndex(tc.input, tc.at), tc.want)
			if err == nil || err.Error() != want {
				t.Errorf("%s: error %v, want %q", tc.reason, err, want)
			}
			if _, ok := errors.AsType[*ParseError](err); !ok {
				t.Errorf("%s: error %v is not a *ParseError", tc.reason, err)
			}
		})
	}
}

// TestReadTraceReadErrorText: a failed read is reported in both forms as
// "read: " and the reader's own message, where it happened, without the
// decoder's prefixes.
func TestReadTraceReadErrorText(t *testing.T) {
	boom := errors.New("boom")
	docJSON, err := json.Marshal(rdFullDoc())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, reason string
		data         []byte
		want         string
	}{
		{"jsonl", "the read after the last full line fails: line 3", []byte(rdLines(tMeta, tRoot)), `^line 3: read: boom$`},
		{"document", "the read fails inside the value of run, which it names", docJSON[:60], `^offset 60: run: read: boom$`},
		{"document, in a string", "the read fails inside a string value deep in the document: the offset is how far the input was read, named once, without the decoder's wrapping",
			docJSON[:bytes.Index(docJSON, []byte(`"span_id"`))+12], fmt.Sprintf(`^offset %d: ops: read: boom$`, bytes.Index(docJSON, []byte(`"span_id"`))+12)},
		{"before the format is known", "the read fails in the first object's first key: where is the offset read to", docJSON[:5], `^offset 5: read: boom$`},
		{"first read", "the very first read fails: offset 0", nil, `^offset 0: read: boom$`},
		{"chrome", "the read fails inside an event of a PyTorch trace", []byte(`{"traceEvents": [{"ph": "X", "na`), `^offset 32: traceEvents\[0\]: read: boom$`},
	}
	for _, tc := range tests {
		_, err := ReadTrace(&rdErrReader{data: tc.data, err: boom})
		if err == nil || !regexp.MustCompile(tc.want).MatchString(err.Error()) || !errors.Is(err, boom) {
			t.Errorf("%s: %s: error %v, want %s wrapping the reader's error", tc.name, tc.reason, err, tc.want)
		}
	}
}

// TestGzipReadErrorAfterMember: a read that fails right after a
// gzip member is a read error, not the end of the stream.
func TestGzipReadErrorAfterMember(t *testing.T) {
	boom := errors.New("boom")
	_, err := ReadTrace(&rdErrReader{data: rdGzip(t, []byte(rdFullTrace())), err: boom})
	if !errors.Is(err, boom) {
		t.Errorf("error %v, want the reader's error: the stream did not end", err)
	}
}

// TestCutShortInput cuts a trace of each form, plain and gzipped, at every
// byte: what is left is either a whole trace (a JSONL stream cut after a
// record, or anything cut in the white space at its end) or an error that
// says where (a *ParseError; a gzip header cut short, before any byte of
// the trace, says "gzip: ") and wraps io.ErrUnexpectedEOF, so that one
// errors.Is tells a file cut short in every form (from a user trial: a cut
// JSONL stream wrapped it in none).
func TestCutShortInput(t *testing.T) {
	docJSON, err := json.Marshal(rdFullDoc())
	if err != nil {
		t.Fatal(err)
	}
	_, chrome := chromeFixture(t, "noaddr")
	forms := []struct {
		name string
		data []byte
	}{
		{"jsonl", []byte(rdFullTrace())},
		{"document", docJSON},
		{"chrome", chrome},
	}
	step := 1
	if testing.Short() {
		step = 7
	}
	for _, f := range forms {
		// wholeRecords reports whether in is a JSONL stream cut between
		// records: its last line, if it has no newline, is blank or a whole
		// object.
		whole := func(cut int) bool {
			in := f.data[:cut]
			last := in[bytes.LastIndexByte(in, '\n')+1:]
			return isBlank(f.data[cut:]) || f.name == "jsonl" && (isBlank(last) || jsontext.Value(last).IsValid())
		}
		check := func(what string, in []byte, whole, header bool) {
			t.Helper()
			_, err := ReadTrace(bytes.NewReader(in))
			switch {
			case whole && err != nil:
				t.Errorf("%s: %s: a stream of whole records: %v", f.name, what, err)
			case whole:
			case err == nil:
				t.Errorf("%s: %s: no error", f.name, what)
			case !errors.Is(err, io.ErrUnexpectedEOF):
				t.Errorf("%s: %s: error %q does not wrap io.ErrUnexpectedEOF", f.name, what, err)
			case header:
				if !strings.HasPrefix(err.Error(), "gzip: ") {
					t.Errorf("%s: %s: error %q does not say gzip", f.name, what, err)
				}
			default:
				if _, ok := errors.AsType[*ParseError](err); !ok {
					t.Errorf("%s: %s: error %q is not a *ParseError", f.name, what, err)
				}
			}
		}
		for cut := 1; cut < len(f.data); cut += step {
			check(fmt.Sprintf("cut at byte %d of %d", cut, len(f.data)), f.data[:cut], whole(cut), false)
		}
		// A gzip stream is cut short until its trailer ends, whatever it
		// holds; from 2 bytes on, its magic bytes say it is gzip. Its
		// header (10 bytes, with no file name) comes before the trace.
		gz := rdGzip(t, f.data)
		for cut := 2; cut < len(gz); cut += step {
			check(fmt.Sprintf("gzip cut at byte %d of %d", cut, len(gz)), gz[:cut], false, cut < 10)
		}
	}
}

// TestReadTraceNearTheRules reads inputs at the edges of the rules that
// must be read, each checked on what it concerns (from a mutation test of
// the readers: no case had them).
func TestReadTraceNearTheRules(t *testing.T) {
	var many strings.Builder // an edge record with 17 ignored fields (16 are checked pair by pair)
	many.WriteString(`{"kind":"edge","from_span":"a","to_span":"b","duration_ns":0`)
	for i := range 17 {
		fmt.Fprintf(&many, `,"u%d":0`, i)
	}
	many.WriteString("}")
	cases := []struct {
		name, reason, input string
		check               func(*TraceDocument) string // "" when right
	}{
		{"escaped first character of a name", "a member name that starts with an escape is decoded like any other",
			rdLines(strings.Replace(tMeta, `"tags":{"a":"b"}`, `"tags":{"\u0061":"v"}`, 1)),
			func(d *TraceDocument) string {
				if v, ok := d.Run.Tags["a"]; !ok || len(d.Run.Tags) != 1 || v != "v" {
					return fmt.Sprintf("tags %q, want a: v", d.Run.Tags)
				}
				return ""
			}},
		{"many ignored fields, twice", "the set of a record's ignored fields starts empty for the next record",
			rdLines(tMeta, many.String(), many.String()),
			func(d *TraceDocument) string {
				if len(d.Edges) != 2 {
					return fmt.Sprintf("%d edges, want 2", len(d.Edges))
				}
				return ""
			}},
	}
	for _, c := range cases {
		doc, err := ReadTrace(strings.NewReader(c.input))
		if err != nil {
			t.Errorf("%s: %s: %v", c.name, c.reason, err)
			continue
		}
		if msg := c.check(doc); msg != "" {
			t.Errorf("%s: %s: %s", c.name, c.reason, msg)
		}
	}
}
