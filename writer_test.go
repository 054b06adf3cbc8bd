// writer_test.go holds the tests of WriteJSONL and of the document-form marshalling: write then read gives an equal document.

package tracemem

import (
	"bufio"
	"bytes"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/tracemem/tracemem/internal/gen"
)

// Documents compare with cmp.Diff and no options: readers return nil, never
// empty non-nil, slices and maps, so a document read back equals the one
// written exactly. A document built by hand with empty non-nil slices
// compares equal under cmpopts.EquateEmpty (TestWriteJSONLEmptyVsNil).

// rdRoundTripDocs are documents a reader made: the hand-built full
// document, every shared example and generated traces of several shapes.
func rdRoundTripDocs(t *testing.T) map[string]*TraceDocument {
	docs := map[string]*TraceDocument{"full": rdFullDoc()}
	paths, _ := filepath.Glob("testdata/read/*.txtar")
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		_, files := parseTxtar(raw)
		if _, isErr := txtarGet(files, "error"); isErr {
			continue
		}
		in, ok := txtarGet(files, "input.jsonl")
		if !ok {
			in, _ = txtarGet(files, "input.json")
		}
		doc, err := ReadTrace(bytes.NewReader(in))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		docs["golden/"+filepath.Base(p)] = doc
	}
	n := 1500
	if testing.Short() {
		n = 500
	}
	docs["gen/plain"] = genDoc(t, gen.Config{Seed: 1, MemoryEvents: n})
	docs["gen/anomalies-3dev"] = genDoc(t, gen.Config{Seed: 2, MemoryEvents: n, Devices: 3, Anomalies: true})
	docs["gen/unclosed"] = genDoc(t, gen.Config{Seed: 3, MemoryEvents: n, UnclosedSpans: true, Devices: 2})
	docs["gen/steady"] = genDoc(t, gen.Config{Seed: 4, MemoryEvents: n, SteadyGrowth: true, SampleEvery: -1})
	return docs
}

// TestWriteJSONLRoundTrip checks write → read gives an equal document, for
// JSONL and for the document form written by WriteJSON, encoding/json and
// json v2.
func TestWriteJSONLRoundTrip(t *testing.T) {
	for name, doc := range rdRoundTripDocs(t) {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := doc.WriteJSONL(&buf); err != nil {
				t.Fatal(err)
			}
			back, err := ReadTrace(&buf)
			if err != nil {
				t.Fatalf("reading WriteJSONL output: %v", err)
			}
			if diff := cmp.Diff(doc, back); diff != "" {
				t.Errorf("JSONL round trip (-written +read):\n%s", diff)
			}
			forms := map[string]func() ([]byte, error){
				"WriteJSON": func() ([]byte, error) {
					var b bytes.Buffer
					err := doc.WriteJSON(&b)
					return b.Bytes(), err
				},
				"encoding/json": func() ([]byte, error) { return stdjson.Marshal(doc) },
				"json v2":       func() ([]byte, error) { return json.Marshal(doc) },
				"indented":      func() ([]byte, error) { return stdjson.MarshalIndent(doc, "", "\t") },
			}
			for form, marshal := range forms {
				data, err := marshal()
				if err != nil {
					t.Fatalf("%s: %v", form, err)
				}
				back, err := ReadTrace(bytes.NewReader(data))
				if err != nil {
					t.Fatalf("%s: reading: %v", form, err)
				}
				if diff := cmp.Diff(doc, back); diff != "" {
					t.Errorf("%s round trip (-written +read):\n%s", form, diff)
				}
				// json v2 Unmarshal through the struct tags gives the same document too
				var v2 TraceDocument
				if err := json.Unmarshal(data, &v2); err != nil {
					t.Fatalf("%s: json v2 Unmarshal: %v", form, err)
				}
				if diff := cmp.Diff(doc, &v2, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("%s: json v2 Unmarshal (-written +unmarshalled):\n%s", form, diff)
				}
			}
		})
	}
}

// TestWriteJSONLStreamOrder checks the record order of WriteJSONL on the
// examples and generated traces: meta first; ops, memory events and
// samples in document order; every memory event inside [start, end] of a
// span comes after its span_start and before its span_end (events at the
// end time count inside), when memory timestamps never decrease.
func TestWriteJSONLStreamOrder(t *testing.T) {
	for name, doc := range rdRoundTripDocs(t) {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := doc.WriteJSONL(&buf); err != nil {
				t.Fatal(err)
			}
			type rec struct {
				Kind        string `json:"kind"`
				ID          string `json:"id"`
				TimestampNs uint64 `json:"timestamp_ns"`
				OpName      string `json:"op_name"`
				Device      string `json:"device"`
			}
			var recs []rec
			sc := bufio.NewScanner(&buf)
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				var r rec
				if err := stdjson.Unmarshal(sc.Bytes(), &r); err != nil {
					t.Fatal(err)
				}
				recs = append(recs, r)
			}
			if len(recs) == 0 || recs[0].Kind != "meta" {
				t.Fatal("meta is not the first record")
			}
			startAt, endAt := map[string]int{}, map[string]int{}
			var memAt []int
			var memTs []uint64
			var ops, samples []rec
			for i, r := range recs {
				switch r.Kind {
				case "span_start":
					startAt[r.ID] = i
				case "span_end":
					endAt[r.ID] = i
				case "memory":
					memAt = append(memAt, i)
					memTs = append(memTs, r.TimestampNs)
				case "op":
					ops = append(ops, r)
				case "device_memory":
					samples = append(samples, r)
				}
			}
			for i, ev := range doc.Memory {
				if memTs[i] != ev.TimestampNs {
					t.Fatalf("memory record %d has timestamp %d, document %d: order changed", i, memTs[i], ev.TimestampNs)
				}
			}
			// Ops and samples keep document order too (from a test audit:
			// only the memory records were checked).
			if len(ops) != len(doc.Ops) || len(samples) != len(doc.DeviceMemory) {
				t.Fatalf("%d op and %d device_memory records for %d and %d", len(ops), len(samples), len(doc.Ops), len(doc.DeviceMemory))
			}
			for i, op := range doc.Ops {
				if ops[i].TimestampNs != op.TimestampNs || ops[i].OpName != op.OpName {
					t.Fatalf("op record %d is %s at %d, document %s at %d: order changed", i, ops[i].OpName, ops[i].TimestampNs, op.OpName, op.TimestampNs)
				}
			}
			for i, d := range doc.DeviceMemory {
				if samples[i].TimestampNs != d.TimestampNs || samples[i].Device != d.Device {
					t.Fatalf("device_memory record %d is %s at %d, document %s at %d: order changed", i, samples[i].Device, samples[i].TimestampNs, d.Device, d.TimestampNs)
				}
			}
			monotone := true
			for i := 1; i < len(memTs); i++ {
				monotone = monotone && memTs[i-1] <= memTs[i]
			}
			if !monotone {
				return
			}
			for _, s := range doc.Spans {
				end, closed := s.EndNs()
				for i, ts := range memTs {
					if ts >= s.StartNs && memAt[i] < startAt[s.ID] {
						t.Fatalf("memory event %d at %d written before span_start of %q at %d", i, ts, s.ID, s.StartNs)
					}
					if closed && ts <= end && memAt[i] > endAt[s.ID] {
						t.Fatalf("memory event %d at %d written after span_end of %q at %d", i, ts, s.ID, end)
					}
					if closed && ts > end && memAt[i] < endAt[s.ID] {
						t.Fatalf("memory event %d at %d written before span_end of %q at %d", i, ts, s.ID, end)
					}
				}
				if (endAt[s.ID] != 0) != closed {
					t.Fatalf("span %q: closed %v but span_end written: %v", s.ID, closed, endAt[s.ID] != 0)
				}
			}
		})
	}
}

// TestWriteJSONLDeepTree: a chain 100,000 spans deep, all starting and
// ending at one time, so that only depth orders their records, is written
// parents first (the stream takes it) and read back equal, in linear time
// (depths came from a walk up each span's chain: quadratic).
func TestWriteJSONLDeepTree(t *testing.T) {
	const depth = 100_000
	doc := &TraceDocument{Schema: SchemaV6, Run: Run{RunID: "r", Phase: PhaseTrain}}
	for i := range depth {
		s := Span{ID: fmt.Sprintf("s%06d", i), Name: "n", Kind: SpanFunction, StartNs: 5, Closed: true, DurationNs: 10}
		if i > 0 {
			s.ParentID = fmt.Sprintf("s%06d", i-1)
		}
		doc.Spans = append(doc.Spans, s)
	}
	doc.Memory = []MemoryEvent{{TimestampNs: 7, TensorID: "t", SpanID: doc.Spans[depth-1].ID, Device: "cuda:0", Bytes: 8}}
	var buf bytes.Buffer
	if err := doc.WriteJSONL(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := ReadTrace(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(doc.Spans, back.Spans); diff != "" {
		t.Fatalf("spans read back differ (-wrote +read):\n%s", diff)
	}
	_, nodes, err := AnalyzeStream(bytes.NewReader(buf.Bytes()), Options{MaxTimelinePoints: 1})
	if err != nil {
		t.Fatalf("the stream refuses the written order: %v", err)
	}
	if m := nodes[doc.Spans[0].ID]; m.PeakBytes != 8 {
		t.Errorf("root = %+v, want peak 8 from the leaf", m)
	}
	// A cycle has no parents-first order; the write still ends.
	doc.Spans[0].ParentID = doc.Spans[depth-1].ID
	if err := doc.WriteJSONL(io.Discard); err != nil {
		t.Fatal(err)
	}
}

// TestWriteJSONLStreamAnalysis checks that the streaming analysis of the
// written JSONL agrees with the analysis of the document (the record order
// of WriteJSONL is one the streaming path can replay).
func TestWriteJSONLStreamAnalysis(t *testing.T) {
	for name, doc := range rdRoundTripDocs(t) {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := doc.WriteJSONL(&buf); err != nil {
				t.Fatal(err)
			}
			p, nodes, err := AnalyzeStream(&buf, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(AnalyzeMemory(doc), p); diff != "" {
				t.Errorf("profile (-document +stream):\n%s", diff)
			}
			if diff := cmp.Diff(NodeMemoryMetrics(doc, nil), nodes); diff != "" {
				t.Errorf("node metrics (-document +stream):\n%s", diff)
			}
		})
	}
}

// TestWriteJSONLEarlyRecords: a document ReadTrace makes can have records
// that name a span before its start_ns (a memory event or op stamped
// earlier, a child starting before its parent). WriteJSONL writes the
// span_start before them, so that the streaming analysis takes the output
// and agrees with the document's.
func TestWriteJSONLEarlyRecords(t *testing.T) {
	mem := func(ts uint64, id, span string, a MemoryAction) MemoryEvent {
		return MemoryEvent{TimestampNs: ts, TensorID: id, SpanID: span, Device: "cuda:0", Bytes: 64, Action: a, Category: CategoryActivation}
	}
	for _, tc := range []struct {
		name, reason string
		doc          *TraceDocument
	}{
		{"memory before its span", "a memory event stamped before its span's start_ns",
			&TraceDocument{
				Spans:  []Span{{ID: "s", Name: "s", StartNs: 5, DurationNs: 10, Closed: true, Measured: true}},
				Memory: []MemoryEvent{mem(3, "a", "s", ActionAlloc), mem(12, "a", "s", ActionFree)},
			}},
		{"op before its span", "an op stamped before its span's start_ns",
			&TraceDocument{
				Spans:  []Span{{ID: "s", Name: "s", StartNs: 5, DurationNs: 10, Closed: true, Measured: true}},
				Ops:    []Op{{SpanID: "s", OpName: "mm", Output: "a", TimestampNs: 2, Device: "cuda:0"}},
				Memory: []MemoryEvent{mem(6, "a", "s", ActionAlloc)},
			}},
		{"child before its parent", "a child span that starts before its parent, and a grandchild's memory before both",
			&TraceDocument{
				Spans: []Span{ // in id order, as ReadTrace gives them
					{ID: "c", ParentID: "p", Name: "c", StartNs: 8, DurationNs: 5, Closed: true, Measured: true},
					{ID: "g", ParentID: "c", Name: "g", StartNs: 9, DurationNs: 1, Closed: true, Measured: true},
					{ID: "p", Name: "p", StartNs: 10, DurationNs: 20, Closed: true, Measured: true},
				},
				Memory: []MemoryEvent{mem(1, "a", "g", ActionAlloc), mem(20, "b", "p", ActionAlloc)},
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tc.doc.WriteJSONL(&buf); err != nil {
				t.Fatal(err)
			}
			text := buf.String()
			back, err := ReadTrace(strings.NewReader(text))
			if err != nil {
				t.Fatal(err)
			}
			tc.doc.Schema = SchemaV6
			if diff := cmp.Diff(tc.doc, back, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("read back (-want +got):\n%s", diff)
			}
			p, nodes, err := AnalyzeStream(strings.NewReader(text), Options{})
			if err != nil {
				t.Fatalf("%s: %v\n%s", tc.reason, err, text)
			}
			if diff := cmp.Diff(AnalyzeMemory(back), p); diff != "" {
				t.Errorf("profile (-document +stream):\n%s", diff)
			}
			if diff := cmp.Diff(NodeMemoryMetrics(back, nil), nodes); diff != "" {
				t.Errorf("node metrics (-document +stream):\n%s", diff)
			}
		})
	}
}

// TestWriteJSONLAbsentFields checks that absent optional fields are left
// out, not written as zero, and present ones are written.
func TestWriteJSONLAbsentFields(t *testing.T) {
	doc := &TraceDocument{
		Spans:        []Span{{ID: "a", Name: "n"}},
		Ops:          []Op{{SpanID: "a", OpName: "o", DType: "weird"}},
		Tensors:      []Tensor{{SpanID: "a", TensorID: "t", DType: "weird"}},
		Memory:       []MemoryEvent{{TensorID: "t", SpanID: "a"}},
		DeviceMemory: []DeviceMemorySample{{Device: "d"}},
		Gradients:    []Gradient{{EventID: "e"}},
	}
	var buf bytes.Buffer
	if err := doc.WriteJSONL(&buf); err != nil {
		t.Fatal(err)
	}
	absent := map[string][]string{
		"meta":          {"candle_version"},
		"span_start":    {"parent_id", "step"},
		"op":            {"output", "storage_bytes"},
		"tensor":        {"storage_bytes"},
		"memory":        {"op_name"},
		"device_memory": {"reserved_bytes", "capacity_bytes"},
		"gradient":      {"norm"},
	}
	present := map[string][]string{
		"meta":   {"schema", "tags"},
		"op":     {"inputs", "shape"},
		"memory": {"category", "shape"},
	}
	for line := range strings.SplitSeq(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		if err := stdjson.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		kind := m["kind"].(string)
		for _, f := range absent[kind] {
			if _, ok := m[f]; ok {
				t.Errorf("%s: absent %s written: %s", kind, f, line)
			}
		}
		for _, f := range present[kind] {
			if _, ok := m[f]; !ok {
				t.Errorf("%s: %s not written: %s", kind, f, line)
			}
		}
		if kind == "meta" && m["schema"] != SchemaV6 {
			t.Errorf("empty schema written as %v, want %s", m["schema"], SchemaV6)
		}
	}
	back, err := ReadTrace(&buf)
	if err != nil {
		t.Fatal(err)
	}
	doc.Schema = SchemaV6
	if diff := cmp.Diff(doc, back); diff != "" {
		t.Errorf("(-written +read):\n%s", diff)
	}
}

// TestWriteJSONLEmptyVsNil checks the documented convention: empty non-nil
// slices and maps read back as nil, equal under cmpopts.EquateEmpty; and an
// absent storage_bytes with a known dtype is filled in on reading.
func TestWriteJSONLEmptyVsNil(t *testing.T) {
	doc := &TraceDocument{
		Schema: SchemaV6,
		Run:    Run{Tags: map[string]string{}},
		Spans:  []Span{},
		Ops:    []Op{{Inputs: []string{}, Shape: []uint64{}, DType: "weird"}},
		Memory: []MemoryEvent{},
	}
	var buf bytes.Buffer
	if err := doc.WriteJSONL(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := ReadTrace(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if back.Run.Tags != nil || back.Spans != nil || back.Memory != nil || back.Ops[0].Inputs != nil || back.Ops[0].Shape != nil {
		t.Errorf("empty values read back non-nil: %+v", back)
	}
	if diff := cmp.Diff(doc, back, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("(-written +read):\n%s", diff)
	}
	doc.Ops[0].DType = "f32"
	buf.Reset()
	if err := doc.WriteJSONL(&buf); err != nil {
		t.Fatal(err)
	}
	if back, err = ReadTrace(&buf); err != nil {
		t.Fatal(err)
	}
	if sb := back.Ops[0].StorageBytes; sb == nil || *sb != 4 {
		t.Errorf("storage_bytes of a scalar f32 op = %v, want 4", sb)
	}
}

type rdFailWriter struct{ n int }

func (w *rdFailWriter) Write(p []byte) (int, error) {
	if w.n -= len(p); w.n < 0 {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}

// TestWriteJSONLErrors checks that values that cannot be written and
// failing writers give an error.
func TestWriteJSONLErrors(t *testing.T) {
	tests := []struct {
		name, reason string
		doc          *TraceDocument
		want         string
	}{
		{"invalid utf8", "strings must be UTF-8 to be JSON", &TraceDocument{Memory: []MemoryEvent{{TensorID: "t\xff"}}}, `memory: tensor_id: .*UTF-8`},
		{"nan norm", "JSON has no NaN; refused before anything is written, with its index (from a user trial: WriteJSON had written 135 bytes)", &TraceDocument{Gradients: []Gradient{{Norm: new(math.NaN())}}}, `^write jsonl: gradients\[0\]: norm: NaN is not a finite number \(JSON has none\)$`},
		{"inf norm", "JSON has no infinity, of either sign", &TraceDocument{Gradients: []Gradient{{Norm: new(1.0)}, {Norm: new(math.Inf(-1))}}}, `^write jsonl: gradients\[1\]: norm: -Inf is not a finite number`},
		{"plus inf norm", "likewise", &TraceDocument{Gradients: []Gradient{{Norm: new(math.Inf(1))}}}, `^write jsonl: gradients\[0\]: norm: \+Inf is not a finite number`},
		{"bad action", "an enumeration out of range; a memory event's is refused before anything is written", &TraceDocument{Memory: []MemoryEvent{{Action: 7}}}, `^write jsonl: memory\[0\]: tensor "" at 0 ns: invalid action 7$`},
		{"bad step", "an enumeration out of range", &TraceDocument{Spans: []Span{{Step: 9}}}, `span_start: step: .*invalid Step 9`},
		{"bad schema", "ReadTrace refuses an unsupported schema", &TraceDocument{Schema: "foo"}, `^write jsonl: meta: schema: unsupported schema "foo"`},
		{"duplicate span", "ReadTrace refuses a span id used twice", &TraceDocument{Spans: []Span{{ID: "a"}, {ID: "b"}, {ID: "a"}}}, `^write jsonl: spans\[2\]: id: duplicate span id "a"`},
		{"open span with a duration", "a span that is not closed has no duration; JSONL would drop it, the document form be refused", &TraceDocument{Spans: []Span{{ID: "a", DurationNs: 5}}}, `^write jsonl: spans\[0\]: duration_ns: 5 for span "a", which is not closed`},
		{"open span with a duration of 1", "any duration, even the smallest, of a span that is not closed is refused", &TraceDocument{Spans: []Span{{ID: "z"}, {ID: "a", DurationNs: 1}}}, `^write jsonl: spans\[1\]: duration_ns: 1 for span "a", which is not closed`},
		{"action just out of range", "the first value past the last name is out of range, not a name", &TraceDocument{Memory: []MemoryEvent{{}, {Action: 2}}}, `^write jsonl: memory\[1\]: tensor "" at 0 ns: invalid action 2$`},
		{"memory category just out of range", "likewise for a memory event's category", &TraceDocument{Memory: []MemoryEvent{{Category: NumCategories}}}, `^write jsonl: memory\[0\]: tensor "" at 0 ns: invalid category 5$`},
		{"step just out of range", "the first value past the last name is out of range", &TraceDocument{Spans: []Span{{ID: "a", Step: 4}}}, `span_start: step: .*invalid Step 4`},
		{"phase just out of range", "the first value past the last name is out of range", &TraceDocument{Run: Run{Phase: 2}}, `meta: phase: .*invalid Phase 2`},
		{"category just out of range", "the first value past the last name is out of range", &TraceDocument{Tensors: []Tensor{{Category: NumCategories}}}, `tensor: category: .*invalid Category 5`},
		{"invalid utf8 input", "each string of a list must be UTF-8", &TraceDocument{Ops: []Op{{Inputs: []string{"a", "b\xff"}}}}, `op: inputs: .*UTF-8`},
		{"invalid utf8 tag value", "tag values must be UTF-8", &TraceDocument{Run: Run{Tags: map[string]string{"k": "v\xff"}}}, `meta: tags: .*UTF-8`},
		{"invalid utf8 tag key", "tag keys must be UTF-8", &TraceDocument{Run: Run{Tags: map[string]string{"k\xff": "v"}}}, `meta: tags: .*UTF-8`},
		{"first error wins", "of two bad values in a record the first one written is reported", &TraceDocument{Memory: []MemoryEvent{{TensorID: "t\xff", SpanID: "s\xff"}}}, `memory: tensor_id: .*UTF-8`},
		{"invalid event first", "a memory event's action out of range is refused before any value is written, as Analyze refuses it", &TraceDocument{Memory: []MemoryEvent{{TensorID: "t\xff", Action: 7}}}, `^write jsonl: memory\[0\]: tensor "t\\xff" at 0 ns: invalid action 7$`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			err := tc.doc.WriteJSONL(&buf)
			if err == nil || !regexpMatch(tc.want, err.Error()) {
				t.Errorf("%s: error %v, want match %q", tc.reason, err, tc.want)
			}
			// An invalid memory event is ErrInvalidEvent, as for Analyze
			// and Validate; no other error is.
			invalidEvent := strings.HasPrefix(tc.want, `^write jsonl: memory\[`)
			if errors.Is(err, ErrInvalidEvent) != invalidEvent {
				t.Errorf("%s: errors.Is(%v, ErrInvalidEvent) = %v", tc.reason, err, !invalidEvent)
			}
			var ee *EventError
			if errors.As(err, &ee) && (!invalidEvent || ee.Index != len(tc.doc.Memory)-1) {
				t.Errorf("%s: %v: *EventError %+v, want one naming the last memory event only for an invalid event", tc.reason, err, *ee)
			}
			if strings.HasPrefix(tc.want, "^write jsonl: ") {
				if buf.Len() != 0 {
					t.Errorf("%s: wrote %d bytes before the error", tc.reason, buf.Len())
				}
				// The document form refuses the same documents.
				jsonWant := "^write json: " + strings.TrimPrefix(tc.want, "^write jsonl: ")
				err := tc.doc.WriteJSON(&buf)
				if err == nil || !regexpMatch(jsonWant, err.Error()) {
					t.Errorf("WriteJSON: %s: error %v, want match %q", tc.reason, err, jsonWant)
				}
				if errors.Is(err, ErrInvalidEvent) != invalidEvent {
					t.Errorf("WriteJSON: %s: errors.Is(%v, ErrInvalidEvent) = %v", tc.reason, err, !invalidEvent)
				}
			}
		})
	}
	doc := genDoc(t, gen.Config{Seed: 5, MemoryEvents: 1000})
	if err := doc.WriteJSONL(&rdFailWriter{n: 100 << 10}); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("failing writer: error %v, want disk full", err)
	}
}

func regexpMatch(pat, s string) bool { return regexp.MustCompile(pat).MatchString(s) }

// wrRecords returns the records of a JSONL stream as "kind id-or-time"
// strings, for comparing record orders.
func wrRecords(t *testing.T, jsonl string) []string {
	t.Helper()
	var out []string
	for line := range strings.SplitSeq(strings.TrimSuffix(jsonl, "\n"), "\n") {
		var r struct {
			Kind        string  `json:"kind"`
			ID          string  `json:"id"`
			TimestampNs *uint64 `json:"timestamp_ns"`
		}
		if err := stdjson.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		switch {
		case r.Kind == "span_start" || r.Kind == "span_end":
			out = append(out, r.Kind+" "+r.ID)
		case r.TimestampNs != nil:
			out = append(out, fmt.Sprintf("%s %d", r.Kind, *r.TimestampNs))
		default:
			out = append(out, r.Kind)
		}
	}
	return out
}

// TestWriteJSONLRecordOrder checks the merge rule of WriteJSONL against
// record orders worked out by hand: records by time; at equal times
// span_start, op, memory, device_memory, then span_end (children before
// parents); span_start at start_ns unless a record names the span earlier;
// span_end at start_ns + duration_ns.
func TestWriteJSONLRecordOrder(t *testing.T) {
	mem := func(ts uint64, span string) MemoryEvent {
		return MemoryEvent{TimestampNs: ts, TensorID: "t", SpanID: span, Device: "d", Bytes: 1}
	}
	tests := []struct {
		name, reason string
		doc          *TraceDocument
		want         []string
	}{
		{"span_end at start plus duration", "an event at the end time is inside the span, one a nanosecond later is after its span_end",
			&TraceDocument{
				Spans:  []Span{{ID: "s", StartNs: 0, DurationNs: 10, Closed: true}},
				Memory: []MemoryEvent{mem(10, "s"), mem(11, "s")},
			},
			[]string{"meta", "span_start s", "memory 10", "span_end s", "memory 11"}},
		{"equal times", "at one time: span_start, op, memory, device_memory, span_end",
			&TraceDocument{
				Spans:        []Span{{ID: "s", StartNs: 5, DurationNs: 0, Closed: true}},
				Memory:       []MemoryEvent{mem(5, "s")},
				Ops:          []Op{{SpanID: "s", TimestampNs: 5, DType: "weird"}},
				DeviceMemory: []DeviceMemorySample{{TimestampNs: 5, Device: "d"}},
			},
			[]string{"meta", "span_start s", "op 5", "memory 5", "device_memory 5", "span_end s"}},
		{"samples by time", "device_memory samples are interleaved with the other records by time, not written first",
			&TraceDocument{
				Memory:       []MemoryEvent{mem(1, "x"), mem(3, "x")},
				DeviceMemory: []DeviceMemorySample{{TimestampNs: 2, Device: "d"}, {TimestampNs: 4, Device: "d"}},
			},
			[]string{"meta", "memory 1", "device_memory 2", "memory 3", "device_memory 4"}},
		{"ops by time", "an op comes after a memory event of an earlier time",
			&TraceDocument{
				Memory: []MemoryEvent{mem(1, "x")},
				Ops:    []Op{{SpanID: "x", TimestampNs: 2, DType: "weird"}},
			},
			[]string{"meta", "memory 1", "op 2"}},
		{"children end first", "spans ending at one time: the child's span_end before its parent's, whatever their ids",
			&TraceDocument{Spans: []Span{
				{ID: "a", StartNs: 0, DurationNs: 10, Closed: true},
				{ID: "b", ParentID: "a", StartNs: 0, DurationNs: 10, Closed: true},
			}},
			[]string{"meta", "span_start a", "span_start b", "span_end b", "span_end a"}},
		{"span_start at its start_ns", "a span no record names early starts at its start_ns, after earlier records of other spans",
			&TraceDocument{
				Spans:  []Span{{ID: "a", StartNs: 0}, {ID: "b", StartNs: 10}},
				Memory: []MemoryEvent{mem(1, "a"), mem(11, "b")},
			},
			[]string{"meta", "span_start a", "memory 1", "span_start b", "memory 11"}},
		{"second span named early", "a record that names a different span from the record before it, ahead of that span's start_ns, moves that span's span_start (the last lookup is reused only for the same span)",
			&TraceDocument{
				Spans:  []Span{{ID: "a", StartNs: 0}, {ID: "b", StartNs: 10}},
				Memory: []MemoryEvent{mem(1, "a"), mem(5, "b")},
			},
			[]string{"meta", "span_start a", "memory 1", "span_start b", "memory 5"}},
		{"empty span id named early", "a span whose id is the empty string is moved before an earlier record that names it, as any other span",
			&TraceDocument{
				Spans:  []Span{{ID: "", StartNs: 5}},
				Memory: []MemoryEvent{mem(2, ""), mem(6, "")},
			},
			[]string{"meta", "span_start ", "memory 2", "memory 6"}},
		{"span_starts by id", "roots that start at one time are written in id order, not the reverse",
			&TraceDocument{Spans: []Span{
				{ID: "a", StartNs: 0, DurationNs: 10, Closed: true},
				{ID: "b", StartNs: 0, DurationNs: 20, Closed: true},
			}},
			[]string{"meta", "span_start a", "span_start b", "span_end a", "span_end b"}},
		{"span_ends by id", "roots that end at one time end in id order, not the reverse",
			&TraceDocument{Spans: []Span{
				{ID: "a", StartNs: 0, DurationNs: 10, Closed: true},
				{ID: "b", StartNs: 5, DurationNs: 5, Closed: true},
			}},
			[]string{"meta", "span_start a", "span_start b", "span_end a", "span_end b"}},
		{"cut span is a root", "the span whose parent link closes a cycle is cut there: depth 0, so it ties with the other roots by id, before its child",
			&TraceDocument{Spans: []Span{
				{ID: "a", ParentID: "b", StartNs: 0, DurationNs: 10, Closed: true},
				{ID: "b", ParentID: "a", StartNs: 0, DurationNs: 10, Closed: true},
				{ID: "c", StartNs: 0, DurationNs: 10, Closed: true},
			}},
			[]string{"meta", "span_start b", "span_start c", "span_start a", "span_end a", "span_end b", "span_end c"}},
		{"span end saturates", "a span whose start + duration passes the largest uint64 ends at the largest time, after every record, not at the wrapped sum",
			&TraceDocument{
				Spans:  []Span{{ID: "a", StartNs: 10, DurationNs: math.MaxUint64, Closed: true}},
				Memory: []MemoryEvent{{TimestampNs: 20, TensorID: "t", SpanID: "a", Device: "d", Bytes: 1}},
			},
			[]string{"meta", "span_start a", "memory 20", "span_end a"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tc.doc.WriteJSONL(&buf); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, wrRecords(t, buf.String())); diff != "" {
				t.Errorf("%s: records (-want +got):\n%s", tc.reason, diff)
			}
			back, err := ReadTrace(&buf)
			if err != nil {
				t.Fatal(err)
			}
			tc.doc.Schema = SchemaV6
			if diff := cmp.Diff(tc.doc, back, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("read back (-written +read):\n%s", diff)
			}
		})
	}
}

// TestWriteValuesRoundTrip: values at the edges of their types (norms that
// need all 17 digits, the largest uint64, strings that need escapes) read
// back equal from both WriteJSONL and WriteJSON.
func TestWriteValuesRoundTrip(t *testing.T) {
	base := func(f func(*TraceDocument)) *TraceDocument {
		d := &TraceDocument{Schema: SchemaV6}
		f(d)
		return d
	}
	tests := []struct {
		name, reason string
		doc          *TraceDocument
	}{
		{"norms", "a norm reads back to the same float64 (its text: TestWriteNormText)",
			base(func(d *TraceDocument) {
				for _, v := range []float64{0.1, 1.0 / 3, math.Pi, 1e-300, math.MaxFloat64, math.SmallestNonzeroFloat64, 123456789.123456789} {
					d.Gradients = append(d.Gradients, Gradient{EventID: "g", Norm: new(v)})
				}
			})},
		{"largest uint64", "unsigned fields are written in full",
			base(func(d *TraceDocument) {
				d.Run.CaptureStep = math.MaxUint64
				d.Memory = []MemoryEvent{{TimestampNs: math.MaxUint64, Bytes: math.MaxUint64, Shape: []uint64{math.MaxUint64, 1}}}
			})},
		{"escapes", "quotes, backslashes, control characters, <>& and U+2028 in every kind of string",
			base(func(d *TraceDocument) {
				s := "q\"b\\c\x01\n<>&\u2028é"
				d.Run.RunID = s
				d.Run.Tags = map[string]string{s: s, "plain": "v"}
				d.Spans = []Span{{ID: s, ParentID: s + "p", Name: s}}
				d.Ops = []Op{{SpanID: s, OpName: s, Inputs: []string{s, ""}, Output: s, DType: "weird"}}
			})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for form, write := range map[string]func(io.Writer) error{"jsonl": tc.doc.WriteJSONL, "json": tc.doc.WriteJSON} {
				var buf bytes.Buffer
				if err := write(&buf); err != nil {
					t.Fatalf("%s: %v", form, err)
				}
				back, err := ReadTrace(&buf)
				if err != nil {
					t.Fatalf("%s: %v", form, err)
				}
				if diff := cmp.Diff(tc.doc, back); diff != "" {
					t.Errorf("%s: %s: (-written +read):\n%s", form, tc.reason, diff)
				}
			}
		})
	}
}

// TestWriteJSONForm checks what WriteJSON's doc promises of its output: the
// schema candle-graph/trace/6 when doc.Schema is empty (doc itself left
// unchanged), and map keys in sorted order.
func TestWriteJSONForm(t *testing.T) {
	tags := map[string]string{}
	var keys []string
	for i := range 20 {
		k := fmt.Sprintf("k%02d", (i*7)%20) // inserted out of order
		tags[k] = "v"
		keys = append(keys, k)
	}
	slices.Sort(keys)
	doc := &TraceDocument{Run: Run{Tags: tags}}
	var buf bytes.Buffer
	if err := doc.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	if doc.Schema != "" {
		t.Errorf("WriteJSON changed doc.Schema to %q", doc.Schema)
	}
	out := buf.String()
	back, err := ReadTrace(strings.NewReader(out))
	if err != nil {
		t.Fatalf("the output of a document with no schema does not read: %v", err)
	}
	if back.Schema != SchemaV6 {
		t.Errorf("schema read back %q, want %s", back.Schema, SchemaV6)
	}
	var at []int
	for _, k := range keys {
		at = append(at, strings.Index(out, `"`+k+`"`))
	}
	if !slices.IsSorted(at) || at[0] < 0 {
		t.Errorf("tag keys not written in sorted order: %s", out)
	}
}

// TestWriteJSONLFieldNames: op and tensor records carry the document's own
// field names (storage_bytes, input_storage_bytes), the names of schema
// /6, never the /7 names the reader also takes (from a mutation test: a
// writer that wrote output_dense_bytes read back equal, so no round trip
// saw it).
func TestWriteJSONLFieldNames(t *testing.T) {
	sb := uint64(4)
	op := Op{SpanID: "a", OpName: "o", Inputs: []string{"i"}, Output: "t", Shape: []uint64{1}, DType: "f32", Device: "d", DurationNs: 1, TimestampNs: 1, StorageBytes: &sb, InputStorageBytes: 8}
	tensor := Tensor{SpanID: "a", TensorID: "t", Shape: []uint64{1}, DType: "f32", StorageBytes: &sb}
	doc := &TraceDocument{Schema: SchemaV6, Run: Run{RunID: "r"}, Spans: []Span{{ID: "a", Name: "n"}}, Ops: []Op{op}, Tensors: []Tensor{tensor}}
	var buf bytes.Buffer
	if err := doc.WriteJSONL(&buf); err != nil {
		t.Fatal(err)
	}
	keys := func(v any) []string {
		b, err := stdjson.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := stdjson.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		ks := []string{"kind"}
		for k := range m {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		return ks
	}
	want := map[string][]string{"op": keys(op), "tensor": keys(tensor)}
	for line := range strings.SplitSeq(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		if err := stdjson.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		w, ok := want[m["kind"].(string)]
		if !ok {
			continue
		}
		var got []string
		for k := range m {
			got = append(got, k)
		}
		slices.Sort(got)
		if !slices.Equal(got, w) {
			t.Errorf("%s record has fields %v, want the document's %v", m["kind"], got, w)
		}
	}
}

// TestWriteNormText: WriteJSONL writes a gradient norm with the fewest
// significant digits that read back to the same float64, in the text
// WriteJSON (json v2) writes, so that both forms of a document agree: plain
// from 1e-6 to below 1e21, exponent form outside it. From a test audit: a
// writer of 25 digits in exponent form passed every test, which read the
// values back only; and from a check of the document form: WriteJSONL wrote
// strconv's 'g' form (-1e-07, 1.234567e+06) where WriteJSON wrote -1e-7 and
// 1234567.
func TestWriteNormText(t *testing.T) {
	cases := []struct {
		v    float64
		want string
	}{
		{0.1, "0.1"}, {1.5, "1.5"}, {100, "100"}, {1.0 / 3, "0.3333333333333333"}, {0, "0"}, {math.Copysign(0, -1), "-0"},
		{1e-300, "1e-300"}, {0.0001, "0.0001"}, {0.00001, "0.00001"}, {1e-6, "0.000001"}, {9.99e-7, "9.99e-7"}, {-1e-7, "-1e-7"},
		{123456, "123456"}, {1234567, "1234567"}, {1e20, "100000000000000000000"}, {1e21, "1e+21"}, {-1.5e300, "-1.5e+300"},
		{math.MaxFloat64, "1.7976931348623157e+308"}, {math.SmallestNonzeroFloat64, "5e-324"},
	}
	// Random floats, against json v2 itself (the want is its text): bit
	// patterns (nearly all in exponent form) and every other one spread
	// evenly in magnitude from 1e-8 to 1e22, around both switches of form.
	r := rand.New(rand.NewPCG(7, 11))
	for len(cases) < 2000 {
		v := math.Float64frombits(r.Uint64())
		if len(cases)%2 == 0 {
			v = math.Copysign(math.Pow(10, -8+30*r.Float64()), v)
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		cases = append(cases, struct {
			v    float64
			want string
		}{v, ""})
	}
	for _, c := range cases {
		j, err := json.Marshal(c.v)
		if err != nil {
			t.Fatal(err)
		}
		if c.want != "" && string(j) != c.want {
			t.Fatalf("json v2 writes %v as %s, the table says %s", c.v, j, c.want)
		}
		doc := &TraceDocument{Gradients: []Gradient{{EventID: "g", Norm: new(c.v)}}}
		var jl, js bytes.Buffer
		if err := doc.WriteJSONL(&jl); err != nil {
			t.Fatal(err)
		}
		if err := doc.WriteJSON(&js); err != nil {
			t.Fatal(err)
		}
		want := `"norm":` + string(j)
		if !strings.Contains(jl.String(), want+"}") {
			t.Errorf("norm %v: WriteJSONL wrote %s, want %s", c.v, strings.TrimSpace(jl.String()), want)
		}
		if !strings.Contains(js.String(), want+"}") {
			t.Errorf("norm %v: WriteJSON wrote %s, want %s", c.v, strings.TrimSpace(js.String()), want)
		}
	}
}
