// analyzer.go holds the Analyzer: the one replay of memory events behind every analysis.

package tracemem

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"unsafe"
)

// ErrOutOfOrder is returned (wrapped) by an Analyzer, and so by
// AnalyzeStream, for a record that a replay in one pass cannot take where
// it stands, because the records before it were replayed without it: a
// memory event stamped before the event before it, a span that starts after
// a record named it, a span_end or op that comes after memory events that
// changed what it measures. ReadTrace and Analyze take such traces (unless
// they break a rule of their own, such as a span id used twice, which a
// stream with SkipNodeMetrics may see as a span named after it ended): they
// see the whole trace before the replay.
var ErrOutOfOrder = errors.New("out of order")

// SpanError reports a span record that does not fit the spans seen before.
type SpanError struct {
	SpanID string
	Msg    string // e.g. "duplicate span id"
}

// Error renders e.g. `span "s2": span ended twice`.
func (e *SpanError) Error() string { return fmt.Sprintf("span %q: %s", e.SpanID, e.Msg) }

// An Analyzer replays a trace's records one at a time and can report the
// memory profile and the node metrics at any moment. AnalyzeMemory, Analyze,
// NodeMemoryMetrics and AnalyzeStream are thin wrappers over it. Records come
// as Go values (Add, AddSpan, EndSpan, AddOp, AddDeviceMemory) or as the
// lines of a JSONL trace (AddJSONLine).
//
// Memory events must be added in nondecreasing timestamp order; events with
// equal timestamps are applied in the order they are added (that order is what
// an allocator's running total follows). A span must be added before the memory
// events and ops that name it, and before the spans that name it as their
// parent (a TraceDocument lists its spans by id: add them by StartNs, a parent
// before its children); its end (EndSpan) and its ops must come before memory
// events stamped after its end that change what they measure. (Of an op's
// output that is no longer live, the time of its free is not kept: once any
// memory event past the end was replayed, such an output counts as changed.) A
// record out of that order gets an error wrapping ErrOutOfOrder, and the
// Analyzer stays as it was: the answers never silently differ from those of the
// whole trace replayed in order. Where a record names a span only in ways that
// cannot change the answer (with SkipNodeMetrics, after the first backward
// event), the order of spans is free.
//
// The Analyzer keeps references to the strings and Shape slices of the records
// it is given (it does not copy them): callers must not modify a Shape's
// elements after passing it. Its memory is bounded by the most allocations
// live at once so far (the room of a freed allocation is reused, not given
// back, and keeps the record's strings until then), per device those live at
// its peak so far (which the peak breakdown lists, though freed since), the
// spans and ops (only the open spans with Options.SkipNodeMetrics) and the
// timeline points kept, plus the ids of spans that records named while the
// Analyzer did not have them (to refuse such a span when it comes): spans not
// added yet, and with SkipNodeMetrics spans already ended and forgotten; with
// SkipNodeMetrics, records after the first backward memory event add none
// (those named before it stay, as their span may still come and must then be
// refused), but a trace without one (an inference trace) whose records name
// ended spans keeps them all. Plus 8 to 24 bytes per freed tensor id (one
// freed again after a new alloc is kept once): a 64-bit hash of it, to tell a
// double free from a free of pre-existing memory. (Analyze, which can read a
// document again, keeps them only from the first free of a tensor that is not
// live.) Two distinct ids of a trace share a hash
// with a probability of about n²/2⁶⁵ for n freed ids (10⁻⁶ for 5M); a free of
// pre-existing memory would then count as a double free.
//
// Live byte counts saturate at 2⁶³−1 and totals at 2⁶⁴−1: figures are
// exact while every allocation, and a device's live and pre-existing bytes,
// stay below 2⁶³ (8 EiB), and are no longer exact beyond.
//
// The zero Analyzer is ready to use, with the zero Options (the defaults).
// An Analyzer is not safe for concurrent use.
type Analyzer struct {
	opts   Options
	err    error // invalid options, reported by every call
	nodes  bool  // keep the bookkeeping of node metrics
	forget bool  // forget a span once it ended (bounded memory)

	// stepOf, when set, gives the step of a span id instead of the spans
	// added (a document replayed without node metrics).
	stepOf func(spanID string) Step

	devices  []deviceState
	deviceID map[string]int32
	// timeline holds every point in replay order when MaxTimelinePoints
	// is 0, written in its final form but for what only the end of the
	// trace tells (see finishTimeline).
	timeline []TimelinePoint
	final    bool // the next profile is the last: it takes the timeline over

	// Caches of the spans and the device looked up last: events mostly
	// name the few spans around the innermost open one, and one device.
	spanCache  [64]spanCacheEntry
	lastDevice string
	lastDev    int32

	allocs    allocStore          // slots for live allocations
	freeSlots []int32             // unused slots of allocs
	live      liveTable           // live tensor id → its slot
	freed     map[uint64]struct{} // hashes of freed tensor ids (see wasFreed)
	freedNew  []uint64            // hashes freed since freed was last brought up to date
	// freedSorted is the length of freedNew's head that is sorted and
	// holds no hash twice (see compactFreed).
	freedSorted int
	// pastFrees, when set, lists the hashes of the ids freed so far (a
	// document can be read again), and frees log nothing until wasFreed
	// first needs them.
	pastFrees func() []uint64

	spans     []spanState
	spanID    map[string]int32
	freeSpans []int32 // slots of forgotten spans (SkipNodeMetrics)
	ends      endHeap // closed spans whose residual is not measured yet
	// named holds the ids of spans not added yet that records named where
	// the span mattered to the answer: such a span, added later, comes out
	// of order. Each maps to the line of the first record that named it
	// (0 when not read from lines). It is nil for a document, whose spans
	// all come first.
	named map[string]int
	// line is the line of the record being added, which AnalyzeStream and
	// AddJSONLine set so that an out-of-order error can say which record named
	// the span; 0 for records not read from lines.
	line int
	dec  *recordDecoder // decodes AddJSONLine's lines; nil before the first
	// goneBackward holds, until the first backward event, the ids of
	// backward spans forgotten (SkipNodeMetrics): records after a span's
	// end may still name it, or name it as their parent, and until then
	// its step decides autograd_retained_bytes.
	goneBackward map[string]struct{}

	ops     []opState
	opCount map[string]int32 // ops seen per unknown span id, for op indices

	seq     uint64 // memory events replayed
	lastTs  uint64
	summary MemorySummary
	anom    Anomalies

	autogradSeen bool
	autogradRel  []int64 // per device, activation bytes live at the first backward event, pools aside
}

type deviceState struct {
	name       string
	hasEvents  bool
	live       int64 // live bytes minus the whole pre-existing pool; see point
	cats       [NumCategories]int64
	seen       CategorySet
	pool       uint64 // pre-existing bytes found so far
	poolCats   [NumCategories]uint64
	poolSeen   CategorySet
	allocCount uint64
	freeCount  uint64
	capacity   uint64 // largest capacity_bytes sample
	hasCap     bool
	usedFree   uint64 // largest used_bytes + free_bytes sample

	// The points of Analyzer.timeline need fixing when the profile is
	// built: they hold byte counts relative to the whole pool, which are
	// final only while the pool is empty and no count is negative, and free
	// bytes for the capacity known when they were written.
	capChanged bool // the capacity changed after a point was written
	negative   bool // a point was written with a negative byte count

	hasPeak  bool
	peak     point
	lostPeak []MemoryEvent // alloc events of the allocations live at the peak and freed since
	tl       timeline      // downsampled points, when MaxTimelinePoints > 0
}

type spanCacheEntry struct {
	id  string
	idx int32 // span index + 1; 0 for an empty entry
}

type spanState struct {
	id       string
	parent   int32 // -1 for a root
	step     Step  // own step, or the nearest ancestor's
	closed   bool
	done     bool  // residual measured
	opCount  int32 // ops added with this span id
	firstOp  int32 // first op with an output tensor to measure at the end, -1 for none
	start    uint64
	end      uint64
	own      uint64 // bytes of the span's own ops
	cur      uint64 // bytes live that the subtree allocated (low 64 bits)
	curHi    uint64 // their high 64 bits: sums over devices can pass 2⁶⁴
	changed  uint64 // timestamp of the last event that changed cur
	peak     uint64
	residual uint64
}

type opState struct {
	index    int32
	next     int32 // next op of the span to measure, -1 for none
	measured bool
	spanID   string
	output   string
	bytes    uint64
	residual uint64
}

// NewAnalyzer returns an Analyzer with the given options. Invalid options
// make every later call that returns an error return one wrapping
// ErrInvalidOptions; Profile and Summary then describe an empty trace,
// DeviceStats and LiveBytes know no device, and NodeMetrics has no spans.
func NewAnalyzer(opts Options) *Analyzer {
	a := &Analyzer{
		lastDev:  -1,
		opts:     opts,
		deviceID: make(map[string]int32),
		freed:    make(map[uint64]struct{}),
		spanID:   make(map[string]int32),
		opCount:  make(map[string]int32),
		named:    make(map[string]int),
	}
	a.err = opts.check()
	a.nodes, a.forget = !opts.SkipNodeMetrics, opts.SkipNodeMetrics
	return a
}

// start makes a zero Analyzer one with the zero Options, at its first
// call that adds something, and returns the error of invalid options.
func (a *Analyzer) start() error {
	if a.deviceID == nil {
		*a = *NewAnalyzer(Options{})
	}
	return a.err
}

func (o Options) check() error {
	if o.MaxTimelinePoints < 0 {
		return fmt.Errorf("%w: MaxTimelinePoints %d is negative", ErrInvalidOptions, o.MaxTimelinePoints)
	}
	return nil
}

// reserve pre-sizes the Analyzer's tables for a trace of the given size.
// The live table is not sized here: sized for the events, it would spread
// the few live tensors of a typical trace over many cache lines (measured:
// twice the time of the whole replay); see replayDocument.
func (a *Analyzer) reserve(events, spans, ops int) {
	if a.nodes {
		a.spanID = make(map[string]int32, spans)
		a.spans = slices.Grow(a.spans, spans)
		a.ops = slices.Grow(a.ops, ops)
	}
	if a.opts.MaxTimelinePoints == 0 {
		a.timeline = slices.Grow(a.timeline, events)
	}
}

func (a *Analyzer) device(name string) int32 {
	if name == a.lastDevice && a.lastDev >= 0 {
		return a.lastDev
	}
	d, ok := a.deviceID[name]
	if !ok {
		d = int32(len(a.devices))
		a.deviceID[name] = d
		a.devices = append(a.devices, deviceState{name: name, tl: timeline{max: a.opts.MaxTimelinePoints}})
	}
	a.lastDevice, a.lastDev = name, d
	return d
}

// span returns the index of the span with the given id, or -1.
func (a *Analyzer) span(id string) int32 {
	// The cache is indexed by the address of the id's bytes: a reader hands
	// out one copy of a recurring id, and a miss only costs the map lookup.
	c := &a.spanCache[uintptr(unsafe.Pointer(unsafe.StringData(id)))>>3%uintptr(len(a.spanCache))]
	if c.idx > 0 && c.id == id {
		return c.idx - 1
	}
	i, ok := a.spanID[id]
	if !ok {
		return -1
	}
	c.id, c.idx = id, i+1
	return i
}

// namedSpan returns the index of the span with the given id, or -1; a record
// names it, and the answer depends on that span.
func (a *Analyzer) namedSpan(id string) int32 {
	i := a.span(id)
	if i < 0 && a.named != nil {
		if _, gone := a.goneBackward[id]; !gone {
			a.noteNamed(id)
		}
	}
	return i
}

// noteNamed records that the record being added names the span id, which
// is not added yet; the first record to name it is the one an error cites.
func (a *Analyzer) noteNamed(id string) {
	if _, seen := a.named[id]; !seen {
		a.named[id] = a.line
	}
}

// stepOfSpan returns the step of the span with the given id, own or
// inherited, whose index is span (-1 when it is not known).
func (a *Analyzer) stepOfSpan(id string, span int32) Step {
	switch {
	case a.stepOf != nil:
		return a.stepOf(id)
	case span >= 0:
		return a.spans[span].step
	}
	if _, gone := a.goneBackward[id]; gone {
		return StepBackward
	}
	return StepNone
}

// wasFreed reports whether a tensor id of hash h was freed before. Frees
// only append their hash to a list (see logFree); the set is brought up to
// date when asked, which a trace without unmatched or double frees never
// does.
func (a *Analyzer) wasFreed(h uint64) bool {
	if a.pastFrees != nil {
		a.freedNew = a.pastFrees()
		a.pastFrees = nil
	}
	for _, f := range a.freedNew {
		a.freed[f] = struct{}{}
	}
	a.freedNew, a.freedSorted = a.freedNew[:0], 0
	_, ok := a.freed[h]
	return ok
}

// freedCompactMin is the length of the list of freed hashes below which it
// is not compacted. (A variable for the tests, which compact at every
// size.)
var freedCompactMin = 1 << 16

// compactFreed sorts the hashes freed since the last compaction, merges
// them into the sorted ones before them and drops repeats, in place: the
// sorted head is copied aside (it is never longer than the new tail, which
// logFree lets grow to its length first) and merged with the tail from the
// list's start, where the writes never overtake the tail's unread part. A
// compaction costs O(t log t) for a tail of t frees, amortised O(log n) a
// free; the list then holds each freed id once.
func (a *Analyzer) compactFreed() {
	head := slices.Clone(a.freedNew[:a.freedSorted])
	tail := a.freedNew[a.freedSorted:]
	slices.Sort(tail)
	out := a.freedNew[:0]
	for len(head) > 0 || len(tail) > 0 {
		var h uint64
		if len(tail) == 0 || len(head) > 0 && head[0] <= tail[0] {
			h, head = head[0], head[1:]
		} else {
			h, tail = tail[0], tail[1:]
		}
		if n := len(out); n == 0 || out[n-1] != h {
			out = append(out, h)
		}
	}
	a.freedNew, a.freedSorted = out, len(out)
}

// AddSpan registers a span. A parent id naming no span added before makes the
// span a root, and a span of that id added later is then refused (see
// Analyzer). A closed span's residual is measured at its end (StartNs +
// DurationNs); an open one's when EndSpan says it ended, or at the end of the
// trace. It returns a *SpanError for an id added before, an error wrapping
// ErrOutOfOrder for a span that records named before it came (see Analyzer),
// and ErrInvalidOptions for invalid options; the Analyzer is then unchanged.
// The Analyzer keeps no reference to *s: the caller may reuse it.
func (a *Analyzer) AddSpan(s *Span) error {
	if err := a.start(); err != nil {
		return err
	}
	_, dup := a.spanID[s.ID]
	if _, gone := a.goneBackward[s.ID]; dup || gone { // gone: it ended, but its id is still known
		return &SpanError{SpanID: s.ID, Msg: "duplicate span id"}
	}
	if line, ok := a.named[s.ID]; ok {
		if line > 0 {
			return fmt.Errorf("%w: span %q starts after line %d named it", ErrOutOfOrder, s.ID, line)
		}
		return fmt.Errorf("%w: span %q starts after a record that names it", ErrOutOfOrder, s.ID)
	}
	parent := int32(-1)
	if s.ParentID != "" {
		if a.nodes || !a.autogradSeen { // the parent matters
			parent = a.namedSpan(s.ParentID)
		} else if p, ok := a.spanID[s.ParentID]; ok {
			parent = p
		}
	}
	a.addSpan(s, parent)
	return nil
}

// addSpan registers a span whose id is new, under the span of index parent
// (-1 for a root), and returns its index.
func (a *Analyzer) addSpan(s *Span, parent int32) int32 {
	st := spanState{id: s.ID, parent: parent, step: s.Step, start: s.StartNs, firstOp: -1}
	switch {
	case st.step != StepNone:
	case parent >= 0:
		st.step = a.spans[parent].step
	case s.ParentID != "" && a.stepOfSpan(s.ParentID, -1) == StepBackward:
		st.step = StepBackward // the child of a forgotten backward span
	}
	var i int32
	if n := len(a.freeSpans); n > 0 {
		i = a.freeSpans[n-1]
		a.freeSpans = a.freeSpans[:n-1]
		a.spans[i] = st
	} else {
		i = int32(len(a.spans))
		a.spans = append(a.spans, st)
	}
	a.spanID[s.ID] = i
	if s.Closed {
		a.close(i, s.DurationNs)
	}
	return i
}

// EndSpan records that the span ended durationNs after it started. It
// returns a *SpanError for a span not added (with SkipNodeMetrics, also
// one that ended already and was forgotten) or ended before, an error
// wrapping ErrOutOfOrder when memory events past the end already changed
// what the span measures (see Analyzer), and ErrInvalidOptions for
// invalid options; the Analyzer is then unchanged.
func (a *Analyzer) EndSpan(id string, durationNs uint64) error {
	if err := a.start(); err != nil {
		return err
	}
	i, ok := a.spanID[id]
	if !ok {
		if a.forget { // SkipNodeMetrics forgets a span when it ends
			return &SpanError{SpanID: id, Msg: "end of an unknown span, or of one that ended already"}
		}
		return &SpanError{SpanID: id, Msg: "end of an unknown span"}
	}
	s := &a.spans[i]
	if s.closed {
		return &SpanError{SpanID: id, Msg: "span ended twice"}
	}
	if end := addSat(s.start, durationNs); a.nodes && end < a.lastTs {
		// Memory events stamped after the end were replayed: the residual
		// is still known if they did not change it.
		if s.changed > end {
			return fmt.Errorf("%w: span %q ended at %d ns, before memory events already replayed (up to %d ns) that changed its bytes", ErrOutOfOrder, id, end, a.lastTs)
		}
		for o := s.firstOp; o >= 0; o = a.ops[o].next {
			if !a.unchangedSince(a.ops[o].output, end) {
				return fmt.Errorf("%w: span %q ended at %d ns, before memory events already replayed (up to %d ns) that may have changed its op's output %q", ErrOutOfOrder, id, end, a.lastTs, a.ops[o].output)
			}
		}
	}
	a.close(i, durationNs)
	return nil
}

// unchangedSince reports whether tensor id's live bytes are known not to
// have changed since ts: it is live from an alloc stamped at or before ts,
// or it was never allocated or freed.
func (a *Analyzer) unchangedSince(id string, ts uint64) bool {
	h := hashID(id)
	if slot := a.lookup(id, h); slot >= 0 {
		return a.allocs.at(slot).ev.TimestampNs <= ts
	}
	return !a.wasFreed(h)
}

func (a *Analyzer) close(i int32, durationNs uint64) {
	s := &a.spans[i]
	s.closed = true
	s.end = addSat(s.start, durationNs)
	switch {
	case a.forget:
		// Of a span that ended, records may still name it (memory stamped
		// before its end), but only to ask whether it is backward, which
		// measure keeps: so it goes now, not once memory past its end
		// came, which spans with none after them waited for.
		a.measure(i)
	case a.nodes: // its residual is measured at its end
		a.ends.push(spanEnd{end: s.end, span: i})
	}
}

// AddOp registers an op. Its index is its position among the ops added with
// the same span id. Ops of 0 bytes are counted for the index but get no node.
// It returns an error wrapping ErrOutOfOrder for an op of a span that ended
// before memory events already replayed that may have changed the op's
// output (see Analyzer), and ErrInvalidOptions for invalid options; the
// Analyzer is then unchanged. The Analyzer keeps no reference to *op, its
// slices or its StorageBytes: the caller may reuse them.
func (a *Analyzer) AddOp(op *Op) error {
	if err := a.start(); err != nil || !a.nodes {
		return err
	}
	span, known := a.spanID[op.SpanID]
	bytes := op.Bytes()
	if known && bytes > 0 && op.Output != "" {
		if s := &a.spans[span]; s.closed && s.end < a.lastTs && !a.unchangedSince(op.Output, s.end) {
			return fmt.Errorf("%w: op of span %q comes after memory events past the span's end (%d ns, up to %d ns) that may have changed its output %q", ErrOutOfOrder, op.SpanID, s.end, a.lastTs, op.Output)
		}
	}
	var index int32
	if known {
		index = a.spans[span].opCount
		a.spans[span].opCount++
	} else {
		index = a.opCount[op.SpanID]
		a.opCount[op.SpanID] = index + 1
		if a.named != nil {
			a.noteNamed(op.SpanID) // its ops' indices have begun
		}
	}
	if bytes == 0 {
		return nil
	}
	o := opState{spanID: op.SpanID, index: index, bytes: bytes, output: op.Output, next: -1}
	if known {
		s := &a.spans[span]
		s.own = addSat(s.own, bytes)
		if op.Output != "" {
			if s.done { // the span was measured already: measure the op now
				o.residual, o.measured = a.liveBytes(op.Output), true
			} else {
				o.next, s.firstOp = s.firstOp, int32(len(a.ops))
			}
		}
	}
	a.ops = append(a.ops, o)
	return nil
}

// AddDeviceMemory registers a device-level sample. A device's capacity is
// its largest capacity_bytes sample, or else its largest used + free sample;
// samples may arrive at any time, and every profile uses all of them. Its
// only error is that of invalid options (wrapping ErrInvalidOptions). The
// Analyzer keeps no reference to *s or its pointers: the caller may reuse
// them.
func (a *Analyzer) AddDeviceMemory(s *DeviceMemorySample) error {
	if err := a.start(); err != nil {
		return err
	}
	d := &a.devices[a.device(s.Device)]
	old := d.capacityBytes()
	if s.CapacityBytes != nil {
		d.capacity = max(d.capacity, *s.CapacityBytes)
		d.hasCap = true
	}
	d.usedFree = max(d.usedFree, addSat(s.UsedBytes, s.FreeBytes))
	if d.hasEvents && d.capacityBytes() != old {
		d.capChanged = true
	}
	return nil
}

// Add replays one memory event. It returns an error wrapping ErrOutOfOrder
// for an event stamped before the previous one; an *EventError, which names
// the tensor and matches ErrInvalidEvent, for an Action or Category out of
// range (only an event built in Go can have one; Validate names them in a
// document); and the error of invalid options, wrapping ErrInvalidOptions.
// On an error the Analyzer is as it was. The Analyzer copies the event but not
// its Shape's elements: the caller may reuse *ev for the next event, but
// must give it a new Shape slice rather than overwrite the elements of the
// one passed here, which a profile's peak breakdown may show.
func (a *Analyzer) Add(ev *MemoryEvent) error {
	if err := a.start(); err != nil {
		return err
	}
	return a.add(ev, hashID(ev.TensorID), false)
}

// add replays one memory event, whose tensor id has hash h; with keep, ev
// stays unchanged while the Analyzer lives (an event of a document) and is
// referred to, not copied. The callers have checked the options (a.err).
func (a *Analyzer) add(ev *MemoryEvent, h uint64, keep bool) error {
	if ev.TimestampNs < a.lastTs {
		return fmt.Errorf("%w: timestamp_ns %d comes after %d", ErrOutOfOrder, ev.TimestampNs, a.lastTs)
	}
	if !ev.Action.valid() || !ev.Category.valid() {
		return eventErrors(ev, -1)[0]
	}
	a.lastTs = ev.TimestampNs
	a.closeSpansBefore(ev.TimestampNs)

	// The span matters for node metrics, and for the step until the first
	// backward event is found.
	span := int32(-1)
	if a.nodes || !a.autogradSeen && a.stepOf == nil {
		span = a.namedSpan(ev.SpanID)
	}
	if !a.autogradSeen && a.stepOfSpan(ev.SpanID, span) == StepBackward {
		a.autogradSeen, a.goneBackward = true, nil
		a.autogradRel = make([]int64, len(a.devices))
		for i := range a.devices {
			a.autogradRel[i] = a.devices[i].cats[CategoryActivation]
		}
	}

	dev := a.device(ev.Device)
	if ev.Action == ActionAlloc {
		a.summary.AllocCount++
		a.summary.TotalAllocBytes = addSat(a.summary.TotalAllocBytes, ev.Bytes)
		if slot := a.lookup(ev.TensorID, h); slot >= 0 {
			a.anom.DuplicateAllocs++
			a.release(slot, h)
		}
		d := &a.devices[dev]
		d.allocCount++
		d.live = addSat64(d.live, toInt64(ev.Bytes))
		d.cats[ev.Category] = addSat64(d.cats[ev.Category], toInt64(ev.Bytes))
		d.seen = d.seen.With(ev.Category)
		if !a.nodes {
			span = -1 // no subtree accounting
		}
		a.spanAdd(span, ev.Bytes)
		slot := a.newSlot(liveAlloc{ev: ev, dev: dev, span: span, seq: a.seq})
		if !keep {
			c := a.allocs.event(slot)
			*c = *ev
			a.allocs.at(slot).ev = c
		}
		a.live.insert(slot, h)
	} else {
		a.summary.FreeCount++
		if slot := a.lookup(ev.TensorID, h); slot >= 0 {
			al := a.allocs.at(slot)
			dev = al.dev // the bytes return to the device they live on
			if al.ev.Bytes != ev.Bytes {
				a.anom.SizeMismatches++
			}
			a.release(slot, h)
		} else if a.wasFreed(h) {
			a.anom.DoubleFrees++
		} else {
			// Pre-existing: live from the start of the trace until now.
			a.anom.UnmatchedFrees++
			a.logFree(h)
			a.summary.PreexistingBytes = addSat(a.summary.PreexistingBytes, ev.Bytes)
			d := &a.devices[dev]
			d.pool = addSat(d.pool, ev.Bytes)
			d.poolCats[ev.Category] = addSat(d.poolCats[ev.Category], ev.Bytes)
			d.poolSeen = d.poolSeen.With(ev.Category)
			d.live = addSat64(d.live, -toInt64(ev.Bytes))
			d.cats[ev.Category] = addSat64(d.cats[ev.Category], -toInt64(ev.Bytes))
		}
		a.devices[dev].freeCount++
	}

	d := &a.devices[dev]
	d.hasEvents = true
	if !d.hasPeak || d.live > d.peak.live {
		d.hasPeak = true
		d.peak = point{seq: a.seq, ts: ev.TimestampNs, live: d.live, cats: d.cats, seen: d.seen, dev: dev}
		clear(d.lostPeak)
		d.lostPeak = d.lostPeak[:0]
	}
	if a.opts.MaxTimelinePoints == 0 {
		a.timeline = append(a.timeline, d.timelinePoint(ev.TimestampNs))
	} else {
		d.tl.add(&point{seq: a.seq, ts: ev.TimestampNs, live: d.live, cats: d.cats, seen: d.seen, dev: dev})
	}
	a.seq++
	return nil
}

// timelinePoint returns the device's point at ts, with its byte counts
// relative to the pool (kept as two's complement bits when negative) and
// free bytes for the capacity known now; see finishTimeline.
func (d *deviceState) timelinePoint(ts uint64) TimelinePoint {
	tp := TimelinePoint{TimestampNs: ts, Device: d.name, LiveBytes: uint64(d.live), HeapBytes: uint64(d.live)}
	if c := d.capacityBytes(); d.live >= 0 && c > uint64(d.live) {
		tp.FreeBytes = c - uint64(d.live)
	}
	neg := d.live
	for c, v := range d.cats {
		tp.ByCategory.Bytes[c] = uint64(v)
		neg |= v
	}
	tp.ByCategory.Present = d.seen
	if neg < 0 {
		d.negative = true
	}
	return tp
}

// finishTimeline brings points written by timelinePoint to their final
// values: the device's whole pool added and free bytes for its final
// capacity. Devices whose points are final already are left alone, so a
// trace without pre-existing memory or late capacity costs no pass.
func (a *Analyzer) finishTimeline(points []TimelinePoint) {
	fix := make([]bool, len(a.devices))
	needed := false
	for i := range a.devices {
		d := &a.devices[i]
		// poolSeen is not empty once a pre-existing free, even of 0 bytes, was seen.
		fix[i] = d.poolSeen != 0 || d.capChanged || d.negative
		needed = needed || fix[i]
	}
	if !needed {
		return
	}
	dev := 0
	for i := range points {
		tp := &points[i]
		if a.devices[dev].name != tp.Device {
			dev = int(a.deviceID[tp.Device])
		}
		if !fix[dev] {
			continue
		}
		d := &a.devices[dev]
		live := withPool(int64(tp.LiveBytes), d.pool)
		tp.LiveBytes, tp.HeapBytes, tp.FreeBytes = live, live, 0
		if c := d.capacityBytes(); c > live {
			tp.FreeBytes = c - live
		}
		for c := range tp.ByCategory.Bytes {
			tp.ByCategory.Bytes[c] = withPool(int64(tp.ByCategory.Bytes[c]), d.poolCats[c])
		}
		tp.ByCategory.Present |= d.poolSeen
	}
}

// logFree notes that a tensor id of hash h was freed.
func (a *Analyzer) logFree(h uint64) {
	if a.pastFrees != nil {
		return
	}
	a.freedNew = append(a.freedNew, h)
	// An id freed again after a new alloc (ids that are allocator
	// addresses, say) is listed again: the list is compacted when it has
	// doubled, so that memory follows the distinct ids, not the frees.
	if len(a.freedNew) >= max(freedCompactMin, 2*a.freedSorted) {
		a.compactFreed()
	}
}

// release frees the live allocation in slot, of a tensor id of hash h.
func (a *Analyzer) release(slot int32, h uint64) {
	al := a.allocs.at(slot)
	d := &a.devices[al.dev]
	b := toInt64(al.ev.Bytes)
	d.live = addSat64(d.live, -b)
	d.cats[al.ev.Category] = addSat64(d.cats[al.ev.Category], -b)
	a.spanSub(al.span, al.ev.Bytes)
	if d.hasPeak && al.seq <= d.peak.seq {
		d.lostPeak = append(d.lostPeak, *al.ev)
	}
	a.live.remove(slot, h)
	a.logFree(h)
	*al = liveAlloc{}
	a.freeSlots = append(a.freeSlots, slot)
}

func (a *Analyzer) newSlot(al liveAlloc) int32 {
	if n := len(a.freeSlots); n > 0 {
		slot := a.freeSlots[n-1]
		a.freeSlots = a.freeSlots[:n-1]
		*a.allocs.at(slot) = al
		return slot
	}
	return a.allocs.add(al)
}

func (a *Analyzer) spanAdd(s int32, b uint64) {
	if b == 0 {
		return // no change, which an out-of-order check would see as one
	}
	for ; s >= 0; s = a.spans[s].parent {
		sp := &a.spans[s]
		var carry uint64
		sp.cur, carry = bits.Add64(sp.cur, b, 0)
		sp.curHi += carry
		sp.peak = max(sp.peak, sp.live())
		sp.changed = a.lastTs
	}
}

func (a *Analyzer) spanSub(s int32, b uint64) {
	if b == 0 {
		return
	}
	for ; s >= 0; s = a.spans[s].parent {
		sp := &a.spans[s]
		lo, borrow := bits.Sub64(sp.cur, b, 0)
		if sp.curHi < borrow { // more than it holds: none left
			sp.cur, sp.curHi = 0, 0
		} else {
			sp.cur, sp.curHi = lo, sp.curHi-borrow
		}
		sp.changed = a.lastTs
	}
}

// live returns the bytes live that the span's subtree allocated, saturated
// at 2⁶⁴−1.
func (sp *spanState) live() uint64 {
	if sp.curHi != 0 {
		return math.MaxUint64
	}
	return sp.cur
}

// closeSpansBefore measures the residual bytes of every closed span that
// ended before ts: events stamped exactly at a span's end count as inside.
func (a *Analyzer) closeSpansBefore(ts uint64) {
	for len(a.ends) > 0 && a.ends[0].end < ts {
		a.measure(a.ends.pop().span)
	}
}

func (a *Analyzer) measure(i int32) {
	s := &a.spans[i]
	if a.forget {
		// Forget the span: only open spans are kept.
		if !a.autogradSeen && s.step == StepBackward {
			if a.goneBackward == nil {
				a.goneBackward = make(map[string]struct{})
			}
			a.goneBackward[s.id] = struct{}{}
		}
		delete(a.spanID, s.id)
		for j := range a.spanCache {
			if a.spanCache[j].idx == i+1 {
				a.spanCache[j] = spanCacheEntry{}
			}
		}
		*s = spanState{}
		a.freeSpans = append(a.freeSpans, i)
		return
	}
	s.done = true
	s.residual = s.live()
	for o := s.firstOp; o >= 0; o = a.ops[o].next {
		op := &a.ops[o]
		op.residual, op.measured = a.liveBytes(op.output), true
	}
	s.firstOp = -1
}

// liveBytes returns the bytes of the live allocation of tensor id, or 0.
func (a *Analyzer) liveBytes(id string) uint64 {
	if slot := a.lookup(id, hashID(id)); slot >= 0 {
		return a.allocs.at(slot).ev.Bytes
	}
	return 0
}

// lookup returns the slot of the live allocation of tensor id, whose hash
// is h, or -1.
func (a *Analyzer) lookup(id string, h uint64) int32 { return a.live.find(&a.allocs, id, h) }

// Profile returns the memory profile of what was replayed so far. It may be
// called at any time; the Analyzer goes on afterwards. It costs time in
// proportion to the most allocations live at once so far (a burst of them
// long ago counts) and the timeline points kept, not to the events replayed;
// but with MaxTimelinePoints 0 (the default) a point is kept per memory
// event, so a caller that asks often on a long run should set it, or ask
// Summary, DeviceStats or LiveBytes, which build neither the timeline nor the
// peak breakdown. The returned profile is the caller's; its strings and
// shapes are shared with the records given to the Analyzer.
func (a *Analyzer) Profile() *MemoryProfile {
	p := &MemoryProfile{
		Timeline:      []TimelinePoint{},
		PeakBreakdown: []LiveAllocation{},
		ByDevice:      []DeviceMemoryStats{},
		Anomalies:     a.anom,
	}
	var peakDev int32
	p.Summary, peakDev = a.summaryNow()
	for i := range a.devices {
		if d := &a.devices[i]; d.hasEvents {
			p.ByDevice = append(p.ByDevice, d.stats())
		}
	}
	slices.SortFunc(p.ByDevice, func(x, y DeviceMemoryStats) int { return cmp.Compare(x.Device, y.Device) })
	if peakDev >= 0 {
		p.PeakBreakdown = a.breakdown(peakDev)
	}
	a.mergeTimeline(p)
	return p
}

// Summary returns the summary of the memory profile of what was replayed so
// far: what Profile().Summary holds, at the cost of a pass over the devices,
// without the timeline and the peak breakdown Profile builds. A program that
// follows a trace and checks a budget after each record asks this (the peak
// so far, PeakBytes, can rise without a new allocation: pre-existing memory
// found at a free counts from the trace's start).
func (a *Analyzer) Summary() MemorySummary {
	s, _ := a.summaryNow()
	return s
}

// summaryNow returns the summary of what was replayed so far and the index
// of the peak device, -1 when no device had a memory event.
func (a *Analyzer) summaryNow() (MemorySummary, int32) {
	s := a.summary
	peakDev := int32(-1)
	var peakBytes uint64
	for i := range a.devices {
		d := &a.devices[i]
		if !d.hasEvents {
			continue
		}
		pb := withPool(d.peak.live, d.pool)
		if peakDev < 0 || pb > peakBytes || pb == peakBytes && d.peak.seq < a.devices[peakDev].peak.seq {
			peakDev, peakBytes = int32(i), pb
		}
	}
	if peakDev >= 0 {
		d := &a.devices[peakDev]
		s.PeakBytes = peakBytes
		s.PeakTimestampNs = d.peak.ts
		s.PeakDevice = d.name
		for c := range Category(NumCategories) {
			if v := withPool(d.peak.cats[c], d.poolCats[c]); v > 0 {
				s.PeakByCategory.Bytes[c] = v
				s.PeakByCategory.Present = s.PeakByCategory.Present.With(c)
			}
		}
	}
	if a.autogradSeen {
		// Per device, then summed: each device's count is a non-negative
		// byte count, the sum of their relative parts need not be.
		// Devices seen after the event had only their pools live then.
		var sum uint64
		for i := range a.devices {
			var rel int64
			if i < len(a.autogradRel) {
				rel = a.autogradRel[i]
			}
			sum = addSat(sum, withPool(rel, a.devices[i].poolCats[CategoryActivation]))
		}
		s.AutogradRetainedBytes = sum
	}
	return s, peakDev
}

// LiveBytes returns the bytes live on device now, after the memory events
// replayed so far: the bytes of its allocations not freed yet (pre-existing
// memory found so far was freed when it was found), saturating as the
// timeline's live bytes do. ok is false, with 0, for a device that no memory
// event changed yet (Profile's ByDevice does not list it; a misspelt name,
// say). It costs a map lookup: a budget check may ask it after every record.
func (a *Analyzer) LiveBytes(device string) (bytes uint64, ok bool) {
	d := a.deviceNamed(device)
	if d == nil {
		return 0, false
	}
	return withPool(d.live, d.pool), true
}

// DeviceStats returns device's figures so far, the entry Profile's ByDevice
// would have for it: its peak so far (which can rise without an event of its
// own: pre-existing memory found at a free counts from the trace's start),
// first reached when, its capacity and counts. ok is false, with the zero
// value, for a device that no memory event changed yet. It costs a map
// lookup.
func (a *Analyzer) DeviceStats(device string) (stats DeviceMemoryStats, ok bool) {
	d := a.deviceNamed(device)
	if d == nil {
		return DeviceMemoryStats{}, false
	}
	return d.stats(), true
}

// deviceNamed returns the state of the device of that name if a memory event
// changed it (it has timeline points), else nil.
func (a *Analyzer) deviceNamed(name string) *deviceState {
	i, ok := a.deviceID[name]
	if !ok || !a.devices[i].hasEvents {
		return nil
	}
	return &a.devices[i]
}

// stats returns the device's entry of a profile's ByDevice.
func (d *deviceState) stats() DeviceMemoryStats {
	return DeviceMemoryStats{
		Device:          d.name,
		CapacityBytes:   d.capacityBytes(),
		PeakBytes:       withPool(d.peak.live, d.pool),
		PeakTimestampNs: d.peak.ts,
		AllocCount:      d.allocCount,
		FreeCount:       d.freeCount,
	}
}

// lastProfile returns the profile, as Profile does, for an Analyzer that
// is not used afterwards: the timeline is handed over, not copied.
func (a *Analyzer) lastProfile() *MemoryProfile {
	a.final = true
	return a.Profile()
}

// mergeTimeline sets p.Timeline to the points kept, in replay order.
func (a *Analyzer) mergeTimeline(p *MemoryProfile) {
	if a.opts.MaxTimelinePoints == 0 {
		switch {
		case len(a.timeline) == 0:
		case a.final:
			p.Timeline, a.timeline = a.timeline, nil
		default:
			p.Timeline = slices.Clone(a.timeline)
		}
		a.finishTimeline(p.Timeline)
		return
	}
	n := 0
	for i := range a.devices {
		n += a.devices[i].tl.len()
	}
	p.Timeline = make([]TimelinePoint, 0, n)
	capacity := make([]uint64, len(a.devices))
	for i := range a.devices {
		capacity[i] = a.devices[i].capacityBytes()
	}
	emit := func(pt *point) {
		d := &a.devices[pt.dev]
		live := withPool(pt.live, d.pool)
		tp := TimelinePoint{TimestampNs: pt.ts, Device: d.name, LiveBytes: live, HeapBytes: live}
		if c := capacity[pt.dev]; c > live {
			tp.FreeBytes = c - live
		}
		tp.ByCategory.Present = pt.seen | d.poolSeen
		for c := range Category(NumCategories) {
			tp.ByCategory.Bytes[c] = withPool(pt.cats[c], d.poolCats[c])
		}
		p.Timeline = append(p.Timeline, tp)
	}
	// The devices' lists in replay order: sorted by seq, not merged by
	// scanning the devices for each point, which takes points × devices.
	pts := make([]*point, 0, n)
	for i := range a.devices {
		tl := &a.devices[i].tl
		for j := range tl.len() {
			pts = append(pts, tl.at(j))
		}
	}
	slices.SortFunc(pts, func(x, y *point) int { return cmp.Compare(x.seq, y.seq) })
	for _, pt := range pts {
		emit(pt)
	}
}

// NodeMetrics returns the memory of every span and op added so far, keyed by
// span id and by op node id: opNodeIDs[key] when present, else
// "{span}/op/{index}". An id is one node: a span keeps its id when an op's
// node id is the same (every span has its node), and of ops with the same
// node id (given or by default) the first added keeps it. Spans still open
// are measured as if the trace ended now. The map is the caller's.
func (a *Analyzer) NodeMetrics(opNodeIDs map[OpKey]string) map[string]NodeMetrics {
	if a.deviceID == nil { // the zero Analyzer, given nothing yet: default options
		return map[string]NodeMetrics{}
	}
	if !a.nodes {
		return nil
	}
	out := make(map[string]NodeMetrics, len(a.spans)+len(a.ops))
	static := a.seq == 0
	peaks := make([]uint64, len(a.spans))
	for i := range a.spans {
		peaks[i] = a.spans[i].peak
	}
	if static {
		// No memory events: a span's peak is the larger of its own ops'
		// bytes and its children's peaks. Children come after their parent.
		for i := range a.spans {
			peaks[i] = a.spans[i].own
		}
		for i := len(a.spans) - 1; i >= 0; i-- {
			if p := a.spans[i].parent; p >= 0 {
				peaks[p] = max(peaks[p], peaks[i])
			}
		}
	}
	for i := range a.spans {
		s := &a.spans[i]
		m := NodeMetrics{Bytes: s.own, PeakBytes: peaks[i], ResidualBytes: s.live()}
		if s.done {
			m.ResidualBytes = s.residual
		}
		out[s.id] = m
	}
	for i := range a.ops {
		o := &a.ops[i]
		id, ok := opNodeIDs[OpKey{SpanID: o.spanID, Index: int(o.index)}]
		if !ok {
			id = o.spanID + "/op/" + strconv.Itoa(int(o.index))
		}
		if _, taken := out[id]; taken {
			continue // a span's id, or an earlier op's (Validate reports the first)
		}
		res := o.residual
		if !o.measured && o.output != "" { // not "" as a tensor id: the op has no output
			res = a.liveBytes(o.output)
		}
		out[id] = NodeMetrics{Bytes: o.bytes, PeakBytes: o.bytes, ResidualBytes: res, StorageBytes: o.bytes}
	}
	return out
}

func (d *deviceState) capacityBytes() uint64 {
	if d.hasCap {
		return d.capacity
	}
	return d.usedFree
}

// withPool returns rel + pool clamped to [0, MaxUint64].
func withPool(rel int64, pool uint64) uint64 {
	if rel >= 0 {
		return addSat(pool, uint64(rel))
	}
	return subSat(pool, uint64(-rel))
}

// toInt64 converts a byte count, saturating at MaxInt64.
func toInt64(b uint64) int64 {
	if b > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(b)
}

// addSat64 returns a+b, saturating at MaxInt64 and, when the sum overflows
// below, at MinInt64+1 (a sum of exactly MinInt64 is kept: subSat64 takes
// a b of MinInt64 as MinInt64+1 before negating it).
func addSat64(a, b int64) int64 {
	s := a + b
	if a > 0 && b > 0 && s < 0 {
		return math.MaxInt64
	}
	if a < 0 && b < 0 && s >= 0 {
		return math.MinInt64 + 1
	}
	return s
}

// subSat64 returns a-b clamped to the int64 range (b = -2⁶³ as -2⁶³+1).
func subSat64(a, b int64) int64 { return addSat64(a, -max(b, -math.MaxInt64)) }

type spanEnd struct {
	end  uint64
	span int32
}

// endHeap is a min-heap of span ends, by end time then span order.
type endHeap []spanEnd

func (h endHeap) less(i, j int) bool {
	return h[i].end < h[j].end || h[i].end == h[j].end && h[i].span < h[j].span
}

func (h *endHeap) push(e spanEnd) {
	*h = append(*h, e)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if !s.less(i, p) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *endHeap) pop() spanEnd {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s = s[:n]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && s.less(l, m) {
			m = l
		}
		if r < n && s.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}
