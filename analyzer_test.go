// analyzer_test.go tests the streaming Analyzer: snapshots mid-stream, errors, and late inputs.

package tracemem

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/google/go-cmp/cmp"
)

// feed adds a document's spans, ops and samples, then returns the memory
// events in replay order, for the caller to add.
func feed(t *testing.T, a *Analyzer, doc *TraceDocument) []MemoryEvent {
	t.Helper()
	for _, s := range orderSpans(doc.Spans) {
		sp := doc.Spans[s.index]
		if s.cut {
			sp.ParentID = ""
		}
		if err := a.AddSpan(&sp); err != nil {
			t.Fatal(err)
		}
	}
	for i := range doc.Ops {
		if err := a.AddOp(&doc.Ops[i]); err != nil {
			t.Fatal(err)
		}
	}
	for i := range doc.DeviceMemory {
		if err := a.AddDeviceMemory(&doc.DeviceMemory[i]); err != nil {
			t.Fatal(err)
		}
	}
	return refSorted(doc)
}

// TestAnalyzerSnapshots: Profile and NodeMetrics mid-stream equal the
// one-call analyses of the prefix replayed so far, and taking a snapshot
// changes nothing that follows.
func TestAnalyzerSnapshots(t *testing.T) {
	for seed := range 300 {
		r := rand.New(rand.NewPCG(uint64(seed), 3))
		doc := randomDoc(r)
		opts := Options{MaxTimelinePoints: r.IntN(4)}
		a := NewAnalyzer(opts)
		evs := feed(t, a, doc)
		for k, ev := range evs {
			if err := a.Add(&ev); err != nil {
				t.Fatal(err)
			}
			if r.IntN(4) != 0 && k != len(evs)-1 {
				continue
			}
			prefix := *doc
			prefix.Memory = evs[:k+1]
			want, err := Analyze(&prefix, opts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, a.Profile()); diff != "" {
				t.Fatalf("seed %d, after event %d: Profile differs from Analyze of the prefix (-want +got):\n%s", seed, k, diff)
			}
			if diff := cmp.Diff(NodeMemoryMetrics(&prefix, nil), a.NodeMetrics(nil)); diff != "" {
				t.Fatalf("seed %d, after event %d: NodeMetrics differs (-want +got):\n%s", seed, k, diff)
			}
		}
	}
}

// TestAnalyzerSummaryAndLiveBytes: after every memory event, Summary is the
// slow reference's summary of the prefix replayed so far, DeviceStats each
// device's entry of its ByDevice, and LiveBytes of each device the sum of
// the allocations live on it, recomputed from scratch (pre-existing memory
// found so far was freed when it was found; an old device that a duplicate
// alloc on another device lowered has no point of its own, so the timeline
// cannot serve as the reference). Asking them changes nothing that follows.
func TestAnalyzerSummaryAndLiveBytes(t *testing.T) {
	for seed := range 400 {
		r := rand.New(rand.NewPCG(uint64(seed), 11))
		doc := randomDoc(r)
		opts := Options{MaxTimelinePoints: r.IntN(4), SkipNodeMetrics: r.IntN(2) == 0}
		a := NewAnalyzer(opts)
		evs := feed(t, a, doc)
		devices := []string{"cuda:0", "cuda:1", "cpu", "nowhere"}
		empty := refAnalyze(&TraceDocument{}, opts).Summary
		if diff := cmp.Diff(empty, a.Summary()); diff != "" {
			t.Fatalf("seed %d, before any event: Summary differs (-want +got):\n%s", seed, diff)
		}
		_, liveAfter := refReplay(evs)
		for k, ev := range evs {
			if err := a.Add(&ev); err != nil {
				t.Fatal(err)
			}
			prefix := *doc
			prefix.Memory = evs[:k+1]
			ref := refAnalyze(&prefix, opts)
			if diff := cmp.Diff(ref.Summary, a.Summary()); diff != "" {
				t.Fatalf("seed %d, after event %d: Summary differs from the reference's (-want +got):\n%s", seed, k, diff)
			}
			for _, dev := range devices {
				var want uint64
				for _, al := range liveAfter[k] {
					if al.ev.Device == dev {
						want += al.ev.Bytes
					}
				}
				// A device is known once an event changed it: ByDevice lists it.
				at := slices.IndexFunc(ref.ByDevice, func(d DeviceMemoryStats) bool { return d.Device == dev })
				if got, ok := a.LiveBytes(dev); got != want || ok != (at >= 0) {
					t.Fatalf("seed %d, after event %d: LiveBytes(%q) = %d, %t; want %d, %t", seed, k, dev, got, ok, want, at >= 0)
				}
				var wantStats DeviceMemoryStats
				if at >= 0 {
					wantStats = ref.ByDevice[at]
				}
				if got, ok := a.DeviceStats(dev); got != wantStats || ok != (at >= 0) {
					t.Fatalf("seed %d, after event %d: DeviceStats(%q) = %+v, %t; want %+v, %t", seed, k, dev, got, ok, wantStats, at >= 0)
				}
			}
		}
		want, err := Analyze(doc, opts)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, a.Profile()); diff != "" {
			t.Fatalf("seed %d: Profile after the accessors differs from Analyze (-want +got):\n%s", seed, diff)
		}
	}
}

func TestAnalyzerErrors(t *testing.T) {
	a := NewAnalyzer(Options{})
	ev := MemoryEvent{TimestampNs: 10, TensorID: "a", Device: "cuda:0", Bytes: 8}
	if err := a.Add(&ev); err != nil {
		t.Fatal(err)
	}
	before := a.Profile()
	back := MemoryEvent{TimestampNs: 9, TensorID: "b", Device: "cuda:0", Bytes: 8}
	if err := a.Add(&back); !errors.Is(err, ErrOutOfOrder) {
		t.Errorf("Add of an event going back in time = %v, want ErrOutOfOrder", err)
	}
	if diff := cmp.Diff(before, a.Profile()); diff != "" {
		t.Errorf("a refused event changed the profile (-before +after):\n%s", diff)
	}
	bad := MemoryEvent{TimestampNs: 11, Action: 7}
	if err := a.Add(&bad); err == nil {
		t.Error("Add accepted action 7")
	}

	if err := a.AddSpan(&Span{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	var se *SpanError
	if err := a.AddSpan(&Span{ID: "s"}); !errors.As(err, &se) || se.Msg != "duplicate span id" {
		t.Errorf("duplicate AddSpan = %v", err)
	}
	if err := a.EndSpan("nope", 1); !errors.As(err, &se) || se.Msg != "end of an unknown span" {
		t.Errorf("EndSpan of an unknown span = %v", err)
	}
	if err := a.EndSpan("s", 1); err != nil {
		t.Fatal(err)
	}
	if err := a.EndSpan("s", 1); !errors.As(err, &se) || se.Msg != "span ended twice" {
		t.Errorf("second EndSpan = %v", err)
	}
	// Records given in Go have no line: the error says a record named the
	// span (AnalyzeStream's say which line; see TestStreamOrder).
	named := MemoryEvent{TimestampNs: 12, TensorID: "c", SpanID: "late", Device: "cuda:0", Bytes: 8}
	if err := a.Add(&named); err != nil {
		t.Fatal(err)
	}
	const want = `out of order: span "late" starts after a record that names it`
	if err := a.AddSpan(&Span{ID: "late"}); !errors.Is(err, ErrOutOfOrder) || err.Error() != want {
		t.Errorf("AddSpan of a span named before = %v, want %q", err, want)
	}

	bad2 := NewAnalyzer(Options{MaxTimelinePoints: -1})
	if err := bad2.Add(&ev); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("Add with negative MaxTimelinePoints = %v, want ErrInvalidOptions", err)
	}
	if err := bad2.AddSpan(&Span{ID: "s"}); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("AddSpan with negative MaxTimelinePoints = %v, want ErrInvalidOptions", err)
	}
	// Every input method says so, whichever comes first (EndSpan's and
	// AddDeviceMemory's were run by no test).
	for name, call := range map[string]func(*Analyzer) error{
		"EndSpan":         func(a *Analyzer) error { return a.EndSpan("s", 1) },
		"AddDeviceMemory": func(a *Analyzer) error { return a.AddDeviceMemory(&DeviceMemorySample{Device: "cuda:0"}) },
		"AddOp":           func(a *Analyzer) error { return a.AddOp(&Op{SpanID: "s"}) },
	} {
		if err := call(NewAnalyzer(Options{MaxTimelinePoints: -1})); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("%s first with negative MaxTimelinePoints = %v, want ErrInvalidOptions", name, err)
		}
	}
	if diff := cmp.Diff(AnalyzeMemory(&TraceDocument{}), bad2.Profile()); diff != "" {
		t.Errorf("Profile with invalid options is not that of an empty trace (-want +got):\n%s", diff)
	}
	if m := bad2.NodeMetrics(nil); len(m) != 0 {
		t.Errorf("NodeMetrics with invalid options = %v, want no spans", m)
	}
	if _, err := Analyze(&TraceDocument{}, Options{MaxTimelinePoints: -3}); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("Analyze with negative MaxTimelinePoints = %v, want ErrInvalidOptions", err)
	}
}

// TestCategoryStaysPresentAtZero: rule 7, a category seen on a device stays
// in by_category once back to 0, and one never seen there is absent.
func TestCategoryStaysPresentAtZero(t *testing.T) {
	doc := &TraceDocument{Memory: []MemoryEvent{
		{TimestampNs: 1, TensorID: "g", Device: "cuda:0", Bytes: 8, Category: CategoryGradient},
		{TimestampNs: 2, TensorID: "g", Device: "cuda:0", Bytes: 8, Action: ActionFree, Category: CategoryGradient},
		{TimestampNs: 3, TensorID: "x", Device: "cuda:1", Bytes: 4, Category: CategoryActivation},
		{TimestampNs: 4, TensorID: "a", Device: "cuda:0", Bytes: 4, Category: CategoryActivation},
	}}
	p := AnalyzeMemory(doc)
	want := []CategoryBytes{
		{Present: CategorySet(0).With(CategoryGradient), Bytes: [NumCategories]uint64{CategoryGradient: 8}},
		{Present: CategorySet(0).With(CategoryGradient)},
		{Present: CategorySet(0).With(CategoryActivation), Bytes: [NumCategories]uint64{CategoryActivation: 4}},
		{Present: CategorySet(0).With(CategoryGradient).With(CategoryActivation), Bytes: [NumCategories]uint64{CategoryActivation: 4}},
	}
	var got []CategoryBytes
	for _, pt := range p.Timeline {
		got = append(got, pt.ByCategory)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("by_category (-want +got):\n%s", diff)
	}
	js, err := p.Timeline[1].ByCategory.MarshalJSON()
	if err != nil || string(js) != `{"gradient":0}` {
		t.Errorf("JSON of a category back at 0 = %s, %v; want {\"gradient\":0}", js, err)
	}
}

// TestLateCapacity: capacity samples that arrive after points were made
// still give every point its free bytes.
func TestLateCapacity(t *testing.T) {
	a := NewAnalyzer(Options{})
	for i, b := range []uint64{100, 300} {
		ev := MemoryEvent{TimestampNs: uint64(i), TensorID: string(rune('a' + i)), Device: "cuda:0", Bytes: b}
		if err := a.Add(&ev); err != nil {
			t.Fatal(err)
		}
	}
	c := uint64(1000)
	if err := a.AddDeviceMemory(&DeviceMemorySample{Device: "cuda:0", UsedBytes: 1, FreeBytes: 1, CapacityBytes: &c}); err != nil {
		t.Fatal(err)
	}
	p := a.Profile()
	if got := []uint64{p.Timeline[0].FreeBytes, p.Timeline[1].FreeBytes}; !cmp.Equal(got, []uint64{900, 600}) {
		t.Errorf("free bytes %v, want [900 600]", got)
	}
	if p.ByDevice[0].CapacityBytes != 1000 {
		t.Errorf("capacity %d, want 1000", p.ByDevice[0].CapacityBytes)
	}
}

// TestEmptyProfile: no events give zero values and empty, non-nil lists.
func TestEmptyProfile(t *testing.T) {
	p := AnalyzeMemory(&TraceDocument{})
	js, err := jsonMarshal(p)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"summary":{"alloc_count":0,"free_count":0,"total_alloc_bytes":0,"peak_bytes":0,"peak_timestamp_ns":0,"peak_device":"","peak_by_category":{},"autograd_retained_bytes":0,"preexisting_bytes":0},"timeline":[],"peak_breakdown":[],"by_device":[],"anomalies":{"unmatched_frees":0,"double_frees":0,"duplicate_allocs":0,"size_mismatches":0}}`
	if string(js) != want {
		t.Errorf("empty profile JSON =\n%s\nwant\n%s", js, want)
	}
}

// TestProfileJSON: every field of a profile has the name and shape issue 3
// gives (the reference producer's), checked on a profile with one entry in
// each list: a breakdown entry with an op name and one without (null).
func TestProfileJSON(t *testing.T) {
	capacity := uint64(1000)
	p := AnalyzeMemory(&TraceDocument{
		DeviceMemory: []DeviceMemorySample{{Device: "d", CapacityBytes: &capacity}},
		Memory: []MemoryEvent{
			{TimestampNs: 1, TensorID: "a", SpanID: "s", OpName: "matmul", Device: "d", Bytes: 64, Shape: []uint64{4, 4}, DType: "f32", Category: CategoryActivation},
			{TimestampNs: 2, TensorID: "b", SpanID: "s", Device: "d", Bytes: 8, DType: "u8"},
		},
	})
	js, err := jsonMarshal(p)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"summary":{"alloc_count":2,"free_count":0,"total_alloc_bytes":72,"peak_bytes":72,"peak_timestamp_ns":2,"peak_device":"d",` +
		`"peak_by_category":{"activation":64,"other":8},"autograd_retained_bytes":0,"preexisting_bytes":0},` +
		`"timeline":[{"timestamp_ns":1,"device":"d","live_bytes":64,"heap_bytes":64,"free_bytes":936,"by_category":{"activation":64}},` +
		`{"timestamp_ns":2,"device":"d","live_bytes":72,"heap_bytes":72,"free_bytes":928,"by_category":{"activation":64,"other":8}}],` +
		`"peak_breakdown":[{"tensor_id":"a","span_id":"s","op_name":"matmul","bytes":64,"shape":[4,4],"dtype":"f32","device":"d","category":"activation"},` +
		`{"tensor_id":"b","span_id":"s","op_name":null,"bytes":8,"shape":[],"dtype":"u8","device":"d","category":"other"}],` +
		`"by_device":[{"device":"d","capacity_bytes":1000,"peak_bytes":72,"peak_timestamp_ns":2,"alloc_count":2,"free_count":0}],` +
		`"anomalies":{"unmatched_frees":0,"double_frees":0,"duplicate_allocs":0,"size_mismatches":0}}`
	if string(js) != want {
		t.Errorf("profile JSON =\n%s\nwant\n%s", js, want)
	}
}

// TestScalarShapeJSON: an allocation whose event has no shape (a scalar,
// as the readers give it: nil) is listed with shape [] in the breakdown,
// not null, with encoding/json as with json v2.
func TestScalarShapeJSON(t *testing.T) {
	p := AnalyzeMemory(&TraceDocument{Memory: []MemoryEvent{{TimestampNs: 1, TensorID: "s", Device: "d", Bytes: 4}}})
	for name, marshal := range map[string]func(any) ([]byte, error){
		"encoding/json": json.Marshal,
		"json v2":       func(v any) ([]byte, error) { return jsonv2.Marshal(v) },
	} {
		js, err := marshal(p.PeakBreakdown)
		if err != nil {
			t.Fatal(err)
		}
		if want := `"shape":[]`; !strings.Contains(string(js), want) {
			t.Errorf("%s: breakdown %s lacks %s", name, js, want)
		}
	}
}

// TestSaturation: byte sums saturate instead of wrapping.
func TestSaturation(t *testing.T) {
	huge := ^uint64(0) - 10
	doc := &TraceDocument{Memory: []MemoryEvent{
		{TimestampNs: 1, TensorID: "a", Device: "d", Bytes: huge},
		{TimestampNs: 2, TensorID: "b", Device: "d", Bytes: huge},
	}}
	p := AnalyzeMemory(doc)
	if p.Summary.TotalAllocBytes != ^uint64(0) {
		t.Errorf("total_alloc_bytes = %d, want the saturated maximum", p.Summary.TotalAllocBytes)
	}
	// Live bytes are counted in int64 (see doc.go, Units): past 2⁶³ they
	// saturate there, not wrap; for allocations each below 2⁶³ too, whose
	// sum is not (each of the two above is capped on its own).
	for _, mem := range [][]MemoryEvent{doc.Memory, {
		{TimestampNs: 1, TensorID: "a", Device: "d", Bytes: 1 << 62},
		{TimestampNs: 2, TensorID: "b", Device: "d", Bytes: 1<<62 + 10},
	}} {
		p := AnalyzeMemory(&TraceDocument{Memory: mem})
		if p.Summary.PeakBytes != math.MaxInt64 || p.Timeline[1].LiveBytes != math.MaxInt64 {
			t.Errorf("allocations of %d and %d: peak %d, live %d; want %d (saturated)", mem[0].Bytes, mem[1].Bytes,
				p.Summary.PeakBytes, p.Timeline[1].LiveBytes, int64(math.MaxInt64))
		}
	}
}

// TestSaturationLimit: up to 2⁶³−1 live bytes, the figures are exact (doc.go,
// Units), so every invariant holds at the limit itself, pre-existing memory
// included.
func TestSaturationLimit(t *testing.T) {
	half := uint64(1) << 62
	doc := &TraceDocument{Memory: []MemoryEvent{
		{TimestampNs: 1, TensorID: "a", Device: "d", Bytes: half},
		{TimestampNs: 2, TensorID: "b", Device: "d", Bytes: half - 101, Category: CategoryActivation},
		{TimestampNs: 3, TensorID: "w", Device: "d", Bytes: 100, Action: ActionFree}, // pre-existing: 100 B live until here
		{TimestampNs: 4, TensorID: "a", Device: "d", Bytes: half, Action: ActionFree},
	}}
	for _, points := range []int{0, 3} {
		p, err := Analyze(doc, Options{MaxTimelinePoints: points})
		if err != nil {
			t.Fatal(err)
		}
		if p.Summary.PeakBytes != math.MaxInt64 || p.Summary.PeakTimestampNs != 2 {
			t.Errorf("MaxTimelinePoints %d: peak %d at %d ns, want %d at 2 ns", points, p.Summary.PeakBytes, p.Summary.PeakTimestampNs, int64(math.MaxInt64))
		}
		// The pre-existing free's point, 100 B below the peak (downsampled
		// to 3, the highest of the second window of 2), and the last.
		var got []uint64
		for _, pt := range p.Timeline[len(p.Timeline)-2:] {
			got = append(got, pt.LiveBytes)
		}
		if want := []uint64{math.MaxInt64 - 100, half - 101}; !slices.Equal(got, want) {
			t.Errorf("MaxTimelinePoints %d: last two points %d, want %d", points, got, want)
		}
		checkInvariants(t, doc, p)
	}
}

// TestAutogradAcrossDevices: autograd_retained_bytes adds up the devices'
// activation bytes as byte counts, saturating at 2⁶⁴−1 like the other
// totals. It used to add their counts relative to the pools in an int64
// first, so two devices of 1.5·2⁶² live bytes each gave 2⁶³−1, and pools
// freed before the backward event gave 2⁶²+1 instead of 0.
func TestAutogradAcrossDevices(t *testing.T) {
	big := uint64(3) << 61
	ev := func(ts uint64, id, dev string, b uint64, a MemoryAction, c Category, span string) MemoryEvent {
		return MemoryEvent{TimestampNs: ts, TensorID: id, SpanID: span, Device: dev, Bytes: b, Action: a, Category: c}
	}
	backward := ev(3, "g", "cuda:0", 1, ActionAlloc, CategoryGradient, "b")
	for _, tc := range []struct {
		name, reason string
		mem          []MemoryEvent
		want         uint64
	}{
		{"sum past 2^63", "each device below 2⁶³, their sum above",
			[]MemoryEvent{ev(1, "x", "cuda:0", big, ActionAlloc, CategoryActivation, ""), ev(2, "y", "cuda:1", big, ActionAlloc, CategoryActivation, ""), backward},
			2 * big},
		{"pools freed", "pre-existing activations freed on both devices before the backward event: nothing is live",
			[]MemoryEvent{ev(1, "w0", "cuda:0", big, ActionFree, CategoryActivation, ""), ev(2, "w1", "cuda:1", big, ActionFree, CategoryActivation, ""), backward},
			0},
		{"pool freed later", "a pre-existing activation freed after the backward event, on a device seen only then, was live at it",
			[]MemoryEvent{ev(1, "x", "cuda:0", 10, ActionAlloc, CategoryActivation, ""), backward, ev(4, "w", "cuda:1", big, ActionFree, CategoryActivation, "")},
			big + 10},
		{"saturated", "three devices past 2⁶⁴ saturate",
			[]MemoryEvent{ev(1, "x", "a", big, ActionAlloc, CategoryActivation, ""), ev(1, "y", "b", big, ActionAlloc, CategoryActivation, ""), ev(1, "z", "c", big, ActionAlloc, CategoryActivation, ""), backward},
			^uint64(0)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := &TraceDocument{Spans: []Span{{ID: "b", Step: StepBackward}}, Memory: tc.mem}
			if got := AnalyzeMemory(doc).Summary.AutogradRetainedBytes; got != tc.want {
				t.Errorf("%s: autograd_retained_bytes = %d, want %d", tc.reason, got, tc.want)
			}
			a := NewAnalyzer(Options{})
			mem := feed(t, a, doc)
			for i := range mem {
				if err := a.Add(&mem[i]); err != nil {
					t.Fatal(err)
				}
			}
			if got := a.Profile().Summary.AutogradRetainedBytes; got != tc.want {
				t.Errorf("Analyzer: %s: autograd_retained_bytes = %d, want %d", tc.reason, got, tc.want)
			}
		})
	}
}

// TestSaturationEdges: sums that reach 2⁶⁴ saturate (rule 2) in the
// figures the random traces never bring that far.
func TestSaturationEdges(t *testing.T) {
	top := uint64(math.MaxInt64)
	t.Run("preexisting_bytes", func(t *testing.T) {
		// Three devices' pools of 2⁶³−1 each: every device within the exact
		// range, the total past 2⁶⁴.
		doc := &TraceDocument{Memory: []MemoryEvent{
			{TimestampNs: 1, TensorID: "a", Device: "d0", Bytes: top, Action: ActionFree},
			{TimestampNs: 2, TensorID: "b", Device: "d1", Bytes: top, Action: ActionFree},
			{TimestampNs: 3, TensorID: "c", Device: "d2", Bytes: top, Action: ActionFree},
		}}
		if got := AnalyzeMemory(doc).Summary.PreexistingBytes; got != math.MaxUint64 {
			t.Errorf("preexisting_bytes = %d, want %d (saturated)", got, uint64(math.MaxUint64))
		}
	})
	t.Run("pool", func(t *testing.T) {
		// One device's pool past 2⁶³: no longer exact, but saturated, and
		// each point's categories still sum to its live bytes.
		doc := &TraceDocument{Memory: []MemoryEvent{
			{TimestampNs: 1, TensorID: "a", Device: "d", Bytes: top + 1, Action: ActionFree},
			{TimestampNs: 2, TensorID: "b", Device: "d", Bytes: top + 1, Action: ActionFree},
		}}
		p := AnalyzeMemory(doc)
		if p.Summary.PeakBytes < top {
			t.Errorf("peak %d: the pool wrapped", p.Summary.PeakBytes)
		}
		checkInvariants(t, doc, p)
	})
	t.Run("span across devices", func(t *testing.T) {
		// A span's bytes sum its devices': three of 2⁶³−1 pass 2⁶⁴, where
		// its peak saturates, and a free brings it back to an exact 2⁶⁴−2
		// (a running total saturated on the way up gave 2⁶³).
		doc := &TraceDocument{Spans: []Span{{ID: "s", Name: "s", Measured: true}}, Memory: []MemoryEvent{
			{TimestampNs: 1, TensorID: "a", SpanID: "s", Device: "d0", Bytes: top},
			{TimestampNs: 2, TensorID: "b", SpanID: "s", Device: "d1", Bytes: top},
			{TimestampNs: 3, TensorID: "c", SpanID: "s", Device: "d2", Bytes: top},
			{TimestampNs: 4, TensorID: "a", SpanID: "s", Device: "d0", Bytes: top, Action: ActionFree},
		}}
		want := NodeMetrics{PeakBytes: math.MaxUint64, ResidualBytes: 2 * top}
		if got := NodeMemoryMetrics(doc, nil)["s"]; got != want {
			t.Errorf("span s: %+v, want %+v", got, want)
		}
		doc.Memory = append(doc.Memory, MemoryEvent{TimestampNs: 5, TensorID: "b", SpanID: "s", Device: "d1", Bytes: top, Action: ActionFree})
		want.ResidualBytes = top
		if got := NodeMemoryMetrics(doc, nil)["s"]; got != want {
			t.Errorf("span s after a second free: %+v, want %+v", got, want)
		}
	})
	t.Run("ops of a span", func(t *testing.T) {
		// A span's bytes sum its own ops': two of 2⁶³ saturate at 2⁶⁴−1,
		// not wrap to 0 (found by mutation testing). No memory events: the
		// peak is the static one, the bytes requested.
		half := uint64(1) << 63
		doc := &TraceDocument{Spans: []Span{{ID: "s", Name: "s", Measured: true, Closed: true, DurationNs: 10}}, Ops: []Op{
			{SpanID: "s", OpName: "a", StorageBytes: &half},
			{SpanID: "s", OpName: "b", StorageBytes: &half},
		}}
		if got := NodeMemoryMetrics(doc, nil)["s"]; got.Bytes != math.MaxUint64 || got.PeakBytes != math.MaxUint64 {
			t.Errorf("span s: %+v, want bytes and peak %d (saturated)", got, uint64(math.MaxUint64))
		}
	})
	t.Run("used+free", func(t *testing.T) {
		doc := &TraceDocument{
			DeviceMemory: []DeviceMemorySample{{Device: "d", UsedBytes: top + 1, FreeBytes: top + 1}},
			Memory:       []MemoryEvent{{TimestampNs: 1, TensorID: "a", Device: "d", Bytes: 100}},
		}
		p := AnalyzeMemory(doc)
		if got := p.ByDevice[0].CapacityBytes; got != math.MaxUint64 {
			t.Errorf("capacity from used + free of 2⁶³ each = %d, want %d (saturated)", got, uint64(math.MaxUint64))
		}
	})
}

// TestLiveBytesSaturates: past 2⁶³ LiveBytes saturates as the timeline's
// live bytes do (a sum that wraps would fall): after each event it equals
// the device's point, and the last is the uint64 maximum.
func TestLiveBytesSaturates(t *testing.T) {
	a := NewAnalyzer(Options{})
	evs := []MemoryEvent{
		{TimestampNs: 1, TensorID: "pre", Device: "d", Bytes: math.MaxUint64, Action: ActionFree},
		{TimestampNs: 2, TensorID: "a", Device: "d", Bytes: math.MaxInt64},
		{TimestampNs: 3, TensorID: "b", Device: "d", Bytes: math.MaxInt64},
	}
	for i := range evs {
		if err := a.Add(&evs[i]); err != nil {
			t.Fatal(err)
		}
		tl := a.Profile().Timeline
		if got, _ := a.LiveBytes("d"); got != tl[len(tl)-1].LiveBytes {
			t.Errorf("after event %d: LiveBytes = %d, the timeline's point %d", i, got, tl[len(tl)-1].LiveBytes)
		}
	}
	if got, _ := a.LiveBytes("d"); got != math.MaxUint64 {
		t.Errorf("LiveBytes = %d, want %d (saturated)", got, uint64(math.MaxUint64))
	}
}

// TestInvalidCategory: a category just past the last is an error, not a
// panic (Analyze's doc promises an error for one out of range).
func TestInvalidCategory(t *testing.T) {
	for _, c := range []Category{NumCategories, NumCategories + 1, 255} {
		doc := &TraceDocument{Memory: []MemoryEvent{{TensorID: "a", Device: "d", Bytes: 1, Category: c}}}
		if _, err := Analyze(doc, Options{}); err == nil || !strings.Contains(err.Error(), "invalid category") {
			t.Errorf("category %d: error %v, want invalid category", c, err)
		}
	}
}

// TestInvalidEventMessage: an invalid event's error is an *EventError that
// names the tensor and its time, and for Analyze the event's index, once,
// without repeating the record kind; it matches ErrInvalidEvent
// (TestSentinelsDistinct checks that no other error does).
func TestInvalidEventMessage(t *testing.T) {
	tests := []struct {
		name, reason string
		ev           MemoryEvent
		want         string
		wantErr      EventError // for Add; Analyze's has Index 1
	}{
		{"action", "an action out of range", MemoryEvent{TimestampNs: 5, TensorID: "t1", Device: "d", Bytes: 1, Action: 7},
			`tensor "t1" at 5 ns: invalid action 7`, EventError{-1, "t1", 5, "action", 7}},
		{"category", "a category out of range", MemoryEvent{TimestampNs: 5, TensorID: "t1", Device: "d", Bytes: 1, Category: 9},
			`tensor "t1" at 5 ns: invalid category 9`, EventError{-1, "t1", 5, "category", 9}},
		{"both", "an event with both out of range is reported for its action, as Validate lists it first",
			MemoryEvent{TimestampNs: 6, TensorID: "t2", Device: "d", Bytes: 1, Action: 2, Category: NumCategories},
			`tensor "t2" at 6 ns: invalid action 2`, EventError{-1, "t2", 6, "action", 2}},
	}
	check := func(what string, err error, want string, wantErr EventError, reason string) {
		t.Helper()
		if err == nil || err.Error() != want || !errors.Is(err, ErrInvalidEvent) {
			t.Errorf("%s: %v, want %q matching ErrInvalidEvent (%s)", what, err, want, reason)
		}
		var ee *EventError
		if !errors.As(err, &ee) {
			t.Errorf("%s: %v is not an *EventError (%s)", what, err, reason)
		} else if diff := cmp.Diff(wantErr, *ee); diff != "" {
			t.Errorf("%s: %s: EventError (-want +got):\n%s", what, reason, diff)
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			check("Add", NewAnalyzer(Options{}).Add(&tt.ev), tt.want, tt.wantErr, tt.reason)
			doc := &TraceDocument{Memory: []MemoryEvent{{TensorID: "t0", Device: "d", Bytes: 1}, tt.ev}}
			_, err := Analyze(doc, Options{})
			wantErr := tt.wantErr
			wantErr.Index = 1
			check("Analyze", err, "memory[1]: "+tt.want, wantErr, tt.reason)
		})
	}
}

// TestZeroAnalyzer: the zero Analyzer is one with the zero Options: fed
// the same records, it gives what NewAnalyzer(Options{}) gives, through
// each method that adds something (each used first, since the first call
// makes it ready).
func TestZeroAnalyzer(t *testing.T) {
	doc := &TraceDocument{
		Spans:        []Span{{ID: "s", Name: "s", Measured: true}}, // open: EndSpan closes it
		Ops:          []Op{{SpanID: "s", OpName: "x", Output: "a", StorageBytes: new(uint64(8))}},
		DeviceMemory: []DeviceMemorySample{{Device: "d", CapacityBytes: new(uint64(100))}},
		Memory: []MemoryEvent{
			{TimestampNs: 1, TensorID: "a", SpanID: "s", Device: "d", Bytes: 8, Category: CategoryActivation},
			{TimestampNs: 2, TensorID: "b", SpanID: "s", Device: "d", Bytes: 4},
			{TimestampNs: 8, Action: ActionFree, TensorID: "b", Device: "d", Bytes: 4},
		},
	}
	feed := func(t *testing.T, a *Analyzer, first string) {
		t.Helper()
		steps := map[string]func() error{
			"AddDeviceMemory": func() error { return a.AddDeviceMemory(&doc.DeviceMemory[0]) },
			"AddSpan":         func() error { return a.AddSpan(&doc.Spans[0]) },
		}
		order := []string{"AddSpan", "AddDeviceMemory"}
		if first == "AddDeviceMemory" {
			order = []string{"AddDeviceMemory", "AddSpan"}
		}
		for _, name := range order {
			if err := steps[name](); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		if err := a.AddOp(&doc.Ops[0]); err != nil {
			t.Fatalf("AddOp: %v", err)
		}
		for i := range doc.Memory {
			if err := a.Add(&doc.Memory[i]); err != nil {
				t.Fatalf("Add: %v", err)
			}
		}
		if err := a.EndSpan("s", 10); err != nil {
			t.Fatalf("EndSpan: %v", err)
		}
	}
	want := NewAnalyzer(Options{})
	feed(t, want, "AddSpan")
	if got := want.NodeMetrics(nil)["s"]; got.PeakBytes != 12 {
		t.Fatalf("the reference Analyzer measured span s at %+v, want a peak of 12", got)
	}
	for _, first := range []string{"AddSpan", "AddDeviceMemory"} {
		var a Analyzer
		feed(t, &a, first)
		if diff := cmp.Diff(want.Profile(), a.Profile()); diff != "" {
			t.Errorf("first call %s: profile differs from NewAnalyzer(Options{})'s (-want +got):\n%s", first, diff)
		}
		if diff := cmp.Diff(want.NodeMetrics(nil), a.NodeMetrics(nil)); diff != "" {
			t.Errorf("first call %s: node metrics differ from NewAnalyzer(Options{})'s (-want +got):\n%s", first, diff)
		}
	}
	var fresh Analyzer
	if m := fresh.NodeMetrics(nil); m == nil || len(m) != 0 {
		t.Errorf("a zero Analyzer given nothing: node metrics %#v, want an empty map (nil means skipped)", m)
	}
	if s := fresh.Summary(); s != (MemorySummary{}) {
		t.Errorf("a zero Analyzer given nothing: summary %+v, want the zero summary", s)
	}
	if b, ok := fresh.LiveBytes("d"); b != 0 || ok {
		t.Errorf("a zero Analyzer given nothing: LiveBytes = %d, %t; want 0, false", b, ok)
	}
	if s, ok := fresh.DeviceStats("d"); s != (DeviceMemoryStats{}) || ok {
		t.Errorf("a zero Analyzer given nothing: DeviceStats = %+v, %t; want the zero value, false", s, ok)
	}
	for name, call := range map[string]func(a *Analyzer) error{
		"Add":   func(a *Analyzer) error { return a.Add(&doc.Memory[0]) },
		"AddOp": func(a *Analyzer) error { return a.AddOp(&doc.Ops[0]) },
		"EndSpan": func(a *Analyzer) error {
			var se *SpanError
			if err := a.EndSpan("x", 1); !errors.As(err, &se) {
				return fmt.Errorf("EndSpan of an unknown span = %v, want a *SpanError", err)
			}
			return nil
		},
	} {
		var a Analyzer
		if err := call(&a); err != nil {
			t.Errorf("%s first on a zero Analyzer: %v", name, err)
		}
	}
}

// TestDuplicateSpanStep: with a span id used twice (a hand-built document;
// ReadTrace refuses one), the first span decides the step, as it decides
// everything else.
func TestDuplicateSpanStep(t *testing.T) {
	doc := &TraceDocument{
		Spans: []Span{{ID: "b", Step: StepForward}, {ID: "a"}, {ID: "b", Step: StepBackward}}, // not in id order
		Memory: []MemoryEvent{
			{TimestampNs: 0, TensorID: "x", SpanID: "a", Device: "d", Bytes: 100, Category: CategoryActivation},
			{TimestampNs: 1, TensorID: "g", SpanID: "b", Device: "d", Bytes: 10, Category: CategoryGradient},
		},
	}
	if got := AnalyzeMemory(doc).Summary.AutogradRetainedBytes; got != 0 {
		t.Errorf("autograd_retained_bytes = %d, want 0: the first span b is forward", got)
	}
	if diff := cmp.Diff(refAnalyze(doc, Options{}), AnalyzeMemory(doc)); diff != "" {
		t.Errorf("differs from the reference (-want +got):\n%s", diff)
	}
}

// TestAddCopiesEvent: Add keeps a copy of the event, so a caller that
// reuses its MemoryEvent (as a decoder does) does not change the profile.
func TestAddCopiesEvent(t *testing.T) {
	a := NewAnalyzer(Options{})
	var ev MemoryEvent
	for i, id := range []string{"a", "b", "c"} {
		ev = MemoryEvent{TimestampNs: uint64(i), TensorID: id, SpanID: "s" + id, OpName: "op" + id, Device: "cuda:0", Bytes: uint64(100 * (i + 1))}
		if err := a.Add(&ev); err != nil {
			t.Fatal(err)
		}
	}
	ev = MemoryEvent{TimestampNs: 9, TensorID: "zz", Device: "cpu", Bytes: 1, Action: ActionFree}
	var got []string
	for _, la := range a.Profile().PeakBreakdown {
		got = append(got, la.TensorID+"/"+la.SpanID+"/"+*la.OpName+"/"+la.Device)
	}
	want := []string{"c/sc/opc/cuda:0", "b/sb/opb/cuda:0", "a/sa/opa/cuda:0"}
	if !cmp.Equal(got, want) {
		t.Errorf("breakdown after the caller reused its event = %v, want %v", got, want)
	}
}

// TestAddRecordsKeepNoReference: AddSpan, AddOp and AddDeviceMemory keep
// no reference to their argument, its slices or its pointers (their doc
// says the caller may reuse them): a caller that feeds every record through
// one variable, scribbling over it after each call, gets the answers of the
// document the records make.
func TestAddRecordsKeepNoReference(t *testing.T) {
	doc := &TraceDocument{
		Spans: []Span{
			{ID: "root", Name: "step", StartNs: 0, Closed: true, DurationNs: 100},
			{ID: "fwd", ParentID: "root", Name: "fwd", StartNs: 1, Step: StepForward, Closed: true, DurationNs: 50},
		},
		Ops: []Op{
			{SpanID: "fwd", OpName: "mm", Inputs: []string{"x"}, Output: "t1", Shape: []uint64{4, 4}, DType: "f32", StorageBytes: new(uint64(64))},
			{SpanID: "root", OpName: "add", Output: "t2", Shape: []uint64{2}, DType: "f32"},
		},
		DeviceMemory: []DeviceMemorySample{{Device: "d", UsedBytes: 10, FreeBytes: 990, CapacityBytes: new(uint64(1000))}},
		Memory: []MemoryEvent{
			{TimestampNs: 2, TensorID: "t1", SpanID: "fwd", Device: "d", Bytes: 64},
			{TimestampNs: 3, TensorID: "t2", SpanID: "root", Device: "d", Bytes: 8},
			{TimestampNs: 200, TensorID: "t1", SpanID: "root", Device: "d", Bytes: 64, Action: ActionFree},
		},
	}
	a := NewAnalyzer(Options{})
	var sp Span
	for _, s := range doc.Spans {
		sp = s
		if err := a.AddSpan(&sp); err != nil {
			t.Fatal(err)
		}
		sp = Span{ID: "scribbled", ParentID: "scribbled", Closed: true, DurationNs: 1}
	}
	var op Op
	for _, o := range doc.Ops {
		op = o
		op.Inputs, op.Shape = slices.Clone(o.Inputs), slices.Clone(o.Shape)
		if o.StorageBytes != nil {
			op.StorageBytes = new(*o.StorageBytes)
		}
		if err := a.AddOp(&op); err != nil {
			t.Fatal(err)
		}
		for i := range op.Inputs {
			op.Inputs[i] = "scribbled"
		}
		for i := range op.Shape {
			op.Shape[i] = 1 << 40
		}
		if op.StorageBytes != nil {
			*op.StorageBytes = 1 << 50
		}
		op = Op{SpanID: "scribbled", Output: "t1", StorageBytes: op.StorageBytes}
	}
	var dm DeviceMemorySample
	for _, d := range doc.DeviceMemory {
		dm = d
		dm.CapacityBytes = new(*d.CapacityBytes)
		if err := a.AddDeviceMemory(&dm); err != nil {
			t.Fatal(err)
		}
		*dm.CapacityBytes = 1 << 60
		dm = DeviceMemorySample{Device: "scribbled", UsedBytes: 1 << 61, CapacityBytes: dm.CapacityBytes}
	}
	for i := range doc.Memory {
		if err := a.Add(&doc.Memory[i]); err != nil {
			t.Fatal(err)
		}
	}
	want, err := Analyze(doc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, a.Profile()); diff != "" {
		t.Errorf("profile (-document +reused records):\n%s", diff)
	}
	if diff := cmp.Diff(NodeMemoryMetrics(doc, nil), a.NodeMetrics(nil)); diff != "" {
		t.Errorf("node metrics (-document +reused records):\n%s", diff)
	}
	if got := want.ByDevice[0].CapacityBytes; got != 1000 {
		t.Errorf("capacity %d, want 1000: the case no longer tests the sample", got)
	}
}

// TestTimelineFinish: points written during the replay are fixed at the end
// when only the end tells their values. Each case triggers one reason alone;
// the profile (mid-stream, final, and through Analyze) must match the
// reference.
func TestTimelineFinish(t *testing.T) {
	tests := []struct {
		name, reason string
		mem          []MemoryEvent
	}{
		{"pool-without-negative", "a pre-existing free smaller than what is live keeps every count ≥ 0; earlier points still need the pool",
			[]MemoryEvent{
				{TimestampNs: 1, TensorID: "a", Device: "d", Bytes: 100, Category: CategoryActivation},
				{TimestampNs: 2, TensorID: "p", Device: "d", Bytes: 50, Action: ActionFree, Category: CategoryActivation},
			}},
		{"zero-byte-pool", "a 0-byte pre-existing free adds no bytes but its category is present from the start",
			[]MemoryEvent{
				{TimestampNs: 1, TensorID: "a", Device: "d", Bytes: 100, Category: CategoryParameter},
				{TimestampNs: 2, TensorID: "p", Device: "d", Bytes: 0, Action: ActionFree, Category: CategoryActivation},
			}},
		{"two-devices-one-fixed", "only the device with a pool is fixed; the other keeps its points",
			[]MemoryEvent{
				{TimestampNs: 1, TensorID: "a", Device: "d0", Bytes: 10},
				{TimestampNs: 2, TensorID: "b", Device: "d1", Bytes: 20},
				{TimestampNs: 3, TensorID: "p", Device: "d1", Bytes: 5, Action: ActionFree},
				{TimestampNs: 4, TensorID: "c", Device: "d0", Bytes: 30},
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc := &TraceDocument{Memory: tc.mem}
			want := refAnalyze(doc, Options{})
			got, err := Analyze(doc, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s\nAnalyze differs from the reference (-want +got):\n%s", tc.reason, diff)
			}
			a := NewAnalyzer(Options{})
			for i := range tc.mem {
				if err := a.Add(&tc.mem[i]); err != nil {
					t.Fatal(err)
				}
				mid := a.Profile()
				if diff := cmp.Diff(refAnalyze(&TraceDocument{Memory: tc.mem[:i+1]}, Options{}), mid); diff != "" {
					t.Errorf("%s\nprofile after %d events differs (-want +got):\n%s", tc.reason, i+1, diff)
				}
			}
			if diff := cmp.Diff(want, a.lastProfile()); diff != "" {
				t.Errorf("%s\nlast profile differs (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

// TestTimelineNegativeAfterSaturation: a live count that saturated can
// come back below zero with no pre-existing memory; those points must read
// 0, not the two's complement bits they were written with. (The reference
// does not saturate, so the values are spelled out.)
func TestTimelineNegativeAfterSaturation(t *testing.T) {
	top := uint64(math.MaxInt64)
	mem := []MemoryEvent{
		{TimestampNs: 1, TensorID: "x", Device: "d", Bytes: top},
		{TimestampNs: 2, TensorID: "y", Device: "d", Bytes: 5},
		{TimestampNs: 3, TensorID: "y", Device: "d", Bytes: 5, Action: ActionFree},
		{TimestampNs: 4, TensorID: "x", Device: "d", Bytes: top, Action: ActionFree},
	}
	p := AnalyzeMemory(&TraceDocument{Memory: mem})
	var live, other []uint64
	for _, tp := range p.Timeline {
		live = append(live, tp.LiveBytes)
		other = append(other, tp.ByCategory.Get(CategoryOther))
	}
	want := []uint64{top, top, top - 5, 0}
	if !cmp.Equal(live, want) || !cmp.Equal(other, want) {
		t.Errorf("live %v, other %v; want both %v", live, other, want)
	}

	// A category can come back below zero while the live bytes do not
	// (another category filled them up again; saturated, the categories no
	// longer add up to the live bytes): its points must read 0 too,
	// with or without downsampling (from a mutation test: no case had a
	// negative category under non-negative live bytes).
	mem = []MemoryEvent{
		{TimestampNs: 1, TensorID: "x1", Device: "d", Bytes: top, Category: CategoryActivation},
		{TimestampNs: 2, TensorID: "x2", Device: "d", Bytes: top, Category: CategoryActivation},
		{TimestampNs: 3, TensorID: "x1", Device: "d", Bytes: top, Category: CategoryActivation, Action: ActionFree},
		{TimestampNs: 4, TensorID: "y", Device: "d", Bytes: top, Category: CategoryOther},
		{TimestampNs: 5, TensorID: "x2", Device: "d", Bytes: top, Category: CategoryActivation, Action: ActionFree},
	}
	for _, points := range []int{0, 1000} {
		p, err := Analyze(&TraceDocument{Memory: mem}, Options{MaxTimelinePoints: points})
		if err != nil {
			t.Fatal(err)
		}
		last := p.Timeline[len(p.Timeline)-1]
		if got := last.ByCategory.Get(CategoryActivation); got != 0 || last.LiveBytes != 0 || last.ByCategory.Get(CategoryOther) != top {
			t.Errorf("MaxTimelinePoints %d: last point live %d, activation %d, other %d; want 0, 0, %d",
				points, last.LiveBytes, got, last.ByCategory.Get(CategoryOther), top)
		}
	}
}

// TestSat64 spells out the saturating int64 arithmetic of live counts: a
// sum that overflows below gives MinInt64+1 (from a mutation test: no case
// reached it), one of exactly MinInt64 is kept, and subtracting MinInt64
// subtracts MinInt64+1, whose negation fits.
func TestSat64(t *testing.T) {
	const maxI, minI = math.MaxInt64, math.MinInt64
	for _, c := range []struct {
		name       string
		a, b, want int64
	}{
		{"plain", 3, 4, 7},
		{"to the top", maxI - 1, 1, maxI},
		{"past the top", maxI, 1, maxI},
		{"past the top, both big", maxI, maxI, maxI},
		{"to MinInt64, no overflow", minI + 1, -1, minI},
		{"past MinInt64", minI + 1, -2, minI + 1},
		{"past MinInt64, both big", minI + 1, minI + 1, minI + 1},
		{"signs differ", maxI, minI + 1, 0},
	} {
		if got := addSat64(c.a, c.b); got != c.want {
			t.Errorf("%s: addSat64(%d, %d) = %d, want %d", c.name, c.a, c.b, got, c.want)
		}
	}
	for _, c := range []struct {
		name       string
		a, b, want int64
	}{
		{"plain", 3, 4, -1},
		{"below MinInt64", minI + 1, 2, minI + 1},
		{"MinInt64 taken as MinInt64+1", 0, minI, maxI},
		{"above the top", maxI, -1, maxI},
	} {
		if got := subSat64(c.a, c.b); got != c.want {
			t.Errorf("%s: subSat64(%d, %d) = %d, want %d", c.name, c.a, c.b, got, c.want)
		}
	}
}

// TestSkipNodeMetricsNamed: with SkipNodeMetrics, the ids of spans that
// records name before the span comes are kept until the first backward
// memory event (such a span could still make an earlier event the first
// backward one, so it must be refused); records after that event add none,
// as no answer depends on their spans any more.
func TestSkipNodeMetricsNamed(t *testing.T) {
	a := NewAnalyzer(Options{SkipNodeMetrics: true})
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(a.AddSpan(&Span{ID: "b", Name: "b", Measured: true, Step: StepBackward}))
	must(a.Add(&MemoryEvent{TimestampNs: 1, TensorID: "x", SpanID: "early", Device: "d", Bytes: 8}))
	must(a.Add(&MemoryEvent{TimestampNs: 2, TensorID: "g", SpanID: "b", Device: "d", Bytes: 8, Category: CategoryGradient}))
	for i := range 100 {
		must(a.Add(&MemoryEvent{TimestampNs: 3, TensorID: fmt.Sprint("t", i), SpanID: fmt.Sprint("late", i), Device: "d", Bytes: 8}))
	}
	if len(a.named) != 1 {
		t.Errorf("%d span ids kept, want 1: only the one named before the first backward event", len(a.named))
	}
	if err := a.AddSpan(&Span{ID: "early", Name: "early", Measured: true, Step: StepBackward}); !errors.Is(err, ErrOutOfOrder) {
		t.Errorf("a span named before the first backward event, added after it: %v, want ErrOutOfOrder", err)
	}
	must(a.AddSpan(&Span{ID: "late0", Name: "late0", Measured: true}))
}

// TestSkipNodeMetricsForgetsEndedSpans: with SkipNodeMetrics a span is
// forgotten when it ends, also when no memory event comes after it (spans
// were kept until a memory event past their end came, so a trace of spans
// alone kept them all: 2M spans, 848 MB; found by a resource review), and
// records that name it later, stamped before its end, still see whether it
// was backward.
func TestSkipNodeMetricsForgetsEndedSpans(t *testing.T) {
	a := NewAnalyzer(Options{SkipNodeMetrics: true})
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := range 10_000 {
		id := fmt.Sprint("s", i)
		must(a.AddSpan(&Span{ID: id, Name: "f", StartNs: uint64(10 * i), Measured: true, Step: StepForward}))
		must(a.EndSpan(id, 5))
	}
	if len(a.spans) > 1 || len(a.spanID) > 0 {
		t.Errorf("%d span slots and %d ids kept after 10,000 spans that ended, want at most 1 and none", len(a.spans), len(a.spanID))
	}
	must(a.AddSpan(&Span{ID: "b", Name: "b", StartNs: 100_000, Measured: true, Step: StepBackward}))
	must(a.AddSpan(&Span{ID: "c", ParentID: "b", Name: "c", StartNs: 100_001, Measured: true}))
	must(a.EndSpan("c", 5))
	must(a.EndSpan("b", 10))
	must(a.Add(&MemoryEvent{TimestampNs: 100_002, TensorID: "x", SpanID: "s3", Device: "d", Bytes: 8, Category: CategoryActivation}))
	if a.autogradSeen {
		t.Fatal("an event of a forward span that ended counts as backward")
	}
	must(a.Add(&MemoryEvent{TimestampNs: 100_003, TensorID: "g", SpanID: "c", Device: "d", Bytes: 4, Category: CategoryGradient}))
	if got := a.Profile().Summary.AutogradRetainedBytes; got != 8 {
		t.Errorf("autograd_retained_bytes %d, want 8: the event of c, under the backward span b, both ended, is the first backward one", got)
	}
}

// TestAnalyzerReusesSlots: the slot of a freed allocation is used again,
// so the slots grow with what is live, not with the allocs (issue 5's
// bound; only the 2M-event memory tests, skipped under -short, saw the
// slots never reused, from a rule-level mutation run).
func TestAnalyzerReusesSlots(t *testing.T) {
	a := NewAnalyzer(Options{MaxTimelinePoints: 10})
	for i := range 10_000 {
		id := fmt.Sprint("t", i)
		// Each alloc a new peak, so that nothing is kept for the breakdown.
		for _, act := range []MemoryAction{ActionAlloc, ActionFree} {
			ev := MemoryEvent{TimestampNs: uint64(i), TensorID: id, Device: "d", Bytes: uint64(i + 1), Action: act}
			if err := a.Add(&ev); err != nil {
				t.Fatal(err)
			}
		}
	}
	if a.allocs.n > 1 {
		t.Errorf("%d allocation slots handed out for 10,000 allocs, each freed before the next; want 1", a.allocs.n)
	}
	if p := a.Profile(); p.Summary.PeakBytes != 10_000 || p.Summary.AllocCount != 10_000 {
		t.Errorf("peak %d, %d allocs; want 10000, 10000", p.Summary.PeakBytes, p.Summary.AllocCount)
	}
}

// TestAnalyzerCacheEdges: three cases a mutation run of analyzer.go showed
// no test held, each with the observable answer the mutant changed.
func TestAnalyzerCacheEdges(t *testing.T) {
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Run("forgotten backward span", func(t *testing.T) {
		// With SkipNodeMetrics a record naming a backward span that ended
		// (and was forgotten) still takes the backward step, also when the
		// span's id was looked up, and cached, while it was open (a stale
		// cache entry gave no step: autograd retained 0).
		a := NewAnalyzer(Options{SkipNodeMetrics: true})
		must(a.AddSpan(&Span{ID: "b", Step: StepBackward}))
		must(a.AddSpan(&Span{ID: "c", ParentID: "b"})) // looks "b" up
		must(a.Add(&MemoryEvent{TimestampNs: 1, TensorID: "act", Device: "d", Bytes: 100, Action: ActionAlloc, Category: CategoryActivation}))
		must(a.EndSpan("b", 5))
		must(a.Add(&MemoryEvent{TimestampNs: 2, TensorID: "g", SpanID: "b", Device: "d", Bytes: 50, Action: ActionAlloc, Category: CategoryGradient}))
		if got := a.Profile().Summary.AutogradRetainedBytes; got != 100 {
			t.Errorf("AutogradRetainedBytes = %d, want 100 (the activation live at the first backward event)", got)
		}
	})
	t.Run("zero-byte op after its span's end", func(t *testing.T) {
		// An op of 0 bytes has no node, so it comes in time however late:
		// it cannot change bytes already measured.
		a := NewAnalyzer(Options{})
		must(a.AddSpan(&Span{ID: "s", Closed: true, DurationNs: 10}))
		must(a.Add(&MemoryEvent{TimestampNs: 20, TensorID: "x", Device: "d", Bytes: 8, Action: ActionAlloc}))
		zero := uint64(0)
		if err := a.AddOp(&Op{SpanID: "s", Output: "x", StorageBytes: &zero}); err != nil {
			t.Errorf("AddOp of a 0-byte op after the span's end: %v, want nil", err)
		}
	})
	t.Run("span id empty", func(t *testing.T) {
		// A span whose id is "" (nothing refuses one) gets the bytes of
		// the events that name it; an empty cache entry must not match "".
		doc := &TraceDocument{
			Spans:  []Span{{ID: ""}},
			Memory: []MemoryEvent{{TensorID: "t", SpanID: "", Device: "d", Bytes: 100, Action: ActionAlloc}},
		}
		if got := NodeMemoryMetrics(doc, nil)[""].PeakBytes; got != 100 {
			t.Errorf(`span "": PeakBytes = %d, want 100`, got)
		}
	})
}
