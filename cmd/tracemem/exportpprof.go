// exportpprof.go holds the pprof export: the memory live at the global peak as a gzipped profile.proto.

package main

import (
	"fmt"
	"io"
	"math"

	"github.com/google/pprof/profile"

	"github.com/tracemem/tracemem"
)

// Frames of the pprof export that name no span or op.
const (
	preexistingFrame = "[pre-existing]" // memory allocated before the trace began
	noSpanFrame      = "[no span]"      // an allocation that names no span
	elidedFrame      = "…"              // stands for the root end of a stack cut at maxStackFrames
)

// maxStackFrames bounds a sample's stack; deeper span paths keep their
// deepest frames under one elidedFrame.
const maxStackFrames = 1024

// opNamesSpan reports whether op, the op name of an allocation of span id,
// is that span's own name: the span is an op span of that name (as a
// PyTorch op's is), or t is a PyTorch trace, whose reader gives a memory
// event the name of its span, whatever its kind, as its op name. In a
// candle-graph trace a module or function may call an op of its name
// (linear calls linear): that op is a frame of its own.
func opNamesSpan(t *trace, id, op string) bool {
	s, ok := t.tree.span(id)
	return ok && s.name == op && (s.kind == tracemem.SpanOp || t.run != nil && t.run.source == "chrome_trace")
}

// buildPprof returns the memory live at the global peak as a profile with
// sample types inuse_objects/count and inuse_space/bytes (the default). Each
// allocation of the peak breakdown is one sample of one object whose stack
// is its span path from the root to the allocating span, with its op name
// (when it has one) as the leaf, unless that is the span's own name
// (opNamesSpan), which would name it twice; labels give its tensor id,
// dtype, category and device (those that are not empty, which pprof cannot
// hold: PyTorch traces have no dtype), and the numeric label bytes its size,
// as in Go's heap profiles (pprof's -tags lists the sizes, and
// -tagfocus=bytes=100MB: keeps the allocations of 100 MiB or more: pprof's
// MB is 2²⁰ bytes). The frames "[no span]", "…" and "[pre-existing]" (the
// constants above) are functions of their own, apart from a span of the same
// name. Pre-existing memory live at the peak (peak bytes minus the
// breakdown) is under the frame "[pre-existing]", one sample of 0 objects
// and no size label per category (the peak's bytes of the category minus the
// breakdown's), so the profile's inuse_space total is the peak and its
// category labels add up to the peak by category. Values above the largest
// int64 are clamped. Functions have a Name and no SystemName: pprof takes a
// function whose SystemName is its Name for one still to demangle, and cuts
// what lies between <> and () out of a name that looks like C++
// (Linear<f32>::forward(x) became Linear::forward, <lambda> nothing).
func buildPprof(t *trace) (*profile.Profile, error) {
	p := t.profile
	s := &p.Summary
	prof := &profile.Profile{
		SampleType: []*profile.ValueType{
			{Type: "inuse_objects", Unit: "count"},
			{Type: "inuse_space", Unit: "bytes"},
		},
		DefaultSampleType: "inuse_space",
		PeriodType:        &profile.ValueType{Type: "space", Unit: "bytes"},
		Period:            1,
	}
	if hasMemory(p) {
		prof.Comments = []string{fmt.Sprintf("tracemem: memory live on %s at the global peak, %d ns after the trace start: %d bytes",
			s.PeakDevice, s.PeakTimestampNs, s.PeakBytes)}
	}
	// A frame is a span or op name, or one of the frames above, kept
	// apart from a span that happens to have its name.
	type frame struct {
		name      string
		synthetic bool
	}
	locs := make(map[frame]*profile.Location)
	loc := func(fr frame) *profile.Location {
		if l, ok := locs[fr]; ok {
			return l
		}
		f := &profile.Function{ID: uint64(len(prof.Function) + 1), Name: fr.name}
		prof.Function = append(prof.Function, f)
		l := &profile.Location{ID: uint64(len(prof.Location) + 1), Line: []profile.Line{{Function: f}}}
		prof.Location = append(prof.Location, l)
		locs[fr] = l
		return l
	}
	// The span part of a stack, leaf first, per span id: samples of one
	// span share it, and a deep path is walked only as far as it is kept.
	spanStacks := make(map[string][]*profile.Location)
	var path []string
	spanStack := func(id string) []*profile.Location {
		if st, ok := spanStacks[id]; ok {
			return st
		}
		var st []*profile.Location
		if !t.tree.isSpan(id) {
			st = []*profile.Location{loc(frame{noSpanFrame, true})}
		} else {
			var more bool
			path, more = t.tree.leafNames(path[:0], id, maxStackFrames)
			for _, name := range path {
				st = append(st, loc(frame{name: name}))
			}
			if more {
				st = append(st[:maxStackFrames-1], loc(frame{elidedFrame, true}))
			}
		}
		spanStacks[id] = st
		return st
	}
	// The whole stack per span and op: samples of one share it, as pprof
	// only reads a sample's locations (a copy per sample of up to 1024
	// frames took 15.7 s and 1.3 GB for 40k allocs in a span 1100 deep).
	type spanOp struct{ span, op string }
	opStacks := make(map[spanOp][]*profile.Location)
	opStack := func(id, op string) []*profile.Location {
		if st, ok := opStacks[spanOp{id, op}]; ok {
			return st
		}
		st := spanStack(id)
		if !opNamesSpan(t, id, op) {
			spans := st
			st = make([]*profile.Location, 1, 1+len(spans))
			st[0] = loc(frame{name: op})
			st = append(st, spans...)
			if len(st) > maxStackFrames { // a full span part and the op
				st[maxStackFrames-1] = loc(frame{elidedFrame, true})
				st = st[:maxStackFrames]
			}
		}
		opStacks[spanOp{id, op}] = st
		return st
	}
	var sum uint64
	var byCategory [tracemem.NumCategories]uint64
	for i := range p.PeakBreakdown {
		a := &p.PeakBreakdown[i]
		sum = addSat(sum, a.Bytes)
		if a.Category < tracemem.NumCategories {
			byCategory[a.Category] = addSat(byCategory[a.Category], a.Bytes)
		}
		var stack []*profile.Location
		if a.OpName != nil {
			stack = opStack(a.SpanID, *a.OpName)
		} else {
			stack = spanStack(a.SpanID)
		}
		prof.Sample = append(prof.Sample, &profile.Sample{
			Location: stack,
			Value:    []int64{1, clampInt64(a.Bytes)},
			Label: labels(
				"tensor_id", a.TensorID,
				"dtype", a.DType,
				"category", a.Category.String(),
				"device", a.Device),
			NumLabel: map[string][]int64{"bytes": {clampInt64(a.Bytes)}},
			NumUnit:  map[string][]string{"bytes": {"bytes"}},
		})
	}
	// Pre-existing memory, one sample per category: what the peak's
	// categories hold beyond the breakdown's. Whatever those do not
	// account for (only where counts saturated) is a sample without one.
	pre := subSat(s.PeakBytes, sum)
	preSample := func(bytes uint64, category string) {
		prof.Sample = append(prof.Sample, &profile.Sample{
			Location: []*profile.Location{loc(frame{preexistingFrame, true})},
			Value:    []int64{0, clampInt64(bytes)},
			Label:    labels("category", category, "device", s.PeakDevice),
		})
		pre -= bytes
	}
	for c, b := range s.PeakByCategory.All() {
		if b = min(subSat(b, byCategory[c]), pre); b > 0 {
			preSample(b, c.String())
		}
	}
	if pre > 0 {
		preSample(pre, "")
	}
	if err := prof.CheckValid(); err != nil {
		return nil, fmt.Errorf("pprof: %w", err)
	}
	return prof, nil
}

// labels returns the labels of key, value pairs, leaving out the empty
// values: pprof reads an empty label as absent, so a written one would not
// read back.
func labels(kv ...string) map[string][]string {
	m := make(map[string][]string, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] != "" {
			m[kv[i]] = []string{kv[i+1]}
		}
	}
	return m
}

// writePprof writes the pprof profile of t, gzipped.
func writePprof(w io.Writer, t *trace) error {
	prof, err := buildPprof(t)
	if err != nil {
		return err
	}
	return prof.Write(w)
}

func clampInt64(v uint64) int64 {
	if v > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(v)
}

func addSat(a, b uint64) uint64 {
	if s := a + b; s >= a {
		return s
	}
	return math.MaxUint64
}

func subSat(a, b uint64) uint64 {
	if a >= b {
		return a - b
	}
	return 0
}
