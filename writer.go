// writer.go holds the writers of a document: the JSONL stream and the document-form JSON.

package tracemem

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// WriteJSON writes doc in the document form: one JSON object with the field
// names of the struct tags, written by json v2 with map keys sorted (unlike
// encoding/json, nil slices and maps are written as [] and {}, <, > and &
// are not escaped, and a string that is not valid UTF-8 is an error), with
// the schema candle-graph/trace/6 when doc.Schema is empty. ReadTrace reads
// it back to an equal document, with the provisos of WriteJSONL, which also
// lists the documents refused. The document form can equally be written
// with encoding/json or json v2 directly.
func (doc *TraceDocument) WriteJSON(w io.Writer) error {
	if _, err := checkWritable(doc, "write json"); err != nil {
		return err
	}
	if doc.Schema == "" {
		c := *doc
		c.Schema = SchemaV6
		doc = &c
	}
	return json.MarshalWrite(w, doc, json.Deterministic(true))
}

// checkWritable returns an error for a document that the readers would
// refuse however it is written: an unsupported schema, a span id used
// twice, a span not closed that has a duration, a memory event whose action
// or category is out of range (matching ErrInvalidEvent, as Analyze's
// error does), a gradient norm that JSON cannot hold (NaN, ±Inf). Else it
// returns the index of each span id.
func checkWritable(doc *TraceDocument, op string) (map[string]int, error) {
	if doc.Schema != "" && doc.Schema != SchemaV6 && doc.Schema != SchemaV7 {
		return nil, fmt.Errorf("%s: meta: schema: %w %q (want %s or %s)", op, ErrUnsupportedSchema, doc.Schema, SchemaV6, SchemaV7)
	}
	index := make(map[string]int, len(doc.Spans))
	for i := range doc.Spans {
		s := &doc.Spans[i]
		if _, dup := index[s.ID]; dup {
			return nil, fmt.Errorf("%s: spans[%d]: id: duplicate span id %q", op, i, s.ID)
		}
		index[s.ID] = i
		if !s.Closed && s.DurationNs != 0 {
			return nil, fmt.Errorf("%s: spans[%d]: duration_ns: %d for span %q, which is not closed (want 0)", op, i, s.DurationNs, s.ID)
		}
	}
	for i := range doc.Memory {
		if errs := eventErrors(&doc.Memory[i], i); errs != nil {
			return nil, fmt.Errorf("%s: %w", op, errs[0])
		}
	}
	for i := range doc.Gradients {
		if n := doc.Gradients[i].Norm; n != nil && (math.IsNaN(*n) || math.IsInf(*n, 0)) {
			return nil, fmt.Errorf("%s: gradients[%d]: norm: %v is not a finite number (JSON has none)", op, i, *n)
		}
	}
	return index, nil
}

// WriteJSONL writes doc as a candle-graph JSONL stream: a meta record (the
// schema is doc.Schema, or candle-graph/trace/6 when empty), then span_start,
// op, memory, device_memory and span_end records merged by time, then the
// tensor, gradient and edge records.
//
// The merge keeps the document order of ops, memory events and device_memory
// samples (each list is written in its own order, interleaved with the others
// by timestamp), writes span_start at start_ns (or at the time of the first op,
// memory record or child span that names the span, when that is earlier, so
// that a streaming reader meets the span_start first) and span_end at start_ns
// + duration_ns (only for closed spans); at equal times a span_start comes
// first (parents before children), then ops, memory events and samples, and
// span_end records last (children before parents), so events at a span's end
// time fall inside it. Optional fields that are absent (empty strings, nil
// pointers, StepNone) are left out. Values are written as WriteJSON writes
// them (a gradient norm of -1e-7 as -1e-7, 1234567 as 1234567).
//
// Reading the output with ReadTrace gives back an equal document, provided
// doc is one a reader could have made: the schema set, spans sorted by id
// (the readers sort them; where a parent cycle is cut follows that order),
// span ids unique, valid UTF-8, finite gradient norms, a span that is not
// closed has DurationNs 0, empty lists and maps nil (the readers make them
// nil), and an op's or tensor's nil StorageBytes only with an unknown dtype
// (otherwise the reader fills it in).
//
// It returns the first write error, or an error for a value that cannot be
// written (invalid UTF-8, a non-finite norm, an enumeration out of range)
// or a document the readers refuse (a schema other than
// candle-graph/trace/6 or /7, a span id used twice, a span not closed with
// a DurationNs, a memory event whose action or category is out of range,
// matching ErrInvalidEvent), before writing anything for the latter.
func (doc *TraceDocument) WriteJSONL(w io.Writer) error {
	index, err := checkWritable(doc, "write jsonl")
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	e := &jsonlWriter{w: bw, b: make([]byte, 0, 512)}
	e.meta(doc)

	starts, ends, startAt := spanOrder(doc, index)
	var si, ei, oi, mi, di int
	for e.err == nil {
		// pick the stream whose head is earliest; ties go to the lower stream
		const none = math.MaxUint64
		best, bestKey := -1, uint64(none)
		consider := func(stream int, key uint64, ok bool) {
			if ok && (best < 0 || key < bestKey) {
				best, bestKey = stream, key
			}
		}
		if si < len(starts) {
			consider(0, startAt[starts[si]], true)
		}
		if oi < len(doc.Ops) {
			consider(1, doc.Ops[oi].TimestampNs, true)
		}
		if mi < len(doc.Memory) {
			consider(2, doc.Memory[mi].TimestampNs, true)
		}
		if di < len(doc.DeviceMemory) {
			consider(3, doc.DeviceMemory[di].TimestampNs, true)
		}
		if ei < len(ends) {
			end, _ := doc.Spans[ends[ei]].EndNs()
			consider(4, end, true)
		}
		switch best {
		case 0:
			e.spanStart(&doc.Spans[starts[si]])
			si++
		case 1:
			e.op(&doc.Ops[oi])
			oi++
		case 2:
			e.memory(&doc.Memory[mi])
			mi++
		case 3:
			e.deviceMemory(&doc.DeviceMemory[di])
			di++
		case 4:
			e.spanEnd(&doc.Spans[ends[ei]])
			ei++
		}
		if best < 0 {
			break
		}
	}
	for i := range doc.Tensors {
		e.tensor(&doc.Tensors[i])
	}
	for i := range doc.Gradients {
		e.gradient(&doc.Gradients[i])
	}
	for i := range doc.Edges {
		e.edge(&doc.Edges[i])
	}
	if e.err != nil {
		return e.err
	}
	return bw.Flush()
}

// spanOrder returns the indices of the spans in span_start order and of the
// closed spans in span_end order (end, then deeper first, then id), and the
// time each span_start is written at: its start_ns, or earlier when an op
// or memory record that names it, or a child span, comes earlier, since a
// streaming reader needs a span_start before the records that name the
// span. At equal times parents come before children (depth), then ids.
func spanOrder(doc *TraceDocument, index map[string]int) (starts, ends []int, at []uint64) {
	spans := doc.Spans
	// Depths in one pass over the spans ordered parents first, parent
	// cycles cut as the analyses cut them (span ids are unique:
	// checkWritable, which made index).
	depth := make([]int, len(spans))
	at = make([]uint64, len(spans))
	for i := range spans {
		at[i] = spans[i].StartNs
	}
	ordered := orderSpans(spans)
	for _, o := range ordered {
		if o.parent >= 0 && !o.cut {
			depth[o.index] = depth[o.parent] + 1
		}
	}
	// Records naming a span before it starts; runs of one span, the common
	// case, are looked up once.
	lastID, last := "", -1 // -1: none looked up yet; -2: not a span
	early := func(id string, ts uint64) {
		if id != lastID || last == -1 {
			i, ok := index[id]
			if !ok {
				i = -2
			}
			lastID, last = id, i
		}
		if last >= 0 && ts < at[last] {
			at[last] = ts
		}
	}
	for i := range doc.Memory {
		early(doc.Memory[i].SpanID, doc.Memory[i].TimestampNs)
	}
	for i := range doc.Ops {
		early(doc.Ops[i].SpanID, doc.Ops[i].TimestampNs)
	}
	for _, o := range slices.Backward(ordered) {
		if o.parent >= 0 && !o.cut {
			at[o.parent] = min(at[o.parent], at[o.index])
		}
	}
	starts = make([]int, len(spans))
	for i := range starts {
		starts[i] = i
	}
	slices.SortFunc(starts, func(a, b int) int {
		return cmp.Or(cmp.Compare(at[a], at[b]), cmp.Compare(depth[a], depth[b]),
			cmp.Compare(spans[a].ID, spans[b].ID))
	})
	for i := range spans {
		if spans[i].Closed {
			ends = append(ends, i)
		}
	}
	slices.SortFunc(ends, func(a, b int) int {
		ea, _ := spans[a].EndNs()
		eb, _ := spans[b].EndNs()
		return cmp.Or(cmp.Compare(ea, eb), cmp.Compare(depth[b], depth[a]), cmp.Compare(spans[a].ID, spans[b].ID))
	})
	return starts, ends, at
}

// jsonlWriter appends one record at a time to b and writes it; the first
// error sticks.
type jsonlWriter struct {
	w   *bufio.Writer
	b   []byte
	err error
	rec string // kind of the record being written, for errors
}

func (e *jsonlWriter) begin(kind string) {
	e.rec = kind
	e.b = append(e.b[:0], `{"kind":"`...)
	e.b = append(e.b, kind...)
	e.b = append(e.b, '"')
}

func (e *jsonlWriter) end() {
	e.b = append(e.b, '}', '\n')
	if e.err == nil {
		if _, err := e.w.Write(e.b); err != nil {
			e.err = err
		}
	}
}

func (e *jsonlWriter) fail(field string, err error) {
	if e.err == nil {
		e.err = fmt.Errorf("write jsonl: %s: %s: %w", e.rec, field, err)
	}
}

func (e *jsonlWriter) key(name string) {
	e.b = append(e.b, ',', '"')
	e.b = append(e.b, name...)
	e.b = append(e.b, '"', ':')
}

func (e *jsonlWriter) str(name, s string) {
	e.key(name)
	var err error
	if e.b, err = jsontext.AppendQuote(e.b, s); err != nil {
		e.fail(name, err)
	}
}

// optStr writes s unless it is empty.
func (e *jsonlWriter) optStr(name, s string) {
	if s != "" {
		e.str(name, s)
	}
}

func (e *jsonlWriter) u64(name string, v uint64) {
	e.key(name)
	e.b = strconv.AppendUint(e.b, v, 10)
}

func (e *jsonlWriter) optU64(name string, v *uint64) {
	if v != nil {
		e.u64(name, *v)
	}
}

func (e *jsonlWriter) boolean(name string, v bool) {
	e.key(name)
	e.b = strconv.AppendBool(e.b, v)
}

// enum writes the name of value i of an enumeration with the given names,
// without allocating; a value out of range is an error.
func (e *jsonlWriter) enum(field string, names []string, i int, typ string) {
	if i < 0 || i >= len(names) || names[i] == "" {
		e.fail(field, fmt.Errorf("invalid %s %d", typ, i))
		return
	}
	e.key(field)
	e.b = append(e.b, '"')
	e.b = append(e.b, names[i]...)
	e.b = append(e.b, '"')
}

func (e *jsonlWriter) shape(name string, s []uint64) {
	e.key(name)
	e.b = append(e.b, '[')
	for i, d := range s {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.b = strconv.AppendUint(e.b, d, 10)
	}
	e.b = append(e.b, ']')
}

func (e *jsonlWriter) strList(name string, ss []string) {
	e.key(name)
	e.b = append(e.b, '[')
	for i, s := range ss {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		var err error
		if e.b, err = jsontext.AppendQuote(e.b, s); err != nil {
			e.fail(name, err)
		}
	}
	e.b = append(e.b, ']')
}

func (e *jsonlWriter) meta(doc *TraceDocument) {
	r := &doc.Run
	e.begin("meta")
	schema := doc.Schema
	if schema == "" {
		schema = SchemaV6
	}
	e.str("schema", schema)
	e.str("run_id", r.RunID)
	e.str("correlation_id", r.CorrelationID)
	e.str("entrypoint", r.Entrypoint)
	e.enum("phase", phaseNames, int(r.Phase), "Phase")
	e.str("timestamp", r.Timestamp)
	e.u64("capture_step", r.CaptureStep)
	e.u64("warmup_steps", r.WarmupSteps)
	e.str("device", r.Device)
	e.enum("timing_mode", timingModeNames, int(r.TimingMode), "TimingMode")
	e.key("tags")
	e.b = append(e.b, '{')
	keys := make([]string, 0, len(r.Tags))
	for k := range r.Tags {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i, k := range keys {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		var err error
		if e.b, err = jsontext.AppendQuote(e.b, k); err != nil {
			e.fail("tags", err)
		}
		e.b = append(e.b, ':')
		if e.b, err = jsontext.AppendQuote(e.b, r.Tags[k]); err != nil {
			e.fail("tags", err)
		}
	}
	e.b = append(e.b, '}')
	e.optStr("candle_version", r.CandleVersion)
	e.end()
}

func (e *jsonlWriter) spanStart(s *Span) {
	e.begin("span_start")
	e.str("id", s.ID)
	e.optStr("parent_id", s.ParentID)
	e.str("name", s.Name)
	e.u64("start_ns", s.StartNs)
	e.enum("span_kind", spanKindNames, int(s.Kind), "SpanKind")
	e.boolean("measured", s.Measured)
	if s.Step != StepNone {
		e.enum("step", stepNames, int(s.Step), "Step")
	}
	e.end()
}

func (e *jsonlWriter) spanEnd(s *Span) {
	e.begin("span_end")
	e.str("id", s.ID)
	e.u64("duration_ns", s.DurationNs)
	e.end()
}

func (e *jsonlWriter) op(o *Op) {
	e.begin("op")
	e.str("span_id", o.SpanID)
	e.str("op_name", o.OpName)
	e.strList("inputs", o.Inputs)
	e.optStr("output", o.Output)
	e.shape("shape", o.Shape)
	e.str("dtype", o.DType)
	e.str("device", o.Device)
	e.u64("duration_ns", o.DurationNs)
	e.u64("timestamp_ns", o.TimestampNs)
	e.optU64("storage_bytes", o.StorageBytes)
	e.u64("input_storage_bytes", o.InputStorageBytes)
	e.end()
}

func (e *jsonlWriter) tensor(t *Tensor) {
	e.begin("tensor")
	e.str("span_id", t.SpanID)
	e.str("tensor_id", t.TensorID)
	e.shape("shape", t.Shape)
	e.str("dtype", t.DType)
	e.str("device", t.Device)
	e.boolean("requires_grad", t.RequiresGrad)
	e.optU64("storage_bytes", t.StorageBytes)
	e.enum("category", categoryNames, int(t.Category), "Category")
	e.end()
}

func (e *jsonlWriter) memory(m *MemoryEvent) {
	e.begin("memory")
	e.u64("timestamp_ns", m.TimestampNs)
	e.str("tensor_id", m.TensorID)
	e.str("span_id", m.SpanID)
	e.optStr("op_name", m.OpName)
	e.str("device", m.Device)
	e.u64("bytes", m.Bytes)
	e.enum("action", actionNames, int(m.Action), "MemoryAction")
	e.shape("shape", m.Shape)
	e.str("dtype", m.DType)
	e.enum("category", categoryNames, int(m.Category), "Category")
	e.end()
}

func (e *jsonlWriter) deviceMemory(s *DeviceMemorySample) {
	e.begin("device_memory")
	e.u64("timestamp_ns", s.TimestampNs)
	e.str("device", s.Device)
	e.u64("used_bytes", s.UsedBytes)
	e.u64("free_bytes", s.FreeBytes)
	e.optU64("reserved_bytes", s.ReservedBytes)
	e.optU64("capacity_bytes", s.CapacityBytes)
	e.end()
}

func (e *jsonlWriter) gradient(g *Gradient) {
	e.begin("gradient")
	e.str("event_id", g.EventID)
	e.str("root", g.Root)
	e.str("key", g.Key)
	e.enum("state", gradientStateNames, int(g.State), "GradientState")
	if g.Norm != nil { // finite (checkWritable)
		e.key("norm")
		e.b = appendJSONFloat(e.b, *g.Norm)
	}
	e.end()
}

// appendJSONFloat appends the finite f as WriteJSON (json v2) and
// encoding/json write it, so that both forms of a document hold the same
// text: the fewest digits that read back to f, in plain form from 1e-6 to
// below 1e21 and in exponent form, without a leading zero in the exponent,
// outside it (the form of JavaScript's Number.toString).
func appendJSONFloat(b []byte, f float64) []byte {
	format := byte('f')
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' { // e-07 to e-7
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

func (e *jsonlWriter) edge(g *Edge) {
	e.begin("edge")
	e.str("from_span", g.FromSpan)
	e.str("to_span", g.ToSpan)
	e.u64("duration_ns", g.DurationNs)
	e.end()
}
