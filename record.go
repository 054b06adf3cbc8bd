// record.go holds the record parser: the typed fields of each record kind, shared by the JSONL and document readers.

package tracemem

import (
	"bytes"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// recordFields is where valueParser.record puts a record's values; the
// recordDecoder and the document decoder both provide one.
type recordFields = recordDecoder

// record parses the members of one record of kind k into the matching field
// of r, checks the required fields and, for meta, the schema. doc selects
// the document form (spans with kind, closed and duration_ns; a run without
// schema, for kind recMeta). The returned error has Field, Msg, Err and
// Offset (of the value at fault, relative to the object) set. The parsers of
// fields leave Offset 0, or set it in the value to the element at fault (of
// a list) or the member (of tags), so the callers add the value's offset.
func (p *valueParser) record(k recordKind, r *recordFields, obj []byte, ms []member, alts [][]byte, doc bool) *ParseError {
	resetRecord(k, r)
	p.unknown, p.renamed = p.unknown[:0], 0
	if k == recMeta && !doc {
		if perr := p.schemaFirst(obj, ms, alts); perr != nil {
			return perr
		}
	}
	var seen uint32
	for i := range ms {
		m := &ms[i]
		p.esc = m.esc
		if perr := p.field(k, r, m.name(obj, alts), m.val(obj), &seen, doc); perr != nil {
			perr.Offset += int64(m.vs) // field's Offset is in the value (an element)
			return perr
		}
	}
	perr := p.finish(k, r, seen, doc)
	if perr != nil && perr.Field != "" {
		// A check of the fields together (a duration of a span not
		// closed) names the value at fault; a missing field has none, and
		// stays at the record's start.
		for i := range ms {
			if string(ms[i].name(obj, alts)) == perr.Field {
				perr.Offset = int64(ms[i].vs)
			}
		}
	}
	return perr
}

// schemaFirst reports a meta record's schema string other than the ones
// this package reads, before any other field: a trace of another schema may
// differ in any of them, and callers test for ErrUnsupportedSchema. Other
// errors of the schema member (not a string, given twice) are left to the
// fields' check.
func (p *valueParser) schemaFirst(obj []byte, ms []member, alts [][]byte) *ParseError {
	for i := range ms {
		m := &ms[i]
		if string(m.name(obj, alts)) != "schema" {
			continue
		}
		p.esc = m.esc
		s, perr := p.str("schema", m.val(obj))
		if perr != nil || s == SchemaV6 || s == SchemaV7 {
			return nil
		}
		perr = schemaError(s)
		perr.Offset = int64(m.vs)
		return perr
	}
	return nil
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
	if bit&(1<<fRecStorage|1<<fRecInputStorage) != 0 {
		if i := renamedIndex(name); i >= 0 {
			if perr == nil && *seen&bit != 0 && p.renamed&(1<<(i^1)) != 0 {
				when := [2]string{"before", "since"}[(i^1)&1]
				perr = &ParseError{Field: string(name), Msg: "duplicate field (also given as " + renamedNames[i^1] +
					", its name " + when + " schema /7)", Err: ErrInvalidJSON}
			}
			p.renamed |= 1 << i
		}
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

// renamedNames are the fields schema /7 renamed, each name before its new
// one (index i^1 is the other name of name i). Both are read, in either
// schema; a record may give one of them.
var renamedNames = [4]string{"storage_bytes", "output_dense_bytes", "input_storage_bytes", "input_dense_bytes"}

// renamedIndex returns the index of name in renamedNames, or -1.
func renamedIndex(name []byte) int {
	for i, n := range renamedNames {
		if string(name) == n {
			return i
		}
	}
	return -1
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
	switch k { // a meta record's schema is checked first (schemaFirst)
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

// valueParser turns raw JSON values (already validated: by the line
// scanner in JSONL, by jsontext in the document form) into field values,
// interning strings and shapes.
type valueParser struct {
	in      *interner
	scratch []byte
	slab    []uint64 // backing store of storage_bytes-like pointers
	last    [numSlots]string
	esc     bool     // the current value may hold escapes; false: unquote needs no check
	unknown [][]byte // names of the ignored fields of the current record
	renamed uint8    // which of renamedNames the current record used (bit i: name i)
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

// syntaxText is the text of a JSON syntax error for a message that gives
// the offset itself: the decoder's own text, without its package name and
// its "after offset N".
func syntaxText(se *jsontext.SyntacticError) string {
	s := strings.TrimPrefix(se.Error(), "jsontext: ")
	return strings.TrimSuffix(s, " after offset "+strconv.FormatInt(se.ByteOffset, 10))
}

// describeMax is the most bytes of a value describe shows.
const describeMax = 40

// describe names a raw JSON value for an error message: strings and numbers
// as written (shortened), other kinds by name.
func describe(v []byte) string {
	if len(v) == 0 {
		return "nothing"
	}
	const maxLen = describeMax
	// The message must stay valid UTF-8: cut between characters, and show
	// bytes that are not UTF-8 (a value the scanner has not checked) as U+FFFD.
	short := func(b []byte) string {
		if len(b) > maxLen {
			n := maxLen
			for n > maxLen-(utf8.UTFMax-1) && !utf8.RuneStart(b[n]) {
				n--
			}
			return strings.ToValidUTF8(string(b[:n]), "\uFFFD") + "..."
		}
		return strings.ToValidUTF8(string(b), "\uFFFD")
	}
	switch v[0] {
	case '"':
		return "string " + short(v)
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "boolean " + short(v)
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
// its slot costs a comparison instead of hashing it for the interner.
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
		return &ParseError{Field: field, Msg: "want an unsigned integer in plain digits, got " + describe(v)}
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
		if ee, ok := err.(*EnumError); ok {
			ee.Type = field // as this form names it: a span's kind is span_kind in JSONL
		}
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
		perr.Field = field + perr.Field // the element, "shape[1]", as strList names one
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
			perr := uintError("["+strconv.Itoa(n)+"]", v[i:j])
			perr.Offset = int64(i)
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
		var s string
		var perr *ParseError
		if v[i] != '"' {
			perr = typeError("", "a string", v[i:j])
		} else {
			s, perr = p.rawString("", v[i:j])
		}
		if perr != nil {
			perr.Field, perr.Offset = field+"["+strconv.Itoa(n)+"]", int64(i)
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
		var s string
		var perr *ParseError
		if val[0] != '"' {
			perr = typeError("", "a string", val)
		} else if s, perr = p.rawString("", val); perr == nil {
			if _, dup := out[string(name)]; dup {
				perr = &ParseError{Msg: "duplicate field", Err: ErrInvalidJSON}
			}
		}
		if perr != nil {
			perr.Field, perr.Offset = "tags."+string(name), int64(m.vs) // the value, of the second when given twice
			return nil, perr
		}
		out[p.in.bytes(name)] = s
	}
	return out, nil
}
