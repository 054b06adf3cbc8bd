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
	"os"
	"path/filepath"
	"regexp"
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
			for i, r := range recs {
				switch r.Kind {
				case "span_start":
					startAt[r.ID] = i
				case "span_end":
					endAt[r.ID] = i
				case "memory":
					memAt = append(memAt, i)
					memTs = append(memTs, r.TimestampNs)
				}
			}
			for i, ev := range doc.Memory {
				if memTs[i] != ev.TimestampNs {
					t.Fatalf("memory record %d has timestamp %d, document %d: order changed", i, memTs[i], ev.TimestampNs)
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
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
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
		{"nan norm", "JSON has no NaN", &TraceDocument{Gradients: []Gradient{{Norm: rdF64(math.NaN())}}}, `gradient: norm: not a finite number`},
		{"inf norm", "JSON has no infinity", &TraceDocument{Gradients: []Gradient{{Norm: rdF64(math.Inf(-1))}}}, `gradient: norm: not a finite number`},
		{"bad action", "an enumeration out of range", &TraceDocument{Memory: []MemoryEvent{{Action: 7}}}, `memory: action: .*invalid MemoryAction 7`},
		{"bad step", "an enumeration out of range", &TraceDocument{Spans: []Span{{Step: 9}}}, `span_start: step: .*invalid Step 9`},
		{"bad schema", "ReadTrace refuses an unsupported schema", &TraceDocument{Schema: "foo"}, `^write jsonl: meta: schema: unsupported schema "foo"`},
		{"duplicate span", "ReadTrace refuses a span id used twice", &TraceDocument{Spans: []Span{{ID: "a"}, {ID: "b"}, {ID: "a"}}}, `^write jsonl: spans\[2\]: id: duplicate span id "a"`},
		{"open span with a duration", "a span that is not closed has no duration; JSONL would drop it, the document form be refused", &TraceDocument{Spans: []Span{{ID: "a", DurationNs: 5}}}, `^write jsonl: spans\[0\]: duration_ns: 5 for span "a", which is not closed`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			err := tc.doc.WriteJSONL(&buf)
			if err == nil || !regexpMatch(tc.want, err.Error()) {
				t.Errorf("%s: error %v, want match %q", tc.reason, err, tc.want)
			}
			if strings.HasPrefix(tc.want, "^write jsonl: ") {
				if buf.Len() != 0 {
					t.Errorf("%s: wrote %d bytes before the error", tc.reason, buf.Len())
				}
				// The document form refuses the same documents.
				jsonWant := "^write json: " + strings.TrimPrefix(tc.want, "^write jsonl: ")
				if err := tc.doc.WriteJSON(&buf); err == nil || !regexpMatch(jsonWant, err.Error()) {
					t.Errorf("WriteJSON: %s: error %v, want match %q", tc.reason, err, jsonWant)
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
