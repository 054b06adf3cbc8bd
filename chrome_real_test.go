// chrome_real_test.go checks ReadChromeTrace on traces that PyTorch itself wrote, against what a slow reading of the same file says.

package tracemem

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestChromeRealTrace reads testdata/chrome/torch-1.13-cpu.json, written by
// Debian's PyTorch 1.13 (a build without Kineto, whose profiler exports the
// legacy form: a bare array of "X" events on pid "CPU functions", no
// categories, no [memory] events) from torch-1.13-cpu.py: two profiled
// training steps of a small model. The hand-made fixtures follow the
// format's documentation; this one is what the library meets in the field.
// Every span is checked against the event it came from, its parent against
// the containment rule and its step against the step rules, each computed
// here from the raw events.
func TestChromeRealTrace(t *testing.T) {
	path := filepath.Join("testdata", "chrome", "torch-1.13-cpu.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := ReadTraceFile(path) // as a user would: the format is detected
	if err != nil {
		t.Fatalf("ReadTraceFile: %v", err)
	}

	type rawEvent struct {
		Name     string  `json:"name"`
		Ph       string  `json:"ph"`
		Ts       float64 `json:"ts"`
		Dur      float64 `json:"dur"`
		Pid      any     `json:"pid"`
		Tid      any     `json:"tid"`
		Cat      string  `json:"cat"`
		file     int
		parent   int // index in order, -1 for none
		startNs  uint64
		endNs    uint64
		wantStep Step
	}
	var raw []rawEvent
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	for i := range raw {
		raw[i].file = i
		if raw[i].Ph != "X" || raw[i].Cat != "" || raw[i].Pid != "CPU functions" || raw[i].Tid != 1.0 {
			t.Fatalf("event %d is not of the legacy form this test reads: %+v", i, raw[i])
		}
	}
	if len(raw) < 100 {
		t.Fatalf("the fixture has %d events: not the recorded trace", len(raw))
	}

	// Times are ns since the earliest event; spans are in order of start,
	// longer first, then file order.
	minTs := slices.MinFunc(raw, func(a, b rawEvent) int { return int(a.Ts - b.Ts) }).Ts
	for i := range raw {
		raw[i].startNs = uint64(raw[i].Ts-minTs) * 1000
		raw[i].endNs = raw[i].startNs + uint64(raw[i].Dur)*1000
	}
	order := slices.Clone(raw)
	slices.SortStableFunc(order, func(a, b rawEvent) int {
		if a.startNs != b.startNs {
			return int(a.startNs) - int(b.startNs)
		}
		return int(b.endNs) - int(a.endNs)
	})
	// A span's parent is the last span before it that contains it, or that
	// it starts strictly inside and ends at most 1 µs after: the writer
	// rounds start and duration down apart, which can put a child's end
	// 1 µs past its parent's (its parent, and any ancestor that ends
	// before it, then end with it).
	rounded := 0
	for i := range order {
		s := &order[i]
		s.parent = -1
		for j := i - 1; j >= 0; j-- {
			o := order[j]
			if o.startNs <= s.startNs && s.endNs <= o.endNs {
				s.parent = j
				break
			}
			if o.startNs <= s.startNs && s.startNs < o.endNs && s.endNs-o.endNs <= 1000 {
				s.parent = j
				for k := j; k >= 0 && order[k].endNs < s.endNs; k = order[k].parent {
					order[k].endNs = s.endNs
				}
				rounded++
				break
			}
		}
	}
	if rounded == 0 {
		t.Fatalf("no child ends after its parent in the fixture: the rounding rule goes unchecked")
	}
	// Its step: the nearest marker on the path up (itself included), else
	// forward inside a ProfilerStep, else none.
	marker := func(name string) Step {
		switch {
		case strings.HasPrefix(name, "autograd::engine::evaluate_function"),
			strings.HasSuffix(strings.TrimRight(name, "0123456789"), "Backward"),
			strings.HasPrefix(strings.TrimPrefix(name, "struct "), "torch::autograd::"):
			return StepBackward
		case strings.HasPrefix(name, "Optimizer.step#"), strings.HasPrefix(name, "Optimizer.zero_grad#"):
			return StepOptimizer
		}
		return StepNone
	}
	steps := map[Step]int{}
	for i := range order {
		order[i].wantStep = StepNone
		inStep := false
		for j := i; j >= 0; j = order[j].parent {
			if m := marker(order[j].Name); m != StepNone {
				order[i].wantStep = m
				break
			}
			inStep = inStep || (j != i && strings.HasPrefix(order[j].Name, "ProfilerStep#"))
		}
		if order[i].wantStep == StepNone && inStep {
			order[i].wantStep = StepForward
		}
		steps[order[i].wantStep]++
	}
	// The trace must exercise every rule, or the checks below prove little.
	for _, s := range []Step{StepNone, StepForward, StepBackward, StepOptimizer} {
		if steps[s] == 0 {
			t.Fatalf("no span of step %v in the fixture (%v)", s, steps)
		}
	}

	if len(doc.Spans) != len(order) {
		t.Fatalf("%d spans, want one per event: %d", len(doc.Spans), len(order))
	}
	index := make(map[string]int) // span id → position in order
	for i, s := range doc.Spans {
		index[s.ID] = i
	}
	annotations := 0
	for i, s := range doc.Spans {
		e := order[i]
		wantKind := SpanOp
		if strings.HasPrefix(e.Name, "ProfilerStep#") {
			wantKind = SpanFunction
			annotations++
		}
		if s.Name != e.Name || s.StartNs != e.startNs || s.DurationNs != e.endNs-e.startNs || s.Kind != wantKind {
			t.Errorf("span %d: %q kind %v at %d for %d ns, want %q kind %v at %d for %d ns (event %d)",
				i, s.Name, s.Kind, s.StartNs, s.DurationNs, e.Name, wantKind, e.startNs, e.endNs-e.startNs, e.file)
		}
		wantParent := -1
		if s.ParentID != "" {
			p, ok := index[s.ParentID]
			if !ok {
				t.Fatalf("span %q: parent %q is no span", s.ID, s.ParentID)
			}
			wantParent = p
		}
		if wantParent != e.parent {
			t.Errorf("span %d %q: parent at %d, want %d", i, s.Name, wantParent, e.parent)
		}
		if s.Step != e.wantStep {
			t.Errorf("span %d %q: step %v, want %v", i, s.Name, s.Step, e.wantStep)
		}
	}
	if len(doc.Ops) != len(doc.Spans)-annotations {
		t.Errorf("%d ops, want one per span that is not a ProfilerStep: %d", len(doc.Ops), len(doc.Spans)-annotations)
	}
	for _, op := range doc.Ops {
		s := doc.Spans[index[op.SpanID]]
		if op.OpName != s.Name || op.TimestampNs != s.StartNs || op.DurationNs != s.DurationNs || op.Device != "" {
			t.Errorf("op %+v does not mirror its span %+v", op, s)
		}
	}

	// No [memory] events: PyTorch writes them only with Kineto.
	if len(doc.Memory) != 0 || len(doc.DeviceMemory) != 0 {
		t.Errorf("%d memory events and %d samples from a trace that has none", len(doc.Memory), len(doc.DeviceMemory))
	}
	if doc.Run.Phase != PhaseTrain || doc.Run.Tags["source"] != "chrome_trace" {
		t.Errorf("run %+v, want phase train (it has backward spans) and source chrome_trace", doc.Run)
	}
	if err := doc.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	p := AnalyzeMemory(doc)
	if p.Summary != (MemorySummary{PeakByCategory: p.Summary.PeakByCategory}) || len(p.Timeline) != 0 || len(p.ByDevice) != 0 {
		t.Errorf("profile of a trace without memory events: %+v", p.Summary)
	}
}
