// jsonl.go holds the record decoder of the candle-graph JSONL stream, shared by ReadTrace and AnalyzeStream.

package tracemem

import (
	"bufio"
	"bytes"
	"io"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// recordKind is the kind of one JSONL record.
type recordKind uint8

const (
	recNone recordKind = iota // not a record the decoder returns
	recMeta
	recSpanStart
	recSpanEnd
	recOp
	recTensor
	recMemory
	recDeviceMemory
	recGradient
	recEdge
	numRecordKinds
)

var recordKindNames = [numRecordKinds]string{
	"", "meta", "span_start", "span_end", "op", "tensor", "memory", "device_memory", "gradient", "edge",
}

func (k recordKind) String() string {
	if k < numRecordKinds {
		return recordKindNames[k]
	}
	return "record(" + strconv.Itoa(int(k)) + ")"
}

// lookupRecordKind maps the text of a "kind" field to its record kind;
// recNone for a kind the decoder skips (unknown kinds and the /7-only
// device_intervals and terminal records).
func lookupRecordKind(s []byte) recordKind {
	switch string(s) {
	case "meta":
		return recMeta
	case "span_start":
		return recSpanStart
	case "span_end":
		return recSpanEnd
	case "op":
		return recOp
	case "tensor":
		return recTensor
	case "memory":
		return recMemory
	case "device_memory":
		return recDeviceMemory
	case "gradient":
		return recGradient
	case "edge":
		return recEdge
	}
	return recNone
}

// Field bits: each record kind numbers its known fields; the required ones
// are listed in requiredFields and named in fieldNames (for errors).
const (
	// meta and run
	fSchema = iota
	fRunID
	fCorrelationID
	fEntrypoint
	fPhase
	fTimestamp
	fCaptureStep
	fWarmupSteps
	fRunDevice
	fTimingMode
	fTags
	fCandleVersion
)

const (
	// span_start, span_end and document spans
	fSpanID = iota
	fSpanName
	fSpanStart
	fSpanKind
	fSpanMeasured
	fSpanClosed
	fSpanDuration
	fSpanParent
	fSpanStep
)

const (
	// op, tensor, memory, device_memory share numbering where they share names
	fRecSpanID = iota
	fRecOpName
	fRecInputs
	fRecShape
	fRecDType
	fRecDevice
	fRecDuration
	fRecTimestamp
	fRecInputStorage
	fRecTensorID
	fRecRequiresGrad
	fRecBytes
	fRecAction
	fRecUsed
	fRecFree
	fRecOutput
	fRecStorage
	fRecCategory
	fRecReserved
	fRecCapacity
	// gradient
	fRecEventID
	fRecRoot
	fRecKey
	fRecState
	fRecNorm
	// edge
	fRecFromSpan
	fRecToSpan
)

func bitsOf(fs ...int) uint32 {
	var m uint32
	for _, f := range fs {
		m |= 1 << f
	}
	return m
}

// requiredFields[k] is the mask of required fields of record kind k in the
// JSONL stream. Document-form spans add closed and duration_ns
// (docSpanRequired); the document's run is meta without schema.
var requiredFields = [numRecordKinds]uint32{
	recMeta: bitsOf(fSchema, fRunID, fCorrelationID, fEntrypoint, fPhase, fTimestamp, fCaptureStep,
		fWarmupSteps, fRunDevice, fTimingMode, fTags),
	recSpanStart:    bitsOf(fSpanID, fSpanName, fSpanStart, fSpanKind, fSpanMeasured),
	recSpanEnd:      bitsOf(fSpanID, fSpanDuration),
	recOp:           bitsOf(fRecSpanID, fRecOpName, fRecInputs, fRecShape, fRecDType, fRecDevice, fRecDuration, fRecTimestamp, fRecInputStorage),
	recTensor:       bitsOf(fRecSpanID, fRecTensorID, fRecShape, fRecDType, fRecDevice, fRecRequiresGrad),
	recMemory:       bitsOf(fRecTimestamp, fRecTensorID, fRecSpanID, fRecDevice, fRecBytes, fRecAction, fRecShape, fRecDType),
	recDeviceMemory: bitsOf(fRecTimestamp, fRecDevice, fRecUsed, fRecFree),
	recGradient:     bitsOf(fRecEventID, fRecRoot, fRecKey, fRecState),
	recEdge:         bitsOf(fRecFromSpan, fRecToSpan, fRecDuration),
}

var (
	docSpanRequired = bitsOf(fSpanID, fSpanName, fSpanStart, fSpanKind, fSpanMeasured, fSpanClosed, fSpanDuration)
	docRunRequired  = requiredFields[recMeta] &^ bitsOf(fSchema)
)

var (
	metaFieldNames = []string{fSchema: "schema", fRunID: "run_id", fCorrelationID: "correlation_id",
		fEntrypoint: "entrypoint", fPhase: "phase", fTimestamp: "timestamp", fCaptureStep: "capture_step",
		fWarmupSteps: "warmup_steps", fRunDevice: "device", fTimingMode: "timing_mode", fTags: "tags",
		fCandleVersion: "candle_version"}
	spanFieldNames = []string{fSpanID: "id", fSpanName: "name", fSpanStart: "start_ns", fSpanKind: "span_kind",
		fSpanMeasured: "measured", fSpanClosed: "closed", fSpanDuration: "duration_ns", fSpanParent: "parent_id",
		fSpanStep: "step"}
	recFieldNames = []string{fRecSpanID: "span_id", fRecOpName: "op_name", fRecInputs: "inputs", fRecShape: "shape",
		fRecDType: "dtype", fRecDevice: "device", fRecDuration: "duration_ns", fRecTimestamp: "timestamp_ns",
		fRecInputStorage: "input_storage_bytes", fRecTensorID: "tensor_id", fRecRequiresGrad: "requires_grad",
		fRecBytes: "bytes", fRecAction: "action", fRecUsed: "used_bytes", fRecFree: "free_bytes",
		fRecOutput: "output", fRecStorage: "storage_bytes", fRecCategory: "category", fRecReserved: "reserved_bytes",
		fRecCapacity: "capacity_bytes", fRecEventID: "event_id", fRecRoot: "root", fRecKey: "key", fRecState: "state",
		fRecNorm: "norm", fRecFromSpan: "from_span", fRecToSpan: "to_span"}
)

// missingField returns the error for the first required field (in field
// order) of mask that is absent.
func missingField(missing uint32, names []string, doc bool) *ParseError {
	i := bits.TrailingZeros32(missing)
	name := names[i]
	if doc && name == "span_kind" {
		name = "kind"
	}
	return &ParseError{Field: name, Msg: "missing required field"}
}

// member is one name/value pair of a validated JSON object, as offsets
// into the object's text (pointer-free, so collecting members costs no
// write barriers).
type member struct {
	ns, ne int  // the name's bytes, without quotes (when alt < 0)
	vs, ve int  // the raw JSON value
	alt    int  // index of the unescaped name in the alternates; -1: none
	esc    bool // the value may hold a string with escapes (false: none)
}

// name returns the member's unquoted name.
func (m *member) name(obj []byte, alts [][]byte) []byte {
	if m.alt >= 0 {
		return alts[m.alt]
	}
	return obj[m.ns:m.ne]
}

// val returns the member's raw value.
func (m *member) val(obj []byte) []byte { return obj[m.vs:m.ve] }

// recordDecoder decodes the records of a candle-graph JSONL stream one at a
// time, enforcing the per-record rules (see next). The span assembly rules
// (duplicate span ids, unmatched span_end) are left to its callers.
type recordDecoder struct {
	line    int    // 1-based line of the record just returned
	schema  string // the schema of the meta record, once seen
	run     Run    // the run of the meta record
	span    Span   // span_start: ID, ParentID, Name, Kind, Measured, StartNs, Step
	spanEnd struct {
		ID         string
		DurationNs uint64
	}
	op     Op
	tensor Tensor
	mem    MemoryEvent
	devMem DeviceMemorySample
	grad   Gradient
	edge   Edge

	br       *bufio.Reader
	long     []byte // holds a line longer than br's buffer
	scan     lineScanner
	p        valueParser
	members  []member
	metaLine int // line of the meta record; 0 before it

	// the fused path: when "kind" is a line's first member, the other
	// members are parsed as they are scanned, with no member list
	fast    uint8 // fastUnknown, fastOn, fastSkip or fastOff
	kind    recordKind
	seen    uint32
	fastErr *ParseError
	offset  int64 // bytes read so far, up to the end of the line just read
}

// newRecordDecoder returns a decoder of the JSONL stream r (already
// decompressed).
func newRecordDecoder(r io.Reader) *recordDecoder {
	d := &recordDecoder{
		br:      bufio.NewReaderSize(r, 256<<10),
		p:       valueParser{in: newInterner()},
		members: make([]member, 0, 16),
	}
	d.scan.dec = d
	return d
}

var kindName = []byte("kind")

const (
	fastUnknown = iota // no member seen yet
	fastOn             // kind was first and known: members are parsed as scanned
	fastSkip           // kind was first and is skipped: the rest is only validated
	fastOff            // kind was not first: members are collected
)

// emit is called by the scanner for the i-th top-level member m of the
// current line. It returns true when it consumed m (the fused path), false
// when m is to be collected. On a field error it sets fastErr.
func (d *recordDecoder) emit(m *member, i int) bool {
	line := d.scan.b
	switch d.fast {
	case fastOn:
		d.p.esc = m.esc
		name := m.name(line, d.scan.alts)
		if string(name) == "kind" {
			d.fastErr = &ParseError{Line: d.line, Field: "kind", Msg: "duplicate field", Err: ErrInvalidJSON}
			return true
		}
		if perr := d.p.field(d.kind, d, name, m.val(line), &d.seen, false); perr != nil {
			perr.Line, perr.Kind = d.line, d.kind.String()
			d.fastErr = perr
		}
		return true
	case fastSkip:
		return false // collected, to check that no name is given twice
	case fastOff:
		return false
	}
	v := m.val(line)
	if i != 0 || string(m.name(line, d.scan.alts)) != "kind" || v[0] != '"' || m.esc {
		d.fast = fastOff
		return false
	}
	k := lookupRecordKind(v[1 : len(v)-1])
	if k == recNone && d.metaLine != 0 {
		d.fast = fastSkip
		return true
	}
	if d.metaLine == 0 && k != recMeta || k == recMeta && d.metaLine != 0 {
		d.fast = fastOff // the slow path reports it
		return false
	}
	d.fast, d.kind, d.seen = fastOn, k, 0
	resetRecord(k, d)
	d.p.unknown = append(d.p.unknown[:0], kindName)
	return true
}

// next decodes the next record into the field of its kind (run and schema
// for meta, span for span_start, spanEnd, op, tensor, mem, devMem, grad,
// edge) and returns its kind; io.EOF after the last record. Blank lines,
// unknown record kinds and the /7-only kinds are skipped; unknown fields are
// ignored.
//
// It enforces the per-record rules: one JSON object a line; the types and
// ranges of fields (unsigned fields reject negative, fractional and
// overflowing numbers); required fields; enumeration values; meta first and
// once; schema candle-graph/trace/6 or /7; a field given twice is an
// error. null is absent for optional fields and empty for the array and
// object fields (shape, inputs, tags). The /7 names output_dense_bytes and
// input_dense_bytes are read as storage_bytes and input_storage_bytes (in
// either schema; giving both names of one field is an error).
// An absent category is CategoryOther; an op's or tensor's absent
// storage_bytes is filled from shape × dtype when the dtype is known.
// Errors are *ParseError naming the line and record kind; a stream with no
// record at all gives ErrEmptyTrace, one without meta ErrMissingMeta.
//
// Ownership: the record fields are overwritten by the next call, but the
// strings, shape and input slices and the storage_bytes pointers they hold
// are interned or freshly allocated per decoder and never reused, so the
// caller may keep them (copying the struct is enough).
func (d *recordDecoder) next() (recordKind, error) {
	for {
		line, rerr := d.readLine()
		if rerr != nil && rerr != io.EOF {
			at := d.line
			if len(line) == 0 {
				at++ // the error came before any byte of the next line
			}
			return recNone, &ParseError{Line: at, Msg: "read: " + rerr.Error(), Err: rerr}
		}
		if isBlank(line) {
			if rerr == io.EOF {
				return recNone, d.eof()
			}
			continue
		}
		k, err := d.parseLine(line)
		if err != nil {
			return recNone, err
		}
		if k != recNone {
			return k, nil
		}
		if rerr == io.EOF {
			return recNone, d.eof()
		}
	}
}

func (d *recordDecoder) eof() error {
	if d.metaLine == 0 {
		// A record before meta is refused when read: no meta, no record.
		return ErrEmptyTrace
	}
	return io.EOF
}

// readLine returns the next line (with its newline, if any) and counts it.
// It returns io.EOF with the last line when that line has no newline, and
// io.EOF with nil at the end.
func (d *recordDecoder) readLine() ([]byte, error) {
	line, err := d.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		d.long = append(d.long[:0], line...)
		for err == bufio.ErrBufferFull {
			line, err = d.br.ReadSlice('\n')
			d.long = append(d.long, line...)
		}
		line = d.long
	}
	if len(line) > 0 {
		d.line++
		d.offset += int64(len(line))
	}
	return line, err
}

// dupField returns the error for a name given twice in a skipped record,
// among the members collected and "kind" when the fused path consumed it;
// nil when there is none. The record is not read, but the rule that a
// field is given once holds for every record. A record of a few members is
// checked pair by pair, with no allocation: /7 traces can hold many
// skipped device_intervals records.
func (d *recordDecoder) dupField(withKind bool) *ParseError {
	line, alts, ms := d.scan.b, d.scan.alts, d.members
	dup := func(name []byte) *ParseError {
		return &ParseError{Line: d.line, Field: string(name), Msg: "duplicate field", Err: ErrInvalidJSON}
	}
	if len(ms) <= 16 {
		for i := range ms {
			name := ms[i].name(line, alts)
			if withKind && string(name) == "kind" {
				return dup(name)
			}
			for j := range i {
				if bytes.Equal(ms[j].name(line, alts), name) {
					return dup(name)
				}
			}
		}
		return nil
	}
	seen := make(map[string]bool, len(ms)+1)
	seen["kind"] = withKind
	for i := range ms {
		name := ms[i].name(line, alts)
		if seen[string(name)] {
			return dup(name)
		}
		seen[string(name)] = true
	}
	return nil
}

func isBlank(b []byte) bool {
	for _, c := range b {
		if !isSpace(c) {
			return false
		}
	}
	return true
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// parseLine decodes one non-blank line.
func (d *recordDecoder) parseLine(line []byte) (recordKind, error) {
	sc := &d.scan
	sc.b, sc.errMsg, sc.eol, sc.alts = line, "", false, sc.alts[:0]
	d.members = d.members[:0]
	i := skipSpace(line, 0)
	if line[i] != '{' {
		if end := sc.value(i, 0); end < 0 {
			return recNone, d.syntaxError()
		} else {
			return recNone, &ParseError{Line: d.line, Msg: "want a JSON object, got " + describe(line[i:end])}
		}
	}
	d.fast, d.fastErr, d.kind = fastUnknown, nil, recNone
	end := sc.object(i, 1, &d.members)
	if d.fastErr != nil {
		return recNone, d.fastErr
	}
	if end < 0 {
		return recNone, d.syntaxError()
	}
	switch d.fast {
	case fastSkip:
		if !isBlank(line[end:]) {
			return recNone, &ParseError{Line: d.line, Msg: "want one JSON object a line, found more after it at column " +
				strconv.Itoa(skipSpace(line, end)+1), Err: ErrInvalidJSON}
		}
		if perr := d.dupField(true); perr != nil {
			return recNone, perr
		}
		return recNone, nil
	case fastOn:
		if !isBlank(line[end:]) {
			return recNone, &ParseError{Line: d.line, Msg: "want one JSON object a line, found more after it at column " +
				strconv.Itoa(skipSpace(line, end)+1), Err: ErrInvalidJSON}
		}
		if perr := d.p.finish(d.kind, d, d.seen, false); perr != nil {
			perr.Line = d.line
			perr.Kind = d.kind.String()
			return recNone, perr
		}
		if d.kind == recMeta {
			d.metaLine = d.line
		}
		return d.kind, nil
	}
	if !isBlank(line[end:]) {
		return recNone, &ParseError{Line: d.line, Msg: "want one JSON object a line, found more after it at column " +
			strconv.Itoa(skipSpace(line, end)+1), Err: ErrInvalidJSON}
	}
	var kind recordKind
	found := false
	alts := d.scan.alts
	for i := range d.members {
		m := &d.members[i]
		if string(m.name(line, alts)) != "kind" {
			continue
		}
		if found {
			return recNone, &ParseError{Line: d.line, Field: "kind", Msg: "duplicate field", Err: ErrInvalidJSON}
		}
		found = true
		v := m.val(line)
		if v[0] != '"' {
			return recNone, &ParseError{Line: d.line, Field: "kind", Msg: "want a string, got " + describe(v)}
		}
		d.p.esc = m.esc
		s, perr := d.p.unquote("kind", v)
		if perr != nil {
			perr.Line = d.line
			return recNone, perr
		}
		kind = lookupRecordKind(s)
	}
	if !found {
		return recNone, &ParseError{Line: d.line, Field: "kind", Msg: "missing required field"}
	}
	if d.metaLine == 0 && kind != recMeta {
		// Before meta, even a kind that would be skipped: the schema that
		// says which kinds exist is not known yet.
		what := kind.String()
		if kind == recNone {
			what = ""
		}
		return recNone, &ParseError{Line: d.line, Kind: what,
			Msg: "the first record must be meta", Err: ErrMissingMeta}
	}
	if kind == recNone { // unknown or /7-only kind: skipped
		if perr := d.dupField(false); perr != nil {
			return recNone, perr
		}
		return recNone, nil
	}
	if kind == recMeta && d.metaLine != 0 {
		return recNone, &ParseError{Line: d.line, Kind: "meta",
			Msg: "second meta record (the first is on line " + strconv.Itoa(d.metaLine) + ")"}
	}
	if perr := d.p.record(kind, d, line, d.members, alts, false); perr != nil {
		perr.Line = d.line
		perr.Kind = kind.String()
		return recNone, perr
	}
	if kind == recMeta {
		d.metaLine = d.line
	}
	return kind, nil
}

func (d *recordDecoder) syntaxError() *ParseError {
	sc := &d.scan
	perr := &ParseError{Line: d.line, Msg: "invalid JSON at column " + strconv.Itoa(sc.errPos+1) + ": " + sc.errMsg,
		Err: ErrInvalidJSON}
	if sc.eol {
		perr.Msg = "truncated record: the line ends inside a JSON value"
	}
	if d.fast == fastOn { // kind came first: name it
		perr.Kind = d.kind.String()
	}
	return perr
}

// recordFields is where valueParser.record puts a record's values; the
// recordDecoder and the document decoder both provide one.
type recordFields = recordDecoder

// record parses the members of one record of kind k into the matching field
// of r, checks the required fields and, for meta, the schema. doc selects
// the document form (spans with kind, closed and duration_ns; a run without
// schema, for kind recMeta). The returned error has Field, Msg, Err and
// Offset (of the value at fault, relative to the object) set.
func (p *valueParser) record(k recordKind, r *recordFields, obj []byte, ms []member, alts [][]byte, doc bool) *ParseError {
	resetRecord(k, r)
	p.unknown = p.unknown[:0]
	var seen uint32
	for i := range ms {
		m := &ms[i]
		p.esc = m.esc
		if perr := p.field(k, r, m.name(obj, alts), m.val(obj), &seen, doc); perr != nil {
			perr.Offset = int64(m.vs)
			return perr
		}
	}
	return p.finish(k, r, seen, doc)
}

// resetRecord clears the field of r that a record of kind k fills.
func resetRecord(k recordKind, r *recordFields) {
	switch k {
	case recMeta:
		r.run = Run{}
		r.schema = ""
	case recSpanStart:
		r.span = Span{}
	case recSpanEnd:
		r.spanEnd.ID, r.spanEnd.DurationNs = "", 0
	case recOp:
		r.op = Op{}
	case recTensor:
		r.tensor = Tensor{}
	case recMemory:
		r.mem = MemoryEvent{}
	case recDeviceMemory:
		r.devMem = DeviceMemorySample{}
	case recGradient:
		r.grad = Gradient{}
	case recEdge:
		r.edge = Edge{}
	}
}

// field parses one member (p.esc set for it) of a record of kind k into r
// and adds its bit to *seen; a known field given twice is an error.
func (p *valueParser) field(k recordKind, r *recordFields, name, v []byte, seen *uint32, doc bool) *ParseError {
	var bit uint32
	var perr *ParseError
	switch k {
	case recMeta:
		bit, perr = p.metaField(r, name, v, doc)
	case recSpanStart:
		bit, perr = p.spanField(&r.span, name, v, doc)
	case recSpanEnd:
		bit, perr = p.spanEndField(r, name, v)
	case recOp:
		bit, perr = p.opField(&r.op, name, v)
	case recTensor:
		bit, perr = p.tensorField(&r.tensor, name, v)
	case recMemory:
		bit, perr = p.memoryField(&r.mem, name, v)
	case recDeviceMemory:
		bit, perr = p.devMemField(&r.devMem, name, v)
	case recGradient:
		bit, perr = p.gradientField(&r.grad, name, v)
	case recEdge:
		bit, perr = p.edgeField(&r.edge, name, v)
	}
	if perr == nil && *seen&bit != 0 {
		perr = &ParseError{Field: string(name), Msg: "duplicate field", Err: ErrInvalidJSON}
	}
	if perr == nil && bit == 0 && p.ignoredTwice(name) { // an ignored field: only its duplicates matter
		return &ParseError{Field: string(name), Msg: "duplicate field", Err: ErrInvalidJSON}
	}
	*seen |= bit
	return perr
}

// unknownScan is how many ignored field names of a record are compared one
// by one; past it a set takes over, so that a record with thousands of
// unknown fields is read in linear time.
const unknownScan = 16

// ignoredTwice notes name, a field of the current record that is ignored,
// and reports whether the record had it already.
func (p *valueParser) ignoredTwice(name []byte) bool {
	if len(p.unknown) < unknownScan {
		for _, u := range p.unknown {
			if string(u) == string(name) {
				return true
			}
		}
		p.unknown = append(p.unknown, name)
		return false
	}
	if len(p.unknown) == unknownScan { // the set starts with the names so far
		if p.unknownSet == nil {
			p.unknownSet = make(map[string]struct{})
		}
		clear(p.unknownSet)
		for _, u := range p.unknown {
			p.unknownSet[string(u)] = struct{}{}
		}
	}
	if _, dup := p.unknownSet[string(name)]; dup {
		return true
	}
	p.unknownSet[string(name)] = struct{}{}
	p.unknown = append(p.unknown, name)
	return false
}

// finish checks the required fields of a record of kind k given the mask
// of the fields seen, and completes derived values.
func (p *valueParser) finish(k recordKind, r *recordFields, seen uint32, doc bool) *ParseError {
	req := requiredFields[k]
	names := recFieldNames
	switch k {
	case recMeta:
		names = metaFieldNames
		if doc {
			req = docRunRequired
		}
	case recSpanStart, recSpanEnd:
		names = spanFieldNames
		if doc {
			req = docSpanRequired
		}
	}
	if missing := req &^ seen; missing != 0 {
		return missingField(missing, names, doc)
	}
	switch k {
	case recMeta:
		if !doc && r.schema != SchemaV6 && r.schema != SchemaV7 {
			return schemaError(r.schema)
		}
	case recSpanStart:
		if doc && !r.span.Closed && r.span.DurationNs != 0 {
			return &ParseError{Field: "duration_ns", Msg: "want 0 for a span that is not closed, got " +
				strconv.FormatUint(r.span.DurationNs, 10)}
		}
	case recOp:
		if r.op.StorageBytes == nil {
			r.op.StorageBytes = p.derived(r.op.Shape, r.op.DType)
		}
	case recTensor:
		if r.tensor.StorageBytes == nil {
			r.tensor.StorageBytes = p.derived(r.tensor.Shape, r.tensor.DType)
		}
	}
	return nil
}

func schemaError(s string) *ParseError {
	return &ParseError{Field: "schema", Msg: "unsupported schema " + strconv.Quote(s) +
		" (want " + SchemaV6 + " or " + SchemaV7 + ")", Err: ErrUnsupportedSchema}
}

// derived returns a pointer to the dense size of shape × dtype, or nil for
// an unknown dtype.
func (p *valueParser) derived(shape []uint64, dtype string) *uint64 {
	if _, ok := DTypeBits(dtype); !ok {
		return nil
	}
	return p.newU64(DenseBytes(shape, dtype))
}

func (p *valueParser) metaField(r *recordFields, name, v []byte, doc bool) (uint32, *ParseError) {
	var perr *ParseError
	var f int
	run := &r.run
	switch string(name) {
	case "schema":
		if doc {
			return 0, nil
		}
		f = fSchema
		r.schema, perr = p.str("schema", v)
	case "run_id":
		f = fRunID
		run.RunID, perr = p.str("run_id", v)
	case "correlation_id":
		f = fCorrelationID
		run.CorrelationID, perr = p.str("correlation_id", v)
	case "entrypoint":
		f = fEntrypoint
		run.Entrypoint, perr = p.str("entrypoint", v)
	case "phase":
		f = fPhase
		perr = p.enum("phase", v, &run.Phase)
	case "timestamp":
		f = fTimestamp
		run.Timestamp, perr = p.str("timestamp", v)
	case "capture_step":
		f = fCaptureStep
		run.CaptureStep, perr = p.u64("capture_step", v)
	case "warmup_steps":
		f = fWarmupSteps
		run.WarmupSteps, perr = p.u64("warmup_steps", v)
	case "device":
		f = fRunDevice
		run.Device, perr = p.strC(slotDevice, "device", v)
	case "timing_mode":
		f = fTimingMode
		perr = p.enum("timing_mode", v, &run.TimingMode)
	case "tags":
		f = fTags
		run.Tags, perr = p.tags(v)
	case "candle_version":
		f = fCandleVersion
		run.CandleVersion, perr = p.optStr("candle_version", v)
	default:
		return 0, nil
	}
	return 1 << f, perr
}

func (p *valueParser) spanField(s *Span, name, v []byte, doc bool) (uint32, *ParseError) {
	var perr *ParseError
	var f int
	switch string(name) {
	case "id":
		f = fSpanID
		s.ID, perr = p.str("id", v)
	case "parent_id":
		f = fSpanParent
		s.ParentID, perr = p.optStr("parent_id", v)
	case "name":
		f = fSpanName
		s.Name, perr = p.str("name", v)
	case "start_ns":
		f = fSpanStart
		s.StartNs, perr = p.u64("start_ns", v)
	case "measured":
		f = fSpanMeasured
		s.Measured, perr = p.boolean("measured", v)
	case "step":
		f = fSpanStep
		if v[0] != 'n' { // null: absent
			perr = p.enum("step", v, &s.Step)
		}
	case "span_kind":
		if doc {
			return 0, nil
		}
		f = fSpanKind
		perr = p.enum("span_kind", v, &s.Kind)
	case "kind":
		if !doc {
			return 0, nil // the record discriminator
		}
		f = fSpanKind
		perr = p.enum("kind", v, &s.Kind)
	case "closed":
		if !doc {
			return 0, nil
		}
		f = fSpanClosed
		s.Closed, perr = p.boolean("closed", v)
	case "duration_ns":
		if !doc {
			return 0, nil
		}
		f = fSpanDuration
		s.DurationNs, perr = p.u64("duration_ns", v)
	default:
		return 0, nil
	}
	return 1 << f, perr
}

func (p *valueParser) spanEndField(r *recordFields, name, v []byte) (uint32, *ParseError) {
	var perr *ParseError
	var f int
	switch string(name) {
	case "id":
		f = fSpanID
		r.spanEnd.ID, perr = p.str("id", v)
	case "duration_ns":
		f = fSpanDuration
		r.spanEnd.DurationNs, perr = p.u64("duration_ns", v)
	default:
		return 0, nil
	}
	return 1 << f, perr
}

func (p *valueParser) opField(o *Op, name, v []byte) (uint32, *ParseError) {
	var perr *ParseError
	var f int
	switch string(name) {
	case "span_id":
		f = fRecSpanID
		o.SpanID, perr = p.strC(slotSpanID, "span_id", v)
	case "op_name":
		f = fRecOpName
		o.OpName, perr = p.strC(slotOpName, "op_name", v)
	case "inputs":
		f = fRecInputs
		o.Inputs, perr = p.strList("inputs", v)
	case "output":
		f = fRecOutput
		o.Output, perr = p.optStr("output", v)
	case "shape":
		f = fRecShape
		o.Shape, perr = p.shape("shape", v)
	case "dtype":
		f = fRecDType
		o.DType, perr = p.strC(slotDType, "dtype", v)
	case "device":
		f = fRecDevice
		o.Device, perr = p.strC(slotDevice, "device", v)
	case "duration_ns":
		f = fRecDuration
		o.DurationNs, perr = p.u64("duration_ns", v)
	case "timestamp_ns":
		f = fRecTimestamp
		o.TimestampNs, perr = p.u64("timestamp_ns", v)
	case "storage_bytes", "output_dense_bytes":
		f = fRecStorage
		o.StorageBytes, perr = p.optU64(name, v)
	case "input_storage_bytes":
		f = fRecInputStorage
		o.InputStorageBytes, perr = p.u64("input_storage_bytes", v)
	case "input_dense_bytes":
		f = fRecInputStorage
		o.InputStorageBytes, perr = p.u64("input_dense_bytes", v)
	default:
		return 0, nil
	}
	return 1 << f, perr
}

func (p *valueParser) tensorField(t *Tensor, name, v []byte) (uint32, *ParseError) {
	var perr *ParseError
	var f int
	switch string(name) {
	case "span_id":
		f = fRecSpanID
		t.SpanID, perr = p.strC(slotSpanID, "span_id", v)
	case "tensor_id":
		f = fRecTensorID
		t.TensorID, perr = p.str("tensor_id", v)
	case "shape":
		f = fRecShape
		t.Shape, perr = p.shape("shape", v)
	case "dtype":
		f = fRecDType
		t.DType, perr = p.strC(slotDType, "dtype", v)
	case "device":
		f = fRecDevice
		t.Device, perr = p.strC(slotDevice, "device", v)
	case "requires_grad":
		f = fRecRequiresGrad
		t.RequiresGrad, perr = p.boolean("requires_grad", v)
	case "storage_bytes", "output_dense_bytes":
		f = fRecStorage
		t.StorageBytes, perr = p.optU64(name, v)
	case "category":
		f = fRecCategory
		perr = p.category(v, &t.Category)
	default:
		return 0, nil
	}
	return 1 << f, perr
}

func (p *valueParser) memoryField(e *MemoryEvent, name, v []byte) (uint32, *ParseError) {
	var perr *ParseError
	var f int
	switch string(name) {
	case "timestamp_ns":
		f = fRecTimestamp
		e.TimestampNs, perr = p.u64("timestamp_ns", v)
	case "tensor_id":
		f = fRecTensorID
		e.TensorID, perr = p.str("tensor_id", v)
	case "span_id":
		f = fRecSpanID
		e.SpanID, perr = p.strC(slotSpanID, "span_id", v)
	case "op_name":
		f = fRecOpName
		if v[0] != 'n' {
			e.OpName, perr = p.strC(slotOpName, "op_name", v)
		}
	case "device":
		f = fRecDevice
		e.Device, perr = p.strC(slotDevice, "device", v)
	case "bytes":
		f = fRecBytes
		e.Bytes, perr = p.u64("bytes", v)
	case "action":
		f = fRecAction
		perr = p.enum("action", v, &e.Action)
	case "shape":
		f = fRecShape
		e.Shape, perr = p.shape("shape", v)
	case "dtype":
		f = fRecDType
		e.DType, perr = p.strC(slotDType, "dtype", v)
	case "category":
		f = fRecCategory
		perr = p.category(v, &e.Category)
	default:
		return 0, nil
	}
	return 1 << f, perr
}

func (p *valueParser) devMemField(s *DeviceMemorySample, name, v []byte) (uint32, *ParseError) {
	var perr *ParseError
	var f int
	switch string(name) {
	case "timestamp_ns":
		f = fRecTimestamp
		s.TimestampNs, perr = p.u64("timestamp_ns", v)
	case "device":
		f = fRecDevice
		s.Device, perr = p.strC(slotDevice, "device", v)
	case "used_bytes":
		f = fRecUsed
		s.UsedBytes, perr = p.u64("used_bytes", v)
	case "free_bytes":
		f = fRecFree
		s.FreeBytes, perr = p.u64("free_bytes", v)
	case "reserved_bytes":
		f = fRecReserved
		s.ReservedBytes, perr = p.optU64(name, v)
	case "capacity_bytes":
		f = fRecCapacity
		s.CapacityBytes, perr = p.optU64(name, v)
	default:
		return 0, nil
	}
	return 1 << f, perr
}

func (p *valueParser) gradientField(g *Gradient, name, v []byte) (uint32, *ParseError) {
	var perr *ParseError
	var f int
	switch string(name) {
	case "event_id":
		f = fRecEventID
		g.EventID, perr = p.str("event_id", v)
	case "root":
		f = fRecRoot
		g.Root, perr = p.str("root", v)
	case "key":
		f = fRecKey
		g.Key, perr = p.str("key", v)
	case "state":
		f = fRecState
		perr = p.enum("state", v, &g.State)
	case "norm":
		f = fRecNorm
		g.Norm, perr = p.optFloat("norm", v)
	default:
		return 0, nil
	}
	return 1 << f, perr
}

func (p *valueParser) edgeField(e *Edge, name, v []byte) (uint32, *ParseError) {
	var perr *ParseError
	var f int
	switch string(name) {
	case "from_span":
		f = fRecFromSpan
		e.FromSpan, perr = p.str("from_span", v)
	case "to_span":
		f = fRecToSpan
		e.ToSpan, perr = p.str("to_span", v)
	case "duration_ns":
		f = fRecDuration
		e.DurationNs, perr = p.u64("duration_ns", v)
	default:
		return 0, nil
	}
	return 1 << f, perr
}

// valueParser turns raw JSON values (already validated by jsontext) into
// field values, interning strings and shapes.
type valueParser struct {
	in      *interner
	scratch []byte
	slab    []uint64 // backing store of storage_bytes-like pointers
	last    [numSlots]string
	esc     bool     // the current value may hold escapes; false: unquote needs no check
	unknown [][]byte // names of the ignored fields of the current record
	// unknownSet holds them too when there are more than unknownScan.
	unknownSet map[string]struct{}
}

// newU64 returns a pointer to a fresh uint64 holding v, carved from a slab
// so that a million ops do not cost a million allocations.
func (p *valueParser) newU64(v uint64) *uint64 {
	if len(p.slab) == cap(p.slab) {
		p.slab = make([]uint64, 0, 512)
	}
	p.slab = append(p.slab, v)
	return &p.slab[len(p.slab)-1]
}

// describe names a raw JSON value for an error message: strings and numbers
// as written (shortened), other kinds by name.
func describe(v []byte) string {
	if len(v) == 0 {
		return "nothing"
	}
	const maxLen = 40
	short := func(b []byte) string {
		if len(b) > maxLen {
			return string(b[:maxLen]) + "..."
		}
		return string(b)
	}
	switch v[0] {
	case '"':
		return "string " + short(v)
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "boolean " + string(v)
	case 'n':
		return "null"
	}
	return short(v)
}

func typeError(field, want string, v []byte) *ParseError {
	return &ParseError{Field: field, Msg: "want " + want + ", got " + describe(v)}
}

// rawString returns the unquoted text of the JSON string v, interned. The
// bytes of an escape-free string are looked up without copying.
func (p *valueParser) rawString(field string, v []byte) (string, *ParseError) {
	b, perr := p.unquote(field, v)
	if perr != nil {
		return "", perr
	}
	return p.in.bytes(b), nil
}

// unquote returns the unquoted bytes of the JSON string v; they alias v or
// p.scratch and are valid until the next call.
func (p *valueParser) unquote(field string, v []byte) ([]byte, *ParseError) {
	inner := v[1 : len(v)-1]
	if !p.esc || bytes.IndexByte(inner, '\\') < 0 {
		return inner, nil
	}
	var err error
	p.scratch, err = jsontext.AppendUnquote(p.scratch[:0], v)
	if err != nil {
		return nil, &ParseError{Field: field, Msg: "invalid string: " + err.Error(), Err: err}
	}
	return p.scratch, nil
}

func (p *valueParser) str(field string, v []byte) (string, *ParseError) {
	if v[0] != '"' {
		return "", typeError(field, "a string", v)
	}
	return p.rawString(field, v)
}

// Slots of the last-value cache of fields whose value usually repeats from
// one record to the next.
const (
	slotDevice = iota
	slotDType
	slotSpanID
	slotOpName
	numSlots
)

// strC is str with a last-value cache: a value equal to the previous one of
// its slot costs a comparison instead of a map lookup.
func (p *valueParser) strC(slot int, field string, v []byte) (string, *ParseError) {
	if len(v) >= 2 && v[0] == '"' && string(v[1:len(v)-1]) == p.last[slot] && (!p.esc || bytes.IndexByte(v, '\\') < 0) {
		return p.last[slot], nil
	}
	s, perr := p.str(field, v)
	if perr == nil {
		p.last[slot] = s
	}
	return s, perr
}

// optStr is str for an optional field: null is absent ("").
func (p *valueParser) optStr(field string, v []byte) (string, *ParseError) {
	if v[0] == 'n' {
		return "", nil
	}
	return p.str(field, v)
}

func (p *valueParser) boolean(field string, v []byte) (bool, *ParseError) {
	switch v[0] {
	case 't':
		return true, nil
	case 'f':
		return false, nil
	}
	return false, typeError(field, "a boolean", v)
}

// u64 parses an unsigned integer written as plain digits; negative,
// fractional, exponent forms and values above the maximum uint64 are errors.
func (p *valueParser) u64(field string, v []byte) (uint64, *ParseError) {
	n, ok := parseUint(v)
	if ok {
		return n, nil
	}
	return 0, uintError(field, v)
}

func parseUint(v []byte) (uint64, bool) {
	if len(v) == 0 || len(v) > 20 {
		return 0, false
	}
	var n uint64
	for _, c := range v {
		d := uint64(c) - '0'
		if d > 9 {
			return 0, false
		}
		hi, lo := bits.Mul64(n, 10)
		lo, carry := bits.Add64(lo, d, 0)
		if hi != 0 || carry != 0 {
			return 0, false
		}
		n = lo
	}
	return n, true
}

func uintError(field string, v []byte) *ParseError {
	switch {
	case len(v) == 0 || v[0] != '-' && (v[0] < '0' || v[0] > '9'):
		return typeError(field, "an unsigned integer", v)
	case v[0] == '-':
		return &ParseError{Field: field, Msg: "want an unsigned integer, got negative number " + describe(v)}
	case bytes.ContainsAny(v, ".eE"):
		return &ParseError{Field: field, Msg: "want an unsigned integer, got non-integer number " + describe(v)}
	}
	return &ParseError{Field: field, Msg: "number " + describe(v) + " overflows uint64"}
}

// optU64 parses an optional unsigned integer: null is absent (nil).
func (p *valueParser) optU64(name []byte, v []byte) (*uint64, *ParseError) {
	if v[0] == 'n' {
		return nil, nil
	}
	n, ok := parseUint(v)
	if !ok {
		return nil, uintError(string(name), v)
	}
	return p.newU64(n), nil
}

// optFloat parses an optional finite number: null is absent (nil).
func (p *valueParser) optFloat(field string, v []byte) (*float64, *ParseError) {
	if v[0] == 'n' {
		return nil, nil
	}
	if v[0] != '-' && (v[0] < '0' || v[0] > '9') {
		return nil, typeError(field, "a number", v)
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil || math.IsInf(f, 0) {
		return nil, &ParseError{Field: field, Msg: "number " + describe(v) + " is out of the float64 range", Err: err}
	}
	return &f, nil
}

// textUnmarshaler is an enumeration of the model.
type textUnmarshaler interface{ UnmarshalText([]byte) error }

// enum reads a JSON string into an enumeration; an unknown name gives an
// error wrapping the *EnumError, whose text names the value and the allowed
// set.
func (p *valueParser) enum(field string, v []byte, dst textUnmarshaler) *ParseError {
	if v[0] != '"' {
		return typeError(field, "a string", v)
	}
	b, perr := p.unquote(field, v)
	if perr != nil {
		return perr
	}
	if err := dst.UnmarshalText(b); err != nil {
		return &ParseError{Msg: err.Error(), Err: err}
	}
	return nil
}

// category reads an optional category: null, "" or absent is CategoryOther.
func (p *valueParser) category(v []byte, dst *Category) *ParseError {
	if v[0] == 'n' {
		*dst = CategoryOther
		return nil
	}
	return p.enum("category", v, dst)
}

// shape reads an array of unsigned integers, interned by its text; null and
// [] are nil.
func (p *valueParser) shape(field string, v []byte) ([]uint64, *ParseError) {
	if v[0] == 'n' {
		return nil, nil
	}
	if v[0] != '[' {
		return nil, typeError(field, "an array of unsigned integers", v)
	}
	s, err := p.in.shape(v, parseShape)
	if err != nil {
		perr := err.(*ParseError)
		perr.Field = field
		return nil, perr
	}
	return s, nil
}

// parseShape parses a validated JSON array of unsigned integers; [] is nil.
func parseShape(v []byte) ([]uint64, error) {
	var out []uint64
	n := 0
	for i := skipSpace(v, 1); v[i] != ']'; n++ {
		j := skipValue(v, i)
		x, ok := parseUint(v[i:j])
		if !ok {
			perr := uintError("", v[i:j])
			perr.Msg = "element " + strconv.Itoa(n) + ": " + perr.Msg
			return nil, perr
		}
		if out == nil {
			out = make([]uint64, 0, countElems(v))
		}
		out = append(out, x)
		i = skipSpace(v, j)
		if v[i] == ',' {
			i = skipSpace(v, i+1)
		}
	}
	return out, nil
}

// countElems returns an upper bound of the elements of a validated flat array.
func countElems(v []byte) int { return bytes.Count(v, []byte{','}) + 1 }

// strList reads an array of strings; null and [] are nil.
func (p *valueParser) strList(field string, v []byte) ([]string, *ParseError) {
	if v[0] == 'n' {
		return nil, nil
	}
	if v[0] != '[' {
		return nil, typeError(field, "an array of strings", v)
	}
	var out []string
	n := 0
	for i := skipSpace(v, 1); v[i] != ']'; n++ {
		j := skipValue(v, i)
		if v[i] != '"' {
			return nil, typeError(field+"["+strconv.Itoa(n)+"]", "a string", v[i:j])
		}
		s, perr := p.rawString(field, v[i:j])
		if perr != nil {
			return nil, perr
		}
		out = append(out, s)
		i = skipSpace(v, j)
		if v[i] == ',' {
			i = skipSpace(v, i+1)
		}
	}
	return out, nil
}

// tags reads an object of string values; null and {} are nil.
func (p *valueParser) tags(v []byte) (map[string]string, *ParseError) {
	if v[0] == 'n' {
		return nil, nil
	}
	if v[0] != '{' {
		return nil, typeError("tags", "an object of strings", v)
	}
	var alts [][]byte
	ms := splitObject(v, nil, &alts)
	if len(ms) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(ms))
	for _, m := range ms {
		name, val := m.name(v, alts), m.val(v)
		if val[0] != '"' {
			return nil, typeError("tags."+string(name), "a string", val)
		}
		s, perr := p.rawString("tags", val)
		if perr != nil {
			return nil, perr
		}
		k := p.in.bytes(name)
		if _, dup := out[k]; dup {
			return nil, &ParseError{Field: "tags." + k, Msg: "duplicate field", Err: ErrInvalidJSON}
		}
		out[k] = s
	}
	return out, nil
}

// skipSpace returns the index of the first non-space byte of b at or after i.
func skipSpace(b []byte, i int) int {
	if i < len(b) && b[i] > ' ' {
		return i
	}
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// skipValue returns the index just after the JSON value starting at b[i].
// b must be valid JSON (as checked by jsontext).
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// skipString returns the index just after the JSON string starting at b[i].
func skipString(b []byte, i int) int {
	i++
	for {
		j := bytes.IndexByte(b[i:], '"')
		i += j
		// count the backslashes before the quote
		k := i - 1
		for b[k] == '\\' {
			k--
		}
		if (i-1-k)%2 == 0 {
			return i + 1
		}
		i++
	}
}

// splitObject appends the members of the validated JSON object obj to dst;
// names with escapes are unquoted into *alts.
func splitObject(obj []byte, dst []member, alts *[][]byte) []member {
	i := skipSpace(obj, 1)
	for obj[i] != '}' {
		j := skipString(obj, i)
		m := member{ns: i + 1, ne: j - 1, alt: -1, esc: true}
		if bytes.IndexByte(obj[i+1:j-1], '\\') >= 0 {
			name, _ := jsontext.AppendUnquote(nil, obj[i:j])
			m.alt = len(*alts)
			*alts = append(*alts, name)
		}
		i = skipSpace(obj, j)
		i = skipSpace(obj, i+1) // past ':'
		j = skipValue(obj, i)
		m.vs, m.ve = i, j
		dst = append(dst, m)
		i = skipSpace(obj, j)
		if obj[i] == ',' {
			i = skipSpace(obj, i+1)
		}
	}
	return dst
}

// maxDepth bounds the nesting of arrays and objects in a record, as
// jsontext does by default.
const maxDepth = 10000

// lineScanner validates one line of JSON (RFC 8259, strings valid UTF-8,
// as jsontext accepts it) and splits its top-level object into members in
// the same pass. Duplicate top-level names are caught by the record parsers
// (valueParser.field), duplicate tags keys by valueParser.tags; duplicate
// names inside the nested values of ignored fields are not checked (they
// are ignored). FuzzLineScanner checks it against jsontext.
type lineScanner struct {
	b       []byte
	scratch []byte
	errPos  int            // byte index of the first error
	errMsg  string         // "" when none
	eol     bool           // the error is the line ending inside a value
	escapes int            // strings with escapes seen so far
	alts    [][]byte       // unescaped member names of names with escapes
	dec     *recordDecoder // when set, top-level members go to dec.emit first
}

func (s *lineScanner) fail(i int, msg string) int {
	if s.errMsg == "" {
		s.errPos, s.errMsg = i, msg
	}
	return -1
}

func (s *lineScanner) end(i int) int {
	s.eol = true
	return s.fail(i, "the line ends inside a JSON value")
}

func charDesc(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return strconv.QuoteRune(rune(c))
	}
	return "byte 0x" + strconv.FormatUint(uint64(c), 16)
}

// value returns the index just after the JSON value at b[i], or -1.
func (s *lineScanner) value(i, depth int) int {
	b := s.b
	if i >= len(b) {
		return s.end(i)
	}
	switch c := b[i]; {
	case c == '"':
		return s.str(i)
	case c == '{':
		return s.object(i, depth+1, nil)
	case c == '[':
		return s.array(i, depth+1)
	case c == 't':
		return s.lit(i, "true")
	case c == 'f':
		return s.lit(i, "false")
	case c == 'n':
		return s.lit(i, "null")
	case c == '-' || '0' <= c && c <= '9':
		return s.num(i)
	default:
		return s.fail(i, "invalid character "+charDesc(c)+" at the start of a value")
	}
}

func (s *lineScanner) lit(i int, lit string) int {
	b := s.b
	for k := 0; k < len(lit); k++ {
		if i+k >= len(b) {
			return s.end(i + k)
		}
		if b[i+k] != lit[k] {
			return s.fail(i+k, "invalid character "+charDesc(b[i+k])+" in literal "+lit)
		}
	}
	return i + len(lit)
}

func (s *lineScanner) digits(j int) (int, bool) {
	b := s.b
	k := j
	for k < len(b) && '0' <= b[k] && b[k] <= '9' {
		k++
	}
	return k, k > j
}

func (s *lineScanner) num(i int) int {
	b := s.b
	j := i
	if b[j] == '-' {
		j++
	}
	if j >= len(b) {
		return s.end(j)
	}
	switch {
	case b[j] == '0':
		j++
	case '1' <= b[j] && b[j] <= '9':
		j, _ = s.digits(j)
	default:
		return s.fail(j, "invalid character "+charDesc(b[j])+" in number")
	}
	if j < len(b) && b[j] == '.' {
		var ok bool
		if j, ok = s.digits(j + 1); !ok {
			if j >= len(b) {
				return s.end(j)
			}
			return s.fail(j, "invalid character "+charDesc(b[j])+" in number (want a digit after '.')")
		}
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		var ok bool
		if j, ok = s.digits(j); !ok {
			if j >= len(b) {
				return s.end(j)
			}
			return s.fail(j, "invalid character "+charDesc(b[j])+" in number (want a digit in the exponent)")
		}
	}
	return j
}

// strPlain marks the bytes a string can hold with no further check: not
// '"', not '\\', not a control character, ASCII.
var strPlain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// str validates the string at b[i] and returns the index after it.
func (s *lineScanner) str(i int) int {
	b := s.b
	j := i + 1
	esc, high := false, false
	for {
		for j < len(b) && strPlain[b[j]] {
			j++
		}
		if j >= len(b) {
			return s.end(j)
		}
		c := b[j]
		if c == '"' {
			break
		}
		switch {
		case c == '\\':
			esc = true
			j += 2
			continue
		case c == '\n' || c == '\r' && (j+1 == len(b) || b[j+1] == '\n'):
			return s.end(j) // the line ends inside the string
		case c < 0x20:
			return s.fail(j, "invalid control character "+charDesc(c)+" in string")
		}
		high = true // c >= 0x80
		j++
	}
	end := j + 1
	if esc {
		s.escapes++
		var err error
		if s.scratch, err = jsontext.AppendUnquote(s.scratch[:0], b[i:end]); err != nil {
			return s.fail(i, "invalid string: "+strings.TrimPrefix(err.Error(), "jsontext: "))
		}
	} else if high && !utf8.Valid(b[i+1:j]) {
		return s.fail(i, "invalid UTF-8 in string")
	}
	return end
}

func (s *lineScanner) array(i, depth int) int {
	if depth > maxDepth {
		return s.fail(i, "exceeded the maximum nesting depth")
	}
	b := s.b
	j := skipSpace(b, i+1)
	if j >= len(b) {
		return s.end(j)
	}
	if b[j] == ']' {
		return j + 1
	}
	for {
		if j = s.value(j, depth); j < 0 {
			return -1
		}
		if j = skipSpace(b, j); j >= len(b) {
			return s.end(j)
		}
		switch b[j] {
		case ',':
			j = skipSpace(b, j+1)
		case ']':
			return j + 1
		default:
			return s.fail(j, "invalid character "+charDesc(b[j])+" after an array element (want ',' or ']')")
		}
	}
}

// object validates the object at b[i]; when dst is not nil, it appends the
// members to *dst.
func (s *lineScanner) object(i, depth int, dst *[]member) int {
	if depth > maxDepth {
		return s.fail(i, "exceeded the maximum nesting depth")
	}
	b := s.b
	j := skipSpace(b, i+1)
	if j >= len(b) {
		return s.end(j)
	}
	if b[j] == '}' {
		return j + 1
	}
	for {
		if b[j] != '"' {
			return s.fail(j, "invalid character "+charDesc(b[j])+" where an object name belongs")
		}
		ns, esc0 := j, s.escapes
		if j = s.str(j); j < 0 {
			return -1
		}
		ne, nameEsc := j, s.escapes != esc0
		if j = skipSpace(b, j); j >= len(b) {
			return s.end(j)
		}
		if b[j] != ':' {
			return s.fail(j, "invalid character "+charDesc(b[j])+" after an object name (want ':')")
		}
		vs, esc1 := skipSpace(b, j+1), s.escapes
		if j = s.value(vs, depth); j < 0 {
			return -1
		}
		if dst != nil {
			m := member{ns: ns + 1, ne: ne - 1, vs: vs, ve: j, alt: -1, esc: s.escapes != esc1}
			if nameEsc {
				name, _ := jsontext.AppendUnquote(nil, b[ns:ne])
				m.alt = len(s.alts)
				s.alts = append(s.alts, name)
			}
			if s.dec == nil || !s.dec.emit(&m, len(*dst)) {
				*dst = append(*dst, m)
			} else if s.dec.fastErr != nil {
				return -1
			}
		}
		if j = skipSpace(b, j); j >= len(b) {
			return s.end(j)
		}
		switch b[j] {
		case ',':
			if j = skipSpace(b, j+1); j >= len(b) {
				return s.end(j)
			}
		case '}':
			return j + 1
		default:
			return s.fail(j, "invalid character "+charDesc(b[j])+" after an object value (want ',' or '}')")
		}
	}
}
