// gen_test.go checks the generated traces against a reference replay of their records.

package gen_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tracemem/tracemem/internal/gen"
)

// record is every field a generated record may carry.
type record struct {
	Kind string `json:"kind"`

	// meta
	Schema        string  `json:"schema"`
	RunID         string  `json:"run_id"`
	CorrelationID string  `json:"correlation_id"`
	Entrypoint    string  `json:"entrypoint"`
	Phase         string  `json:"phase"`
	Timestamp     string  `json:"timestamp"`
	CaptureStep   *uint64 `json:"capture_step"`
	WarmupSteps   *uint64 `json:"warmup_steps"`
	TimingMode    string  `json:"timing_mode"`

	// span_start / span_end
	ID         string  `json:"id"`
	ParentID   *string `json:"parent_id"`
	Name       string  `json:"name"`
	StartNs    *uint64 `json:"start_ns"`
	SpanKind   string  `json:"span_kind"`
	Measured   *bool   `json:"measured"`
	Step       *string `json:"step"`
	DurationNs *uint64 `json:"duration_ns"`

	// op / tensor / memory / device_memory
	SpanID            string           `json:"span_id"`
	OpName            *string          `json:"op_name"`
	Inputs            []string         `json:"inputs"`
	Output            *string          `json:"output"`
	Shape             []uint64         `json:"shape"`
	DType             string           `json:"dtype"`
	Device            string           `json:"device"`
	TimestampNs       *uint64          `json:"timestamp_ns"`
	StorageBytes      *uint64          `json:"storage_bytes"`
	InputStorageBytes *uint64          `json:"input_storage_bytes"`
	TensorID          string           `json:"tensor_id"`
	RequiresGrad      *bool            `json:"requires_grad"`
	Category          *string          `json:"category"`
	Bytes             *uint64          `json:"bytes"`
	Action            string           `json:"action"`
	UsedBytes         *uint64          `json:"used_bytes"`
	FreeBytes         *uint64          `json:"free_bytes"`
	ReservedBytes     *uint64          `json:"reserved_bytes"`
	CapacityBytes     *uint64          `json:"capacity_bytes"`
	Tags              *json.RawMessage `json:"tags"`
}

var dtypeSize = map[string]uint64{"f32": 4, "bf16": 2, "f16": 2, "u8": 1}

var categories = map[string]bool{"parameter": true, "activation": true, "gradient": true, "optimizer": true, "other": true}

// facts is what the reference replay of a trace found. Every structural
// rule is checked while replaying (check reports through t.Errorf); facts
// holds what individual tests then look at.
type facts struct {
	counts map[string]int64 // records by kind

	doubleFrees, unmatchedFrees, duplicateAllocs int64
	badPairs                                     int64 // frees whose bytes or device differ from the live alloc

	unclosed          int
	paramAllocs       int64
	paramAllocsLate   int64 // parameter allocs after the first forward span started
	firstForwardStart bool
	backwardSpans     int64
	gradAllocsInBwd   int64
	gradAllocsOutside int64 // gradient allocs in a span that does not inherit backward
	optSpans          int64
	optStateLive      int64 // optimizer allocs never freed
	optStateLate      int64 // of those, the ones made after the first optimizer span ended
	stepOnChild       int64 // spans with a step whose ancestor already has one
	devices           map[string]bool
	samplesCap        int64
	samplesNoCap      int64
	tieFreeAlloc      int64 // a free then an alloc at one timestamp
	tieAllocFree      int64 // an alloc then a free at one timestamp
	storageAbsent     int64
	storagePresent    int64
	opsFollowed       int64 // ops with an output and storage_bytes != 0 whose next memory record allocs it
	opsNotFollowed    int64
	everyAllocPeak    bool // every alloc raised its device's live bytes above its previous peak
	frees             int64
}

type span struct {
	start    uint64
	step     string // inherited
	ownStep  bool
	closed   bool
	isOptim1 bool // the first optimizer span
}

// replay parses and checks one trace. Rules checked on every trace: each
// line is a JSON object of a known kind; meta first and once with the
// schema; span_start names as parent the innermost open span and span_end
// closes the innermost open span, once; memory, op and tensor records are in
// the innermost open span; timestamps (and span end times) never decrease;
// memory records have a valid action, category, dtype, bytes = shape × dtype
// size, op_name on allocs only; tensor ids are never reused except by
// anomalies; an op's storage_bytes, when present and not 0, is the bytes
// of the alloc of its output that follows it.
func replay(t *testing.T, data []byte) *facts {
	t.Helper()
	f := &facts{counts: map[string]int64{}, devices: map[string]bool{}, everyAllocPeak: true}
	type liveT struct {
		bytes uint64
		dev   string
		cat   string
		late  bool // made after the first optimizer span ended
	}
	live := map[string]liveT{}
	seen := map[string]bool{} // every tensor id ever allocated or freed
	freed := map[string]bool{}
	spans := map[string]*span{}
	var stack []string
	liveDev := map[string]uint64{}
	peakDev := map[string]uint64{}
	var clock uint64
	var prevMem *record
	var pendingOp *record
	optEnded := false
	errs := 0
	fail := func(line int, format string, args ...any) {
		errs++
		if errs <= 10 {
			t.Errorf("line %d: %s", line, fmt.Sprintf(format, args...))
		}
	}
	at := func(line int, ts uint64, what string) {
		if ts < clock {
			fail(line, "%s at %d goes back in time (clock %d)", what, ts, clock)
		}
		clock = ts
	}
	top := func() string {
		if len(stack) == 0 {
			return ""
		}
		return stack[len(stack)-1]
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	line := 0
	for sc.Scan() {
		line++
		var r record
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			fail(line, "not a known JSON record: %v: %s", err, sc.Bytes())
			continue
		}
		f.counts[r.Kind]++
		if line == 1 && r.Kind != "meta" {
			fail(line, "first record is %q, want meta", r.Kind)
		}
		switch r.Kind {
		case "meta":
			if line != 1 {
				fail(line, "meta not first")
			}
			if r.Schema != gen.Schema || r.RunID == "" || r.CorrelationID == "" || r.Entrypoint == "" || r.Phase != "train" ||
				r.Timestamp == "" || r.CaptureStep == nil || r.WarmupSteps == nil || r.TimingMode != "host" || r.Device == "" || r.Tags == nil {
				fail(line, "meta lacks a field or has a wrong value: %+v", r)
			}
		case "span_start":
			if r.StartNs == nil || r.SpanKind == "" || r.Measured == nil || r.Name == "" {
				fail(line, "span_start without start_ns, span_kind, measured or name")
				continue
			}
			switch r.SpanKind {
			case "function", "module", "op":
			default:
				fail(line, "span_kind %q", r.SpanKind)
			}
			if _, dup := spans[r.ID]; dup {
				fail(line, "duplicate span id %q", r.ID)
			}
			parent := ""
			if r.ParentID != nil {
				parent = *r.ParentID
				if parent == "" {
					fail(line, "empty parent_id")
				}
			}
			if parent != top() {
				fail(line, "span %s has parent %q, innermost open span is %q", r.ID, parent, top())
			}
			at(line, *r.StartNs, "span_start")
			s := &span{start: *r.StartNs}
			if parent != "" {
				s.step = spans[parent].step
			}
			if r.Step != nil {
				switch *r.Step {
				case "forward", "backward", "optimizer":
				default:
					fail(line, "step %q", *r.Step)
				}
				if s.step != "" {
					f.stepOnChild++
				}
				s.step, s.ownStep = *r.Step, true
				switch *r.Step {
				case "forward":
					f.firstForwardStart = true
				case "backward":
					f.backwardSpans++
				case "optimizer":
					f.optSpans++
					s.isOptim1 = f.optSpans == 1
				}
			}
			spans[r.ID] = s
			stack = append(stack, r.ID)
		case "span_end":
			if r.DurationNs == nil {
				fail(line, "span_end without duration_ns")
				continue
			}
			s := spans[r.ID]
			switch {
			case s == nil:
				fail(line, "span_end of unknown span %q", r.ID)
				continue
			case s.closed:
				fail(line, "second span_end of %q", r.ID)
				continue
			case r.ID != top():
				fail(line, "span_end of %q while %q is the innermost open span", r.ID, top())
			}
			s.closed = true
			if s.isOptim1 {
				optEnded = true
			}
			at(line, s.start+*r.DurationNs, "span end")
			stack = stack[:len(stack)-1]
		case "op":
			if r.SpanID != top() || r.SpanID == "" {
				fail(line, "op in span %q, innermost open span is %q", r.SpanID, top())
			}
			if r.TimestampNs == nil || r.DurationNs == nil || r.InputStorageBytes == nil || r.OpName == nil || r.Inputs == nil {
				fail(line, "op lacks a required field")
				continue
			}
			at(line, *r.TimestampNs, "op")
			if _, ok := dtypeSize[r.DType]; !ok {
				fail(line, "op dtype %q", r.DType)
			}
			if r.StorageBytes == nil {
				f.storageAbsent++
			} else {
				f.storagePresent++
			}
			if pendingOp != nil {
				f.opsNotFollowed++
			}
			pendingOp = nil
			if r.Output != nil && (r.StorageBytes == nil || *r.StorageBytes != 0) {
				rr := r
				pendingOp = &rr
			}
		case "tensor":
			if r.SpanID != top() || r.Category == nil || *r.Category != "parameter" {
				fail(line, "tensor record in span %q (innermost %q) category %v", r.SpanID, top(), r.Category)
			}
		case "device_memory":
			if r.TimestampNs == nil || r.UsedBytes == nil || r.FreeBytes == nil {
				fail(line, "device_memory lacks a required field")
				continue
			}
			at(line, *r.TimestampNs, "device_memory")
			f.devices[r.Device] = true
			if r.CapacityBytes != nil {
				f.samplesCap++
				if *r.CapacityBytes != gen.CapacityBytes {
					fail(line, "capacity %d", *r.CapacityBytes)
				}
			} else {
				f.samplesNoCap++
			}
			if *r.UsedBytes <= gen.CapacityBytes && *r.UsedBytes+*r.FreeBytes != gen.CapacityBytes {
				fail(line, "used %d + free %d != capacity", *r.UsedBytes, *r.FreeBytes)
			}
			if r.ReservedBytes != nil && *r.ReservedBytes != *r.UsedBytes+64<<20 {
				fail(line, "reserved %d, want used %d + 64 MiB", *r.ReservedBytes, *r.UsedBytes)
			}
		case "memory":
			if r.TimestampNs == nil || r.Bytes == nil || r.TensorID == "" || r.Device == "" {
				fail(line, "memory lacks a required field")
				continue
			}
			if r.SpanID != top() || r.SpanID == "" {
				fail(line, "memory in span %q, innermost open span is %q", r.SpanID, top())
			}
			at(line, *r.TimestampNs, "memory")
			size, ok := dtypeSize[r.DType]
			if !ok {
				fail(line, "memory dtype %q", r.DType)
			}
			n := uint64(1)
			for _, d := range r.Shape {
				n *= d
			}
			if n*size != *r.Bytes || *r.Bytes == 0 {
				fail(line, "bytes %d, shape %v × %s = %d", *r.Bytes, r.Shape, r.DType, n*size)
			}
			cat := "other"
			if r.Category != nil {
				cat = *r.Category
				if !categories[cat] {
					fail(line, "category %q", cat)
				}
			}
			step := ""
			if s := spans[r.SpanID]; s != nil {
				step = s.step
			}
			f.devices[r.Device] = true
			id := r.TensorID
			switch r.Action {
			case "alloc":
				if r.OpName == nil || *r.OpName == "" {
					fail(line, "alloc without op_name")
				}
				if l, ok := live[id]; ok {
					f.duplicateAllocs++
					liveDev[l.dev] -= l.bytes
				} else if seen[id] {
					fail(line, "tensor id %q reused after its free", id)
				}
				live[id] = liveT{bytes: *r.Bytes, dev: r.Device, cat: cat, late: optEnded}
				liveDev[r.Device] += *r.Bytes
				if liveDev[r.Device] <= peakDev[r.Device] {
					f.everyAllocPeak = false
				}
				peakDev[r.Device] = max(peakDev[r.Device], liveDev[r.Device])
				switch cat {
				case "parameter":
					f.paramAllocs++
					if f.firstForwardStart {
						f.paramAllocsLate++
					}
				case "gradient":
					if step == "backward" {
						f.gradAllocsInBwd++
					} else {
						f.gradAllocsOutside++
					}
				case "optimizer":
					if step != "optimizer" {
						fail(line, "optimizer alloc in a span of step %q", step)
					}
				}
				if pendingOp != nil {
					if *pendingOp.Output == id && pendingOp.SpanID == r.SpanID {
						f.opsFollowed++
						if pendingOp.StorageBytes != nil && *pendingOp.StorageBytes != *r.Bytes {
							fail(line, "op output %s: storage_bytes %d, its alloc %d bytes", id, *pendingOp.StorageBytes, *r.Bytes)
						}
					} else {
						f.opsNotFollowed++
					}
					pendingOp = nil
				}
				if prevMem != nil && prevMem.Action == "free" && *prevMem.TimestampNs == *r.TimestampNs {
					f.tieFreeAlloc++
				}
			case "free":
				f.frees++
				if r.OpName != nil {
					fail(line, "op_name on a free")
				}
				l, ok := live[id]
				switch {
				case ok:
					if l.bytes != *r.Bytes || l.dev != r.Device || l.cat != cat {
						f.badPairs++
					}
					liveDev[l.dev] -= l.bytes
					delete(live, id)
					freed[id] = true
				case freed[id]:
					f.doubleFrees++
				case !seen[id]:
					f.unmatchedFrees++
					freed[id] = true
				default:
					fail(line, "free of %q: seen but neither live nor freed", id)
				}
				if prevMem != nil && prevMem.Action == "alloc" && *prevMem.TimestampNs == *r.TimestampNs {
					f.tieAllocFree++
				}
			default:
				fail(line, "action %q", r.Action)
			}
			seen[id] = true
			rr := r
			prevMem = &rr
		default:
			fail(line, "unknown kind %q", r.Kind)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for _, l := range live {
		if l.cat == "optimizer" {
			f.optStateLive++
			if l.late {
				f.optStateLate++
			}
		}
	}
	f.unclosed = len(stack)
	return f
}

// replayedTrace is a generated trace with its replay, cached per Config
// so that tests looking at different facts of one trace replay it once
// (the replay's rule violations are reported by the first test to ask).
type replayedTrace struct {
	data []byte
	st   gen.Stats
	f    *facts
}

var (
	replayMu    sync.Mutex
	replayCache = map[gen.Config]*replayedTrace{}
)

func replayed(t *testing.T, cfg gen.Config) *replayedTrace {
	t.Helper()
	replayMu.Lock()
	defer replayMu.Unlock()
	if r := replayCache[cfg]; r != nil {
		return r
	}
	data, st := generate(t, cfg)
	r := &replayedTrace{data: data, st: st, f: replay(t, data)}
	replayCache[cfg] = r
	return r
}

func generate(t testing.TB, cfg gen.Config) ([]byte, gen.Stats) {
	t.Helper()
	var buf bytes.Buffer
	st, err := gen.Write(&buf, cfg)
	if err != nil {
		t.Fatalf("Write(%+v): %v", cfg, err)
	}
	return buf.Bytes(), st
}

// configs is a spread of options used by several tests.
var configs = []struct {
	name string
	cfg  gen.Config
	why  string
}{
	{"default", gen.Config{}, "the zero Config is valid: 1000 events, one device"},
	{"tiny", gen.Config{Seed: 3, MemoryEvents: 7}, "fewer events than parameters: cut inside load_model"},
	{"one-device", gen.Config{Seed: 1, MemoryEvents: 5000}, "plain training run"},
	{"three-devices", gen.Config{Seed: 2, MemoryEvents: 10000, Devices: 3}, "pipeline over three devices with to_device ops"},
	{"anomalies", gen.Config{Seed: 4, MemoryEvents: 10000, Devices: 2, Anomalies: true}, "all three bad pairings mixed in"},
	{"steady", gen.Config{Seed: 5, MemoryEvents: 5000, SteadyGrowth: true}, "one endless forward pass that never frees"},
	{"unclosed", gen.Config{Seed: 6, MemoryEvents: 3000, UnclosedSpans: true}, "capture cut short: open spans stay open"},
	{"few-spans", gen.Config{Seed: 7, MemoryEvents: 10000, Spans: 1000}, "span target below the natural ratio: extra temporaries"},
	{"many-spans", gen.Config{Seed: 8, MemoryEvents: 4000, Spans: 12000}, "span target above the natural ratio: view op spans"},
	{"no-samples", gen.Config{Seed: 9, MemoryEvents: 2000, SampleEvery: -1}, "device_memory sampling off"},
}

func TestDeterministic(t *testing.T) {
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			a, _ := generate(t, c.cfg)
			b, _ := generate(t, c.cfg)
			if !bytes.Equal(a, b) {
				t.Fatalf("%s: same config gave different bytes", c.why)
			}
			other := c.cfg
			other.Seed++
			d, _ := generate(t, other)
			if bytes.Equal(a, d) {
				t.Fatalf("%s: seeds %d and %d gave the same bytes", c.why, c.cfg.Seed, other.Seed)
			}
			// Not only the run_id of the meta record: the records after it
			// (found by mutation: a seed divided into the generator's state
			// gave every small seed the same trace).
			_, ra, _ := bytes.Cut(a, []byte("\n"))
			_, rd, _ := bytes.Cut(d, []byte("\n"))
			if bytes.Equal(ra, rd) {
				t.Fatalf("%s: seeds %d and %d differ only in the meta record", c.why, c.cfg.Seed, other.Seed)
			}
		})
	}
}

// TestWellFormed replays every config and checks the rules replay checks
// on every trace, plus the Stats against the records.
func TestWellFormed(t *testing.T) {
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			r := replayed(t, c.cfg)
			data, st, f := r.data, r.st, r.f
			want := map[string]int64{
				"meta": 1, "span_start": st.SpanStarts, "span_end": st.SpanEnds, "op": st.Ops,
				"tensor": st.Tensors, "device_memory": st.DeviceMemory, "memory": st.Memory,
			}
			var total int64
			for k, n := range want {
				if f.counts[k] != n {
					t.Errorf("%s: %d %s records, Stats says %d", c.why, f.counts[k], k, n)
				}
				total += n
			}
			if st.Records != total || st.Bytes != int64(len(data)) || st.Allocs+st.Frees != st.Memory || st.Frees != f.frees {
				t.Errorf("%s: Stats %+v inconsistent with %d bytes, %d frees", c.why, st, len(data), f.frees)
			}
			if c.cfg.UnclosedSpans {
				if f.unclosed == 0 || int64(f.unclosed) != st.Unclosed || st.SpanStarts-st.SpanEnds != st.Unclosed {
					t.Errorf("%s: %d spans left open, Stats.Unclosed %d", c.why, f.unclosed, st.Unclosed)
				}
				// The cut falls inside a step: the spans open then (a
				// train_step and those inside it) stay open (found by
				// mutation: closing them and leaving one new span open
				// instead went unnoticed).
				if f.unclosed < 2 {
					t.Errorf("%s: %d spans left open; want the spans open at the cut", c.why, f.unclosed)
				}
			} else if f.unclosed != 0 || st.Unclosed != 0 {
				t.Errorf("%s: %d spans left open without UnclosedSpans", c.why, f.unclosed)
			}
		})
	}
}

// TestMemoryEventsExact: the number of memory records is exactly
// MemoryEvents (the documented margin is 0), for every option.
func TestMemoryEventsExact(t *testing.T) {
	sizes := []int{1, 2, 3, 10, 999, 1000, 4321, 25000}
	if !testing.Short() {
		sizes = append(sizes, 300000)
	}
	for _, n := range sizes {
		for _, c := range configs {
			cfg := c.cfg
			cfg.MemoryEvents = n
			st, err := gen.Write(io.Discard, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if st.Memory != int64(n) {
				t.Errorf("%s with MemoryEvents=%d: %d memory records", c.name, n, st.Memory)
			}
		}
	}
	st, _ := gen.Write(io.Discard, gen.Config{})
	if st.Memory != gen.DefaultMemoryEvents {
		t.Errorf("MemoryEvents=0 gave %d memory records, want DefaultMemoryEvents", st.Memory)
	}
}

// TestPairing: without Anomalies every free names a live allocation with
// its bytes, device and category; with them, each kind occurs and Stats
// counts them exactly.
func TestPairing(t *testing.T) {
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			r := replayed(t, c.cfg)
			st, f := r.st, r.f
			if f.badPairs != 0 {
				t.Errorf("%s: %d frees differ from their alloc in bytes, device or category", c.why, f.badPairs)
			}
			got := [3]int64{f.doubleFrees, f.unmatchedFrees, f.duplicateAllocs}
			stats := [3]int64{st.DoubleFrees, st.UnmatchedFrees, st.DuplicateAllocs}
			if got != stats {
				t.Errorf("%s: replay found double/unmatched/duplicate %v, Stats says %v", c.why, got, stats)
			}
			if c.cfg.Anomalies {
				if got[0] == 0 || got[1] == 0 || got[2] == 0 {
					t.Errorf("%s: an anomaly kind is missing: %v", c.why, got)
				}
			} else if got != [3]int64{} {
				t.Errorf("%s: anomalies %v without Config.Anomalies", c.why, got)
			}
		})
	}
	// Stats count the anomalies written whole, also where the events run
	// out in the middle of one (found by mutation: an anomaly begun with two
	// events left went unnoticed).
	for n := 1; n <= 120; n++ {
		data, st := generate(t, gen.Config{Seed: int64(n), MemoryEvents: n, Anomalies: true, Devices: 2})
		f := replay(t, data)
		if got, stats := [3]int64{f.doubleFrees, f.unmatchedFrees, f.duplicateAllocs}, [3]int64{st.DoubleFrees, st.UnmatchedFrees, st.DuplicateAllocs}; got != stats {
			t.Errorf("%d events: replay found double/unmatched/duplicate %v, Stats says %v", n, got, stats)
		}
	}
	// An anomaly is written when the events left hold it: with one layer
	// (9 parameters), the first forward op allocates the 10th event, and
	// MemoryEvents 13 leaves the 3 a double free needs (found by mutation:
	// a double free skipped with exactly 3 left went unnoticed).
	for seed := range int64(3) {
		if _, st := generate(t, gen.Config{Seed: seed, MemoryEvents: 13, Anomalies: true}); st.DoubleFrees != 1 {
			t.Errorf("seed %d, 13 events: %d double frees, want the first op's one", seed, st.DoubleFrees)
		}
	}
	// Each kind also occurs in a 1000-event trace, on every seed tried.
	seeds := int64(20)
	if testing.Short() {
		seeds = 8
	}
	for seed := int64(0); seed < seeds; seed++ {
		f := replay(t, mustGen(t, gen.Config{Seed: seed, MemoryEvents: 1000, Anomalies: true, Devices: int(seed%3) + 1}))
		if f.doubleFrees == 0 || f.unmatchedFrees == 0 || f.duplicateAllocs == 0 {
			t.Errorf("seed %d, 1000 events: anomalies %d %d %d", seed, f.doubleFrees, f.unmatchedFrees, f.duplicateAllocs)
		}
	}
}

func mustGen(t testing.TB, cfg gen.Config) []byte {
	data, _ := generate(t, cfg)
	return data
}

// TestTrainingShape: the structure of a training run.
func TestTrainingShape(t *testing.T) {
	for _, cfg := range []gen.Config{
		{Seed: 11, MemoryEvents: 1000},
		{Seed: 12, MemoryEvents: 20000, Devices: 4},
		{Seed: 13, MemoryEvents: 30000, Devices: 2, Anomalies: true},
	} {
		if testing.Short() && cfg.MemoryEvents > 20000 {
			continue
		}
		t.Run(fmt.Sprint(cfg.MemoryEvents, "/", cfg.Devices), func(t *testing.T) {
			data, st := generate(t, cfg)
			f := replay(t, data)
			switch {
			case st.Steps < 2:
				t.Errorf("%d steps, want several", st.Steps)
			case f.paramAllocs == 0 || f.paramAllocsLate != 0:
				t.Errorf("%d parameter allocs, %d after the first forward span (want all before)", f.paramAllocs, f.paramAllocsLate)
			case f.backwardSpans == 0 || f.gradAllocsInBwd == 0:
				t.Errorf("%d backward spans, %d gradient allocs in them", f.backwardSpans, f.gradAllocsInBwd)
			case f.gradAllocsOutside != 0:
				t.Errorf("%d gradient allocs outside backward", f.gradAllocsOutside)
			case f.optSpans == 0 || f.optStateLive == 0 || f.optStateLate != 0:
				t.Errorf("%d optimizer spans, %d live optimizer allocs, %d made after the first step (state must be allocated once)",
					f.optSpans, f.optStateLive, f.optStateLate)
			case f.stepOnChild == 0:
				t.Errorf("no child span repeats its ancestor's step")
			case len(f.devices) != max(cfg.Devices, 1):
				t.Errorf("records on %d devices, want %d", len(f.devices), cfg.Devices)
			case f.samplesCap == 0 || f.samplesNoCap == 0:
				t.Errorf("device_memory samples: %d with capacity, %d without; want both", f.samplesCap, f.samplesNoCap)
			case f.tieFreeAlloc == 0 || f.tieAllocFree == 0:
				t.Errorf("ties: %d free→alloc and %d alloc→free at one timestamp; want both", f.tieFreeAlloc, f.tieAllocFree)
			case f.storageAbsent == 0 || f.storagePresent == 0:
				t.Errorf("op storage_bytes absent %d, present %d; want both", f.storageAbsent, f.storagePresent)
			case f.opsFollowed == 0 || f.opsNotFollowed > 1:
				t.Errorf("ops followed by the alloc of their output: %d, not: %d", f.opsFollowed, f.opsNotFollowed)
			case f.everyAllocPeak:
				t.Errorf("every alloc is a new peak in a training run")
			}
		})
	}
}

// TestSteadyGrowth: no frees, every alloc a new peak of its device, no
// backward.
func TestSteadyGrowth(t *testing.T) {
	for _, devices := range []int{1, 3} {
		data, st := generate(t, gen.Config{Seed: 21, MemoryEvents: 10000, Devices: devices, SteadyGrowth: true, Spans: 2500})
		f := replay(t, data)
		if st.Frees != 0 || f.frees != 0 || !f.everyAllocPeak || f.backwardSpans != 0 || st.Steps != 1 {
			t.Errorf("devices %d: %d frees, every alloc a peak %v, %d backward spans, %d steps",
				devices, f.frees, f.everyAllocPeak, f.backwardSpans, st.Steps)
		}
	}
}

// TestSpansTarget: the span count lands within SpansTolerance of Spans.
func TestSpansTarget(t *testing.T) {
	cases := []struct{ events, spans int }{
		{1000, 250}, {10000, 2500}, {10000, 100}, {10000, 1000000}, {20000, 5000}, {20000, 40000}, {5000, 5000},
	}
	if !testing.Short() {
		cases = append(cases, struct{ events, spans int }{1000000, 250000})
	}
	for _, c := range cases {
		for _, steady := range []bool{false, true} {
			st, err := gen.Write(io.Discard, gen.Config{Seed: 31, MemoryEvents: c.events, Spans: c.spans, SteadyGrowth: steady, Devices: 2})
			if err != nil {
				t.Fatal(err)
			}
			d := st.SpanStarts - int64(c.spans)
			if d < 0 {
				d = -d
			}
			if d > int64(gen.SpansTolerance(c.spans)) {
				t.Errorf("events %d spans %d steady %v: %d spans, off by %d (tolerance %d)",
					c.events, c.spans, steady, st.SpanStarts, d, gen.SpansTolerance(c.spans))
			}
		}
	}
}

// TestSampleCapacity: even-numbered devices alternate between carrying
// capacity_bytes and not, odd-numbered ones never carry it, as the package
// doc says (found by mutation: capacity on every device went unnoticed).
func TestSampleCapacity(t *testing.T) {
	data, _ := generate(t, gen.Config{Seed: 52, MemoryEvents: 5000, Devices: 3, SampleEvery: 50})
	with, without := map[string]int{}, map[string]int{}
	var reserved []int // the sample numbers, among all devices', with reserved_bytes
	n := 0
	for line := range bytes.Lines(data) {
		var r struct {
			Kind     string  `json:"kind"`
			Device   string  `json:"device"`
			Capacity *uint64 `json:"capacity_bytes"`
			Reserved *uint64 `json:"reserved_bytes"`
		}
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		if r.Kind != "device_memory" {
			continue
		}
		if r.Reserved != nil {
			reserved = append(reserved, n)
		}
		n++
		if r.Capacity != nil {
			with[r.Device]++
		} else {
			without[r.Device]++
		}
	}
	for _, d := range []string{"cuda:0", "cuda:2"} {
		if with[d] == 0 || without[d] == 0 {
			t.Errorf("%s: %d samples with capacity_bytes, %d without; want both", d, with[d], without[d])
		}
	}
	if with["cuda:1"] != 0 || without["cuda:1"] == 0 {
		t.Errorf("cuda:1: %d samples with capacity_bytes, %d without; want none with", with["cuda:1"], without["cuda:1"])
	}
	// Every third sample among all devices' carries reserved_bytes (the
	// package doc; its value is checked with the rest of the trace).
	var want []int
	for i := 2; i < n; i += 3 {
		want = append(want, i)
	}
	if !slices.Equal(reserved, want) {
		t.Errorf("samples %v of %d carry reserved_bytes, want every third: %v", reserved, n, want)
	}
}

// TestSamples: one device_memory sample per device before the first
// event, then one every SampleEvery memory records; none when negative.
func TestSamples(t *testing.T) {
	for _, c := range []struct {
		name         string
		every, devs  int
		events, want int64
		why          string
	}{
		{"default", 0, 1, 5000, 1 + 5000/gen.DefaultSampleEvery, "0 means DefaultSampleEvery"},
		{"every-100", 100, 3, 5000, 3 + 50, "one per device up front, then one per 100 events"},
		{"every-7", 7, 2, 1000, 2 + 1000/7, "the period need not divide the count"},
		{"off", -1, 2, 5000, 0, "negative turns sampling off entirely"},
	} {
		_, st := generate(t, gen.Config{Seed: 51, MemoryEvents: int(c.events), Devices: c.devs, SampleEvery: c.every})
		if st.DeviceMemory != c.want {
			t.Errorf("%s: %d device_memory records, want %d (%s)", c.name, st.DeviceMemory, c.want, c.why)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  gen.Config
	}{
		{"negative events", gen.Config{MemoryEvents: -1}},
		{"negative devices", gen.Config{Devices: -1}},
		{"negative spans", gen.Config{Spans: -1}},
		{"too many devices", gen.Config{Devices: 65}},
		{"steady with anomalies", gen.Config{SteadyGrowth: true, Anomalies: true}},
	} {
		var buf bytes.Buffer
		_, err := gen.Write(&buf, c.cfg)
		if !errors.Is(err, gen.ErrConfig) || buf.Len() != 0 {
			t.Errorf("%s: err %v, %d bytes written; want ErrConfig and nothing", c.name, err, buf.Len())
		}
	}
}

// TestConfigLimits: the largest valid values are accepted (found by
// mutation: a limit of 63 devices went unnoticed).
func TestConfigLimits(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  gen.Config
		why  string
	}{
		{"64 devices", gen.Config{MemoryEvents: 2000, Devices: 64}, "Devices is at most 64: 64 itself is valid"},
		{"steady alone", gen.Config{MemoryEvents: 100, SteadyGrowth: true}, "only SteadyGrowth with Anomalies is refused"},
	} {
		r := replayed(t, c.cfg)
		if want := max(c.cfg.Devices, 1); len(r.f.devices) != want {
			t.Errorf("%s: records on %d devices, want %d (%s)", c.name, len(r.f.devices), want, c.why)
		}
	}
}

// TestSpansToleranceValue: SpansTolerance is 1% of the target plus 64, as
// documented (found by mutation: a tolerance of 100 times the target made
// TestSpansTarget pass whatever the count).
func TestSpansToleranceValue(t *testing.T) {
	for _, c := range []struct {
		name        string
		spans, want int
	}{
		{"zero", 0, 64},
		{"under 100", 99, 64},
		{"1%", 1000, 74},
		{"large", 250000, 2564},
	} {
		if got := gen.SpansTolerance(c.spans); got != c.want {
			t.Errorf("%s: SpansTolerance(%d) = %d, want %d", c.name, c.spans, got, c.want)
		}
	}
}

// spanNames is what the package doc names the spans: functions and
// modules by their names, op spans by their op's name (lower case words
// joined by '_', no digits), and layers.N[.attn|.mlp] with N a layer index.
var (
	functionSpans = map[string]bool{"load_model": true, "train_step": true, "backward": true, "optimizer": true}
	moduleSpan    = regexp.MustCompile(`^(forward|embed_tokens|lm_head|layers\.(0|[1-9][0-9]*)(\.attn|\.mlp)?)$`)
	opSpan        = regexp.MustCompile(`^[a-z]+(_[a-z]+)*$`)
	layerSpan     = regexp.MustCompile(`^layers\.([0-9]+)$`)
)

// TestSpanNames: every span has one of the documented names (found by
// mutation: a name number of 1 instead of none gave "train_step1",
// "matmul1"; no attn or mlp spans went unnoticed). The layer spans of a
// training run are numbered 0 up, each forward pass over the same layers;
// those of SteadyGrowth grow from one to the next (with gaps: a pass
// numbers its layers on from the number of blocks, embed and head
// included).
func TestSpanNames(t *testing.T) {
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			data := replayed(t, c.cfg).data
			kinds := map[string]int{}
			layers := map[int]int{} // layers.N module spans by N
			var order []int         // the N of each, in record order
			for line := range bytes.Lines(data) {
				var r record
				if err := json.Unmarshal(line, &r); err != nil {
					t.Fatal(err)
				}
				if r.Kind != "span_start" {
					continue
				}
				ok := false
				switch r.SpanKind {
				case "function":
					ok = functionSpans[r.Name]
				case "module":
					ok = moduleSpan.MatchString(r.Name)
					if strings.HasSuffix(r.Name, ".attn") || strings.HasSuffix(r.Name, ".mlp") {
						kinds[r.Name[strings.LastIndexByte(r.Name, '.'):]]++
					}
					if m := layerSpan.FindStringSubmatch(r.Name); m != nil {
						n, _ := strconv.Atoi(m[1])
						layers[n]++
						order = append(order, n)
					}
				case "op":
					ok = opSpan.MatchString(r.Name)
				}
				if !ok {
					t.Fatalf("%s: %s span named %q", c.why, r.SpanKind, r.Name)
				}
			}
			if c.name == "tiny" {
				return // cut inside load_model: no layer reached
			}
			if kinds[".attn"] == 0 || kinds[".mlp"] == 0 {
				t.Errorf("%s: %d attn and %d mlp spans; want both", c.why, kinds[".attn"], kinds[".mlp"])
			}
			if c.cfg.SteadyGrowth {
				for i := 1; i < len(order); i++ {
					if order[i] <= order[i-1] {
						t.Fatalf("%s: layers.%d after layers.%d; SteadyGrowth's layer numbers grow", c.why, order[i], order[i-1])
					}
				}
				return
			}
			for n := range len(layers) {
				if layers[n] == 0 {
					t.Fatalf("%s: layer numbers %v do not run from 0 up", c.why, layers)
				}
			}
		})
	}
}

// TestParameterInputs: the forward ops of a layer take its parameters as
// inputs, so that over a training run every parameter is an input of a
// forward op, each of one op kind only, the backward ops leave them, and
// backward gives each a gradient that adam_step takes with it (found by
// mutation: the first parameter of each block never given to its op, an
// op given the previous block's last one, and a backward pass that
// stopped before the first op, went unnoticed).
func TestParameterInputs(t *testing.T) {
	for _, c := range configs {
		if c.name == "tiny" || c.cfg.SteadyGrowth {
			continue // no complete forward pass to look at
		}
		t.Run(c.name, func(t *testing.T) {
			data := replayed(t, c.cfg).data
			params := map[string]bool{} // allocated parameters
			usedBy := map[string]string{}
			stepped := map[string]bool{} // parameters that adam_step took
			for line := range bytes.Lines(data) {
				var r record
				if err := json.Unmarshal(line, &r); err != nil {
					t.Fatal(err)
				}
				switch {
				case r.Kind == "memory" && r.Action == "alloc" && r.Category != nil && *r.Category == "parameter":
					params[r.TensorID] = true
				case r.Kind == "op" && *r.OpName == "adam_step":
					stepped[r.Inputs[0]] = true
				case r.Kind == "op":
					for _, in := range r.Inputs {
						if in[0] != 'p' {
							continue
						}
						if prev, ok := usedBy[in]; ok && prev != *r.OpName {
							t.Fatalf("%s: parameter %s is an input of %s and of %s", c.why, in, prev, *r.OpName)
						}
						usedBy[in] = *r.OpName
					}
				}
			}
			for p := range params {
				if _, ok := usedBy[p]; !ok {
					t.Errorf("%s: parameter %s is the input of no forward op", c.why, p)
				}
				if !stepped[p] {
					t.Errorf("%s: parameter %s got no gradient and no adam_step", c.why, p)
				}
			}
			for p, op := range usedBy {
				if strings.HasSuffix(op, "_backward") || op == "zero_grad" {
					t.Errorf("%s: parameter %s is an input of %s", c.why, p, op)
				}
			}
		})
	}
}

// TestAnomalyRate: after the first three, anomalies come about once per
// 2000 forward ops, as documented (found by mutation: one per 666 forward
// ops, one on every op, and none after the first three went unnoticed).
// Forward ops are about two fifths of all ops; the bounds leave a factor
// of four either way.
func TestAnomalyRate(t *testing.T) {
	st, err := gen.Write(io.Discard, gen.Config{Seed: 13, MemoryEvents: 200000, Devices: 2, Anomalies: true})
	if err != nil {
		t.Fatal(err)
	}
	later := st.DoubleFrees + st.UnmatchedFrees + st.DuplicateAllocs - 3
	expect := st.Ops * 2 / 5 / 2000
	if later < expect/4 || later > expect*4 {
		t.Errorf("%d anomalies after the first three over %d ops; want about %d", later, st.Ops, expect)
	}
}

// TestPinnedOutput: the bytes of each config are fixed across versions
// ("the same Config always gives the same bytes"; the random numbers are
// splitmix64 so that they are stable): the benchmarks' and the readers'
// recorded numbers were measured on these traces. A change to the
// generator that changes them must update these digests on purpose (found
// by mutation: other random constants, attention heads, vocabulary sizes,
// dtype and tick odds all went unnoticed).
func TestPinnedOutput(t *testing.T) {
	want := map[string]string{
		"default":       "639c7f0f5adbbd16101063bd07e382b5639399b03be7c427aa0ee9d9758592c8",
		"tiny":          "9c5804c57c1793afe1bde0c374275089c482fe346b53bfb2554e9aa8d0c25289",
		"one-device":    "8dc6d4eb9ac7f1b7e892cf53b9a3252fe569fd9d14854971a64011ad555a2000",
		"three-devices": "1e6cc0c8af280420c2e22a30dfe3efb921d79fcea9729e62957761e72e79a3af",
		"anomalies":     "f71b6bc77ec708f81b337031ccdd4241813dd6ed31183d821b0d3949d565e44e",
		"steady":        "9fb4248fc1ed2d16201687132d6ec2ccc3debf3971f35d04003c3ed3ea8d7e46",
		"unclosed":      "4739b957829a52182db55e6f0b245d62efe3a856bc4f114f3ee309715ffe3a23",
		"few-spans":     "3c9e0995cd963c7e1b569524fd1bb7583e058d6b839c55a7c7ca742f3f191b07",
		"many-spans":    "c8891884f507e1553ab271e182ca5cd56ca6cb2c5b19f57b8dd103d58c1f7410",
		"no-samples":    "a9abc0a882411bdeafb454a7408cb13391572bb72e79dc8d89ac5b0b9abd0efc",
	}
	for _, c := range configs {
		data, _ := generate(t, c.cfg)
		if got := fmt.Sprintf("%x", sha256.Sum256(data)); got != want[c.name] {
			t.Errorf("%s (%s): SHA-256 %s, want %s; if the generator changed on purpose, update the digests and measure the README's figures again", c.name, c.why, got, want[c.name])
		}
	}
}

type failWriter struct{ left int }

var errBoom = errors.New("boom")

func (w *failWriter) Write(p []byte) (int, error) {
	if len(p) > w.left {
		n := w.left
		w.left = 0
		return n, errBoom
	}
	w.left -= len(p)
	return len(p), nil
}

func TestWriterError(t *testing.T) {
	w := &failWriter{left: 100000}
	st, err := gen.Write(w, gen.Config{MemoryEvents: 1000000})
	if !errors.Is(err, errBoom) || st.Bytes != 100000 || st.Memory >= 1000000 {
		t.Errorf("err %v, %d bytes, %d memory records; want boom after 100000 bytes, generation stopped", err, st.Bytes, st.Memory)
	}
	// A writer that takes less than it is given and says nothing: Write
	// says io.ErrShortWrite, as its doc does.
	short := &shortWriter{left: 100000}
	st, err = gen.Write(short, gen.Config{MemoryEvents: 1000000})
	if err != io.ErrShortWrite || st.Bytes != 100000 || st.Memory >= 1000000 {
		t.Errorf("short writer: err %v, %d bytes, %d memory records; want io.ErrShortWrite after 100000 bytes, generation stopped", err, st.Bytes, st.Memory)
	}
}

// shortWriter takes left bytes, then less than it is given, without an
// error.
type shortWriter struct{ left int }

func (w *shortWriter) Write(p []byte) (int, error) {
	n := min(len(p), w.left)
	w.left -= n
	return n, nil
}

// TestNoPerEventAllocation: Write allocates the same whatever the trace
// size (model-size setup only).
func TestNoPerEventAllocation(t *testing.T) {
	allocs := func(n int) float64 {
		cfg := gen.Config{Seed: 41, MemoryEvents: n, Devices: 2, Anomalies: true, Spans: n / 3}
		return testing.AllocsPerRun(3, func() { gen.Write(io.Discard, cfg) })
	}
	small, large := allocs(20000), allocs(200000)
	if large > small+2 {
		t.Errorf("%v allocations for 20k events, %v for 200k: allocation per event", small, large)
	}
}

func BenchmarkWrite(b *testing.B) {
	for _, n := range []int{100000, 1000000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			cfg := gen.Config{Seed: 1, MemoryEvents: n, Devices: 2}
			st, _ := gen.Write(io.Discard, cfg)
			b.SetBytes(st.Bytes)
			b.ReportAllocs()
			for b.Loop() {
				gen.Write(io.Discard, cfg)
			}
			b.ReportMetric(float64(st.Bytes)/float64(n), "bytes/event")
		})
	}
}

func ExampleWrite() {
	var buf strings.Builder
	st, err := gen.Write(&buf, gen.Config{Seed: 1, MemoryEvents: 2000, Devices: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	first, _, _ := strings.Cut(buf.String(), "\n")
	fmt.Println(first[:60])
	fmt.Println(st.Memory, "memory records,", st.Allocs, "allocs")
	fmt.Println(st.Bytes == int64(buf.Len()))
	// Output:
	// {"kind": "meta", "schema": "candle-graph/trace/6", "run_id":
	// 2000 memory records, 1046 allocs
	// true
}

// TestViewOps: the view ops (reshape) that a span target above the natural
// ratio adds carry storage_bytes 0 and allocate nothing, as the package doc
// says (from a test audit: reshape ops carrying their output's bytes passed
// every test, as only configs without a span target were checked for it).
func TestViewOps(t *testing.T) {
	var cfg gen.Config
	for _, c := range configs {
		if c.name == "many-spans" {
			cfg = c.cfg
		}
	}
	views := map[string]bool{}
	eachRecord(t, replayed(t, cfg).data, func(line []byte, r *record) {
		switch {
		case r.Kind == "op" && r.OpName != nil && *r.OpName == "reshape":
			if r.StorageBytes == nil || *r.StorageBytes != 0 || r.Output == nil {
				t.Fatalf("view op %s: storage_bytes %v, output %v; want 0 and an output", line, r.StorageBytes, r.Output)
			}
			views[*r.Output] = true
		case r.Kind == "memory" && views[r.TensorID]:
			t.Fatalf("memory record %s for the output of a view op", line)
		}
	})
	if len(views) < 100 {
		t.Fatalf("%d view ops in a trace of 4000 memory events and 12,000 spans, want many", len(views))
	}
}

// TestOpStorageBytes: ops other than views carry storage_bytes on about two
// thirds of their records, as the package doc says, so that readers derive
// the rest from shape × dtype (from a mutation test: a third passed).
func TestOpStorageBytes(t *testing.T) {
	data, _ := generate(t, gen.Config{Seed: 1, MemoryEvents: 20000})
	with, all := 0, 0
	eachRecord(t, data, func(_ []byte, r *record) {
		if r.Kind != "op" || r.OpName != nil && *r.OpName == "reshape" {
			return
		}
		all++
		if r.StorageBytes != nil {
			with++
		}
	})
	if all < 1000 {
		t.Fatalf("%d ops, want more than 1000 for the share to tell", all)
	}
	// 0.72 with seed 1: two thirds of the ops draw one, and a few always carry one.
	if share := float64(with) / float64(all); share < 0.6 || share > 0.8 {
		t.Errorf("%d of %d ops (%.2f) carry storage_bytes, want about two thirds", with, all, share)
	}
}

// eachRecord calls f with each line of the JSONL data and its record.
func eachRecord(t *testing.T, data []byte, f func(line []byte, r *record)) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		f(sc.Bytes(), &r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}
