// memory_test.go tests AnalyzeMemory against the reference, the invariants, and the rules one by one.

package tracemem

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"

	"github.com/tracemem/tracemem/internal/gen"
	"github.com/tracemem/tracemem/internal/prefault"
)

func TestAnalyzeMatchesReference(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 500
	}
	for seed := range n {
		r := rand.New(rand.NewPCG(uint64(seed), 7))
		doc := randomDoc(r)
		opts := Options{}
		if seed%2 == 1 {
			opts.MaxTimelinePoints = 1 + r.IntN(6)
		}
		rmin := radixMin
		if seed%3 == 2 {
			rmin = 2 // a third of the breakdowns sorted by radix, however short
		}
		var got *MemoryProfile
		var err error
		withRadixMin(rmin, func() { got, err = Analyze(doc, opts) })
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		want := refAnalyze(doc, opts)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("seed %d, opts %+v: profile differs from the reference (-want +got):\n%s", seed, opts, diff)
		}
		checkInvariants(t, doc, got)
	}
}

// TestCyclesMatchReference compares Analyze and NodeMemoryMetrics with the
// references on random documents whose parent links form cycles (a span its
// own parent, too) and whose span ids repeat, cut and kept by refUncycled's
// restatement of the rule: randomDoc makes neither, as the readers refuse
// duplicates and a stream refuses cycles, so the references saw neither.
func TestCyclesMatchReference(t *testing.T) {
	n := 2000
	if testing.Short() {
		n = 400
	}
	cycles := 0
	for seed := range n {
		r := rand.New(rand.NewPCG(uint64(seed), 23))
		doc := randomDoc(r)
		if len(doc.Spans) < 1 {
			continue
		}
		for range 1 + r.IntN(3) {
			doc.Spans[r.IntN(len(doc.Spans))].ParentID = doc.Spans[r.IntN(len(doc.Spans))].ID
		}
		if r.IntN(3) == 0 { // an id again, elsewhere in the document, with its own parent and step
			dup := doc.Spans[r.IntN(len(doc.Spans))]
			dup.ParentID, dup.Step = doc.Spans[r.IntN(len(doc.Spans))].ID, Step(r.IntN(4))
			doc.Spans = slices.Insert(doc.Spans, r.IntN(len(doc.Spans)+1), dup)
		}
		var ce *SpanCycleError
		if errors.As(doc.Validate(), &ce) {
			cycles++
		}
		ref := refUncycled(doc)
		got, err := Analyze(doc, Options{})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if diff := cmp.Diff(refAnalyze(ref, Options{}), got); diff != "" {
			t.Fatalf("seed %d: profile differs from the reference (-want +got):\n%s\nspans %+v", seed, diff, doc.Spans)
		}
		if diff := cmp.Diff(refNodeMetrics(ref, nil), NodeMemoryMetrics(doc, nil)); diff != "" {
			t.Fatalf("seed %d: node metrics differ from the reference (-want +got):\n%s\nspans %+v", seed, diff, doc.Spans)
		}
	}
	if cycles < n/4 {
		t.Errorf("%d of %d documents had a cycle; the test needs more", cycles, n)
	}
	t.Logf("%d of %d documents had a cycle", cycles, n)
}

// TestLiveSharedKeys: with the live table keyed by two bits of the hash,
// most live tensor ids share a key; probes must keep them apart.
func TestLiveSharedKeys(t *testing.T) {
	defer func(m uint64) { liveKeyMask = m }(liveKeyMask)
	liveKeyMask = 3
	for seed := range 400 {
		r := rand.New(rand.NewPCG(uint64(seed), 13))
		doc := randomDoc(r)
		got, err := Analyze(doc, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(refAnalyze(doc, Options{}), got); diff != "" {
			t.Fatalf("seed %d: with shared live keys the profile differs (-want +got):\n%s", seed, diff)
		}
		if diff := cmp.Diff(refNodeMetrics(doc, nil), NodeMemoryMetrics(doc, nil)); diff != "" {
			t.Fatalf("seed %d: with shared live keys the node metrics differ (-want +got):\n%s", seed, diff)
		}
	}
}

func TestNodeMetricsMatchesReference(t *testing.T) {
	n := 2000
	if testing.Short() {
		n = 400
	}
	for seed := range n {
		r := rand.New(rand.NewPCG(uint64(seed), 11))
		doc := randomDoc(r)
		// Map some ops to ids of the caller's: one op to a new id, every
		// op to one id (the first keeps it), or an op to a span's id (the
		// span keeps it).
		var ids map[OpKey]string
		switch {
		case len(doc.Ops) == 0:
		case seed%4 == 0:
			ids = map[OpKey]string{{SpanID: doc.Ops[0].SpanID, Index: 0}: "mapped"}
		case seed%4 == 1:
			ids = map[OpKey]string{}
			n := map[string]int{}
			for _, op := range doc.Ops {
				ids[OpKey{SpanID: op.SpanID, Index: n[op.SpanID]}] = "shared"
				n[op.SpanID]++
			}
		case seed%4 == 2 && len(doc.Spans) > 0:
			ids = map[OpKey]string{{SpanID: doc.Ops[0].SpanID, Index: 0}: doc.Spans[0].ID}
		}
		got := NodeMemoryMetrics(doc, ids)
		want := refNodeMetrics(doc, ids)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("seed %d: node metrics differ from the reference (-want +got):\n%s", seed, diff)
		}
	}
}

// checkInvariants checks what must hold of every profile.
func checkInvariants(t *testing.T, doc *TraceDocument, p *MemoryProfile) {
	t.Helper()
	for i, pt := range p.Timeline {
		if s := pt.ByCategory.Total(); s != pt.LiveBytes {
			t.Errorf("point %d: by_category sums to %d, live_bytes %d", i, s, pt.LiveBytes)
		}
		if pt.LiveBytes > p.Summary.PeakBytes {
			t.Errorf("point %d: live %d above the peak %d", i, pt.LiveBytes, p.Summary.PeakBytes)
		}
		if pt.HeapBytes != pt.LiveBytes {
			t.Errorf("point %d: heap_bytes %d != live_bytes %d", i, pt.HeapBytes, pt.LiveBytes)
		}
	}
	var bd uint64
	for _, a := range p.PeakBreakdown {
		bd += a.Bytes
		if a.Device != p.Summary.PeakDevice {
			t.Errorf("breakdown lists %s on %s, peak device %s", a.TensorID, a.Device, p.Summary.PeakDevice)
		}
	}
	if pre := preexistingLiveAt(doc, p); bd+pre != p.Summary.PeakBytes {
		t.Errorf("breakdown %d + pre-existing %d != peak %d", bd, pre, p.Summary.PeakBytes)
	}
	var allocs, frees uint64
	for _, d := range p.ByDevice {
		allocs += d.AllocCount
		frees += d.FreeCount
		if d.PeakBytes > p.Summary.PeakBytes {
			t.Errorf("device %s peak %d above the global peak %d", d.Device, d.PeakBytes, p.Summary.PeakBytes)
		}
	}
	if allocs != p.Summary.AllocCount || frees != p.Summary.FreeCount {
		t.Errorf("by_device counts %d/%d, summary %d/%d", allocs, frees, p.Summary.AllocCount, p.Summary.FreeCount)
	}
}

// preexistingLiveAt returns the pre-existing bytes live on the peak device at
// the peak: those freed (as unmatched frees) after the event that first
// reached the peak.
func preexistingLiveAt(doc *TraceDocument, p *MemoryProfile) uint64 {
	if len(p.ByDevice) == 0 { // no memory events (a device may be named "")
		return 0
	}
	evs, liveAfter := refReplay(refSorted(doc))
	peak := -1
	for k, e := range evs {
		if e.dev != p.Summary.PeakDevice {
			continue
		}
		if live, _ := refDeviceState(evs, liveAfter, e.dev, k); live == p.Summary.PeakBytes {
			peak = k
			break
		}
	}
	var sum uint64
	for k, e := range evs {
		if e.kind == "pre" && e.dev == p.Summary.PeakDevice && k > peak {
			sum += e.ev.Bytes
		}
	}
	return sum
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

// TestProfileWithoutNodeBookkeeping: Analyze resolves span steps on demand
// (binary search over sorted ids, or a map) instead of adding every span;
// on random span graphs, cycles included, it must give the profile of the
// full replay that adds every span with the cycles cut.
func TestProfileWithoutNodeBookkeeping(t *testing.T) {
	for seed := range 1500 {
		r := rand.New(rand.NewPCG(uint64(seed), 17))
		doc := randomDoc(r)
		for i := range doc.Spans { // any parent at all: cycles, self-links
			if r.IntN(2) == 0 {
				doc.Spans[i].ParentID = fmt.Sprintf("s%d", r.IntN(len(doc.Spans)+1))
			}
		}
		if seed%2 == 0 {
			slices.SortFunc(doc.Spans, func(x, y Span) int { return strings.Compare(x.ID, y.ID) })
		}
		got, err := Analyze(doc, Options{})
		if err != nil {
			t.Fatal(err)
		}
		full, err := replayDocument(doc, Options{}, true)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(full.Profile(), got); diff != "" {
			t.Fatalf("seed %d: profile without node bookkeeping differs (-full +Analyze):\n%s", seed, diff)
		}
	}
}

// TestAnalyzePrefaultChangesNothing: on traces big enough for the helper
// that maps buffers in ahead (internal/prefault) to start, the profile is
// the same with it (GOMAXPROCS 2) and without it (GOMAXPROCS 1). Under the
// race detector this also runs the helper beside the replay.
func TestAnalyzePrefaultChangesNothing(t *testing.T) {
	for _, c := range []struct {
		name      string
		cfg       gen.Config
		breakdown bool // the peak breakdown is big enough to be mapped in ahead too
	}{
		{"normal", gen.Config{Seed: 3, MemoryEvents: 25_000, Devices: 2, Anomalies: true}, false},
		{"steady", gen.Config{Seed: 3, MemoryEvents: 40_000, Devices: 1, SteadyGrowth: true}, true}, // big enough with 32-bit pointers too
	} {
		t.Run(c.name, func(t *testing.T) {
			doc := genDoc(t, c.cfg)
			analyze := func(procs int) *MemoryProfile {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				p, err := Analyze(doc, Options{})
				if err != nil {
					t.Fatal(err)
				}
				return p
			}
			before := prefault.Pending()
			with, without := analyze(2), analyze(1)
			if n := prefault.Pending() - before; n != 0 {
				t.Errorf("%d helpers not stopped after the calls", n)
			}
			if n := len(with.Timeline) * int(unsafe.Sizeof(TimelinePoint{})); n < prefault.MinBytes {
				t.Fatalf("the timeline (%d bytes) is too small to be mapped in ahead", n)
			}
			if n := len(with.PeakBreakdown) * int(unsafe.Sizeof(LiveAllocation{})); c.breakdown && n < prefault.MinBytes {
				t.Fatalf("the peak breakdown (%d bytes) is too small to be mapped in ahead", n)
			}
			if diff := cmp.Diff(without, with); diff != "" {
				t.Fatalf("the profile differs with the helper (-without +with):\n%s", diff)
			}
		})
	}
}

// FuzzAnalyzeReference: for any small document ReadTrace accepts (of any
// format), Analyze and NodeMemoryMetrics give the slow reference's answers
// and the invariants hold. The random documents of the other reference
// tests come from one generator; the fuzzer's come from mutated inputs.
func FuzzAnalyzeReference(f *testing.F) {
	fuzzSeeds(f)
	for seed := range 8 {
		var b bytes.Buffer
		if err := randomDoc(rand.New(rand.NewPCG(uint64(seed), 17))).WriteJSONL(&b); err != nil {
			f.Fatal(err)
		}
		f.Add(b.Bytes())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := ReadTrace(bytes.NewReader(data))
		// The references recompute everything after each event: keep them
		// to documents they replay in milliseconds.
		if err != nil || len(doc.Memory) > 300 || len(doc.Spans) > 100 || len(doc.Ops) > 100 {
			return
		}
		opts := Options{}
		if len(data) > 0 && data[len(data)-1]%2 == 1 {
			opts.MaxTimelinePoints = 1 + int(data[len(data)-1]%5)
		}
		got, err := Analyze(doc, opts)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(refAnalyze(doc, opts), got); diff != "" {
			t.Fatalf("profile differs from the reference (-want +got):\n%s", diff)
		}
		checkInvariants(t, doc, got)
		if diff := cmp.Diff(refNodeMetrics(doc, nil), NodeMemoryMetrics(doc, nil)); diff != "" {
			t.Fatalf("node metrics differ from the reference (-want +got):\n%s", diff)
		}
		// Windows from the events' own times, an instant around each end.
		var windows [][2]uint64
		for i := 0; i+1 < len(doc.Memory) && len(windows) < 8; i += 2 {
			a, b := doc.Memory[i].TimestampNs, doc.Memory[i+1].TimestampNs
			windows = append(windows, [2]uint64{a, b}, [2]uint64{a + 1, b - min(b, 1)})
		}
		checkPeakBetween(t, doc, got, windows)
	})
}
