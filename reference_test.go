// reference_test.go holds slow, obviously correct references of the analyses, and random traces to compare them on.

package tracemem

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
)

// refEvent is a memory event with what the replay made of it.
type refEvent struct {
	ev   MemoryEvent
	dev  string // the device the event changed
	kind string // alloc, free, double, pre
}

// refReplay classifies every event of evs (already in replay order) and
// returns, for each prefix end k, the allocations live right after event k,
// recomputed from scratch each time.
func refReplay(evs []MemoryEvent) (out []refEvent, liveAfter [][]refAllocation) {
	for k := range evs {
		live := []refAllocation{} // in allocation order
		freedEver := map[string]bool{}
		var cur refEvent
		for j := 0; j <= k; j++ {
			ev := evs[j]
			cur = refEvent{ev: ev, dev: ev.Device}
			at := slices.IndexFunc(live, func(a refAllocation) bool { return a.ev.TensorID == ev.TensorID })
			switch {
			case ev.Action == ActionAlloc:
				cur.kind = "alloc"
				if at >= 0 {
					freedEver[ev.TensorID] = true
					live = slices.Delete(live, at, at+1)
				}
				live = append(live, refAllocation{ev: ev, seq: j})
			case at >= 0:
				cur.kind = "free"
				cur.dev = live[at].ev.Device
				live = slices.Delete(live, at, at+1)
				freedEver[ev.TensorID] = true
			case freedEver[ev.TensorID]:
				cur.kind = "double"
			default:
				cur.kind = "pre"
				freedEver[ev.TensorID] = true
			}
		}
		out = append(out, cur)
		liveAfter = append(liveAfter, live)
	}
	return out, liveAfter
}

type refAllocation struct {
	ev  MemoryEvent
	seq int
}

func refSorted(doc *TraceDocument) []MemoryEvent {
	evs := slices.Clone(doc.Memory)
	slices.SortStableFunc(evs, func(x, y MemoryEvent) int { return cmp.Compare(x.TimestampNs, y.TimestampNs) })
	return evs
}

// refDeviceState is what device dev holds right after event k: live
// allocations plus pre-existing memory freed after k.
func refDeviceState(evs []refEvent, liveAfter [][]refAllocation, dev string, k int) (live uint64, cats CategoryBytes) {
	add := func(c Category, b uint64) {
		live += b
		cats.Bytes[c] += b
	}
	if k >= 0 {
		for _, a := range liveAfter[k] {
			if a.ev.Device == dev {
				add(a.ev.Category, a.ev.Bytes)
			}
		}
	}
	for j, e := range evs {
		if e.kind == "pre" && e.dev == dev && j > k {
			add(e.ev.Category, e.ev.Bytes)
		}
	}
	// Present: every category seen on the device up to k, and pre-existing ones.
	for j, e := range evs {
		if e.dev != dev {
			continue
		}
		if e.kind == "pre" || e.kind == "alloc" && j <= k {
			cats.Present = cats.Present.With(e.ev.Category)
		}
	}
	return live, cats
}

func refCapacity(doc *TraceDocument, dev string) uint64 {
	var capB, usedFree uint64
	hasCap := false
	for _, s := range doc.DeviceMemory {
		if s.Device != dev {
			continue
		}
		if s.CapacityBytes != nil {
			hasCap = true
			capB = max(capB, *s.CapacityBytes)
		}
		usedFree = max(usedFree, s.UsedBytes+s.FreeBytes)
	}
	if hasCap {
		return capB
	}
	return usedFree
}

// refUncycled returns a copy of doc without the parent links that close a
// cycle, by the rule Validate documents, restated: from each span (the
// first of its id) in document order that no chain has reached, follow
// parents until a root, a span an earlier chain reached, or a span of this
// chain, whose link from the last span walked closes the cycle and is cut.
func refUncycled(doc *TraceDocument) *TraceDocument {
	out := *doc
	out.Spans = slices.Clone(doc.Spans)
	first := map[string]int{}
	for i, s := range out.Spans {
		if _, ok := first[s.ID]; !ok {
			first[s.ID] = i
		}
	}
	reached := map[int]bool{}
	for i := range out.Spans {
		if first[out.Spans[i].ID] != i || reached[i] {
			continue
		}
		chain := map[int]bool{}
		for j := i; ; {
			reached[j], chain[j] = true, true
			p, ok := first[out.Spans[j].ParentID]
			if !ok || out.Spans[j].ParentID == "" || reached[p] && !chain[p] {
				break
			}
			if chain[p] {
				out.Spans[j].ParentID = ""
				break
			}
			j = p
		}
	}
	return &out
}

// refSpanStep returns a span's own step or its nearest ancestor's.
func refSpanStep(doc *TraceDocument, id string) (Step, bool) {
	byID := map[string]Span{}
	for _, s := range doc.Spans {
		if _, ok := byID[s.ID]; !ok {
			byID[s.ID] = s
		}
	}
	s, ok := byID[id]
	if !ok {
		return StepNone, false
	}
	for hops := 0; hops <= len(doc.Spans); hops++ {
		if s.Step != StepNone {
			return s.Step, true
		}
		p, ok := byID[s.ParentID]
		if !ok || s.ParentID == "" {
			break
		}
		s = p
	}
	return StepNone, true
}

// refAnalyze is Analyze, slowly: every point recomputed from scratch.
func refAnalyze(doc *TraceDocument, opts Options) *MemoryProfile {
	sorted := refSorted(doc)
	evs, liveAfter := refReplay(sorted)
	p := &MemoryProfile{Timeline: []TimelinePoint{}, PeakBreakdown: []LiveAllocation{}, ByDevice: []DeviceMemoryStats{}}

	type devPoint struct {
		k  int
		tp TimelinePoint
	}
	perDev := map[string][]devPoint{}
	var devs []string
	for k, e := range evs {
		if e.ev.Action == ActionAlloc {
			p.Summary.AllocCount++
			p.Summary.TotalAllocBytes += e.ev.Bytes
		} else {
			p.Summary.FreeCount++
		}
		switch e.kind {
		case "alloc":
			if k > 0 && slices.ContainsFunc(liveAfter[k-1], func(a refAllocation) bool { return a.ev.TensorID == e.ev.TensorID }) {
				p.Anomalies.DuplicateAllocs++
			}
		case "free":
			for _, a := range liveAfter[k-1] {
				if a.ev.TensorID == e.ev.TensorID && a.ev.Bytes != e.ev.Bytes {
					p.Anomalies.SizeMismatches++
				}
			}
		case "double":
			p.Anomalies.DoubleFrees++
		case "pre":
			p.Anomalies.UnmatchedFrees++
			p.Summary.PreexistingBytes += e.ev.Bytes
		}
		if !slices.Contains(devs, e.dev) {
			devs = append(devs, e.dev)
		}
		live, cats := refDeviceState(evs, liveAfter, e.dev, k)
		capB := refCapacity(doc, e.dev)
		tp := TimelinePoint{TimestampNs: e.ev.TimestampNs, Device: e.dev, LiveBytes: live, HeapBytes: live, ByCategory: cats}
		if capB > live {
			tp.FreeBytes = capB - live
		}
		perDev[e.dev] = append(perDev[e.dev], devPoint{k, tp})
	}

	// Device peaks and the global peak.
	bestK, bestDev := -1, ""
	var bestBytes uint64
	for _, dev := range devs {
		pts := perDev[dev]
		pk := 0
		for i, pt := range pts {
			if pt.tp.LiveBytes > pts[pk].tp.LiveBytes {
				pk = i
			}
		}
		st := DeviceMemoryStats{Device: dev, CapacityBytes: refCapacity(doc, dev), PeakBytes: pts[pk].tp.LiveBytes, PeakTimestampNs: pts[pk].tp.TimestampNs}
		for _, e := range evs {
			if e.dev == dev && e.ev.Action == ActionAlloc {
				st.AllocCount++
			}
			if e.dev == dev && e.ev.Action == ActionFree {
				st.FreeCount++
			}
		}
		p.ByDevice = append(p.ByDevice, st)
		if bestK < 0 || st.PeakBytes > bestBytes || st.PeakBytes == bestBytes && pts[pk].k < bestK {
			bestK, bestDev, bestBytes = pts[pk].k, dev, st.PeakBytes
		}
	}
	slices.SortFunc(p.ByDevice, func(x, y DeviceMemoryStats) int { return cmp.Compare(x.Device, y.Device) })
	if bestK >= 0 {
		p.Summary.PeakBytes = bestBytes
		p.Summary.PeakTimestampNs = evs[bestK].ev.TimestampNs
		p.Summary.PeakDevice = bestDev
		_, cats := refDeviceState(evs, liveAfter, bestDev, bestK)
		for c := range Category(NumCategories) {
			if cats.Bytes[c] > 0 {
				p.Summary.PeakByCategory.Bytes[c] = cats.Bytes[c]
				p.Summary.PeakByCategory.Present = p.Summary.PeakByCategory.Present.With(c)
			}
		}
		for _, a := range liveAfter[bestK] {
			if a.ev.Device != bestDev {
				continue
			}
			la := LiveAllocation{TensorID: a.ev.TensorID, SpanID: a.ev.SpanID, Bytes: a.ev.Bytes, Shape: a.ev.Shape,
				DType: a.ev.DType, Device: a.ev.Device, Category: a.ev.Category}
			if la.Shape == nil {
				la.Shape = []uint64{} // listed as [], not null
			}
			if a.ev.OpName != "" {
				op := a.ev.OpName
				la.OpName = &op
			}
			p.PeakBreakdown = append(p.PeakBreakdown, la)
		}
		slices.SortFunc(p.PeakBreakdown, func(x, y LiveAllocation) int {
			return cmp.Or(cmp.Compare(y.Bytes, x.Bytes), cmp.Compare(x.TensorID, y.TensorID))
		})
	}

	// Autograd: activations on all devices just before the first backward event.
	for k, e := range evs {
		if st, _ := refSpanStep(doc, e.ev.SpanID); st == StepBackward {
			for _, dev := range devs {
				_, cats := refDeviceState(evs, liveAfter, dev, k-1)
				p.Summary.AutogradRetainedBytes += cats.Bytes[CategoryActivation]
			}
			break
		}
	}

	// Timeline, downsampled per device as documented, merged in replay order.
	var kept []devPoint
	for _, dev := range devs {
		pts := perDev[dev]
		if m := opts.MaxTimelinePoints; m > 0 && len(pts) > 0 {
			// With m > 1 the last point is a window of its own, and the
			// points before it share m-1 windows.
			windowed, last, wins := pts, []devPoint(nil), m
			if m > 1 {
				windowed, last, wins = pts[:len(pts)-1], pts[len(pts)-1:], m-1
			}
			w := 1
			for len(windowed) > wins*w {
				w *= 2
			}
			var win []devPoint
			for i := 0; i < len(windowed); i += w {
				best := windowed[i]
				for _, pt := range windowed[i:min(i+w, len(windowed))] {
					if pt.tp.LiveBytes > best.tp.LiveBytes {
						best = pt
					}
				}
				win = append(win, best)
			}
			pts = append(win, last...)
		}
		kept = append(kept, pts...)
	}
	slices.SortFunc(kept, func(x, y devPoint) int { return cmp.Compare(x.k, y.k) })
	for _, pt := range kept {
		p.Timeline = append(p.Timeline, pt.tp)
	}
	return p
}

// refNodeMetrics is NodeMemoryMetrics, slowly: each span's subtree live bytes
// recomputed from scratch after every event.
func refNodeMetrics(doc *TraceDocument, opNodeIDs map[OpKey]string) map[string]NodeMetrics {
	sorted := refSorted(doc)
	_, liveAfter := refReplay(sorted)
	byID := map[string]Span{}
	for _, s := range doc.Spans {
		if _, ok := byID[s.ID]; !ok {
			byID[s.ID] = s
		}
	}
	inSubtree := func(id, root string) bool {
		for hops := 0; hops <= len(doc.Spans); hops++ {
			if id == root {
				return true
			}
			s, ok := byID[id]
			if !ok || s.ParentID == "" {
				return false
			}
			id = s.ParentID
		}
		return false
	}
	subtreeLive := func(root string, k int) (sum uint64) {
		if k < 0 {
			return 0
		}
		for _, a := range liveAfter[k] {
			if _, known := byID[a.ev.SpanID]; known && inSubtree(a.ev.SpanID, root) {
				sum += a.ev.Bytes
			}
		}
		return sum
	}
	// lastAt returns the last event index stamped at or before t.
	lastAt := func(t uint64, closed bool) int {
		k := -1
		for j, ev := range sorted {
			if !closed || ev.TimestampNs <= t {
				k = j
			}
		}
		return k
	}
	out := map[string]NodeMetrics{}
	own := map[string]uint64{}
	counts := map[string]int{}
	for _, op := range doc.Ops {
		idx := counts[op.SpanID]
		counts[op.SpanID]++
		b := refDense(op.Shape, op.DType) // not op.Bytes: the reference's own size
		if op.StorageBytes != nil {
			b = *op.StorageBytes
		}
		if b == 0 {
			continue
		}
		own[op.SpanID] += b
		id := op.SpanID + "/op/" + strconv.Itoa(idx)
		if mapped, ok := opNodeIDs[OpKey{op.SpanID, idx}]; ok {
			id = mapped
		}
		var res uint64
		if op.Output != "" {
			k := len(sorted) - 1
			if s, ok := byID[op.SpanID]; ok {
				k = lastAt(addSat(s.StartNs, s.DurationNs), s.Closed)
			}
			if k >= 0 {
				for _, a := range liveAfter[k] {
					if a.ev.TensorID == op.Output {
						res = a.ev.Bytes
					}
				}
			}
		}
		if _, taken := out[id]; !taken { // the first op with an id keeps it
			out[id] = NodeMetrics{Bytes: b, PeakBytes: b, ResidualBytes: res, StorageBytes: b}
		}
	}
	for id, s := range byID { // a span's node replaces an op's with its id
		m := NodeMetrics{Bytes: own[id]}
		if len(sorted) == 0 {
			// Static: the largest own bytes in the subtree.
			for other := range byID {
				if inSubtree(other, id) {
					m.PeakBytes = max(m.PeakBytes, own[other])
				}
			}
		}
		for k := range sorted {
			m.PeakBytes = max(m.PeakBytes, subtreeLive(id, k))
		}
		m.ResidualBytes = subtreeLive(id, lastAt(addSat(s.StartNs, s.DurationNs), s.Closed))
		out[id] = m
	}
	return out
}

// randomDoc makes a small random trace: a random span tree (no cycles), ops,
// device samples, and memory events with every anomaly kind, equal
// timestamps, pre-existing frees and events in unknown spans.
func randomDoc(r *rand.Rand) *TraceDocument {
	doc := &TraceDocument{Schema: SchemaV6}
	nSpans := r.IntN(8)
	for i := range nSpans {
		s := Span{ID: fmt.Sprintf("s%d", i), Name: "span", StartNs: uint64(r.IntN(60)), Step: Step(r.IntN(4))}
		if i > 0 && r.IntN(4) > 0 {
			s.ParentID = fmt.Sprintf("s%d", r.IntN(i))
		} else if r.IntN(6) == 0 {
			s.ParentID = "nowhere"
		}
		if r.IntN(5) > 0 {
			s.Closed = true
			s.DurationNs = uint64(r.IntN(60))
		}
		doc.Spans = append(doc.Spans, s)
	}
	// Shuffle so parents do not always come first.
	r.Shuffle(len(doc.Spans), func(i, j int) { doc.Spans[i], doc.Spans[j] = doc.Spans[j], doc.Spans[i] })
	spanID := func() string {
		if nSpans == 0 || r.IntN(8) == 0 {
			return "unknown"
		}
		return fmt.Sprintf("s%d", r.IntN(nSpans))
	}
	devices := []string{"cuda:0", "cuda:1", "cpu"}[:1+r.IntN(3)]
	tensors := 2 + r.IntN(10)
	nEv := r.IntN(40)
	ts := uint64(0)
	for range nEv {
		if r.IntN(3) > 0 {
			ts += uint64(r.IntN(5))
		}
		ev := MemoryEvent{
			TimestampNs: ts,
			TensorID:    fmt.Sprintf("t%d", r.IntN(tensors)),
			SpanID:      spanID(),
			Device:      devices[r.IntN(len(devices))],
			Bytes:       uint64(r.IntN(8) * 100), // 0 in one event of eight (from a review: never 0 before)
			Action:      MemoryAction(r.IntN(2)),
			Category:    Category(r.IntN(NumCategories)),
			DType:       "f32",
			Shape:       []uint64{uint64(r.IntN(4))},
		}
		if r.IntN(2) == 0 {
			ev.OpName = "op" + strconv.Itoa(r.IntN(3))
		}
		if r.IntN(8) == 0 {
			ev.Shape = nil // a scalar, as the readers give it
		}
		doc.Memory = append(doc.Memory, ev)
	}
	if r.IntN(3) == 0 { // out of time order: the analysis must sort stably
		r.Shuffle(len(doc.Memory), func(i, j int) { doc.Memory[i], doc.Memory[j] = doc.Memory[j], doc.Memory[i] })
	}
	for range r.IntN(4) {
		s := DeviceMemorySample{Device: devices[r.IntN(len(devices))], UsedBytes: uint64(r.IntN(1000)), FreeBytes: uint64(r.IntN(3000))}
		if r.IntN(2) == 0 {
			c := uint64(r.IntN(4000))
			s.CapacityBytes = &c
		}
		doc.DeviceMemory = append(doc.DeviceMemory, s)
	}
	for range r.IntN(8) {
		op := Op{SpanID: spanID(), OpName: "op", Shape: []uint64{uint64(r.IntN(5))}, DType: []string{"f32", "bf16", "weird"}[r.IntN(3)]}
		if r.IntN(3) == 0 {
			b := uint64(r.IntN(3) * 64)
			op.StorageBytes = &b
		}
		if r.IntN(3) > 0 {
			op.Output = fmt.Sprintf("t%d", r.IntN(tensors))
		}
		doc.Ops = append(doc.Ops, op)
	}
	if r.IntN(4) == 0 {
		// Sizes in units of 2⁴⁸+12345 B: far past 32 bits, and with low
		// bits set, so that sums past 2⁵³ are not float64's exact integers;
		// yet every sum (at most 40 × 700 units, under 2⁶³) stays exact,
		// where the reference, which does not saturate, holds.
		const unit = 1<<48 + 12345
		for i := range doc.Memory {
			doc.Memory[i].Bytes *= unit
		}
		for i := range doc.DeviceMemory {
			s := &doc.DeviceMemory[i]
			s.UsedBytes *= unit
			s.FreeBytes *= unit
			if s.CapacityBytes != nil {
				c := *s.CapacityBytes * unit
				s.CapacityBytes = &c
			}
		}
		for i := range doc.Ops {
			if b := doc.Ops[i].StorageBytes; b != nil {
				c := *b * unit
				doc.Ops[i].StorageBytes = &c
			}
		}
	}
	return doc
}
