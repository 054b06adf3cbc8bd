// chromebuild.go turns what the PyTorch trace reader collected into a document: the span tree, memory attributed to spans, tensor ids and device samples.

package tracemem

import (
	"bytes"
	"cmp"
	"math"
	"slices"
	"strconv"
)

// chromeBuilder assembles the document from what parse collected, in the
// steps of build.
type chromeBuilder struct {
	p        *chromeParser
	doc      *TraceDocument
	base     int64        // raw ns of the trace's start: times in the document are relative to it
	spans    []chromeSpan // in (thread, start, longer first, file order) after spanTree
	mems     []chromeMem
	order    []int32          // indexes into mems, in the order of the step at hand
	roots    []int32          // the thread of each root span (a thread's memory outside its spans)
	ids      []string         // span ids: the spans', then the roots'
	ds       []chromeDevState // by interned device
	mismatch int              // totals that disagree with the one before and the Bytes since
	firstOOM *chromeMem       // the first [OutOfMemory] event in time; nil when none
}

// chromeDevState is what pairMemory learns of a device.
type chromeDevState struct {
	events    int   // memory events ([memory] events of nonzero Bytes)
	net       int64 // signed bytes so far
	base      int64 // baseline B, when known
	synced    int64 // what the totals stand on now: B, moved by each total that disagreed
	hasBase   bool
	pre       int64   // bytes of pre-existing frees
	first     int     // index in doc.Memory of its first memory event; -1 none
	seq, preq uint64  // Addr-less id counters
	capacity  *uint64 // shared by the device's samples; points to 0 when unknown
	knownCap  bool
	samples   int
}

// build assembles the document from what parse collected.
func (p *chromeParser) build() *TraceDocument {
	b := &chromeBuilder{
		p: p,
		doc: &TraceDocument{
			Schema: SchemaV6,
			Run: Run{
				Phase:      PhaseInfer,
				TimingMode: TimingHost,
				Tags:       map[string]string{"source": "chrome_trace"},
			},
		},
		spans: p.spans.slice(),
		mems:  p.mems.slice(),
	}
	if p.anyTs {
		b.base = p.minTs
	}
	b.spanTree()
	b.attributeMemory()
	b.spanIDs()
	b.ops()
	b.pairMemory()
	b.spanRecords(b.baselines())
	b.nilEmpty()
	b.runMeta()
	return b.doc
}

// byExternalID reorders, in spans sorted by spanTree's key, each run of
// spans that share a thread, start and end by their "External id" when
// every span of the run has one, instead of by file order (the first of a
// run becomes the parent of the next). Kineto numbers host ops as they
// start, so the lower id is the outer op, while some of its versions write
// ops as they end, a child before its parent; the legacy profiler writes no
// id, parents first.
func byExternalID(spans []chromeSpan) {
	for i := 0; i < len(spans); {
		j, ids := i+1, spans[i].ext >= 0
		for j < len(spans) && spans[j].thread == spans[i].thread && spans[j].start == spans[i].start && spans[j].end == spans[i].end {
			ids = ids && spans[j].ext >= 0
			j++
		}
		if ids && j-i > 1 {
			slices.SortStableFunc(spans[i:j], func(a, b chromeSpan) int { return cmp.Compare(a.ext, b.ext) })
		}
		i = j
	}
}

// rel returns raw ns t relative to the trace's start.
func (b *chromeBuilder) rel(t int64) uint64 { return uint64(t - b.base) }

// spanTree sorts the spans per thread by start, longer first, then file order
// (for spans of one interval, External id order where they all have one: see
// byExternalID), links each to its parent (the innermost span of its thread
// that contains it: see nestSpans) and gives it its step. (A full key and an
// unstable sort: the stable one is O(n log² n).)
func (b *chromeBuilder) spanTree() {
	spans := b.spans
	spanCmp := func(a, b chromeSpan) int {
		if c := cmp.Compare(a.thread, b.thread); c != 0 {
			return c
		}
		if c := cmp.Compare(a.start, b.start); c != 0 {
			return c
		}
		if c := cmp.Compare(b.end, a.end); c != 0 {
			return c
		}
		return cmp.Compare(a.file, b.file)
	}
	if !slices.IsSortedFunc(spans, spanCmp) {
		slices.SortFunc(spans, spanCmp)
	}
	byExternalID(spans)
	nestSpans(spans)
	for i := range spans {
		s := &spans[i]
		var ps Step
		if s.parent >= 0 {
			par := &spans[s.parent]
			ps = par.step
			s.inPS = par.inPS || par.mark == markProfilerStep
		}
		switch {
		case s.mark == markBackward:
			s.step = StepBackward
		case s.mark == markOptimizer:
			s.step = StepOptimizer
		case ps == StepBackward || ps == StepOptimizer:
			s.step = ps
		case s.inPS:
			s.step = StepForward
		}
		if s.step == StepBackward {
			b.doc.Run.Phase = PhaseTrain
		}
	}
}

// nestSpans links each span, in spanTree's order, to its parent: the
// innermost span of its thread that contains it, or that it starts in and
// ends at most chromeRoundingNs after. It returns the number of stack steps
// taken (at most 2 a span), for tests.
//
// Writers of whole microseconds (PyTorch 1.x) round start and duration down
// apart, so a child can end up to 1 µs after its parent. A sibling cannot
// look like that: it starts at or after its predecessor's written end. The
// child's end is a truer end for its ancestors than their own (each is a
// lower bound of the real end), and moving them, not the child, keeps the
// events in the child's written time inside it.
func nestSpans(spans []chromeSpan) (steps int) {
	// The stack's ends do not grow towards its top, and a rounded child
	// raises those below its end, a suffix: the ends are kept as runs of
	// equal ones, which raising a suffix merges (each run made and merged
	// once, not each span raised again per child), and a span's end is
	// written when it is popped.
	type run struct {
		end  int64
		from int // index in stack of the run's first span
	}
	var (
		stack []int32
		runs  []run
	)
	popTo := func(n int) {
		for k := len(stack) - 1; k >= n; k-- {
			r := &runs[len(runs)-1]
			spans[stack[k]].end = r.end
			if r.from == k {
				runs = runs[:len(runs)-1]
			}
			steps++
		}
		stack = stack[:n]
	}
	for i := range spans {
		s := &spans[i]
		if i > 0 && spans[i-1].thread != s.thread {
			popTo(0)
		}
		for len(stack) > 0 {
			top := runs[len(runs)-1].end
			if s.end <= top {
				break
			}
			if s.start < top && uint64(s.end)-uint64(top) <= chromeRoundingNs {
				from := 0
				for len(runs) > 0 && runs[len(runs)-1].end < s.end {
					from = runs[len(runs)-1].from
					runs = runs[:len(runs)-1]
					steps++
				}
				if len(runs) == 0 || runs[len(runs)-1].end != s.end {
					runs = append(runs, run{s.end, from})
				}
				break
			}
			popTo(len(stack) - 1)
		}
		if len(stack) > 0 {
			s.parent = stack[len(stack)-1]
		}
		if len(runs) == 0 || runs[len(runs)-1].end != s.end {
			runs = append(runs, run{s.end, len(stack)})
		}
		stack = append(stack, int32(i))
	}
	popTo(0)
	return steps
}

// chromeRoundingNs is how far a span may end after the span it starts in
// and still be its child (its parent's end then moves up to its end).
const chromeRoundingNs = 1000

// attributeMemory gives each memory event the innermost span of its thread
// that contains it, sweeping both in (thread, time) order; an event outside
// every span of its thread goes to the thread's root, made here.
func (b *chromeBuilder) attributeMemory() {
	spans, mems := b.spans, b.mems
	b.order = make([]int32, len(mems))
	order := b.order
	for i := range order {
		order[i] = int32(i)
	}
	byThread := func(a, b int32) int {
		if c := cmp.Compare(mems[a].thread, mems[b].thread); c != 0 {
			return c
		}
		if c := cmp.Compare(mems[a].ts, mems[b].ts); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	}
	if !slices.IsSortedFunc(order, byThread) {
		slices.SortFunc(order, byThread)
	}
	var stack []int32
	si := 0
	curThread := int32(-1)
	for _, mi := range order {
		m := &mems[mi]
		if m.thread != curThread {
			curThread = m.thread
			stack = stack[:0]
			for si < len(spans) && spans[si].thread < curThread {
				si++
			}
		}
		for si < len(spans) && spans[si].thread == curThread && spans[si].start <= m.ts {
			for len(stack) > 0 && spans[si].end > spans[stack[len(stack)-1]].end {
				stack = stack[:len(stack)-1]
			}
			stack = append(stack, int32(si))
			si++
		}
		for len(stack) > 0 && spans[stack[len(stack)-1]].end < m.ts {
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 {
			m.span = stack[len(stack)-1]
			if s := &spans[m.span]; s.dev < 0 && m.givesEvent() {
				s.dev = m.dev
			}
			continue
		}
		if !m.givesEvent() {
			m.span = -1 // not a memory event of the document: no root for it
			continue
		}
		t := &b.p.thr[m.thread]
		if t.root < 0 {
			t.root = int32(len(b.roots))
			b.roots = append(b.roots, m.thread)
		}
		m.span = int32(len(spans)) + t.root
	}
}

// spanIDs numbers the spans, zero-padded so that ids sort as numbers, then
// the roots ("thread:<n>").
func (b *chromeBuilder) spanIDs() {
	n := len(b.spans)
	width := len(strconv.Itoa(max(n-1, 0)))
	rwidth := len(strconv.Itoa(max(len(b.roots)-1, 0)))
	b.ids = make([]string, n+len(b.roots))
	for i := range n {
		b.ids[i] = padInt("", i, width)
	}
	for i := range b.roots {
		b.ids[n+i] = padInt("thread:", i, rwidth)
	}
}

// spanRecords writes the span records, in id order: the numeric ids, then
// the baseline span (when a device has a baseline), then the threads' roots.
func (b *chromeBuilder) spanRecords(withBaseline bool) {
	doc, spans := b.doc, b.spans
	doc.Spans = make([]Span, 0, len(b.ids)+1)
	for i := range spans {
		s := &spans[i]
		sp := Span{
			ID: b.ids[i], Name: s.name, Kind: s.kind, Measured: true,
			StartNs: b.rel(s.start), Closed: true, DurationNs: uint64(s.end - s.start), Step: s.step,
		}
		if s.parent >= 0 {
			sp.ParentID = b.ids[s.parent]
		}
		doc.Spans = append(doc.Spans, sp)
	}
	if withBaseline {
		end := b.base
		for i := range b.p.thr {
			end = max(end, b.p.thr[i].max)
		}
		doc.Spans = append(doc.Spans, Span{ID: chromeBaselineSpan, Name: "pre-existing memory",
			Kind: SpanFunction, Closed: true, DurationNs: b.rel(end)})
	}
	for i, th := range b.roots {
		t := &b.p.thr[th]
		doc.Spans = append(doc.Spans, Span{
			ID: b.ids[len(spans)+i], Name: "thread " + t.pid + "/" + t.tid, Kind: SpanFunction,
			StartNs: b.rel(t.min), Closed: true, DurationNs: uint64(t.max - t.min),
		})
	}
}

// ops writes an op record for each op span. Their inputs and shapes are
// unknown: nil, as the other readers leave empty lists.
func (b *chromeBuilder) ops() {
	nOps := 0
	for i := range b.spans {
		if b.spans[i].kind == SpanOp {
			nOps++
		}
	}
	if nOps > 0 {
		b.doc.Ops = make([]Op, 0, nOps)
	}
	for i := range b.spans {
		s := &b.spans[i]
		if s.kind != SpanOp {
			continue
		}
		op := Op{SpanID: b.ids[i], OpName: s.name, DurationNs: uint64(s.end - s.start), TimestampNs: b.rel(s.start)}
		if s.dev >= 0 {
			op.Device = b.p.devs[s.dev]
		}
		b.doc.Ops = append(b.doc.Ops, op)
	}
}

// category is the category of memory allocated in span: by its step.
func (b *chromeBuilder) category(span int32) Category {
	if span >= int32(len(b.spans)) {
		return CategoryOther
	}
	switch b.spans[span].step {
	case StepForward:
		return CategoryActivation
	case StepBackward:
		return CategoryGradient
	case StepOptimizer:
		return CategoryOptimizer
	}
	return CategoryOther
}

// pairMemory writes the memory events and device samples in time order,
// pairing allocations and frees into tensors: by address when the events
// have one, else by size, last in first out.
func (b *chromeBuilder) pairMemory() {
	p, doc, mems, order := b.p, b.doc, b.mems, b.order
	for i := range order {
		order[i] = int32(i)
	}
	if !slices.IsSortedFunc(mems, func(a, b chromeMem) int { return cmp.Compare(a.ts, b.ts) }) {
		slices.SortFunc(order, func(a, b int32) int {
			if c := cmp.Compare(mems[a].ts, mems[b].ts); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
	}
	b.ds = make([]chromeDevState, len(p.devs))
	unknownCap := new(uint64)
	for i := range b.ds {
		b.ds[i].first, b.ds[i].capacity = -1, unknownCap
		if typ, id := p.deviceKey(int32(i)); typ == 1 {
			if c, ok := p.capac[id]; ok {
				b.ds[i].capacity, b.ds[i].knownCap = &c, true
			}
		}
	}
	type block struct {
		id   string
		gen  uint64
		live bool
		cat  Category
	}
	type addrKey struct {
		dev  int32
		addr uint64
	}
	type sizeKey struct {
		dev  int32
		size int64
	}
	var (
		byAddr   = make(map[addrKey]int32, len(mems)/4+1)
		blocks   = make([]block, 0, len(mems)/4+1)
		bySize   = make(map[sizeKey][]block)
		buf      []byte
		nSamples int
	)
	for _, m := range mems {
		if m.flags&memHasTotal != 0 {
			nSamples++
		}
	}
	reserved := make([]uint64, 0, nSamples)
	doc.Memory = make([]MemoryEvent, 0, len(mems))
	doc.DeviceMemory = make([]DeviceMemorySample, 0, nSamples)
	for _, mi := range order {
		m := &mems[mi]
		d := &b.ds[m.dev]
		dev := p.devs[m.dev]
		ts := b.rel(m.ts)
		if m.flags&memOOM != 0 && b.firstOOM == nil {
			b.firstOOM = m
		}
		if m.flags&memOOM == 0 {
			if m.bytes != 0 { // a memory event, as the run's device counts them
				d.events++
			}
			d.net = addSat64(d.net, m.bytes) // saturating: Bytes are ±2⁶³ each
			if m.flags&memHasTotal != 0 {
				if !d.hasBase {
					d.base, d.hasBase = subSat64(m.total, d.net), true
					d.synced = d.base
				} else if m.total != addSat64(d.synced, d.net) {
					// Events were lost here. The totals after it are
					// checked against this one, so that a loss counts
					// once, not on every event after it.
					b.mismatch++
					d.synced = subSat64(m.total, d.net)
				}
			}
		}
		if m.flags&memHasTotal != 0 {
			s := DeviceMemorySample{TimestampNs: ts, Device: dev, UsedBytes: uint64(max(m.total, 0)), CapacityBytes: d.capacity}
			s.FreeBytes = subSat(*d.capacity, s.UsedBytes)
			if m.flags&memHasReserved != 0 {
				reserved = append(reserved, uint64(max(m.reserved, 0)))
				s.ReservedBytes = &reserved[len(reserved)-1]
			}
			doc.DeviceMemory = append(doc.DeviceMemory, s)
			d.samples++
		}
		if !m.givesEvent() {
			continue
		}
		ev := MemoryEvent{TimestampNs: ts, SpanID: b.ids[m.span], Device: dev}
		if m.span < int32(len(b.spans)) {
			ev.OpName = b.spans[m.span].name
		}
		size := m.bytes
		if size < 0 {
			ev.Action = ActionFree
			if size == math.MinInt64 {
				size = math.MaxInt64
			} else {
				size = -size
			}
		}
		ev.Bytes = uint64(size)
		if m.flags&memHasAddr != 0 {
			k := addrKey{m.dev, m.addr}
			newID := func(gen uint64) string {
				buf = append(append(buf[:0], dev...), "@0x"...)
				buf = strconv.AppendUint(buf, m.addr, 16)
				buf = append(buf, '#')
				buf = strconv.AppendUint(buf, gen, 10)
				return string(buf)
			}
			bi, seen := byAddr[k]
			if !seen {
				bi = int32(len(blocks))
				byAddr[k] = bi
				blocks = append(blocks, block{id: newID(0), live: ev.Action == ActionAlloc, cat: CategoryOther})
				if ev.Action == ActionAlloc {
					blocks[bi].cat = b.category(m.span)
				} else { // a free of an address never allocated: pre-existing
					d.pre = addSat64(d.pre, size)
				}
			} else {
				bl := &blocks[bi]
				switch {
				case ev.Action == ActionAlloc && !bl.live: // the address reused: a new tensor
					bl.gen++
					bl.id, bl.live, bl.cat = newID(bl.gen), true, b.category(m.span)
				case ev.Action == ActionAlloc: // at a live address: a duplicate alloc
					bl.cat = b.category(m.span)
				default: // a free (a double free when not live)
					bl.live = false
				}
			}
			ev.TensorID, ev.Category = blocks[bi].id, blocks[bi].cat
		} else {
			k := sizeKey{m.dev, size}
			if ev.Action == ActionAlloc {
				buf = append(append(buf[:0], dev...), '#')
				buf = strconv.AppendUint(buf, d.seq, 10)
				d.seq++
				ev.TensorID, ev.Category = string(buf), b.category(m.span)
				bySize[k] = append(bySize[k], block{id: ev.TensorID, cat: ev.Category})
			} else if st := bySize[k]; len(st) > 0 {
				bl := st[len(st)-1]
				bySize[k] = st[:len(st)-1]
				ev.TensorID, ev.Category = bl.id, bl.cat
			} else {
				buf = append(append(buf[:0], dev...), "#pre"...)
				buf = strconv.AppendUint(buf, d.preq, 10)
				d.preq++
				ev.TensorID, ev.Category = string(buf), CategoryOther
				d.pre = addSat64(d.pre, size)
			}
		}
		if d.first < 0 {
			d.first = len(doc.Memory)
		}
		doc.Memory = append(doc.Memory, ev)
	}
}

// baselines puts before each device's first memory event an allocation of
// what its first total says was live before it (less its pre-existing
// frees), and gives a capacity sample to devices with a known capacity and
// no totals. It reports whether any device got a baseline.
func (b *chromeBuilder) baselines() bool {
	doc := b.doc
	var baseAt []int // devices that get a baseline before their first event
	for i := range b.ds {
		d := &b.ds[i]
		if d.first >= 0 && d.hasBase && subSat64(d.base, d.pre) > 0 {
			baseAt = append(baseAt, i)
		}
		if d.hasBase && subSat64(d.base, d.pre) < 0 {
			b.mismatch++ // the trace frees more than its first total says was there
		}
		if d.samples == 0 && d.knownCap && d.first >= 0 {
			doc.DeviceMemory = append(doc.DeviceMemory, DeviceMemorySample{
				TimestampNs: doc.Memory[d.first].TimestampNs, Device: b.p.devs[i], CapacityBytes: d.capacity,
			})
		}
	}
	if len(baseAt) == 0 {
		return false
	}
	slices.SortFunc(baseAt, func(x, y int) int { return cmp.Compare(b.ds[x].first, b.ds[y].first) })
	out := make([]MemoryEvent, 0, len(doc.Memory)+len(baseAt))
	prev := 0
	for _, di := range baseAt {
		d := &b.ds[di]
		out = append(out, doc.Memory[prev:d.first]...)
		ev := MemoryEvent{
			TimestampNs: doc.Memory[d.first].TimestampNs, TensorID: b.p.devs[di] + "#baseline",
			SpanID: chromeBaselineSpan, Device: b.p.devs[di], Bytes: uint64(subSat64(d.base, d.pre)),
			Action: ActionAlloc, Category: CategoryOther,
		}
		out = append(out, ev)
		prev = d.first
	}
	doc.Memory = append(out, doc.Memory[prev:]...)
	return true
}

// nilEmpty makes empty sections nil, as the other readers leave them.
func (b *chromeBuilder) nilEmpty() {
	doc := b.doc
	if len(doc.Spans) == 0 {
		doc.Spans = nil
	}
	if len(doc.Memory) == 0 {
		doc.Memory = nil
	}
	if len(doc.DeviceMemory) == 0 {
		doc.DeviceMemory = nil
	}
}

// runMeta sets the run's device (the one with the most memory events, the
// first by name on ties) and the tags that count what the trace got wrong.
func (b *chromeBuilder) runMeta() {
	best := -1
	for i := range b.ds {
		if b.ds[i].events == 0 {
			continue
		}
		if best < 0 || b.ds[i].events > b.ds[best].events || (b.ds[i].events == b.ds[best].events && b.p.devs[i] < b.p.devs[best]) {
			best = i
		}
	}
	if best >= 0 {
		b.doc.Run.Device = b.p.devs[best]
	}
	if b.p.oom > 0 {
		b.doc.Run.Tags["out_of_memory_events"] = strconv.Itoa(b.p.oom)
	}
	if m := b.firstOOM; m != nil {
		tags := b.doc.Run.Tags
		tags["out_of_memory_first_device"] = b.p.devs[m.dev]
		tags["out_of_memory_first_ns"] = strconv.FormatUint(b.rel(m.ts), 10)
		tags["out_of_memory_first_bytes"] = strconv.FormatInt(m.bytes, 10)
		if m.flags&memHasTotal != 0 {
			tags["out_of_memory_first_total_allocated"] = strconv.FormatInt(m.total, 10)
		}
		if m.span >= 0 && m.span < int32(len(b.spans)) {
			tags["out_of_memory_first_span"] = b.ids[m.span]
		}
	}
	if b.mismatch > 0 {
		b.doc.Run.Tags["total_allocated_mismatches"] = strconv.Itoa(b.mismatch)
	}
}

// deviceKey returns the c10 type and index of an interned device.
func (p *chromeParser) deviceKey(dev int32) (int64, int64) {
	k := p.devKeys[dev]
	return k[0], k[1]
}

// chromeBaselineSpan is the id of the synthetic span that holds the
// baseline allocations; it sorts after the numeric span ids and before the
// threads' roots.
const chromeBaselineSpan = "baseline"

// padInt renders prefix + i zero-padded to width digits.
func padInt(prefix string, i, width int) string {
	s := strconv.Itoa(i)
	if n := width - len(s); n > 0 {
		return prefix + string(bytes.Repeat([]byte{'0'}, n)) + s
	}
	return prefix + s
}
