// chrome.go reads PyTorch profiler traces (Chrome trace JSON with memory events).

package tracemem

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tracemem/tracemem/internal/gzipread"
	"github.com/tracemem/tracemem/internal/lenient"
	"github.com/tracemem/tracemem/internal/traceformat"
)

// ReadChromeTrace reads a PyTorch profiler trace (torch.profiler with
// profile_memory=True, exported as Chrome trace JSON; gzip is detected by its
// magic bytes) into a TraceDocument that every analysis of this package
// accepts. r must be positioned at the start of the trace. The trace is
// decoded token by token into typed records: no generic map per event.
//
// # Input
//
// The top level is an object with "traceEvents" (an array) and optional
// "deviceProperties", or a bare array of events; "traceEvents" given twice is
// an error (JSON readers differ on which to keep). Other top-level members and
// unknown event fields are ignored. null reads as a member left out where the
// member is optional (dur; args Addr, Total Allocated, Total Reserved and
// External id; deviceProperties' id and totalGlobalMem), and is an error for ts
// and for args Bytes, Device Type and Device Id of a memory event, which are
// required. ts and dur are microseconds, integers or decimals (also exponent
// forms, or numbers in strings); they are converted to integer nanoseconds from
// their decimal text, exactly down to 1 ns (digits below 1 ns are dropped); a
// ts beyond ±2⁶³ ns is an error. pid and tid may be integers or strings,
// compared as text: pid 1 and pid "1" are one process. In names, pids and tids,
// each byte that is not UTF-8 reads as U+FFFD, as do unpaired surrogate escapes
// (\ud800): the document's strings are UTF-8.
//
// # Memory events
//
// An event named "[memory]" is an allocation (args.Bytes > 0) or a free
// (Bytes < 0) on the device given by args "Device Type" and "Device Id"
// (both required, with Bytes, as integers: 64.0 and 6.4e1 count, a string
// does not; Bytes beyond ±2⁶³ is an error). Events with Bytes = 0 neither
// allocate nor free and give no memory event (their totals still give a
// device sample). Device names, by c10 DeviceType number:
//
//	0 cpu (Device Id ignored)   7 fpga:<id>          14 meta:<id>
//	1 cuda:<id>                 8 maia:<id>          15 hpu:<id>
//	2 mkldnn:<id>               9 xla:<id>           16 ve:<id>
//	3 opengl:<id>              10 vulkan:<id>        17 lazy:<id>
//	4 opencl:<id>              11 metal:<id>         18 ipu:<id>
//	5 ideep:<id>               12 xpu:<id>           19 mtia:<id>
//	6 hip:<id>                 13 mps:<id>           20 privateuseone:<id>
//
// and device<type>:<id> for any other type; a negative Device Id (c10's -1,
// no index) drops the ":<id>" part, and all negative ids of a type are one
// device. (ROCm builds report AMD GPUs as type 1, cuda.)
//
// Tensor identity: with args.Addr (an integer, or a string in decimal or
// 0x hex), a block is (device, address); each
// allocation at an address not live gives a new tensor id
// "<device>@0x<hex address>#<n>" (n counts the tensors at the address from
// 0, a pre-existing one that a free names included).
// An allocation at a live address keeps that id (the analysis reports a
// duplicate alloc), a free of an address already freed names the last id (a
// double free), and a free of an address never allocated gets a fresh id
// (a pre-existing allocation). Without Addr, a free pairs with the most
// recently allocated live block of the same size on its device (ids
// "<device>#<n>"); a free with no such block gets a fresh id
// "<device>#pre<n>" (pre-existing). Each event is paired by its own form,
// so Addr and Addr-less events on one device do not pair with each other.
//
// Events are paired in time order (ties in file order) and the document's
// Memory holds them in that order. Category: allocations made under a span
// whose step is forward are activation, backward gradient, optimizer
// optimizer, no step other (CategoryForStep, except that no step is other);
// a free carries its allocation's category (other when pre-existing).
// Shape and DType are unknown (empty).
//
// Baseline: when args "Total Allocated" is present, the bytes allocated on a
// device before its first memory event with a total, B = Total Allocated −
// the net Bytes of the device's events up to and including it, were live
// from the start. The library models pre-existing memory as a free of a
// tensor id never allocated, so the part of B that the trace frees is
// already covered by those frees (P, the bytes of the pre-existing frees of
// that device). The rest, R = B − P, is never freed within the trace, so it
// is represented as one synthetic allocation, tensor id
// "<device>#baseline", category other, placed just before the device's
// first event with its timestamp, in a synthetic span "baseline" (named
// "pre-existing memory", kind function, not measured, covering the whole
// trace, no parent) so that no op of the trace is charged with it. With a
// consistent trace the analysis' live bytes then equal Total Allocated after
// every memory event (the synthetic point itself shows B, the total before
// the first event). It counts as one allocation in the analysis
// (alloc_count, total_alloc_bytes). [memory] events whose Total Allocated
// disagrees with the device's total before them and the Bytes since (where
// the trace lost events) are counted in
// Run.Tags["total_allocated_mismatches"]; the totals after one are checked
// against it, so that a loss counts once. R < 0 gives no baseline and
// counts as one more mismatch. A device whose [memory] events all have
// Bytes = 0 has no event to place a baseline before, and gets none: its
// totals are device samples only.
//
// Device samples: every [memory] or [OutOfMemory] event with "Total
// Allocated" gives a DeviceMemorySample: used = Total Allocated, reserved =
// Total Reserved (when present), capacity = deviceProperties[].totalGlobalMem
// for cuda:<id>, and free = capacity − used. When the capacity is unknown
// (cpu, or no deviceProperties) capacity_bytes is 0 (not absent) and free 0,
// so that the analysis reports the capacity as unknown (0) instead of taking
// the largest used + free, which would be the peak of Total Allocated. A
// device with a known capacity but no totals gets one sample at its first
// memory event with only the capacity. "[OutOfMemory]" events are not
// allocations; they are counted in Run.Tags["out_of_memory_events"], and
// the first in time is described by the tags out_of_memory_first_device,
// out_of_memory_first_ns (ns since the trace start),
// out_of_memory_first_bytes (the request), out_of_memory_first_total_allocated
// (when the event gives Total Allocated) and out_of_memory_first_span (the
// id of the innermost span it happened in, when it did), all in decimal.
//
// # Spans and ops
//
// Duration events (ph "X") of category cpu_op or Operator are ops (span kind
// op, and one Op each); user_annotation and python_function are annotations
// (kind function), and so is any of these named "ProfilerStep#N"; events of the
// legacy autograd profiler (no cat, pid "CPU functions") are ops. Other
// categories (kernel, gpu_memcpy, cuda_runtime, gpu_user_annotation, Trace,
// ...) are ignored, and so are events of other phases (begin and end pairs "B"
// and "E", flows, counters, metadata): only complete events make spans. Spans
// nest per (pid, tid) by time containment (sorted by start, longer first, then
// file order; a span not contained in the open one closes it). Spans of one
// interval nest in the order of their args "External id" when they all have
// one, else in file order: Kineto numbers host ops as they start, and some of
// its versions write them as they end, a child before its parent. So spans of
// one interval are never siblings: two ops of no length at one instant (PyTorch
// 1.x writes fast ops so) nest, and memory at that instant goes to the inner
// one, though they may have been siblings and the outer one its maker; the
// times cannot tell. A span that starts strictly inside the open one and ends
// at most 1 µs after it is its child all the same: writers of whole
// microseconds (PyTorch 1.x) round start and duration down apart, which puts a
// child's end up to 1 µs past its parent's (in a trace PyTorch 1.13 wrote, 2
// spans of 324), while a sibling, starting at or after its predecessor's
// written end, never starts inside it. The parent, and any ancestor that ends
// before the child, then ends with the child (the child's end is the better
// bound of theirs), so spans stay nested and the memory events of the child's
// last microsecond stay in it. Span ids are decimal, zero-padded to one width,
// in that order, so parents sort before children. Step: a span named
// "autograd::engine::evaluate_function...", ending in "Backward" with or
// without a number (MmBackward0; PyTorch 1.9 and before wrote MmBackward), or
// naming one of the autograd engine's own nodes ("torch::autograd::...", such
// as AccumulateGrad, "struct torch::autograd::..." in MSVC builds) is backward,
// "Optimizer.step#..." or "Optimizer.zero_grad#..." optimizer, and so are their
// descendants; other spans inside a "ProfilerStep#N" are forward; the rest have
// no step. An Op has the span's name, start and duration, and the device of the
// first memory event made directly in its span ("" when none); its inputs,
// shape and dtype are unknown.
//
// A memory event's span is, of the spans on its (pid, tid) whose [start,
// start+dur] contains its ts, the one that comes last in the order spans
// nest in (above): the innermost when they nest, the later of two that
// overlap or touch (an event at the instant one span ends and the next
// begins is the next one's). Its op name is that span's name; when
// there is none, a synthetic root span "thread:<n>" (n zero-padded to
// one width, as span ids are) named
// "thread <pid>/<tid>" (kind function, not measured, covering the thread's
// imported events) with an empty op name.
//
// Times are ns since the earliest imported event (span, [memory], with
// Bytes = 0 too, or [OutOfMemory]).
//
// # Run
//
// Schema SchemaV6; phase train if any span is backward, else infer; device
// the device with the most [memory] events that allocate or free (the
// synthetic baselines do not count; ties: the smallest name);
// timing host; Tags["source"] = "chrome_trace".
//
// # Errors
//
// Errors are *ParseError with the byte Offset (in the decompressed input) and,
// inside an event, Kind "traceEvents[<index>]". The offset is that of the event
// at fault (its '{') for a field's value, and that of the byte at fault for
// JSON syntax. Empty input (or white space alone) is ErrEmptyTrace itself,
// as from ReadTrace, not a *ParseError; input that is not a Chrome
// trace (its first token not JSON, or JSON that is neither an array nor an
// object with traceEvents) says so and wraps ErrUnknownFormat; a [memory] or
// [OutOfMemory] event without integer Bytes, Device Type or Device Id, or
// without a numeric ts, names its index and the field (ParseError.Field), e.g.
// `offset 81: traceEvents[3]: args.Bytes: not an integer in a [memory] event`;
// a host op without a numeric ts likewise. JSON syntax errors wrap
// ErrInvalidJSON and the *jsontext.SyntacticError (input cut short:
// io.ErrUnexpectedEOF, at the offset where the input ends, also when the
// decoder has no SyntacticError for it); I/O and gzip errors are wrapped.
//
// # Near-JSON
//
// Some profilers wrote traces that are not quite JSON. These are read all
// the same:
//   - Non-finite numbers, which JSON has no syntax for (older Kineto wrote
//     inf and nan in args such as a Memcpy's "memory bandwidth (GB/s)";
//     Python's json writes NaN and Infinity): nan, inf and infinity in any
//     case, with an optional sign, as whole words outside strings. They are
//     read as values that are not numbers: ignored where the reader ignores
//     the field, an error ("not a number", "not an integer") where it needs
//     one.
//   - N/A as a value, with an optional sign (older Kineto wrote it for a
//     kernel's "est. achieved occupancy %"), read as non-finite numbers are.
//   - In strings, a backslash that starts no escape JSON has (PyTorch's
//     profiler on Windows wrote file paths unescaped: "C:\Users\me\x.py"),
//     read as '/', and a control character (below U+0020), read as a space.
//     A backslash that does start one is read as that escape, so the \t of
//     "C:\temp" is a tab, as in any JSON reader.
//
// A trace with any of these is read twice (so that traces without pay
// nothing for them), which needs r to be an io.Seeker, as a file is; from
// another reader it is an error wrapping ErrInvalidJSON that says what the
// text is and where.
func ReadChromeTrace(r io.Reader) (*TraceDocument, error) {
	return readRepaired(r, func() (*TraceDocument, error) { return readChrome(r, false) })
}

// errChromeLenient marks a syntax error at near-JSON that a second read
// repairs (lenient.Reader).
var errChromeLenient = errors.New("near-JSON")

// readRepaired returns read(), unless it fails at near-JSON that
// lenient.Reader repairs (a non-finite number, say) and r can be read again
// from where it was: then it reads r again as a Chrome trace with the
// repairs, and returns that, unless read's error is one of a format not
// told yet and the second read did not find a Chrome trace (its first key
// that tells a format was not traceEvents or deviceProperties, or the object
// has no traceEvents array): then read's error, which reading r from a pipe
// gives too. Finding such text needs a pass that follows strings byte by
// byte, which made every read a third slower, so only traces that have it
// take it. When r cannot be read again, read's error says how to read such
// a trace.
func readRepaired(r io.Reader, read func() (*TraceDocument, error)) (*TraceDocument, error) {
	s, seekable := r.(io.Seeker)
	var start int64
	if seekable {
		var err error
		start, err = s.Seek(0, io.SeekCurrent)
		seekable = err == nil // not a pipe
	}
	doc, err := read()
	if err == nil || !errors.Is(err, errChromeLenient) {
		return doc, err
	}
	if seekable {
		if _, serr := s.Seek(start, io.SeekStart); serr == nil {
			doc2, chrome, err2 := parseChrome(r, true)
			// An error before the format was told (ReadTrace's, which
			// wraps ErrUnknownFormat) may be in a trace of another format,
			// which the repairs do not apply to: unless the second read
			// found a Chrome trace, the first error says what is wrong
			// (the first defect, where a JSONL trace's second line would be
			// "data after the trace", and a document with a traceEvents key
			// after its run would read as an empty Chrome trace). In a
			// Chrome trace the second does.
			if errors.Is(err, ErrUnknownFormat) && (!chrome || errors.Is(err2, ErrUnknownFormat)) {
				return doc, err
			}
			return doc2, err2
		}
	}
	if pe, ok := err.(*ParseError); ok {
		with := *pe
		with.Msg += "; a trace with them is read from a file, or another io.Seeker"
		return doc, &with
	}
	return doc, err
}

// readChrome reads a Chrome trace, with near-JSON repaired when repair is
// set.
func readChrome(r io.Reader, repair bool) (*TraceDocument, error) {
	doc, _, err := parseChrome(r, repair)
	return doc, err
}

// parseChrome is readChrome, and says whether the input was found to be a
// Chrome trace (chromeParser.format), also when it fails.
func parseChrome(r io.Reader, repair bool) (doc *TraceDocument, chrome bool, err error) {
	src, closeSrc, _, err := gzipread.Open(bufio.NewReaderSize(r, 256<<10))
	if err != nil {
		return nil, false, err
	}
	defer closeSrc()
	if repair {
		src = lenient.NewReader(src)
	}
	p := newChromeParser(src)
	p.repaired = repair
	defer p.spans.release()
	defer p.mems.release()
	if err := p.parse(); err != nil {
		return nil, p.format == traceformat.Chrome, err
	}
	return p.build(), p.format == traceformat.Chrome, nil
}

// c10DeviceTypes names c10::DeviceType values, lowercase.
var c10DeviceTypes = [...]string{
	"cpu", "cuda", "mkldnn", "opengl", "opencl", "ideep", "hip", "fpga", "maia", "xla",
	"vulkan", "metal", "xpu", "mps", "meta", "hpu", "ve", "lazy", "ipu", "mtia", "privateuseone",
}

// chromeDeviceName returns the device name of a c10 device type and index.
func chromeDeviceName(typ, id int64) string {
	if typ == 0 {
		return "cpu"
	}
	var name string
	if typ > 0 && typ < int64(len(c10DeviceTypes)) {
		name = c10DeviceTypes[typ]
	} else {
		name = "device" + strconv.FormatInt(typ, 10)
	}
	if id < 0 {
		return name
	}
	return name + ":" + strconv.FormatInt(id, 10)
}

// Field states of an integer argument.
const (
	fieldAbsent uint8 = iota
	fieldOK
	fieldNull      // JSON null: absent where the field is optional, else not a number
	fieldBad       // not an integer
	fieldRange     // an integer outside int64
	fieldRangeAddr // an address beyond 64 bits
	fieldRangeNs   // a time in µs outside int64 once in ns
)

// chromeInt is an integer argument as read.
type chromeInt struct {
	state uint8
	v     int64
}

// problem says what is wrong with a field that is absent or not usable.
func (c chromeInt) problem(want string) string {
	switch c.state {
	case fieldAbsent:
		return "missing"
	case fieldRange:
		return "out of range (beyond ±2⁶³)"
	case fieldRangeAddr:
		return "out of range (beyond 64 bits)"
	case fieldRangeNs:
		return "out of range (beyond 2⁶³ ns)"
	}
	return "not " + want
}

// chromeArgs holds the args of an event that matter here.
type chromeArgs struct {
	bytes, devType, devID, total, reserved chromeInt
	addr                                   chromeInt // v holds the address bits
	extID                                  chromeInt // "External id" of a host op
}

// Kinds of events by name and category.
const (
	evOther uint8 = iota
	evMemory
	evOOM
)

const (
	catNone uint8 = iota // absent
	catOp
	catAnnotation
	catOther
)

// Span markers.
const (
	markNone uint8 = iota
	markProfilerStep
	markBackward
	markOptimizer
)

// chromeSpan is a host duration event.
type chromeSpan struct {
	start, end int64 // raw ns
	ext        int64 // args "External id", -1 when absent or not an integer ≥ 0
	file       int32 // index among the spans in file order
	name       string
	thread     int32
	kind       SpanKind
	mark       uint8
	step       Step
	inPS       bool
	parent     int32
	dev        int32 // device of the first memory event made directly in it; -1 none
}

// Flags of a chromeMem.
const (
	memHasAddr uint8 = 1 << iota
	memHasTotal
	memHasReserved
	memOOM
)

// chromeMem is a [memory] or [OutOfMemory] event.
type chromeMem struct {
	ts       int64 // raw ns
	bytes    int64
	addr     uint64
	total    int64
	reserved int64
	thread   int32
	dev      int32
	span     int32 // index into spans (or roots when >= len(spans)); set by build
	flags    uint8
}

// givesEvent reports whether m gives a memory event of the document: an
// [OutOfMemory] event or one of 0 bytes gives at most a device sample.
func (m *chromeMem) givesEvent() bool { return m.flags&memOOM == 0 && m.bytes != 0 }

type threadInfo struct {
	pid, tid string
	min, max int64 // raw ns covered by its imported events
	root     int32 // root span index in roots, -1 none
}

type chromeParser struct {
	dec   *jsontext.Decoder
	in    *readErrs // what the decoder reads, with its last read error
	index int       // current traceEvents index; -1 outside traceEvents
	evOff int64     // byte offset of the current event

	strs    map[string]string
	threads map[string]int32
	thr     []threadInfo
	devices map[[2]int64]int32
	devs    []string            // by interned device: its name
	devKeys [][2]int64          // by interned device: its key in devices (deviceKey, without a scan)
	spans   chunked[chromeSpan] // chunks: no regrowth copies on big traces
	mems    chunked[chromeMem]
	capac   map[int64]uint64 // cuda index → totalGlobalMem
	oom     int
	minTs   int64
	anyTs   bool

	// per-event scratch
	name, pid, tid, key, tmp []byte

	repaired bool // near-JSON is repaired in the input (lenient.Reader)
	// format is what the input was found to be so far: Chrome by its '[',
	// else what its first top-level key that tells a format tells
	// (traceformat.OfKey, and deviceProperties, which only PyTorch writes,
	// tells Chrome too); None before.
	format traceformat.Format
}

func newChromeParser(r io.Reader) *chromeParser {
	in := &readErrs{r: r}
	return &chromeParser{
		dec:     jsontext.NewDecoder(in, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)),
		in:      in,
		index:   -1,
		strs:    make(map[string]string, 1024),
		threads: make(map[string]int32, 16),
		devices: make(map[[2]int64]int32, 8),
		capac:   make(map[int64]uint64, 8),
		minTs:   math.MaxInt64,
	}
}

// syntax wraps a decoder error with where it happened.
func (p *chromeParser) syntax(err error) error {
	// I/O errors (a corrupt gzip stream, a failing reader), which the
	// decoder may report as syntax errors.
	if p.in.failed(err) {
		return p.in.readError(p.where())
	}
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		cause := err // the *jsontext.SyntacticError, when it is one
		if err == io.EOF {
			cause = io.ErrUnexpectedEOF
		}
		// At the end of the input, all of it read (not the end of the last
		// token: white space, or a word the repairs made "" and spaces,
		// may follow).
		return &ParseError{Offset: p.in.n, Kind: p.where(), Msg: "unexpected end of input",
			Err: fmt.Errorf("%w: %w", ErrInvalidJSON, cause)}
	}
	msg := "invalid JSON"
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		if off, tok, d := p.defectAt(se.ByteOffset); d != lenient.None && !p.repaired {
			return &ParseError{Offset: off, Kind: p.where(),
				Msg: "invalid JSON: " + defectMsg(d, tok),
				Err: fmt.Errorf("%w: %w: %w", ErrInvalidJSON, errChromeLenient, err)}
		}
		if se.Err != nil {
			msg += ": " + se.Err.Error()
		}
		return &ParseError{Offset: se.ByteOffset, Kind: p.where(), Msg: msg, Err: fmt.Errorf("%w: %w", ErrInvalidJSON, err)}
	}
	return &ParseError{Offset: p.dec.InputOffset(), Kind: p.where(), Msg: msg + ": " + err.Error(), Err: fmt.Errorf("%w: %w", ErrInvalidJSON, err)}
}

// defectMsg says what is wrong with the near-JSON tok, a defect d.
func defectMsg(d lenient.Defect, tok string) string {
	switch d {
	case lenient.NonFinite:
		return tok + " is not a JSON number (older PyTorch profilers wrote such numbers)"
	case lenient.NotAvailable:
		return tok + " is not a JSON value (older PyTorch profilers wrote such values)"
	case lenient.BadEscape:
		if strings.ContainsFunc(tok, func(r rune) bool { return r < ' ' || r > '~' || r == '`' }) {
			tok = strconv.Quote(tok)
		} else {
			tok = "`" + tok + "`"
		}
		return "invalid escape " + tok + " in a string (PyTorch's profiler on Windows wrote file paths unescaped)"
	case lenient.ControlChar:
		return fmt.Sprintf("control character %U in a string", rune(tok[0]))
	}
	return "invalid JSON"
}

// defectAt returns the offset, text and kind of the near-JSON that a
// syntax error at offset off stopped at, if the decoder's buffer shows one
// there.
func (p *chromeParser) defectAt(off int64) (int64, string, lenient.Defect) {
	buf, base := p.dec.UnreadBuffer(), p.dec.InputOffset()
	if off < base || off-base > int64(len(buf)) {
		return 0, "", lenient.None
	}
	buf = p.in.ahead(buf, int(off-base))
	// A value may begin at the buffer's start only right after '[' or
	// before the top-level value: elsewhere a ',' or ':' would be in it.
	kind, n := p.dec.StackIndex(p.dec.StackDepth())
	start, end, d := lenient.DefectAt(buf, int(off-base), n == 0 && (kind == '[' || p.dec.StackDepth() == 0))
	if d == lenient.None {
		return 0, "", d
	}
	return base + int64(start), string(buf[start:end]), d
}

// where names the current event, "traceEvents[i]", or "" outside events.
func (p *chromeParser) where() string {
	if p.index < 0 {
		return ""
	}
	return "traceEvents[" + strconv.Itoa(p.index) + "]"
}

// errorf reports bad content in the current event.
func (p *chromeParser) errorf(format string, args ...any) error {
	return &ParseError{Offset: p.evOff, Kind: p.where(), Msg: fmt.Sprintf(format, args...)}
}

// fieldError reports a bad field of the current event.
func (p *chromeParser) fieldError(field, msg string) error {
	return &ParseError{Offset: p.evOff, Kind: p.where(), Field: field, Msg: msg}
}

// notChrome reports input that is not a Chrome trace.
func notChrome(off int64, msg string) error {
	return &ParseError{Offset: off, Msg: "not a Chrome trace: " + msg, Err: ErrUnknownFormat}
}

func (p *chromeParser) parse() error {
	switch k := p.dec.PeekKind(); k {
	case '[':
		p.format = traceformat.Chrome
		if err := p.parseEvents(); err != nil {
			return err
		}
	case '{':
		if _, err := p.dec.ReadToken(); err != nil {
			return p.syntax(err)
		}
		found := false
		for p.dec.PeekKind() == '"' {
			kv, err := p.dec.ReadValue()
			if err != nil {
				return p.syntax(err)
			}
			key := p.unquote(kv, &p.key)
			if p.format == traceformat.None {
				if p.format = traceformat.OfKey(string(key)); string(key) == "deviceProperties" {
					p.format = traceformat.Chrome
				}
			}
			switch string(key) {
			case "traceEvents":
				if found {
					return &ParseError{Offset: p.dec.InputOffset() - int64(len(kv)), Field: "traceEvents",
						Msg: "duplicate field (a trace has one event array)", Err: ErrInvalidJSON}
				}
				if p.dec.PeekKind() != '[' {
					off := nextOffset(p.dec)
					if _, err := p.dec.ReadValue(); err != nil {
						return p.syntax(err)
					}
					return notChrome(off, "traceEvents is not an array")
				}
				if err := p.parseEvents(); err != nil {
					return err
				}
				found = true
			case "deviceProperties":
				if err := p.parseDeviceProperties(); err != nil {
					return err
				}
			default:
				if _, err := p.dec.ReadValue(); err != nil {
					return p.syntax(err)
				}
			}
		}
		if _, err := p.dec.ReadToken(); err != nil {
			return p.syntax(err)
		}
		if !found {
			return notChrome(0, "an object without traceEvents")
		}
	default:
		_, err := p.dec.ReadToken()
		if err == io.EOF {
			return ErrEmptyTrace // as ReadTrace gives it: no place to name
		}
		if err != nil {
			var se *jsontext.SyntacticError
			if errors.As(err, &se) {
				if off, tok, d := p.defectAt(se.ByteOffset); d != lenient.None {
					// No Chrome trace even when repaired: say what it is.
					return &ParseError{Offset: off, Msg: "not a Chrome trace: " + defectMsg(d, tok),
						Err: fmt.Errorf("%w: %w: %w", ErrUnknownFormat, ErrInvalidJSON, err)}
				}
				return &ParseError{Offset: se.ByteOffset, Msg: "not a Chrome trace: not JSON: " + se.Err.Error(),
					Err: fmt.Errorf("%w: %w: %w", ErrUnknownFormat, ErrInvalidJSON, err)}
			}
			return p.syntax(err)
		}
		return notChrome(0, "a JSON "+k.String()+" is neither an array of events nor an object with traceEvents")
	}
	// Only whitespace may follow. (p.index is -1 again: the events' ']'
	// reset it, so an error here names no event.)
	if p.dec.PeekKind() != 0 {
		return &ParseError{Offset: nextOffset(p.dec), Msg: "data after the trace", Err: ErrInvalidJSON}
	}
	if _, err := p.dec.ReadToken(); err != io.EOF {
		return p.syntax(err)
	}
	return nil
}

// unquote returns the content of the JSON string v, using *buf when it has
// escapes. The result is valid until the next use of buf or the decoder.
func (p *chromeParser) unquote(v jsontext.Value, buf *[]byte) []byte {
	if len(v) < 2 || v[0] != '"' {
		return nil
	}
	s := v[1 : len(v)-1]
	if bytes.IndexByte(s, '\\') < 0 {
		return s
	}
	// The decoder checked the string's escapes; an error here is invalid
	// UTF-8 or an unpaired surrogate, which out holds as U+FFFD.
	out, _ := jsontext.AppendUnquote((*buf)[:0], v)
	*buf = out
	return out
}

// validUTF8 returns s with each byte that is not part of valid UTF-8 as
// U+FFFD, as jsontext unquotes a string with escapes.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	b := make([]byte, 0, len(s)+8)
	for _, r := range s { // a range yields U+FFFD for each invalid byte
		b = utf8.AppendRune(b, r)
	}
	return string(b)
}

func (p *chromeParser) intern(b []byte) string {
	if s, ok := p.strs[string(b)]; ok {
		return s
	}
	s := string(b)
	v := validUTF8(s) // the document's strings are UTF-8, as the writers want them
	p.strs[s] = v
	return v
}

func (p *chromeParser) parseDeviceProperties() error {
	if p.dec.PeekKind() != '[' {
		if _, err := p.dec.ReadValue(); err != nil {
			return p.syntax(err)
		}
		return nil // liberal: ignore a malformed deviceProperties
	}
	if _, err := p.dec.ReadToken(); err != nil {
		return p.syntax(err)
	}
	for i := 0; p.dec.PeekKind() != ']'; i++ {
		if p.dec.PeekKind() != '{' {
			if _, err := p.dec.ReadValue(); err != nil {
				return p.syntax(err)
			}
			continue
		}
		if _, err := p.dec.ReadToken(); err != nil {
			return p.syntax(err)
		}
		off := p.dec.InputOffset() - 1 // the entry's '{'
		var id, mem chromeInt
		for p.dec.PeekKind() == '"' {
			kv, err := p.dec.ReadValue()
			if err != nil {
				return p.syntax(err)
			}
			switch string(p.unquote(kv, &p.key)) {
			case "id":
				id, err = p.readInt()
			case "totalGlobalMem":
				mem, err = p.readInt()
			default:
				_, err = p.dec.ReadValue()
			}
			if err != nil {
				return p.syntax(err)
			}
		}
		if _, err := p.dec.ReadToken(); err != nil {
			return p.syntax(err)
		}
		if id.state >= fieldBad {
			return &ParseError{Offset: off, Kind: "deviceProperties[" + strconv.Itoa(i) + "]", Field: "id", Msg: id.problem("an integer")}
		}
		if mem.state >= fieldBad || (mem.state == fieldOK && mem.v < 0) {
			return &ParseError{Offset: off, Kind: "deviceProperties[" + strconv.Itoa(i) + "]", Field: "totalGlobalMem", Msg: mem.problem("a non-negative integer")}
		}
		if id.state == fieldOK && mem.state == fieldOK {
			p.capac[id.v] = uint64(mem.v)
		}
	}
	if _, err := p.dec.ReadToken(); err != nil {
		return p.syntax(err)
	}
	return nil
}

func (p *chromeParser) parseEvents() error {
	if _, err := p.dec.ReadToken(); err != nil {
		return p.syntax(err)
	}
	p.index = 0
	for {
		switch p.dec.PeekKind() {
		case ']':
			if _, err := p.dec.ReadToken(); err != nil {
				return p.syntax(err)
			}
			p.index = -1
			return nil
		case '{':
			if err := p.parseEvent(); err != nil {
				return err
			}
		default:
			v, err := p.dec.ReadValue()
			if err != nil {
				return p.syntax(err)
			}
			p.evOff = p.dec.InputOffset() - int64(len(v))
			if p.repaired && string(v) == `""` { // what the repairs make of nan and N/A
				return p.errorf("an event is an empty string, or a non-finite number or N/A (read as one), not an object")
			}
			return p.errorf("an event is a JSON %s, not an object", v.Kind())
		}
		p.index++
	}
}

// readInt reads a JSON value that should be an integer number.
func (p *chromeParser) readInt() (chromeInt, error) { return p.readIntOr(false) }

// readIntOr reads an integer number or, when addr is set, an address: also
// a string holding a decimal or 0x hex integer, and integers in digits up
// to 2^64 − 1, kept as their bits.
func (p *chromeParser) readIntOr(addr bool) (chromeInt, error) {
	v, err := p.dec.ReadValue()
	if err != nil {
		return chromeInt{}, err
	}
	var text []byte
	switch v.Kind() {
	case 'n':
		return chromeInt{state: fieldNull}, nil
	case '0':
		text = v
	case '"':
		if !addr {
			return chromeInt{state: fieldBad}, nil
		}
		text = p.unquote(v, &p.tmp)
		if len(text) > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X') {
			u, err := strconv.ParseUint(string(text[2:]), 16, 64)
			if errors.Is(err, strconv.ErrRange) {
				return chromeInt{state: fieldRangeAddr}, nil
			}
			if err != nil {
				return chromeInt{state: fieldBad}, nil
			}
			return chromeInt{state: fieldOK, v: int64(u)}, nil
		}
	default:
		return chromeInt{state: fieldBad}, nil
	}
	n, exact, res := parseDecimal(text, 0)
	switch {
	case res == decOK && exact:
		return chromeInt{state: fieldOK, v: n}, nil
	case addr:
		u, err := strconv.ParseUint(string(text), 10, 64)
		if err == nil {
			return chromeInt{state: fieldOK, v: int64(u)}, nil
		}
		if errors.Is(err, strconv.ErrRange) {
			return chromeInt{state: fieldRangeAddr}, nil
		}
	case res == decRange:
		return chromeInt{state: fieldRange}, nil
	}
	return chromeInt{state: fieldBad}, nil
}

// readMicros reads a time in microseconds as integer nanoseconds.
func (p *chromeParser) readMicros() (chromeInt, error) {
	v, err := p.dec.ReadValue()
	if err != nil {
		return chromeInt{}, err
	}
	text := []byte(v)
	switch v.Kind() {
	case 'n':
		return chromeInt{state: fieldNull}, nil
	case '0':
	case '"':
		text = p.unquote(v, &p.tmp)
	default:
		return chromeInt{state: fieldBad}, nil
	}
	n, _, res := parseDecimal(text, 3)
	switch res {
	case decRange:
		return chromeInt{state: fieldRangeNs}, nil
	case decSyntax:
		return chromeInt{state: fieldBad}, nil
	}
	return chromeInt{state: fieldOK, v: n}, nil
}

// readID reads a pid or tid (integer or string) as text into *buf.
func (p *chromeParser) readID(buf *[]byte) error {
	v, err := p.dec.ReadValue()
	if err != nil {
		return err
	}
	if v.Kind() == '"' {
		*buf = append((*buf)[:0], p.unquote(v, &p.tmp)...)
	} else {
		*buf = append((*buf)[:0], v...)
	}
	return nil
}

func (p *chromeParser) parseArgs(a *chromeArgs) error {
	if p.dec.PeekKind() != '{' {
		_, err := p.dec.ReadValue()
		return err
	}
	if _, err := p.dec.ReadToken(); err != nil {
		return err
	}
	for p.dec.PeekKind() == '"' {
		kv, err := p.dec.ReadValue()
		if err != nil {
			return err
		}
		switch string(p.unquote(kv, &p.key)) {
		case "Bytes":
			a.bytes, err = p.readInt()
		case "Device Type":
			a.devType, err = p.readInt()
		case "Device Id":
			a.devID, err = p.readInt()
		case "Addr":
			a.addr, err = p.readIntOr(true)
		case "Total Allocated":
			a.total, err = p.readInt()
		case "Total Reserved":
			a.reserved, err = p.readInt()
		case "External id":
			a.extID, err = p.readInt()
		default:
			_, err = p.dec.ReadValue()
		}
		if err != nil {
			return err
		}
	}
	_, err := p.dec.ReadToken()
	return err
}

func (p *chromeParser) parseEvent() error {
	if _, err := p.dec.ReadToken(); err != nil {
		return p.syntax(err)
	}
	p.evOff = p.dec.InputOffset() - 1
	var (
		ph                    byte
		cat                   = catNone
		ts, dur               chromeInt
		args                  chromeArgs
		hasName, hasPid, hTid bool
	)
	p.name, p.pid, p.tid = p.name[:0], p.pid[:0], p.tid[:0]
	for p.dec.PeekKind() == '"' {
		kv, err := p.dec.ReadValue()
		if err != nil {
			return p.syntax(err)
		}
		key := p.unquote(kv, &p.key)
		switch string(key) {
		case "ph":
			v, err := p.dec.ReadValue()
			if err != nil {
				return p.syntax(err)
			}
			if s := p.unquote(v, &p.tmp); len(s) > 0 {
				ph = s[0]
			}
		case "name":
			v, err := p.dec.ReadValue()
			if err != nil {
				return p.syntax(err)
			}
			if v.Kind() == '"' {
				p.name = append(p.name[:0], p.unquote(v, &p.tmp)...)
				hasName = true
			}
		case "cat":
			v, err := p.dec.ReadValue()
			if err != nil {
				return p.syntax(err)
			}
			cat = chromeCategory(p.unquote(v, &p.tmp))
		case "ts":
			if ts, err = p.readMicros(); err != nil {
				return p.syntax(err)
			}
		case "dur":
			if dur, err = p.readMicros(); err != nil {
				return p.syntax(err)
			}
		case "pid":
			if err := p.readID(&p.pid); err != nil {
				return p.syntax(err)
			}
			hasPid = true
		case "tid":
			if err := p.readID(&p.tid); err != nil {
				return p.syntax(err)
			}
			hTid = true
		case "args":
			if hasName && !isMemoryName(p.name) && cat != catNone && cat != catOp && cat != catAnnotation {
				// Only the args of memory events and host spans matter:
				// skip the rest (kernels, runtime calls, ...) in one go.
				if _, err := p.dec.ReadValue(); err != nil {
					return p.syntax(err)
				}
				continue
			}
			if err := p.parseArgs(&args); err != nil {
				return p.syntax(err)
			}
		default:
			if _, err := p.dec.ReadValue(); err != nil {
				return p.syntax(err)
			}
		}
	}
	if _, err := p.dec.ReadToken(); err != nil {
		return p.syntax(err)
	}
	if !hasName {
		return nil
	}
	kind := evOther
	switch string(p.name) {
	case "[memory]":
		kind = evMemory
	case "[OutOfMemory]":
		kind = evOOM
	}
	if kind != evOther {
		return p.addMemory(kind, ts, &args, hasPid, hTid)
	}
	if ph != 'X' {
		return nil
	}
	if cat == catNone && string(p.pid) == "CPU functions" {
		cat = catOp
	}
	if cat != catOp && cat != catAnnotation {
		return nil
	}
	if ts.state != fieldOK {
		return p.fieldError("ts", ts.problem("a number")+" in event "+strconv.Quote(string(p.name)))
	}
	if dur.state >= fieldBad {
		return p.fieldError("dur", dur.problem("a number")+" in event "+strconv.Quote(string(p.name)))
	}
	d := max(dur.v, 0)
	mark := markNone
	switch {
	case bytes.HasPrefix(p.name, []byte("ProfilerStep#")):
		mark, cat = markProfilerStep, catAnnotation
	case isBackwardName(p.name):
		mark = markBackward
	case bytes.HasPrefix(p.name, []byte("Optimizer.step#")), bytes.HasPrefix(p.name, []byte("Optimizer.zero_grad#")):
		mark = markOptimizer
	}
	kindSpan := SpanFunction
	if cat == catOp {
		kindSpan = SpanOp
	}
	end := ts.v + d
	if end < ts.v {
		end = math.MaxInt64
	}
	th := p.thread(ts.v, end)
	ext := int64(-1)
	if args.extID.state == fieldOK && args.extID.v >= 0 {
		ext = args.extID.v
	}
	p.spans.add(&chromeSpan{
		start: ts.v, end: end, ext: ext, file: int32(p.spans.n), name: p.intern(p.name), thread: th,
		kind: kindSpan, mark: mark, parent: -1, dev: -1,
	})
	return nil
}

// isBackwardName reports whether a host event's name marks the autograd
// engine's work: the engine's scope, an autograd node of an op (MmBackward0;
// PyTorch 1.9 and before wrote MmBackward, without the number), or one of
// the engine's own nodes (torch::autograd::AccumulateGrad, CopySlices, ...,
// with "struct " in front in MSVC builds).
func isBackwardName(name []byte) bool {
	if bytes.HasPrefix(name, []byte("autograd::engine::evaluate_function")) ||
		bytes.HasSuffix(bytes.TrimRight(name, "0123456789"), []byte("Backward")) {
		return true
	}
	return bytes.HasPrefix(bytes.TrimPrefix(name, []byte("struct ")), []byte("torch::autograd::"))
}

// isMemoryName reports whether an event name is one of the memory events'.
func isMemoryName(name []byte) bool {
	return string(name) == "[memory]" || string(name) == "[OutOfMemory]"
}

// chromeCategory classifies an event category.
func chromeCategory(c []byte) uint8 {
	switch string(c) {
	case "cpu_op", "Operator":
		return catOp
	case "user_annotation", "python_function":
		return catAnnotation
	}
	return catOther
}

// thread interns the (pid, tid) of the current event and widens its range.
func (p *chromeParser) thread(start, end int64) int32 {
	p.key = append(append(append(p.key[:0], p.pid...), 0), p.tid...)
	id, ok := p.threads[string(p.key)]
	if !ok {
		id = int32(len(p.thr))
		p.threads[string(p.key)] = id
		p.thr = append(p.thr, threadInfo{pid: validUTF8(string(p.pid)), tid: validUTF8(string(p.tid)), min: start, max: end, root: -1})
	}
	t := &p.thr[id]
	t.min, t.max = min(t.min, start), max(t.max, end)
	if start < p.minTs {
		p.minTs = start
	}
	p.anyTs = true
	return id
}

func (p *chromeParser) addMemory(kind uint8, ts chromeInt, a *chromeArgs, hasPid, hasTid bool) error {
	what := "[memory]"
	if kind == evOOM {
		what = "[OutOfMemory]"
	}
	check := func(f chromeInt, name string) error {
		if f.state != fieldOK {
			return p.fieldError("args."+name, f.problem("an integer")+" in a "+what+" event")
		}
		return nil
	}
	if ts.state != fieldOK {
		return p.fieldError("ts", ts.problem("a number")+" in a "+what+" event")
	}
	if err := check(a.bytes, "Bytes"); err != nil {
		return err
	}
	if err := check(a.devType, "Device Type"); err != nil {
		return err
	}
	if err := check(a.devID, "Device Id"); err != nil {
		return err
	}
	for _, f := range []struct {
		c    chromeInt
		name string
	}{{a.addr, "Addr"}, {a.total, "Total Allocated"}, {a.reserved, "Total Reserved"}} {
		if f.c.state >= fieldBad {
			return p.fieldError("args."+f.name, f.c.problem("an integer")+" in a "+what+" event")
		}
	}
	m := chromeMem{ts: ts.v, bytes: a.bytes.v, span: -1}
	if a.addr.state == fieldOK {
		m.flags |= memHasAddr
		m.addr = uint64(a.addr.v)
	}
	if a.total.state == fieldOK {
		m.flags |= memHasTotal
		m.total = a.total.v
	}
	if a.reserved.state == fieldOK {
		m.flags |= memHasReserved
		m.reserved = a.reserved.v
	}
	if kind == evOOM {
		m.flags |= memOOM
		p.oom++
	}
	typ, id := a.devType.v, a.devID.v
	if typ == 0 || id < 0 { // one device, as chromeDeviceName names it
		id = -1
	}
	dk := [2]int64{typ, id}
	dev, ok := p.devices[dk]
	if !ok {
		dev = int32(len(p.devs))
		p.devices[dk] = dev
		p.devs = append(p.devs, chromeDeviceName(typ, id))
		p.devKeys = append(p.devKeys, dk)
	}
	m.dev = dev
	if !hasPid {
		p.pid = p.pid[:0]
	}
	if !hasTid {
		p.tid = p.tid[:0]
	}
	m.thread = p.thread(ts.v, ts.v)
	p.mems.add(&m)
	return nil
}

// Results of parseDecimal.
const (
	decOK     uint8 = iota
	decSyntax       // not a number
	decRange        // a number outside int64 in the unit asked for
)

// parseDecimal parses the JSON number text b (optionally signed, with a
// fraction and an exponent) as an integer count of 10^-scale units. exact is
// false when non-zero digits below the unit were dropped (truncated toward
// zero); res tells bad syntax from a value outside int64, so that a number
// in a string can be reported as out of range like one outside a string.
func parseDecimal(b []byte, scale int) (v int64, exact bool, res uint8) {
	i, neg := 0, false
	if i < len(b) && (b[i] == '-' || b[i] == '+') {
		neg = b[i] == '-'
		i++
	}
	var mant uint64
	exp := int64(scale)
	digits, dropped := 0, false
	const limit = (math.MaxUint64 - 9) / 10
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		digits++
		if mant <= limit {
			mant = mant*10 + uint64(b[i]-'0')
		} else {
			exp++
			dropped = dropped || b[i] != '0'
		}
	}
	if i < len(b) && b[i] == '.' {
		i++
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			digits++
			if mant <= limit {
				mant = mant*10 + uint64(b[i]-'0')
				exp--
			} else {
				dropped = dropped || b[i] != '0'
			}
		}
	}
	if digits == 0 {
		return 0, false, decSyntax
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		eneg := false
		if i < len(b) && (b[i] == '-' || b[i] == '+') {
			eneg = b[i] == '-'
			i++
		}
		var e int64
		ed := 0
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			ed++
			if e < 1<<50 { // far beyond any count of digits: no exponent is mistaken for another
				e = e*10 + int64(b[i]-'0')
			}
		}
		if ed == 0 {
			return 0, false, decSyntax
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	if i != len(b) {
		return 0, false, decSyntax
	}
	if mant != 0 {
		for ; exp > 0; exp-- {
			if mant > math.MaxUint64/10 {
				return 0, false, decRange
			}
			mant *= 10
		}
		for ; exp < 0 && mant != 0; exp++ {
			dropped = dropped || mant%10 != 0
			mant /= 10
		}
	}
	if neg {
		if mant > 1<<63 {
			return 0, false, decRange
		}
		return -int64(mant), !dropped, decOK
	}
	if mant > math.MaxInt64 {
		return 0, false, decRange
	}
	return int64(mant), !dropped, decOK
}
