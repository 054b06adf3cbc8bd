// nodemetrics_test.go tests the call-tree rules of NodeMemoryMetrics that need documents built in Go: cycles, depth, validation.

package tracemem

import (
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNodeMetricsCallTree(t *testing.T) {
	alloc := func(ts uint64, id, span string, b uint64) MemoryEvent {
		return MemoryEvent{TimestampNs: ts, TensorID: id, SpanID: span, Device: "cuda:0", Bytes: b, Action: ActionAlloc}
	}
	tests := []struct {
		name, why string
		spans     []Span
		memory    []MemoryEvent
		want      map[string]NodeMetrics
		cycles    []SpanCycleError // what Validate reports
	}{
		{
			name: "two-cycle",
			why:  "a <-> b: walking from a (first by document order), the link b -> a closes the cycle and is cut, so b is the root",
			spans: []Span{
				{ID: "a", ParentID: "b"},
				{ID: "b", ParentID: "a"},
			},
			memory: []MemoryEvent{alloc(1, "t", "a", 10)},
			want: map[string]NodeMetrics{
				"a": {PeakBytes: 10, ResidualBytes: 10},
				"b": {PeakBytes: 10, ResidualBytes: 10},
			},
			cycles: []SpanCycleError{{Spans: []string{"a", "b"}, Cut: "b"}},
		},
		{
			name: "self-parent",
			why:  "a span naming itself as parent is a root",
			spans: []Span{
				{ID: "a", ParentID: "a"},
				{ID: "c", ParentID: "a"},
			},
			memory: []MemoryEvent{alloc(1, "t", "c", 7)},
			want: map[string]NodeMetrics{
				"a": {PeakBytes: 7, ResidualBytes: 7},
				"c": {PeakBytes: 7, ResidualBytes: 7},
			},
			cycles: []SpanCycleError{{Spans: []string{"a"}, Cut: "a"}},
		},
		{
			name: "cycle-below-a-tail",
			why:  "x -> y -> z -> y: the walk from x reaches y again from z, so z -> y is cut and z becomes the root of y and x",
			spans: []Span{
				{ID: "x", ParentID: "y"},
				{ID: "y", ParentID: "z"},
				{ID: "z", ParentID: "y"},
			},
			memory: []MemoryEvent{alloc(1, "t", "y", 5), alloc(2, "u", "x", 3)},
			want: map[string]NodeMetrics{
				"x": {PeakBytes: 3, ResidualBytes: 3},
				"y": {PeakBytes: 8, ResidualBytes: 8},
				"z": {PeakBytes: 8, ResidualBytes: 8},
			},
			cycles: []SpanCycleError{{Spans: []string{"y", "z"}, Cut: "z"}},
		},
		{
			name: "two-separate-cycles",
			why:  "Validate reports every cycle, not the first: a <-> b is cut at b, c's link to itself is cut",
			spans: []Span{
				{ID: "a", ParentID: "b"},
				{ID: "b", ParentID: "a"},
				{ID: "c", ParentID: "c"},
				{ID: "d", ParentID: "c"},
			},
			memory: []MemoryEvent{alloc(1, "t", "a", 10), alloc(2, "u", "d", 5)},
			want: map[string]NodeMetrics{
				"a": {PeakBytes: 10, ResidualBytes: 10},
				"b": {PeakBytes: 10, ResidualBytes: 10},
				"c": {PeakBytes: 5, ResidualBytes: 5},
				"d": {PeakBytes: 5, ResidualBytes: 5},
			},
			cycles: []SpanCycleError{{Spans: []string{"a", "b"}, Cut: "b"}, {Spans: []string{"c"}, Cut: "c"}},
		},
		{
			name: "duplicate-span-id",
			why:  "the first span of an id is kept; the duplicate's parent link is ignored",
			spans: []Span{
				{ID: "p"},
				{ID: "c", ParentID: "p"},
				{ID: "c"},
			},
			memory: []MemoryEvent{alloc(1, "t", "c", 4)},
			want: map[string]NodeMetrics{
				"p": {PeakBytes: 4, ResidualBytes: 4},
				"c": {PeakBytes: 4, ResidualBytes: 4},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := &TraceDocument{Spans: tt.spans, Memory: tt.memory}
			got := NodeMemoryMetrics(doc, nil)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("%s\n(-want +got):\n%s", tt.why, diff)
			}
			err := doc.Validate()
			var gotCycles []SpanCycleError
			for _, e := range unjoin(err) {
				var ce *SpanCycleError
				if errors.As(e, &ce) {
					gotCycles = append(gotCycles, *ce)
				}
			}
			if diff := cmp.Diff(tt.cycles, gotCycles); diff != "" {
				t.Errorf("Validate cycles (-want +got):\n%s", diff)
			}
		})
	}
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	if err == nil {
		return nil
	}
	return []error{err}
}

func TestValidateReportsDuplicatesAndBadEvents(t *testing.T) {
	doc := &TraceDocument{
		Spans:  []Span{{ID: "a"}, {ID: "a"}},
		Memory: []MemoryEvent{{Action: 9}, {Category: 42}},
	}
	errs := unjoin(doc.Validate())
	if len(errs) != 3 {
		t.Fatalf("Validate = %v, want 3 problems (duplicate span, bad action, bad category)", errs)
	}
	var se *SpanError
	if !errors.As(errs[0], &se) || se.SpanID != "a" {
		t.Errorf("first problem = %v, want a *SpanError for span a", errs[0])
	}
	for _, c := range []Category{NumCategories, 255} {
		if err := (&TraceDocument{Memory: []MemoryEvent{{Category: c}}}).Validate(); err == nil || !strings.Contains(err.Error(), "invalid category") {
			t.Errorf("Validate of category %d = %v, want it named invalid", c, err)
		}
	}
	cycle := &TraceDocument{Spans: []Span{{ID: "a", ParentID: "b"}, {ID: "b", ParentID: "a"}}}
	if err := cycle.Validate(); err == nil || err.Error() != `span "b": parent links form a cycle (a -> b); the link to its parent is cut` {
		t.Errorf("Validate of a two-span cycle = %v, want the cycle a -> b cut at b", err)
	}
	if err := (&TraceDocument{Spans: []Span{{ID: "a"}, {ID: "b", ParentID: "a"}}}).Validate(); err != nil {
		t.Errorf("Validate of a sound tree = %v, want nil", err)
	}
	if _, err := Analyze(doc, Options{}); err == nil {
		t.Error("Analyze accepted an event with an invalid action")
	}
	// NodeMemoryMetrics has no error to return: it says so by an empty map,
	// not by spans with zeros, which would read as measured.
	if m := NodeMemoryMetrics(doc, nil); m == nil || len(m) != 0 {
		t.Errorf("NodeMemoryMetrics of a document with invalid events = %v, want an empty map", m)
	}
}

// TestNodeMetricsDeepTree: a chain 100,000 spans deep, given leaf first, is
// neither recursed on nor cut, measured and static, and a cycle closing it
// does not hang. Go stacks grow to 1 GB, deep enough for a recursion on
// this depth: the test caps them at 1 MB, so that one crashes the test.
func TestNodeMetricsDeepTree(t *testing.T) {
	defer debug.SetMaxStack(debug.SetMaxStack(1 << 20))
	const depth = 100_000
	spans := make([]Span, depth)
	for i := range spans {
		// spans[0] is the leaf; spans[depth-1] the root.
		spans[i] = Span{ID: fmt.Sprintf("s%06d", i), Closed: true, DurationNs: 100}
		if i+1 < depth {
			spans[i].ParentID = fmt.Sprintf("s%06d", i+1)
		}
	}
	doc := &TraceDocument{Spans: spans, Memory: []MemoryEvent{
		{TimestampNs: 1, TensorID: "t", SpanID: spans[0].ID, Device: "cuda:0", Bytes: 64},
	}}
	got := NodeMemoryMetrics(doc, nil)
	if len(got) != depth {
		t.Fatalf("%d nodes, want %d", len(got), depth)
	}
	for _, id := range []string{spans[0].ID, spans[depth/2].ID, spans[depth-1].ID} {
		if m := got[id]; m.PeakBytes != 64 || m.ResidualBytes != 64 {
			t.Errorf("%s = %+v, want peak and residual 64 (the leaf's allocation counts for every ancestor)", id, m)
		}
	}
	if err := doc.Validate(); err != nil {
		t.Errorf("Validate = %v, want nil", err)
	}
	// With no memory events, the static estimate rolls the leaf's op up.
	b := uint64(48)
	static := &TraceDocument{Spans: spans, Ops: []Op{{SpanID: spans[0].ID, OpName: "mm", StorageBytes: &b}}}
	got = NodeMemoryMetrics(static, nil)
	for _, id := range []string{spans[0].ID, spans[depth/2].ID, spans[depth-1].ID} {
		if m := got[id]; m.PeakBytes != 48 {
			t.Errorf("static %s = %+v, want peak 48 (the leaf's op is every ancestor's static peak)", id, m)
		}
	}
	// Close the chain into a cycle: the root's parent is the leaf.
	doc.Spans[depth-1].ParentID = spans[0].ID
	got = NodeMemoryMetrics(doc, nil)
	if m := got[spans[0].ID]; m.PeakBytes != 64 {
		t.Errorf("leaf = %+v after closing the cycle, want peak 64", m)
	}
	var ce *SpanCycleError
	if err := doc.Validate(); !errors.As(err, &ce) || len(ce.Spans) != depth {
		t.Errorf("Validate = %v, want a cycle of %d spans", err, depth)
	}
}

// TestNodeMetricsOpWithoutOutput: an op that names no output leaves nothing
// behind, even when a tensor whose id is the empty string is live (the
// reader accepts "" as a tensor id). Found by FuzzAnalyzeReference, for an
// op of an unknown span.
func TestNodeMetricsOpWithoutOutput(t *testing.T) {
	b := uint64(8)
	for _, tt := range []struct{ name, span string }{
		{"unknown span", "gone"},
		{"open span", "open"},
		{"closed span", "closed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			doc := &TraceDocument{
				Spans:  []Span{{ID: "open"}, {ID: "closed", Closed: true, DurationNs: 10}},
				Ops:    []Op{{SpanID: tt.span, OpName: "a", StorageBytes: &b}},
				Memory: []MemoryEvent{{TimestampNs: 1, TensorID: "", SpanID: tt.span, Device: "cuda:0", Bytes: 1}},
			}
			if got := NodeMemoryMetrics(doc, nil)[tt.span+"/op/0"]; got.ResidualBytes != 0 {
				t.Errorf("op node = %+v, want residual 0: the op has no output", got)
			}
		})
	}
}

// TestNodeMetricsIDClash: a node id is one node. A span keeps its id against
// an op whose node id is the same, and the first of ops with one id (given
// or by default) keeps it; entries for no op are ignored; Validate names the
// clashes it can see (the default op ids).
func TestNodeMetricsIDClash(t *testing.T) {
	b := uint64(100)
	alloc := MemoryEvent{TimestampNs: 1, TensorID: "y", SpanID: "s/op/0", Device: "cuda:0", Bytes: 7}
	// twoOps has ops s/op/0 (100 bytes) and s/op/1 (12 bytes).
	twoOps := &TraceDocument{
		Spans: []Span{{ID: "s"}},
		Ops: []Op{
			{SpanID: "s", OpName: "a", StorageBytes: &b},
			{SpanID: "s", OpName: "b", Shape: []uint64{3}, DType: "f32"},
		},
	}
	tests := []struct {
		name, why string
		doc       *TraceDocument
		opNodeIDs map[OpKey]string
		want      map[string]NodeMetrics
		problems  []string // Validate's messages
	}{
		{
			name: "span named like an op's default id",
			why:  "every span has its node: the op's default id is taken, so the op has none, and Validate says so",
			doc: &TraceDocument{
				Spans:  []Span{{ID: "s"}, {ID: "s/op/0", ParentID: "s"}},
				Ops:    []Op{{SpanID: "s", OpName: "mm", StorageBytes: &b}},
				Memory: []MemoryEvent{alloc},
			},
			want: map[string]NodeMetrics{
				"s":      {Bytes: 100, PeakBytes: 7, ResidualBytes: 7},
				"s/op/0": {PeakBytes: 7, ResidualBytes: 7},
			},
			problems: []string{`span "s/op/0": the id is also the node id of ops[0] (op 0 of span "s"), which node metrics leave out`},
		},
		{
			name: "op mapped onto a span id",
			why:  "the caller's id for the op is taken by a span; Validate cannot see the caller's ids",
			doc: &TraceDocument{
				Spans: []Span{{ID: "s"}},
				Ops:   []Op{{SpanID: "s", OpName: "mm", StorageBytes: &b}},
			},
			opNodeIDs: map[OpKey]string{{SpanID: "s", Index: 0}: "s"},
			want:      map[string]NodeMetrics{"s": {Bytes: 100, PeakBytes: 100}},
		},
		{
			name:      "two ops mapped to one id",
			why:       "the first op in document order keeps the node, as the first of duplicate spans does",
			doc:       twoOps,
			opNodeIDs: map[OpKey]string{{SpanID: "s", Index: 0}: "n", {SpanID: "s", Index: 1}: "n"},
			want: map[string]NodeMetrics{
				"s": {Bytes: 112, PeakBytes: 112},
				"n": {Bytes: 100, PeakBytes: 100, StorageBytes: 100},
			},
		},
		{
			name:      "op mapped onto a later op's default id",
			why:       "a given id and a default id are one kind of id: the first op in document order keeps it (from an independent check: the doc spoke of given ids only)",
			doc:       twoOps,
			opNodeIDs: map[OpKey]string{{SpanID: "s", Index: 0}: "s/op/1"},
			want: map[string]NodeMetrics{
				"s":      {Bytes: 112, PeakBytes: 112},
				"s/op/1": {Bytes: 100, PeakBytes: 100, StorageBytes: 100},
			},
		},
		{
			name:      "op mapped onto an earlier op's default id",
			why:       "likewise the other way: the earlier op keeps its default id, the later op mapped onto it has no node",
			doc:       twoOps,
			opNodeIDs: map[OpKey]string{{SpanID: "s", Index: 1}: "s/op/0"},
			want: map[string]NodeMetrics{
				"s":      {Bytes: 112, PeakBytes: 112},
				"s/op/0": {Bytes: 100, PeakBytes: 100, StorageBytes: 100},
			},
		},
		{
			name: "ids given for no op, a 0-byte op and as empty",
			why:  "entries that name no op or an op of 0 bytes are ignored (the 0-byte op does not take the id from the op that has it); \"\" is an id like any other",
			doc: &TraceDocument{
				Spans: []Span{{ID: "s"}},
				Ops: []Op{
					{SpanID: "s", OpName: "view"},
					{SpanID: "s", OpName: "a", StorageBytes: &b},
				},
			},
			opNodeIDs: map[OpKey]string{
				{SpanID: "s", Index: 0}: "x", {SpanID: "s", Index: 1}: "", {SpanID: "s", Index: 2}: "none",
				{SpanID: "s", Index: -1}: "none", {SpanID: "gone", Index: 0}: "none",
			},
			want: map[string]NodeMetrics{
				"s": {Bytes: 100, PeakBytes: 100},
				"":  {Bytes: 100, PeakBytes: 100, StorageBytes: 100},
			},
		},
		{
			name: "span named like an op of 0 bytes",
			why:  "an op of 0 bytes has no node, so nothing clashes",
			doc: &TraceDocument{
				Spans: []Span{{ID: "s"}, {ID: "s/op/1"}},
				Ops:   []Op{{SpanID: "s", OpName: "a", StorageBytes: &b}, {SpanID: "s", OpName: "view"}},
			},
			want: map[string]NodeMetrics{
				"s":      {Bytes: 100, PeakBytes: 100},
				"s/op/0": {Bytes: 100, PeakBytes: 100, StorageBytes: 100},
				"s/op/1": {},
			},
		},
		{
			name: "span named like an op of an unknown span",
			why:  "ops of spans the document lacks still get a node, so they clash too",
			doc: &TraceDocument{
				Spans: []Span{{ID: "gone/op/1"}},
				Ops: []Op{
					{SpanID: "gone", OpName: "a"},
					{SpanID: "gone", OpName: "b", StorageBytes: &b},
				},
			},
			want:     map[string]NodeMetrics{"gone/op/1": {}},
			problems: []string{`span "gone/op/1": the id is also the node id of ops[1] (op 1 of span "gone"), which node metrics leave out`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := NodeMemoryMetrics(tt.doc, tt.opNodeIDs)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tt.why, diff)
			}
			var problems []string
			for _, err := range unjoin(tt.doc.Validate()) {
				var se *SpanError
				if !errors.As(err, &se) {
					t.Errorf("Validate problem %v is not a *SpanError", err)
				}
				problems = append(problems, err.Error())
			}
			if diff := cmp.Diff(tt.problems, problems); diff != "" {
				t.Errorf("Validate (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNodeMetricsOpNodeIDs(t *testing.T) {
	b := uint64(12)
	doc := &TraceDocument{
		Spans: []Span{{ID: "s"}},
		Ops: []Op{
			{SpanID: "s", OpName: "a", StorageBytes: &b},
			{SpanID: "s", OpName: "b", StorageBytes: &b},
			{SpanID: "gone", OpName: "c", Shape: []uint64{2}, DType: "f32"},
		},
	}
	got := NodeMemoryMetrics(doc, map[OpKey]string{{SpanID: "s", Index: 1}: "node-b"})
	want := map[string]NodeMetrics{
		"s":         {Bytes: 24, PeakBytes: 24},
		"s/op/0":    {Bytes: 12, PeakBytes: 12, StorageBytes: 12},
		"node-b":    {Bytes: 12, PeakBytes: 12, StorageBytes: 12},
		"gone/op/0": {Bytes: 8, PeakBytes: 8, StorageBytes: 8},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mapped ids replace the default, unmapped keep it, ops of unknown spans still get a node (-want +got):\n%s", diff)
	}
}

// TestNodeMetricsEdges: a span ending past 2⁶⁴ ns ends with the trace, not
// at its wrapped end; a span without a parent is a root even when a span
// has the id "" (an absent parent_id is "").
func TestNodeMetricsEdges(t *testing.T) {
	late := &TraceDocument{
		Spans:  []Span{{ID: "s", StartNs: math.MaxUint64, Closed: true, DurationNs: 1}},
		Memory: []MemoryEvent{{TimestampNs: 5, TensorID: "t", SpanID: "s", Device: "d", Bytes: 64}},
	}
	if got := NodeMemoryMetrics(late, nil)["s"].ResidualBytes; got != 64 {
		t.Errorf("span ending past 2⁶⁴: residual %d, want 64 (its end saturates, after every event)", got)
	}
	empty := &TraceDocument{
		Spans:  []Span{{ID: ""}, {ID: "c"}},
		Memory: []MemoryEvent{{TimestampNs: 1, TensorID: "t", SpanID: "c", Device: "d", Bytes: 64}},
	}
	m := NodeMemoryMetrics(empty, nil)
	if m[""].PeakBytes != 0 || m["c"].PeakBytes != 64 {
		t.Errorf("span \"\" peak %d, c peak %d; want 0 and 64: c has no parent", m[""].PeakBytes, m["c"].PeakBytes)
	}
	for _, doc := range []*TraceDocument{late, empty} {
		if diff := cmp.Diff(refNodeMetrics(doc, nil), NodeMemoryMetrics(doc, nil)); diff != "" {
			t.Errorf("differs from the reference (-want +got):\n%s", diff)
		}
	}
}
