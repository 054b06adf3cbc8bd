// memory.go holds the memory profile of a trace and the one-call analysis functions.

package tracemem

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/tracemem/tracemem/internal/prefault"
)

// Options tunes an analysis. The zero value is the default.
type Options struct {
	// MaxTimelinePoints bounds the timeline points kept per device; 0 keeps
	// one point per memory event, and a negative bound is invalid (the one
	// invalid option). See Analyze for the downsampling rule.
	MaxTimelinePoints int

	// SkipNodeMetrics drops the per-span and per-op bookkeeping of node
	// metrics: Analyzer.NodeMetrics then returns nil (so do AnalyzeStream's
	// node metrics), and a span is remembered only until it ends, so that
	// the memory of a streamed analysis stays bounded by what is live and
	// the timeline points kept. The profile is the same: records may still
	// name a span that ended (memory stamped before its end), and until the
	// first backward memory event, the ids of backward spans that ended are
	// kept for them (only autograd_retained_bytes depends on steps). A span
	// id used again after its span ended (which ReadTrace refuses) is taken
	// for a new span, unless it is refused: as a duplicate span id (a
	// *SpanError) while its id is kept (a backward span, until the first
	// backward memory event), and with ErrOutOfOrder when a record named it
	// after it ended, before the first backward memory event. Refusing every
	// such id would need the id of every span that ended.
	SkipNodeMetrics bool
}

// MemoryProfile is what a trace's memory events say about memory over time.
type MemoryProfile struct {
	Summary       MemorySummary       `json:"summary"`
	Timeline      []TimelinePoint     `json:"timeline"`       // in replay order
	PeakBreakdown []LiveAllocation    `json:"peak_breakdown"` // live on the peak device at the peak
	ByDevice      []DeviceMemoryStats `json:"by_device"`      // the devices memory events changed, as the timeline's points name them (see Analyze), sorted by name
	Anomalies     Anomalies           `json:"anomalies"`
}

// MemorySummary holds the headline figures of a profile.
type MemorySummary struct {
	AllocCount            uint64        `json:"alloc_count"`             // alloc events, duplicates included
	FreeCount             uint64        `json:"free_count"`              // free events, double and unmatched frees included
	TotalAllocBytes       uint64        `json:"total_alloc_bytes"`       // bytes of all alloc events (saturating)
	PeakBytes             uint64        `json:"peak_bytes"`              // highest device peak, bytes
	PeakTimestampNs       uint64        `json:"peak_timestamp_ns"`       // when PeakBytes was first reached, ns since trace start
	PeakDevice            string        `json:"peak_device"`             // "" when there are no memory events
	PeakByCategory        CategoryBytes `json:"peak_by_category"`        // the peak device's non-zero categories at the peak
	AutogradRetainedBytes uint64        `json:"autograd_retained_bytes"` // activation bytes live (all devices) just before the first backward event; 0 without one
	PreexistingBytes      uint64        `json:"preexisting_bytes"`       // bytes freed but never allocated in the trace
}

// TimelinePoint is the state of one device after one memory event.
type TimelinePoint struct {
	TimestampNs uint64        `json:"timestamp_ns"` // ns since trace start
	Device      string        `json:"device"`
	LiveBytes   uint64        `json:"live_bytes"`  // bytes live on the device, pre-existing included
	HeapBytes   uint64        `json:"heap_bytes"`  // equal to LiveBytes (TensorFlow's name for it)
	FreeBytes   uint64        `json:"free_bytes"`  // capacity − live; 0 when capacity is unknown or exceeded
	ByCategory  CategoryBytes `json:"by_category"` // every category seen on the device so far
}

// LiveAllocation is one allocation live at the peak.
type LiveAllocation struct {
	TensorID string   `json:"tensor_id"`
	SpanID   string   `json:"span_id"`
	OpName   *string  `json:"op_name"` // nil (null) when the alloc event named none; entries of one breakdown with the same name share the pointer
	Bytes    uint64   `json:"bytes"`
	Shape    []uint64 `json:"shape"` // empty, not nil, when the event had none (a scalar, or unknown: a PyTorch trace gives no shapes)
	DType    string   `json:"dtype"`
	Device   string   `json:"device"`
	Category Category `json:"category"`
}

// DeviceMemoryStats holds one device's figures.
type DeviceMemoryStats struct {
	Device          string `json:"device"`
	CapacityBytes   uint64 `json:"capacity_bytes"` // 0 when unknown
	PeakBytes       uint64 `json:"peak_bytes"`
	PeakTimestampNs uint64 `json:"peak_timestamp_ns"` // first time PeakBytes was reached
	AllocCount      uint64 `json:"alloc_count"`
	FreeCount       uint64 `json:"free_count"`
}

// Anomalies counts memory events that do not pair up.
type Anomalies struct {
	UnmatchedFrees  uint64 `json:"unmatched_frees"`  // frees of tensors never allocated (pre-existing)
	DoubleFrees     uint64 `json:"double_frees"`     // frees of tensors already freed
	DuplicateAllocs uint64 `json:"duplicate_allocs"` // allocs of tensors still live
	SizeMismatches  uint64 `json:"size_mismatches"`  // frees naming another size than the alloc
}

// ErrInvalidOptions is returned (wrapped) for options that make no sense.
var ErrInvalidOptions = errors.New("invalid options")

// ErrInvalidEvent is matched (errors.Is) by the errors of Analyze,
// Analyzer.Add, Validate, WriteJSON and WriteJSONL for a memory event whose
// Action or Category is out of range (each an *EventError): only an event
// built in Go can have one, as the readers refuse such values.
var ErrInvalidEvent = errors.New("invalid memory event")

// EventError is the error of a memory event whose Action or Category is out
// of range; it matches ErrInvalidEvent. Only an event built in Go can have
// one: the readers refuse such values.
type EventError struct {
	Index       int    // the event's index in TraceDocument.Memory; -1 for an event given to Analyzer.Add
	TensorID    string // the event's tensor id
	TimestampNs uint64 // the event's time, ns since trace start
	Field       string // the field out of range: "action" or "category"
	Value       uint8  // the field's value
}

// Error renders e.g. `memory[3]: tensor "t1" at 5 ns: invalid action 7`,
// without the `memory[3]: ` for an Index of -1.
func (e *EventError) Error() string {
	s := fmt.Sprintf("tensor %q at %d ns: invalid %s %d", e.TensorID, e.TimestampNs, e.Field, e.Value)
	if e.Index >= 0 {
		s = fmt.Sprintf("memory[%d]: %s", e.Index, s)
	}
	return s
}

// Is reports whether target is ErrInvalidEvent.
func (e *EventError) Is(target error) bool { return target == ErrInvalidEvent }

// eventErrors returns an *EventError for each field of ev out of range,
// action first, for the event at index (-1 when it is not a document's).
func eventErrors(ev *MemoryEvent, index int) []error {
	var errs []error
	if !ev.Action.valid() {
		errs = append(errs, &EventError{index, ev.TensorID, ev.TimestampNs, "action", uint8(ev.Action)})
	}
	if !ev.Category.valid() {
		errs = append(errs, &EventError{index, ev.TensorID, ev.TimestampNs, "category", uint8(ev.Category)})
	}
	return errs
}

// AnalyzeMemory is Analyze with default options. It returns nil only for a
// document that Analyze rejects, which a reader never returns.
func AnalyzeMemory(doc *TraceDocument) *MemoryProfile {
	p, _ := Analyze(doc, Options{})
	return p
}

// Analyze replays the memory events of doc and returns its memory profile.
//
// The events are replayed in timestamp order; events with equal timestamps
// keep their order in doc.Memory. The rules, as in the TensorFlow Memory
// Profile and PyTorch's memory timeline:
//   - An alloc makes the tensor (keyed by tensor id) live on its device, with
//     its bytes and category. An alloc of a tensor still live is a duplicate:
//     the earlier allocation counts as freed at that moment.
//   - A free of a live tensor releases the bytes it was allocated with, on the
//     device and under the category it was allocated with (a free naming
//     another size counts as a size mismatch). A free of a tensor already
//     freed is a double free and changes nothing else.
//   - A free of a tensor never allocated is pre-existing memory, made before
//     the capture began: its bytes were live on the free's device, under the
//     free's category, from the start of the timeline until that free.
//   - A device's capacity is its largest capacity_bytes sample (0 when that
//     is 0: unknown), or, when no sample gives capacity_bytes, its largest
//     used_bytes + free_bytes sample; free bytes are capacity − live, 0 when
//     the capacity is unknown or exceeded.
//   - The timeline has one point per event, for the device the event changed,
//     after applying it (a free changes the device the tensor lives on,
//     whatever device it names; a double free, which changes nothing, has
//     its point and count on the device it names; a duplicate alloc on
//     another device than the live one also lowers that device, without a
//     point of its own).
//     A device's peak is its highest point, first time reached; the
//     global peak is the highest device peak (the earliest on ties), and the
//     breakdown lists what was live on that device then, bytes descending,
//     then tensor id ascending. Pre-existing memory counts in every point
//     and peak but is not listed in the breakdown. Since points come after
//     events, pre-existing memory that a device's first events free, before
//     anything is allocated on it, is in none of its points, so not in its
//     peak: a device whose first event frees 1000 pre-existing bytes and
//     whose next allocates 300 peaks at 300.
//   - Autograd retained bytes are the activation bytes live on all devices
//     just before the first event whose span, or nearest ancestor span with a
//     step, has step backward.
//
// With Options.MaxTimelinePoints = m > 0, each device keeps at most m
// points. With m = 1 that is its highest point (the first one on ties).
// With m > 1 it keeps its last point, a window of its own, and the n−1
// points before it are cut into consecutive windows of w points, w the
// smallest power of two with n−1 ≤ (m−1)·w, each represented by its highest
// point (the first one on ties). Time order is kept; every device peak, so
// the global peak, survives exactly; and so does each device's last point,
// the state it ends in (but after a duplicate alloc across devices, which
// lowers a device without a point), which the highest point of the last
// window would overstate.
//
// Analyze returns an error for invalid options (wrapping ErrInvalidOptions),
// and for an event whose action or category is out of range (matching
// ErrInvalidEvent; only a document built by hand can have one).
//
// Where fresh memory is slow to fault in, most of the time of a first call
// goes to mapping in the pages of the timeline and the peak breakdown. On
// Linux with more than one P, a second goroutine maps them in while Analyze
// writes them; it has ended when Analyze returns.
func Analyze(doc *TraceDocument, opts Options) (*MemoryProfile, error) {
	a, err := replayDocument(doc, opts, false)
	if err != nil {
		return nil, err
	}
	return a.lastProfile(), nil
}

// replayDocument feeds a whole document to a new Analyzer: spans parents
// first (cycles cut as Validate reports them), ops, device samples, then the
// memory events sorted stably by timestamp. The spans are all known from
// the start, so none is forgotten; nodes says whether node metrics are
// wanted.
func replayDocument(doc *TraceDocument, opts Options, nodes bool) (*Analyzer, error) {
	a := NewAnalyzer(opts)
	if a.err != nil {
		return nil, a.err
	}
	a.nodes, a.forget = nodes, false
	a.named = nil // every span is added before the records that name it
	a.reserve(len(doc.Memory), len(doc.Spans), len(doc.Ops))
	// Size the live table for the most allocations live at once, as far as
	// a count of allocs minus frees tells: growing a table of a million live
	// tensors rehashes them again and again.
	live, most := 0, 0
	for i := range doc.Memory {
		if doc.Memory[i].Action == ActionAlloc {
			live++
			most = max(most, live)
		} else if live > 0 {
			live--
		}
	}
	a.live.reserve(most)
	// The slots too, as far as that count tells: a free of a tensor never
	// allocated (or already freed) lowers the count but frees no slot, so a
	// replay may need more, which come in small chunks.
	slots := a.allocs.reserve(most)
	// The live table, the slots and the timeline (96 bytes an event) are
	// mostly fresh memory, slower to fault in than to write: another core
	// maps them in while the replay runs, the table first, since the replay
	// writes it anywhere from the start (measured, 1M events in fresh
	// memory: 0.37 s without, 0.21 s with; on huge pages, 0.08 s).
	stop := prefault.Ahead(prefault.Bytes(a.live.cells), prefault.Bytes(slots), prefault.Bytes(a.timeline))
	defer stop()
	a.addSpans(doc.Spans)
	for i := range doc.Ops {
		_ = a.AddOp(&doc.Ops[i])
	}
	for i := range doc.DeviceMemory {
		_ = a.AddDeviceMemory(&doc.DeviceMemory[i])
	}
	mem := doc.Memory
	var order []int32 // replay order, when it is not mem's own
	if !slices.IsSortedFunc(mem, byTimestamp) {
		order = make([]int32, len(mem))
		for i := range order {
			order[i] = int32(i)
		}
		slices.SortStableFunc(order, func(x, y int32) int { return cmp.Compare(mem[x].TimestampNs, mem[y].TimestampNs) })
	}
	at := func(k int) int {
		if order == nil {
			return k
		}
		return int(order[k])
	}
	k := 0
	// Only a free of an id not live asks whether the id was freed before,
	// and the frees replayed so far can tell: none is logged until then.
	a.pastFrees = func() []uint64 {
		var hs []uint64
		for j := range k {
			if ev := &mem[at(j)]; ev.Action == ActionFree {
				hs = append(hs, hashID(ev.TensorID))
			}
		}
		return hs
	}
	// Hashes are computed a few events ahead, and the live table's cell of
	// each prefetched then: with a million tensors live, the table is far
	// bigger than the caches, and a lookup would wait for memory at every
	// event (measured: the replay took 2.4 times as long).
	const ahead = 8
	var hashes [2 * ahead]uint64
	for j := range min(ahead, len(mem)) {
		hashes[j] = hashID(mem[at(j)].TensorID)
		a.live.prefetch(hashes[j])
	}
	for ; k < len(mem); k++ {
		if j := k + ahead; j < len(mem) {
			hashes[j%len(hashes)] = hashID(mem[at(j)].TensorID)
			a.live.prefetch(hashes[j%len(hashes)])
		}
		i := at(k)
		if err := a.add(&mem[i], hashes[k%len(hashes)], true); err != nil {
			if ee, ok := err.(*EventError); ok {
				ee.Index = i
				return nil, ee
			}
			return nil, fmt.Errorf("memory[%d]: %w", i, err)
		}
	}
	return a, nil
}

// addSpans adds a document's spans, parents first, each id once, with
// their parent's document index resolved (no lookup by id links them).
// Without node metrics, a span matters only for the step its events take,
// and only until the first backward event: the steps are then resolved on
// demand instead (see stepResolver), and only when some span says backward.
func (a *Analyzer) addSpans(spans []Span) {
	if !a.nodes {
		if slices.ContainsFunc(spans, func(s Span) bool { return s.Step == StepBackward }) {
			a.stepOf = newStepResolver(spans).step
		}
		return
	}
	at := make([]int32, len(spans)) // document index → Analyzer index
	for _, s := range orderSpans(spans) {
		parent := int32(-1)
		if s.parent >= 0 && !s.cut {
			parent = at[s.parent]
		}
		at[s.index] = a.addSpan(&spans[s.index], parent)
	}
}

// stepResolver finds the step, own or inherited from the nearest ancestor
// that has one, of a document's spans on demand, remembering what it found.
// Spans sorted by id (as readers return them) are found by binary search;
// others through a map built once. A parent chain that comes back on itself
// makes it compute every span's step once, with the cycles cut as
// orderSpans cuts them.
type stepResolver struct {
	spanFinder
	memo []Step // resolved step + 1; 0 when not resolved yet
	path []int
}

func newStepResolver(spans []Span) *stepResolver {
	return &stepResolver{spanFinder: newSpanFinder(spans), memo: make([]Step, len(spans))}
}

func (r *stepResolver) step(id string) Step {
	i := r.find(id)
	if i < 0 {
		return StepNone
	}
	// Walk up to a resolved span or a root (a chain that enters a cycle
	// must not be resolved by its first step: the cut may be below it),
	// then resolve the walk top down.
	r.path = r.path[:0]
	j := i
	for j >= 0 && r.memo[j] == 0 {
		if len(r.path) > len(r.spans) {
			r.resolveAll()
			return r.memo[i] - 1
		}
		r.path = append(r.path, j)
		p := -1
		if r.spans[j].ParentID != "" {
			p = r.find(r.spans[j].ParentID)
		}
		j = p
	}
	st := StepNone
	if j >= 0 {
		st = r.memo[j] - 1
	}
	for k := len(r.path) - 1; k >= 0; k-- {
		if own := r.spans[r.path[k]].Step; own != StepNone {
			st = own
		}
		r.memo[r.path[k]] = st + 1
	}
	return r.memo[i] - 1
}

// resolveAll resolves every span's step, parents first, cycles cut.
func (r *stepResolver) resolveAll() {
	for _, s := range orderSpans(r.spans) {
		st := r.spans[s.index].Step
		if st == StepNone && s.parent >= 0 && !s.cut {
			st = r.memo[s.parent] - 1
		}
		r.memo[s.index] = st + 1
	}
}

func byTimestamp(x, y MemoryEvent) int { return cmp.Compare(x.TimestampNs, y.TimestampNs) }
