// gen.go holds a deterministic generator of synthetic candle-graph/trace/6 JSONL training traces.

// Package gen writes synthetic, deterministic candle-graph/trace/6 JSONL
// traces of a transformer training run, of any size from a thousand to tens
// of millions of memory events, for tests and benchmarks of tracemem.
//
// A generated trace is, in record order:
//
//   - a meta record;
//   - a "load_model" function span in which every parameter gets a tensor
//     record and an alloc (category parameter), never freed;
//   - training steps, each a "train_step" function span (no step) holding
//     a "forward" module span (step forward; descendants inherit it, and a
//     tenth of the embed_tokens, layers.N and lm_head spans under it repeat
//     it), a "backward" function span (step backward, repeated likewise)
//     and an "optimizer" function span (step optimizer). The forward pass
//     goes through module spans (embed_tokens, layers.N, layers.N.attn,
//     layers.N.mlp, lm_head) down to op spans; each op span holds one op
//     record followed by the alloc of its output (category activation, with
//     op_name), sometimes a cuBLAS workspace allocated and freed inside the
//     op (no category, so "other"), and the frees of short-lived outputs of
//     earlier ops. Retained activations are freed by the backward op that
//     consumes them; backward allocates short-lived input gradients and one
//     gradient per parameter (category gradient); the optimizer allocates its
//     state (two tensors per parameter, as Adam's moments; ids o<N>, op
//     adam_step, category optimizer) on the first step only, a temporary
//     per parameter on every step, and frees the gradients in a zero_grad
//     op span. Layers are spread over the devices in contiguous
//     blocks (pipeline style) with a to_device op at each device boundary;
//   - device_memory samples: one per device before the first event, then one
//     every SampleEvery memory events for the device of that event. A sample of
//     an even-numbered device carries capacity_bytes when its number among
//     all devices' samples is odd (about half of them; they alternate only
//     with one device), the others only used_bytes + free_bytes (= the
//     capacity while the device is under capacity); odd-numbered devices
//     never carry capacity_bytes. Every sample carries used_bytes and
//     free_bytes, and every third among all devices' samples also
//     reserved_bytes (used_bytes + 64 MiB).
//
// Timestamps (ns since trace start) never decrease in record order, across
// all record kinds; many consecutive records share a timestamp, so frees and
// allocations of one tick are ordered only by their position. span_end
// records follow the records they enclose, innermost first. Tensor ids are
// a prefix plus a counter (p parameter, a activation, g gradient, o
// optimizer state, x temporary, w workspace, v view op output, u a free of
// a tensor never allocated) and unique per allocation except for the
// deliberate anomalies. Memory bytes are always shape × dtype size (f32,
// bf16, f16, or u8 for workspaces). Ops of views (reshape) carry
// storage_bytes 0 and allocate nothing; optimizer ops have a null output;
// other ops carry storage_bytes on about two thirds of the records.
//
// Size and speed: about 390 bytes of JSONL per memory record with the
// natural span density (a 1M-memory-event trace is about 390 MB, 10M about
// 4 GB); about 330 bytes with Spans at a quarter of MemoryEvents. Write
// streams the trace through a fixed 64 KiB buffer: memory use does not grow
// with the trace (the per-step list of forward ops is bounded by the model
// size), a fixed ~30 allocations per call whatever the size (a few more
// per device: about 90 with 64 devices), and about
// 2.3 GB/s (10M memory events in about 2 s) into io.Discard on a 2-core
// machine (BenchmarkWrite, 2026-12-04).
package gen

import (
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Schema is the schema written in the meta record.
const Schema = "candle-graph/trace/6"

// DefaultMemoryEvents is the number of memory records written when
// Config.MemoryEvents is 0.
const DefaultMemoryEvents = 1000

// DefaultSampleEvery is the device_memory sampling period, in memory
// records, when Config.SampleEvery is 0.
const DefaultSampleEvery = 512

// CapacityBytes is the capacity of every generated device (80 GiB).
const CapacityBytes = 80 << 30

// Config chooses what Write generates. The zero value is a valid config: a
// 1000-memory-event trace on one device with seed 0.
type Config struct {
	// Seed makes the trace: the same Config always gives the same bytes,
	// another seed gives another trace (other model sizes, timings,
	// choices).
	Seed int64

	// MemoryEvents is the exact number of memory records written (0 means
	// DefaultMemoryEvents). Generation stops as soon as it is reached,
	// possibly in the middle of a step: later frees are then simply not
	// written, so whatever was live stays live; the open spans are closed
	// (unless UnclosedSpans). The model depth is chosen from it so that
	// even small traces hold several complete steps: 5 to 7 started, the
	// last one cut short, for a multiple of 600 while the depth,
	// MemoryEvents/600 layers, is between one layer per device and its
	// maximum of 32 layers (or one per device with more than 32 devices); a
	// layer takes about 90 memory events a step, the first step more (the
	// optimizer's state). Between multiples of 600 the depth is rounded
	// down, so more steps fit (10 at 1,199 with one device). At the maximum
	// depth the steps grow with MemoryEvents (14 at 38,400). Below
	// one layer per device (Devices > MemoryEvents/600) fewer steps fit,
	// down to one unfinished step: 64 devices need about 20,000 memory
	// events for four steps.
	MemoryEvents int

	// Devices is the number of devices, named cuda:0, cuda:1, ...; 0 means
	// 1. At most 64.
	Devices int

	// Anomalies mixes in bad pairings: double frees (a temporary freed
	// twice), frees of tensors never allocated (ids with prefix "u"), and
	// duplicate allocs (a temporary id allocated twice while live, then
	// freed once, with the second size). Each kind occurs at least once
	// when MemoryEvents is at least 1000; after that one of the three,
	// drawn at random, about once per 2000 forward ops (each kind about
	// once per 6000).
	// Without it, every free names a live allocation with its bytes and
	// device.
	Anomalies bool

	// Spans, when positive, is a target for the number of spans: the
	// generator adds memory-less view op spans (reshape) or extra
	// temporaries inside ops to keep spans/memory records near
	// Spans/MemoryEvents throughout the trace. The number of span_start
	// records ends within SpansTolerance(Spans) of Spans as long as
	// Spans is between MemoryEvents/100 and 100*MemoryEvents. 0 keeps the
	// natural structure (about two spans per five memory records).
	Spans int

	// SteadyGrowth writes one endless forward pass (layers repeat with
	// growing indices) that never frees anything: every alloc is a new
	// peak of its device. There is no backward or optimizer step. It
	// cannot be combined with Anomalies.
	SteadyGrowth bool

	// UnclosedSpans leaves the spans open when the memory events run out
	// without a span_end (as when a capture is cut short). They run out
	// inside load_model or a train_step, so at least that span stays open.
	// Without it every span is closed exactly once.
	UnclosedSpans bool

	// SampleEvery is the period of device_memory samples, in memory
	// records; 0 means DefaultSampleEvery, negative means no samples.
	SampleEvery int
}

// SpansTolerance is how far the number of spans may end from a positive
// Config.Spans target: 1% of it plus 64.
func SpansTolerance(spans int) int { return spans/100 + 64 }

// Stats counts what Write wrote.
type Stats struct {
	Bytes        int64 // bytes written
	Records      int64 // lines generated, meta included (see Write for a failed write)
	SpanStarts   int64
	SpanEnds     int64
	Ops          int64
	Tensors      int64
	DeviceMemory int64
	Memory       int64 // memory records: Allocs + Frees
	Allocs       int64
	Frees        int64
	Steps        int64 // train_step spans started
	Unclosed     int64 // spans left without span_end (only with UnclosedSpans)

	// The anomalies written (0 without Config.Anomalies).
	DoubleFrees     int64
	UnmatchedFrees  int64
	DuplicateAllocs int64
}

// ErrConfig is wrapped by the errors Write returns for an invalid Config.
var ErrConfig = errors.New("gen: invalid config")

// Write writes the trace cfg describes to w as JSONL, and says what it
// wrote. The only errors are an invalid cfg (wrapping ErrConfig, nothing
// written) and the first error of w (io.ErrShortWrite for a short write
// without one): then Bytes counts what w took, and the other counts what
// was generated, which includes the records of the failing write and the
// span_end records of the spans still open, which are closed after it but
// never written (so SpanEnds may equal SpanStarts for output that was cut
// short). Write buffers its output itself; w needs no bufio.Writer.
func Write(w io.Writer, cfg Config) (Stats, error) {
	if cfg.MemoryEvents < 0 || cfg.Devices < 0 || cfg.Spans < 0 {
		return Stats{}, fmt.Errorf("%w: negative MemoryEvents, Devices or Spans", ErrConfig)
	}
	if cfg.Devices > 64 {
		return Stats{}, fmt.Errorf("%w: %d devices (at most 64)", ErrConfig, cfg.Devices)
	}
	if cfg.SteadyGrowth && cfg.Anomalies {
		return Stats{}, fmt.Errorf("%w: SteadyGrowth cannot be combined with Anomalies (anomalies free memory)", ErrConfig)
	}
	g := newGen(w, cfg)
	g.run()
	g.flush()
	return g.st, g.err
}

// Category, dtype and span-kind codes.
const (
	catParameter = iota
	catActivation
	catGradient
	catOptimizer
	catNone // no category field (means other)
)

var catNames = [...]string{"parameter", "activation", "gradient", "optimizer", ""}

const (
	dtF32 = iota
	dtBF16
	dtF16
	dtU8
)

var dtNames = [...]string{"f32", "bf16", "f16", "u8"}
var dtSize = [...]uint64{4, 2, 2, 1}

const (
	kindFunction = "function"
	kindModule   = "module"
	kindOp       = "op"
)

const (
	stepNone      = ""
	stepForward   = "forward"
	stepBackward  = "backward"
	stepOptimizer = "optimizer"
)

// Shape kinds of op outputs.
const (
	shBSH  = iota // batch, seq, hidden
	shBS3H        // fused qkv
	shBNSS        // attention scores: batch, heads, seq, seq
	shBS4H        // mlp hidden
	shBSV         // logits
	shScalar
)

// Block kinds.
const (
	blkEmbed = iota
	blkLayer
	blkToDevice
	blkHead
)

// opT is one forward op of a block.
type opT struct {
	name    string
	bwd     string // the backward op's name
	module  uint8  // 0: directly in the block span; 1: attn; 2: mlp
	shape   uint8
	f32     bool // output in f32 instead of the activation dtype
	retain  bool // kept for backward (else freed after the next op)
	scratch bool // allocates and frees a workspace
	param   int8 // index into the block's parameters, -1 none
}

var templates = [...][]opT{
	blkEmbed: {
		{name: "embedding", bwd: "embedding_backward", shape: shBSH, retain: true, param: 0},
	},
	blkLayer: {
		{name: "layer_norm", bwd: "layer_norm_backward", shape: shBSH, retain: true, param: 0},
		{name: "matmul", bwd: "matmul_backward", module: 1, shape: shBS3H, retain: true, scratch: true, param: 1},
		{name: "matmul", bwd: "matmul_backward", module: 1, shape: shBNSS, param: -1},
		{name: "softmax", bwd: "softmax_backward", module: 1, shape: shBNSS, retain: true, param: -1},
		{name: "matmul", bwd: "matmul_backward", module: 1, shape: shBSH, retain: true, param: -1},
		{name: "matmul", bwd: "matmul_backward", module: 1, shape: shBSH, scratch: true, param: 2},
		{name: "add", bwd: "add_backward", shape: shBSH, retain: true, param: -1},
		{name: "layer_norm", bwd: "layer_norm_backward", shape: shBSH, retain: true, param: 3},
		{name: "matmul", bwd: "matmul_backward", module: 2, shape: shBS4H, retain: true, scratch: true, param: 4},
		{name: "gelu", bwd: "gelu_backward", module: 2, shape: shBS4H, retain: true, param: -1},
		{name: "matmul", bwd: "matmul_backward", module: 2, shape: shBSH, scratch: true, param: 5},
		{name: "add", bwd: "add_backward", shape: shBSH, retain: true, param: -1},
	},
	blkToDevice: {
		{name: "to_device", bwd: "to_device_backward", shape: shBSH, retain: true, param: -1},
	},
	blkHead: {
		{name: "layer_norm", bwd: "layer_norm_backward", shape: shBSH, retain: true, param: 0},
		{name: "matmul", bwd: "matmul_backward", shape: shBSV, retain: true, scratch: true, param: 1},
		{name: "cross_entropy", bwd: "cross_entropy_backward", shape: shScalar, f32: true, retain: true, param: -1},
	},
}

var moduleSuffix = [...]string{"", ".attn", ".mlp"}

// tensor is one allocation.
type tensor struct {
	shape [4]uint64
	bytes uint64
	id    uint64
	pre   byte
	dev   uint8
	dtype uint8
	cat   uint8
	nd    uint8
}

type block struct {
	kind      uint8
	dev       uint8
	layer     int // layer index for blkLayer
	paramBase int // index of its first parameter in gen.params
}

type fwdRec struct {
	out      tensor
	block    int32
	op       int16
	retained bool
}

type openSpan struct {
	id    uint64
	start uint64
}

type gen struct {
	cfg  Config
	w    io.Writer
	err  error
	buf  []byte
	st   Stats
	rng  uint64
	now  uint64
	left int64 // memory records still to write

	nextTensor uint64
	nextSpan   uint64
	stack      []openSpan

	devices     int
	devNames    []string
	live        []uint64
	sampleEvery int64
	samples     int64

	// model
	b, s, h, heads, vocab uint64
	act                   uint8 // activation dtype
	blocks                []block
	params                []tensor
	optInit               []bool

	// per step
	fwd       []fwdRec
	pending   []tensor // short-lived tensors freed after the next op's output
	grads     []tensor
	gradParam []int32
	x         tensor // the current activation (input of the next op)
	hasX      bool

	ratio   float64 // Spans / MemoryEvents, 0 when no target
	opCount int64   // forward ops in this trace
}

const bufSize = 1 << 16

func newGen(w io.Writer, cfg Config) *gen {
	if cfg.MemoryEvents == 0 {
		cfg.MemoryEvents = DefaultMemoryEvents
	}
	if cfg.Devices == 0 {
		cfg.Devices = 1
	}
	g := &gen{
		cfg:     cfg,
		w:       w,
		buf:     make([]byte, 0, bufSize+4096),
		rng:     uint64(cfg.Seed)*0x9e3779b97f4a7c15 + 0x2545f4914f6cdd1d,
		left:    int64(cfg.MemoryEvents),
		devices: cfg.Devices,
	}
	switch {
	case cfg.SampleEvery == 0:
		g.sampleEvery = DefaultSampleEvery
	case cfg.SampleEvery > 0:
		g.sampleEvery = int64(cfg.SampleEvery)
	}
	if cfg.Spans > 0 {
		g.ratio = float64(cfg.Spans) / float64(cfg.MemoryEvents)
	}
	g.devNames = make([]string, g.devices)
	g.live = make([]uint64, g.devices)
	for i := range g.devNames {
		g.devNames[i] = "cuda:" + strconv.Itoa(i)
	}
	g.model()
	return g
}

// model picks the model dimensions and builds the blocks and parameters.
func (g *gen) model() {
	hs := [...]uint64{512, 768, 1024, 2048}
	g.h = hs[g.intn(len(hs))]
	g.heads = g.h / 64
	g.b = 1 << g.intn(4)   // 1..8
	g.s = 128 << g.intn(4) // 128..1024
	g.vocab = 32000 + 256*uint64(g.intn(4))
	g.act = dtBF16
	if g.intn(3) == 0 {
		g.act = dtF16
	}
	// 600 memory events per layer: 5 to 7 steps of about 90 per layer
	// (more when rounded down) while between one layer per device and 32
	// layers; fewer with more devices than that allows (see
	// Config.MemoryEvents).
	layers := g.cfg.MemoryEvents / (8 * 75)
	layers = max(layers, 1, g.devices)
	layers = min(layers, max(32, g.devices))

	devOf := func(l int) uint8 { return uint8(l * g.devices / layers) }
	g.blocks = append(g.blocks, block{kind: blkEmbed, dev: 0})
	g.addParam(0, [4]uint64{g.vocab, g.h}, 2)
	prev := uint8(0)
	for l := 0; l < layers; l++ {
		d := devOf(l)
		if d != prev {
			g.blocks = append(g.blocks, block{kind: blkToDevice, dev: d, paramBase: len(g.params)})
			prev = d
		}
		g.blocks = append(g.blocks, block{kind: blkLayer, dev: d, layer: l, paramBase: len(g.params)})
		g.addParam(d, [4]uint64{g.h}, 1)
		g.addParam(d, [4]uint64{3 * g.h, g.h}, 2)
		g.addParam(d, [4]uint64{g.h, g.h}, 2)
		g.addParam(d, [4]uint64{g.h}, 1)
		g.addParam(d, [4]uint64{4 * g.h, g.h}, 2)
		g.addParam(d, [4]uint64{g.h, 4 * g.h}, 2)
	}
	g.blocks = append(g.blocks, block{kind: blkHead, dev: prev, paramBase: len(g.params)})
	g.addParam(prev, [4]uint64{g.h}, 1)
	g.addParam(prev, [4]uint64{g.vocab, g.h}, 2)
	g.optInit = make([]bool, len(g.params))
	n := 0
	for _, b := range g.blocks {
		n += len(templates[b.kind])
	}
	if !g.cfg.SteadyGrowth {
		g.fwd = make([]fwdRec, 0, n)
	}
	g.grads = make([]tensor, 0, len(g.params))
	g.gradParam = make([]int32, 0, len(g.params))
	g.pending = make([]tensor, 0, 8)
	g.stack = make([]openSpan, 0, 16)
}

func (g *gen) addParam(dev uint8, shape [4]uint64, nd uint8) {
	g.params = append(g.params, g.tensor('p', dev, dtF32, catParameter, shape, nd))
}

// tensor makes a new tensor with a fresh id.
func (g *gen) tensor(pre byte, dev, dtype, cat uint8, shape [4]uint64, nd uint8) tensor {
	g.nextTensor++
	t := tensor{shape: shape, id: g.nextTensor, pre: pre, dev: dev, dtype: dtype, cat: cat, nd: nd}
	n := uint64(1)
	for i := range nd {
		n *= shape[i]
	}
	t.bytes = n * dtSize[dtype]
	return t
}

func (g *gen) shapeOf(kind uint8) ([4]uint64, uint8) {
	switch kind {
	case shBS3H:
		return [4]uint64{g.b, g.s, 3 * g.h}, 3
	case shBNSS:
		return [4]uint64{g.b, g.heads, g.s, g.s}, 4
	case shBS4H:
		return [4]uint64{g.b, g.s, 4 * g.h}, 3
	case shBSV:
		return [4]uint64{g.b, g.s, g.vocab}, 3
	case shScalar:
		return [4]uint64{}, 0
	}
	return [4]uint64{g.b, g.s, g.h}, 3
}

// --- randomness (splitmix64: stable across Go versions) ---

func (g *gen) u64() uint64 {
	g.rng += 0x9e3779b97f4a7c15
	z := g.rng
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func (g *gen) intn(n int) int { return int(g.u64() % uint64(n)) }

// tick advances the clock, by 0 a quarter of the time.
func (g *gen) tick() {
	r := g.u64()
	if r&3 != 0 {
		g.now += 1 + (r>>2)%1500
	}
}

// --- the run ---

func (g *gen) full() bool { return g.left <= 0 || g.err != nil }

func (g *gen) run() {
	g.meta()
	if g.sampleEvery > 0 {
		for d := range g.devices {
			g.sample(uint8(d))
		}
	}
	g.loadModel()
	for !g.full() {
		g.st.Steps++
		g.begin(kindFunction, "train_step", -1, "", stepNone, true)
		g.forward()
		if !g.cfg.SteadyGrowth {
			g.backward()
			g.optimizer()
		}
		g.end()
	}
	for len(g.stack) > 0 {
		g.end()
	}
}

func (g *gen) loadModel() {
	g.tick()
	g.begin(kindFunction, "load_model", -1, "", stepNone, true)
	for i := range g.params {
		if g.full() {
			break
		}
		p := &g.params[i]
		g.tensorRecord(p)
		g.mem(p, true, "load")
		g.tick()
	}
	g.end()
}

func (g *gen) forward() {
	if g.full() {
		return
	}
	g.tick()
	g.begin(kindModule, "forward", -1, "", stepForward, false)
	g.fwd = g.fwd[:0]
	g.hasX = false
	if g.cfg.SteadyGrowth {
		for i := 0; !g.full(); i++ {
			bi := i % len(g.blocks)
			g.fwdBlock(bi, g.blocks[bi].layer+len(g.blocks)*(i/len(g.blocks)))
		}
	} else {
		for bi := range g.blocks {
			if g.full() {
				break
			}
			g.fwdBlock(bi, g.blocks[bi].layer)
		}
	}
	g.freePending()
	g.end()
}

func (g *gen) fwdBlock(bi, layer int) {
	b := &g.blocks[bi]
	step := stepNone
	if g.intn(10) == 0 {
		step = stepForward // sometimes repeated on a child
	}
	g.tick()
	switch b.kind {
	case blkEmbed:
		g.begin(kindModule, "embed_tokens", -1, "", step, false)
	case blkLayer:
		g.begin(kindModule, "layers.", layer, "", step, false)
	case blkHead:
		g.begin(kindModule, "lm_head", -1, "", step, false)
	case blkToDevice:
		// an op span directly under forward
	}
	mod := uint8(0)
	for oi := range templates[b.kind] {
		if g.full() {
			break
		}
		op := &templates[b.kind][oi]
		if op.module != mod {
			if mod != 0 {
				g.end()
			}
			if op.module != 0 {
				g.tick()
				g.begin(kindModule, "layers.", layer, moduleSuffix[op.module], stepNone, false)
			}
			mod = op.module
		}
		g.fwdOp(bi, oi)
	}
	if mod != 0 {
		g.end()
	}
	if b.kind != blkToDevice {
		g.end()
	}
}

func (g *gen) fwdOp(bi, oi int) {
	b := &g.blocks[bi]
	op := &templates[b.kind][oi]
	g.opCount++
	dt := g.act
	if op.f32 {
		dt = dtF32
	}
	shape, nd := g.shapeOf(op.shape)
	out := g.tensor('a', b.dev, dt, catActivation, shape, nd)
	var in [2]*tensor
	if g.hasX {
		in[0] = &g.x
	}
	if op.param >= 0 {
		in[1] = &g.params[b.paramBase+int(op.param)]
	}
	g.tick()
	g.begin(kindOp, op.name, -1, "", stepNone, true)
	g.opRecord(op.name, in, &out, b.dev, -1)
	g.tick()
	g.mem(&out, true, op.name)
	if op.scratch {
		g.scratch(b.dev, op.name)
	}
	g.freePending()
	if !g.cfg.SteadyGrowth {
		if !op.retain {
			g.pending = append(g.pending, out)
		}
		g.fwd = append(g.fwd, fwdRec{out: out, block: int32(bi), op: int16(oi), retained: op.retain})
	}
	g.x, g.hasX = out, true
	if g.cfg.Anomalies {
		g.anomaly(b.dev, op.name)
	}
	g.balanceInside(b.dev, catActivation, op.name)
	g.tick()
	g.end()
	g.balanceViews(b.dev)
}

// scratch allocates and frees a workspace without category.
func (g *gen) scratch(dev uint8, opName string) {
	ws := g.tensor('w', dev, dtU8, catNone, [4]uint64{4 << 20 << g.intn(3)}, 1)
	g.mem(&ws, true, opName)
	g.tick()
	g.mem(&ws, false, "")
}

// anomaly writes, now and then, one of the three bad pairings; the first
// ops of the trace write one of each.
func (g *gen) anomaly(dev uint8, opName string) {
	kind := -1
	if g.opCount <= 3 {
		kind = int(g.opCount - 1)
	} else if r := g.intn(2000 * 3); r < 3 {
		kind = r
	}
	if kind < 0 || g.left < 3 {
		return
	}
	shape, nd := g.shapeOf(shBSH)
	switch kind {
	case 0: // double free
		t := g.tensor('x', dev, g.act, catActivation, shape, nd)
		g.mem(&t, true, opName)
		g.tick()
		g.mem(&t, false, "")
		g.mem(&t, false, "")
		g.st.DoubleFrees++
	case 1: // free of a tensor never allocated
		t := g.tensor('u', dev, g.act, catActivation, shape, nd)
		g.mem(&t, false, "")
		g.st.UnmatchedFrees++
	case 2: // a tensor id allocated twice while live
		t := g.tensor('x', dev, g.act, catActivation, shape, nd)
		g.mem(&t, true, opName)
		t2 := t
		t2.shape[2] *= 2
		t2.bytes *= 2
		g.mem(&t2, true, opName)
		g.tick()
		g.mem(&t2, false, "")
		g.st.DuplicateAllocs++
	}
}

func (g *gen) backward() {
	if g.full() {
		return
	}
	g.tick()
	g.begin(kindFunction, "backward", -1, "", stepBackward, true)
	g.grads = g.grads[:0]
	g.gradParam = g.gradParam[:0]
	for i := len(g.fwd) - 1; i >= 0 && !g.full(); {
		bi := int(g.fwd[i].block)
		b := &g.blocks[bi]
		step := stepNone
		if g.intn(10) == 0 {
			step = stepBackward
		}
		g.tick()
		switch b.kind {
		case blkEmbed:
			g.begin(kindModule, "embed_tokens", -1, "", step, false)
		case blkLayer:
			g.begin(kindModule, "layers.", b.layer, "", step, false)
		case blkHead:
			g.begin(kindModule, "lm_head", -1, "", step, false)
		}
		for ; i >= 0 && int(g.fwd[i].block) == bi && !g.full(); i-- {
			g.bwdOp(&g.fwd[i])
		}
		if b.kind != blkToDevice {
			g.end()
		}
	}
	g.freePending()
	g.end()
}

func (g *gen) bwdOp(rec *fwdRec) {
	b := &g.blocks[rec.block]
	op := &templates[b.kind][rec.op]
	gin := g.tensor('g', b.dev, rec.out.dtype, catGradient, rec.out.shape, rec.out.nd)
	g.tick()
	g.begin(kindOp, op.bwd, -1, "", stepNone, true)
	g.opRecord(op.bwd, [2]*tensor{&rec.out}, &gin, b.dev, -1)
	g.tick()
	g.mem(&gin, true, op.bwd)
	if op.param >= 0 {
		pi := b.paramBase + int(op.param)
		p := &g.params[pi]
		pg := g.tensor('g', p.dev, dtF32, catGradient, p.shape, p.nd)
		g.tick()
		if g.mem(&pg, true, op.bwd) {
			g.grads = append(g.grads, pg)
			g.gradParam = append(g.gradParam, int32(pi))
		}
	}
	if op.scratch {
		g.scratch(b.dev, op.bwd)
	}
	g.freePending()
	g.pending = append(g.pending, gin)
	if rec.retained {
		if g.intn(2) == 0 {
			g.tick()
		}
		g.mem(&rec.out, false, "")
	}
	g.balanceInside(b.dev, catGradient, op.bwd)
	g.tick()
	g.end()
	g.balanceViews(b.dev)
}

func (g *gen) optimizer() {
	if g.full() {
		return
	}
	g.tick()
	g.begin(kindFunction, "optimizer", -1, "", stepOptimizer, true)
	for i := range g.grads {
		if g.full() {
			break
		}
		pi := g.gradParam[i]
		p := &g.params[pi]
		g.tick()
		g.begin(kindOp, "adam_step", -1, "", stepNone, true)
		g.opRecord("adam_step", [2]*tensor{p, &g.grads[i]}, nil, p.dev, 0)
		if !g.optInit[pi] {
			m := g.tensor('o', p.dev, dtF32, catOptimizer, p.shape, p.nd)
			v := g.tensor('o', p.dev, dtF32, catOptimizer, p.shape, p.nd)
			g.tick()
			g.mem(&m, true, "adam_step")
			g.mem(&v, true, "adam_step")
			g.optInit[pi] = true
		}
		t := g.tensor('x', p.dev, dtF32, catOptimizer, p.shape, p.nd)
		g.tick()
		g.mem(&t, true, "adam_step")
		if g.intn(2) == 0 {
			g.tick()
		}
		g.mem(&t, false, "")
		g.balanceInside(p.dev, catOptimizer, "adam_step")
		g.tick()
		g.end()
		g.balanceViews(p.dev)
	}
	if !g.full() {
		g.tick()
		g.begin(kindOp, "zero_grad", -1, "", stepNone, true)
		for i := range g.grads {
			if g.intn(4) == 0 {
				g.tick()
			}
			g.mem(&g.grads[i], false, "")
		}
		g.tick()
		g.end()
	}
	g.end() // the optimizer span
	g.grads = g.grads[:0]
	g.gradParam = g.gradParam[:0]
}

// freePending frees the short-lived tensors, at the current tick or the
// next.
func (g *gen) freePending() {
	for i := range g.pending {
		if g.intn(3) == 0 {
			g.tick()
		}
		g.mem(&g.pending[i], false, "")
	}
	g.pending = g.pending[:0]
}

// balanceInside adds temporaries inside the current op span while there are
// more spans than the Spans target asks for.
func (g *gen) balanceInside(dev, cat uint8, opName string) {
	if g.ratio == 0 {
		return
	}
	shape, nd := g.shapeOf(shBSH)
	for !g.full() && float64(g.st.SpanStarts) > g.ratio*float64(g.st.Memory)+1 {
		t := g.tensor('x', dev, g.act, cat, shape, nd)
		g.tick()
		g.mem(&t, true, opName)
		if g.intn(2) == 0 {
			g.tick()
		}
		g.mem(&t, false, "")
	}
}

// balanceViews adds view op spans (no memory) while there are fewer spans
// than the Spans target asks for.
func (g *gen) balanceViews(dev uint8) {
	if g.ratio == 0 {
		return
	}
	for !g.full() && float64(g.st.SpanStarts)+1 < g.ratio*float64(g.st.Memory) {
		g.tick()
		g.begin(kindOp, "reshape", -1, "", stepNone, true)
		v := g.x
		g.nextTensor++
		v.pre, v.id, v.dev = 'v', g.nextTensor, dev
		in := [2]*tensor{}
		if g.hasX {
			in[0] = &g.x
		}
		g.opRecord("reshape", in, &v, dev, 0)
		g.tick()
		g.end()
	}
}

// --- records ---

func (g *gen) line() {
	g.buf = append(g.buf, '\n')
	g.st.Records++
	if len(g.buf) >= bufSize {
		g.flush()
	}
}

func (g *gen) flush() {
	if len(g.buf) == 0 {
		return
	}
	if g.err == nil {
		n, err := g.w.Write(g.buf)
		g.st.Bytes += int64(n)
		if err == nil && n < len(g.buf) {
			err = io.ErrShortWrite
		}
		g.err = err
	}
	g.buf = g.buf[:0]
}

func (g *gen) meta() {
	b := g.buf
	b = append(b, `{"kind": "meta", "schema": "`...)
	b = append(b, Schema...)
	b = append(b, `", "run_id": "synthetic-`...)
	b = strconv.AppendInt(b, g.cfg.Seed, 10)
	b = append(b, `", "correlation_id": "synthetic-`...)
	b = strconv.AppendInt(b, g.cfg.Seed, 10)
	b = append(b, `/update-1", "entrypoint": "synthetic::train_step", "phase": "train", "timestamp": "2026-12-01T00:00:00Z", "capture_step": 1, "warmup_steps": 0, "device": "cuda:0", "timing_mode": "host", "tags": {"generator": "tracemem/internal/gen"}}`...)
	g.buf = b
	g.line()
}

func appendID(b []byte, pre byte, id uint64) []byte {
	b = append(b, '"', pre)
	b = strconv.AppendUint(b, id, 10)
	return append(b, '"')
}

func appendShape(b []byte, t *tensor) []byte {
	b = append(b, '[')
	for i := uint8(0); i < t.nd; i++ {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = strconv.AppendUint(b, t.shape[i], 10)
	}
	return append(b, ']')
}

// begin writes a span_start and pushes the span. num < 0 means the name
// has no number.
func (g *gen) begin(kind, name string, num int, suffix, step string, measured bool) {
	g.nextSpan++
	id := g.nextSpan
	b := g.buf
	b = append(b, `{"kind": "span_start", "id": "s`...)
	b = strconv.AppendUint(b, id, 10)
	b = append(b, `", "name": "`...)
	b = append(b, name...)
	if num >= 0 {
		b = strconv.AppendInt(b, int64(num), 10)
	}
	b = append(b, suffix...)
	b = append(b, `", "start_ns": `...)
	b = strconv.AppendUint(b, g.now, 10)
	b = append(b, `, "span_kind": "`...)
	b = append(b, kind...)
	b = append(b, `", "measured": `...)
	b = strconv.AppendBool(b, measured)
	if len(g.stack) > 0 {
		b = append(b, `, "parent_id": "s`...)
		b = strconv.AppendUint(b, g.stack[len(g.stack)-1].id, 10)
		b = append(b, '"')
	}
	if step != "" {
		b = append(b, `, "step": "`...)
		b = append(b, step...)
		b = append(b, '"')
	}
	b = append(b, '}')
	g.buf = b
	g.stack = append(g.stack, openSpan{id: id, start: g.now})
	g.st.SpanStarts++
	g.line()
}

// end pops the innermost span and writes its span_end, unless the memory
// events have run out and UnclosedSpans asks to leave it open.
func (g *gen) end() {
	s := g.stack[len(g.stack)-1]
	g.stack = g.stack[:len(g.stack)-1]
	if g.cfg.UnclosedSpans && g.left <= 0 {
		g.st.Unclosed++
		return
	}
	b := g.buf
	b = append(b, `{"kind": "span_end", "id": "s`...)
	b = strconv.AppendUint(b, s.id, 10)
	b = append(b, `", "duration_ns": `...)
	b = strconv.AppendUint(b, g.now-s.start, 10)
	b = append(b, '}')
	g.buf = b
	g.st.SpanEnds++
	g.line()
}

func (g *gen) spanID() uint64 { return g.stack[len(g.stack)-1].id }

// opRecord writes an op record in the current span. out nil means a null
// output with the shape of in[0]; storage < 0 means "storage_bytes of out,
// present two times in three", storage >= 0 is written as is.
func (g *gen) opRecord(name string, in [2]*tensor, out *tensor, dev uint8, storage int64) {
	b := g.buf
	b = append(b, `{"kind": "op", "span_id": "s`...)
	b = strconv.AppendUint(b, g.spanID(), 10)
	b = append(b, `", "op_name": "`...)
	b = append(b, name...)
	b = append(b, `", "inputs": [`...)
	var inBytes uint64
	first := true
	for _, t := range in {
		if t == nil {
			continue
		}
		if !first {
			b = append(b, ", "...)
		}
		first = false
		b = appendID(b, t.pre, t.id)
		inBytes += t.bytes
	}
	b = append(b, `], "output": `...)
	shapeOf := out
	if out == nil {
		b = append(b, "null"...)
		shapeOf = in[0]
	} else {
		b = appendID(b, out.pre, out.id)
	}
	b = append(b, `, "shape": `...)
	b = appendShape(b, shapeOf)
	b = append(b, `, "dtype": "`...)
	b = append(b, dtNames[shapeOf.dtype]...)
	b = append(b, `", "device": "`...)
	b = append(b, g.devNames[dev]...)
	b = append(b, `", "duration_ns": `...)
	b = strconv.AppendUint(b, 1+g.u64()%5000, 10)
	b = append(b, `, "timestamp_ns": `...)
	b = strconv.AppendUint(b, g.now, 10)
	b = append(b, `, "input_storage_bytes": `...)
	b = strconv.AppendUint(b, inBytes, 10)
	switch {
	case storage >= 0:
		b = append(b, `, "storage_bytes": `...)
		b = strconv.AppendInt(b, storage, 10)
	case g.intn(3) != 0:
		b = append(b, `, "storage_bytes": `...)
		b = strconv.AppendUint(b, out.bytes, 10)
	}
	b = append(b, '}')
	g.buf = b
	g.st.Ops++
	g.line()
}

func (g *gen) tensorRecord(t *tensor) {
	b := g.buf
	b = append(b, `{"kind": "tensor", "span_id": "s`...)
	b = strconv.AppendUint(b, g.spanID(), 10)
	b = append(b, `", "tensor_id": `...)
	b = appendID(b, t.pre, t.id)
	b = append(b, `, "shape": `...)
	b = appendShape(b, t)
	b = append(b, `, "dtype": "`...)
	b = append(b, dtNames[t.dtype]...)
	b = append(b, `", "device": "`...)
	b = append(b, g.devNames[t.dev]...)
	b = append(b, `", "requires_grad": true, "category": "parameter"`...)
	if g.intn(3) != 0 {
		b = append(b, `, "storage_bytes": `...)
		b = strconv.AppendUint(b, t.bytes, 10)
	}
	b = append(b, '}')
	g.buf = b
	g.st.Tensors++
	g.line()
}

// mem writes a memory record for t in the current span at the current
// time, if memory records are left; it reports whether it wrote one.
// op_name is written when opName is not empty.
func (g *gen) mem(t *tensor, alloc bool, opName string) bool {
	if g.full() {
		return false
	}
	if !alloc && g.cfg.SteadyGrowth {
		return false
	}
	g.left--
	b := g.buf
	b = append(b, `{"kind": "memory", "timestamp_ns": `...)
	b = strconv.AppendUint(b, g.now, 10)
	b = append(b, `, "tensor_id": `...)
	b = appendID(b, t.pre, t.id)
	b = append(b, `, "span_id": "s`...)
	b = strconv.AppendUint(b, g.spanID(), 10)
	b = append(b, `", "device": "`...)
	b = append(b, g.devNames[t.dev]...)
	b = append(b, `", "bytes": `...)
	b = strconv.AppendUint(b, t.bytes, 10)
	if alloc {
		b = append(b, `, "action": "alloc", "shape": `...)
		g.live[t.dev] += t.bytes
		g.st.Allocs++
	} else {
		b = append(b, `, "action": "free", "shape": `...)
		g.live[t.dev] -= min(t.bytes, g.live[t.dev])
		g.st.Frees++
	}
	b = appendShape(b, t)
	b = append(b, `, "dtype": "`...)
	b = append(b, dtNames[t.dtype]...)
	b = append(b, '"')
	if t.cat != catNone {
		b = append(b, `, "category": "`...)
		b = append(b, catNames[t.cat]...)
		b = append(b, '"')
	}
	if opName != "" {
		b = append(b, `, "op_name": "`...)
		b = append(b, opName...)
		b = append(b, '"')
	}
	b = append(b, '}')
	g.buf = b
	g.st.Memory++
	g.line()
	if g.sampleEvery > 0 && g.st.Memory%g.sampleEvery == 0 {
		g.sample(t.dev)
	}
	return true
}

// sample writes a device_memory record for dev: used = live bytes plus
// 1/16 allocator overhead rounded up to 2 MiB.
func (g *gen) sample(dev uint8) {
	g.samples++
	used := g.live[dev] + g.live[dev]/16
	used = (used + (2<<20 - 1)) &^ (2<<20 - 1)
	free := uint64(0)
	if used < CapacityBytes {
		free = CapacityBytes - used
	}
	b := g.buf
	b = append(b, `{"kind": "device_memory", "timestamp_ns": `...)
	b = strconv.AppendUint(b, g.now, 10)
	b = append(b, `, "device": "`...)
	b = append(b, g.devNames[dev]...)
	b = append(b, `", "used_bytes": `...)
	b = strconv.AppendUint(b, used, 10)
	b = append(b, `, "free_bytes": `...)
	b = strconv.AppendUint(b, free, 10)
	if g.samples%3 == 0 {
		b = append(b, `, "reserved_bytes": `...)
		b = strconv.AppendUint(b, used+(64<<20), 10)
	}
	if dev%2 == 0 && g.samples%2 == 1 {
		b = append(b, `, "capacity_bytes": `...)
		b = strconv.AppendUint(b, CapacityBytes, 10)
	}
	b = append(b, '}')
	g.buf = b
	g.st.DeviceMemory++
	g.line()
}
