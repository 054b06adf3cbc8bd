// jsonl.go holds the record decoder of the candle-graph JSONL stream, shared by ReadTrace and AnalyzeStream.

package tracemem

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/bits"
	"strconv"
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
// are listed in requiredFields and named in metaFieldNames, spanFieldNames
// and recFieldNames (for errors).
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
	if name == "input_storage_bytes" { // a /7 trace knows it by its new name
		return &ParseError{Field: name, Msg: "missing required field (or input_dense_bytes, its name since schema /7)"}
	}
	return &ParseError{Field: name, Msg: "missing required field"}
}

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
	lead     int    // white space dropped from the start of that line (see readLine)
	scan     lineScanner
	p        valueParser
	members  []member
	metaLine int  // line of the meta record; 0 before it
	lastLine bool // the line being parsed ends the input (no newline)

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
	d := newLineDecoder()
	d.br = bufio.NewReaderSize(r, lineBuffer)
	return d
}

// newLineDecoder returns a decoder with no reader, whose caller gives it
// each line (parseLine) and counts them in line.
func newLineDecoder() *recordDecoder {
	d := &recordDecoder{
		p:       valueParser{in: newInterner()},
		members: make([]member, 0, 16),
	}
	d.scan.dec = d
	return d
}

// lineBuffer is the size of the decoder's buffer; longer lines are copied
// aside (see readLine). Tests lower it to take that path on short lines.
var lineBuffer = 256 << 10

var kindName = []byte("kind")

var bom = []byte("\uFEFF") // a byte-order mark in UTF-8

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
		name := m.name(line, d.scan.alts)
		if string(name) == "kind" {
			// Before any field error, as the other path checks kind first.
			d.fastErr = &ParseError{Line: d.line, Offset: int64(d.lead + m.vs), Field: "kind", Msg: "duplicate field", Err: ErrInvalidJSON}
			return true
		}
		if d.fastErr != nil {
			return true // the first error stands; the rest of the line is only validated
		}
		d.p.esc = m.esc
		if perr := d.p.field(d.kind, d, name, m.val(line), &d.seen, false); perr != nil {
			perr.Line, perr.Kind = d.line, d.kind.String()
			perr.Offset += int64(d.lead + m.vs) // see valueParser.record
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
	if d.metaLine == 0 || k == recMeta {
		// The slow path: it reports a record before meta and a second
		// meta, and checks meta's schema before its other fields.
		d.fast = fastOff
		return false
	}
	d.fast, d.kind, d.seen = fastOn, k, 0
	resetRecord(k, d)
	d.p.unknown, d.p.renamed = append(d.p.unknown[:0], kindName), 0
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
			if len(line) == 0 && d.lead == 0 {
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
		d.lastLine = rerr == io.EOF
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
// io.EOF with nil at the end. A line longer than br's buffer is copied
// aside without the buffers of white space it starts with (d.lead counts
// them, for the columns of errors): a line of white space alone, which a
// small gzip stream can make gigabytes long, is never held.
func (d *recordDecoder) readLine() ([]byte, error) {
	d.lead = 0
	line, err := d.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		d.long = d.long[:0]
		for {
			if len(d.long) == 0 && isBlank(line) {
				d.lead += len(line)
			} else {
				d.long = append(d.long, line...)
			}
			if err != bufio.ErrBufferFull {
				break
			}
			line, err = d.br.ReadSlice('\n')
		}
		line = d.long
	}
	if n := d.lead + len(line); n > 0 {
		d.line++
		d.offset += int64(n)
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
	dup := func(m *member) *ParseError {
		return &ParseError{Line: d.line, Offset: int64(d.lead + m.vs), Field: string(m.name(line, alts)), Msg: "duplicate field", Err: ErrInvalidJSON}
	}
	if withKind {
		// A second kind comes before any other duplicate, wherever it
		// sits, as on the other path.
		for i := range ms {
			if name := ms[i].name(line, alts); string(name) == "kind" {
				return dup(&ms[i])
			}
		}
	}
	if len(ms) <= 16 {
		for i := range ms {
			name := ms[i].name(line, alts)
			for j := range i {
				if bytes.Equal(ms[j].name(line, alts), name) {
					return dup(&ms[i])
				}
			}
		}
		return nil
	}
	seen := make(map[string]bool, len(ms))
	for i := range ms {
		name := ms[i].name(line, alts)
		if seen[string(name)] {
			return dup(&ms[i])
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
	d.fast, d.fastErr, d.kind = fastUnknown, nil, recNone
	i := skipSpace(line, 0)
	if bytes.HasPrefix(line[i:], bom) {
		// Editors on Windows write one, and files joined with cat then
		// hold one at a line's start; JSON has none.
		return recNone, &ParseError{Line: d.line, Offset: int64(d.lead + i), Msg: "invalid JSON at column " +
			strconv.Itoa(d.lead+i+1) + ": a byte-order mark (U+FEFF) before the record; remove it", Err: ErrInvalidJSON}
	}
	if line[i] != '{' {
		if end := sc.value(i, 0); end < 0 {
			return recNone, d.syntaxError()
		} else {
			return recNone, &ParseError{Line: d.line, Offset: int64(d.lead + i), Msg: "want a JSON object, got " + describe(line[i:end]), Err: ErrInvalidJSON}
		}
	}
	end := sc.object(i, 1, &d.members)
	if end < 0 {
		return recNone, d.syntaxError()
	}
	switch d.fast {
	case fastSkip:
		if !isBlank(line[end:]) {
			return recNone, &ParseError{Line: d.line, Offset: d.col(line, end), Msg: "want one JSON object a line, found more after it at column " +
				strconv.FormatInt(d.col(line, end)+1, 10), Err: ErrInvalidJSON}
		}
		if perr := d.dupField(true); perr != nil {
			return recNone, perr
		}
		return recNone, nil
	case fastOn:
		if !isBlank(line[end:]) {
			// Named by its kind, as syntaxError does, unless kind is given
			// twice: then it names none, as on the other path.
			what := d.kind.String()
			if d.fastErr != nil && d.fastErr.Field == "kind" {
				what = ""
			}
			return recNone, &ParseError{Line: d.line, Kind: what, Offset: d.col(line, end), Msg: "want one JSON object a line, found more after it at column " +
				strconv.FormatInt(d.col(line, end)+1, 10), Err: ErrInvalidJSON}
		}
		if d.fastErr != nil {
			return recNone, d.fastErr
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
	// The kind's own errors wait for the check of the rest of the line,
	// which the fused path makes first; a second kind outranks a bad first
	// one, as there.
	var kind recordKind
	var kindErr *ParseError
	found := false
	alts := d.scan.alts
	for i := range d.members {
		m := &d.members[i]
		if string(m.name(line, alts)) != "kind" {
			continue
		}
		if found {
			kind, kindErr = recNone, &ParseError{Line: d.line, Offset: int64(d.lead + m.vs), Field: "kind", Msg: "duplicate field", Err: ErrInvalidJSON}
			break
		}
		found = true
		v := m.val(line)
		if v[0] != '"' {
			kindErr = &ParseError{Line: d.line, Offset: int64(d.lead + m.vs), Field: "kind", Msg: "want a string, got " + describe(v)}
			continue
		}
		d.p.esc = m.esc
		s, perr := d.p.unquote("kind", v)
		if perr != nil {
			perr.Line, perr.Offset = d.line, int64(d.lead+m.vs)
			kindErr = perr
			continue
		}
		kind = lookupRecordKind(s)
	}
	if !isBlank(line[end:]) { // named by its kind when it has a known one
		what := kind.String()
		if kind == recNone {
			what = ""
		}
		return recNone, &ParseError{Line: d.line, Kind: what, Offset: d.col(line, end), Msg: "want one JSON object a line, found more after it at column " +
			strconv.FormatInt(d.col(line, end)+1, 10), Err: ErrInvalidJSON}
	}
	if kindErr != nil {
		return recNone, kindErr
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
		if perr.Offset != 0 { // the value at fault, relative to line
			perr.Offset += int64(d.lead)
		}
		return recNone, perr
	}
	if kind == recMeta {
		d.metaLine = d.line
	}
	return kind, nil
}

func (d *recordDecoder) syntaxError() *ParseError {
	sc := &d.scan
	perr := &ParseError{Line: d.line, Offset: int64(d.lead + sc.errPos),
		Msg: "invalid JSON at column " + strconv.Itoa(d.lead+sc.errPos+1) + ": " + sc.errMsg, Err: ErrInvalidJSON}
	if sc.eol {
		// The line's end: before its LF or CRLF, as with neither.
		perr.Offset = int64(d.lead + len(bytes.TrimSuffix(bytes.TrimSuffix(sc.b, []byte("\n")), []byte("\r"))))
		perr.Msg = "truncated record: the line ends inside a JSON value"
		if d.lastLine {
			// The input is cut short, as the document and Chrome forms
			// say with io.ErrUnexpectedEOF.
			perr.Msg = "truncated record: the input ends inside a JSON value"
			perr.Err = fmt.Errorf("%w: %w", ErrInvalidJSON, io.ErrUnexpectedEOF)
		}
	}
	if d.fast == fastOn && (d.fastErr == nil || d.fastErr.Field != "kind") {
		// Kind came first: name it, unless it is given twice (as after
		// the object).
		perr.Kind = d.kind.String()
	}
	return perr
}

// col returns the 0-based byte offset in the current line of the first
// byte after line[end] that is not white space (d.lead added back).
func (d *recordDecoder) col(line []byte, end int) int64 {
	return int64(d.lead + skipSpace(line, end))
}
