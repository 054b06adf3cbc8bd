// reader_ref_test.go holds a slow, obviously correct JSONL reader built on json v2, and the tests comparing ReadTrace with it.

package tracemem

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"
	"github.com/tracemem/tracemem/internal/gen"
)

// The reference records: every field a pointer, so that absent (nil) and
// present are told apart; json v2 checks the JSON, the types, the ranges of
// unsigned integers and duplicate names, and refEnum the enumerations, by
// their names in the issue (not through the library's UnmarshalText).
type (
	refMeta struct {
		Schema        *string              `json:"schema"`
		RunID         *string              `json:"run_id"`
		CorrelationID *string              `json:"correlation_id"`
		Entrypoint    *string              `json:"entrypoint"`
		Phase         *refEnum[Phase]      `json:"phase"`
		Timestamp     *string              `json:"timestamp"`
		CaptureStep   *uint64              `json:"capture_step"`
		WarmupSteps   *uint64              `json:"warmup_steps"`
		Device        *string              `json:"device"`
		TimingMode    *refEnum[TimingMode] `json:"timing_mode"`
		Tags          *map[string]*string  `json:"tags"`
		CandleVersion *string              `json:"candle_version"`
	}
	refSpanStart struct {
		ID       *string            `json:"id"`
		ParentID *string            `json:"parent_id"`
		Name     *string            `json:"name"`
		StartNs  *uint64            `json:"start_ns"`
		SpanKind *refEnum[SpanKind] `json:"span_kind"`
		Measured *bool              `json:"measured"`
		Step     *refEnum[Step]     `json:"step"`
	}
	refSpanEnd struct {
		ID         *string `json:"id"`
		DurationNs *uint64 `json:"duration_ns"`
	}
	refOp struct {
		SpanID            *string    `json:"span_id"`
		OpName            *string    `json:"op_name"`
		Inputs            *[]*string `json:"inputs"`
		Output            *string    `json:"output"`
		Shape             *[]*uint64 `json:"shape"`
		DType             *string    `json:"dtype"`
		Device            *string    `json:"device"`
		DurationNs        *uint64    `json:"duration_ns"`
		TimestampNs       *uint64    `json:"timestamp_ns"`
		StorageBytes      *uint64    `json:"storage_bytes"`
		OutputDenseBytes  *uint64    `json:"output_dense_bytes"`
		InputStorageBytes *uint64    `json:"input_storage_bytes"`
		InputDenseBytes   *uint64    `json:"input_dense_bytes"`
	}
	refTensor struct {
		SpanID           *string            `json:"span_id"`
		TensorID         *string            `json:"tensor_id"`
		Shape            *[]*uint64         `json:"shape"`
		DType            *string            `json:"dtype"`
		Device           *string            `json:"device"`
		RequiresGrad     *bool              `json:"requires_grad"`
		StorageBytes     *uint64            `json:"storage_bytes"`
		OutputDenseBytes *uint64            `json:"output_dense_bytes"`
		Category         *refEnum[Category] `json:"category"`
	}
	refMemory struct {
		TimestampNs *uint64                `json:"timestamp_ns"`
		TensorID    *string                `json:"tensor_id"`
		SpanID      *string                `json:"span_id"`
		OpName      *string                `json:"op_name"`
		Device      *string                `json:"device"`
		Bytes       *uint64                `json:"bytes"`
		Action      *refEnum[MemoryAction] `json:"action"`
		Shape       *[]*uint64             `json:"shape"`
		DType       *string                `json:"dtype"`
		Category    *refEnum[Category]     `json:"category"`
	}
	refDevMem struct {
		TimestampNs   *uint64 `json:"timestamp_ns"`
		Device        *string `json:"device"`
		UsedBytes     *uint64 `json:"used_bytes"`
		FreeBytes     *uint64 `json:"free_bytes"`
		ReservedBytes *uint64 `json:"reserved_bytes"`
		CapacityBytes *uint64 `json:"capacity_bytes"`
	}
	refGradient struct {
		EventID *string                 `json:"event_id"`
		Root    *string                 `json:"root"`
		Key     *string                 `json:"key"`
		State   *refEnum[GradientState] `json:"state"`
		Norm    *float64                `json:"norm"`
	}
	refEdge struct {
		FromSpan   *string `json:"from_span"`
		ToSpan     *string `json:"to_span"`
		DurationNs *uint64 `json:"duration_ns"`
	}
)

// refUnsigned lists the unsigned-integer fields (and shape) of each kind.
var refUnsigned = map[string]map[string]bool{
	"meta":          {"capture_step": true, "warmup_steps": true},
	"span_start":    {"start_ns": true},
	"span_end":      {"duration_ns": true},
	"op":            {"shape": true, "duration_ns": true, "timestamp_ns": true, "storage_bytes": true, "output_dense_bytes": true, "input_storage_bytes": true, "input_dense_bytes": true},
	"tensor":        {"shape": true, "storage_bytes": true, "output_dense_bytes": true},
	"memory":        {"timestamp_ns": true, "bytes": true, "shape": true},
	"device_memory": {"timestamp_ns": true, "used_bytes": true, "free_bytes": true, "reserved_bytes": true, "capacity_bytes": true},
	"edge":          {"duration_ns": true},
}

// refRequired fails when any of the named pointers is nil.
func refRequired(fields map[string]bool) error {
	for name, present := range fields {
		if !present {
			return fmt.Errorf("missing required field %s", name)
		}
	}
	return nil
}

// refPlainInts rejects numbers written other than as plain digits for the
// unsigned fields (json v2 would take 1e3 as 1000), so that both readers
// follow the documented rule; it looks only at the top-level values and at
// shape arrays, the places unsigned integers live.
func refPlainInts(kind string, raw map[string]jsontext.Value) error {
	for name, v := range raw {
		if !refUnsigned[kind][name] {
			continue // ignored fields take any JSON
		}
		check := func(b []byte) error {
			if len(b) > 0 && (b[0] == '-' || b[0] >= '0' && b[0] <= '9' && bytes.ContainsAny(b, ".eE")) {
				return fmt.Errorf("%s: not a plain integer: %s", name, b)
			}
			return nil
		}
		if len(v) > 0 && v[0] == '[' {
			var elems []jsontext.Value
			if err := json.Unmarshal(v, &elems, refOpts); err != nil {
				return err
			}
			for _, e := range elems {
				if err := check(e); err != nil {
					return err
				}
			}
			continue
		}
		if err := check(v); err != nil {
			return err
		}
	}
	return nil
}

func refStr(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// refElems returns the elements of an array field (null and [] are nil)
// and fails on a null element.
func refElems[T any](s *[]*T) ([]T, error) {
	if s == nil || len(*s) == 0 {
		return nil, nil
	}
	out := make([]T, len(*s))
	for i, p := range *s {
		if p == nil {
			return nil, errors.New("null element")
		}
		out[i] = *p
	}
	return out, nil
}

var refOpts = json.JoinOptions(jsontext.AllowDuplicateNames(true))

// refTopNames fails on a duplicate top-level name, and on a duplicate key
// of tags (duplicates inside ignored values are allowed, as documented).
func refTopNames(line []byte) error {
	dec := jsontext.NewDecoder(bytes.NewReader(line), jsontext.AllowDuplicateNames(true))
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	seen := map[string]bool{}
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		name := tok.String()
		if seen[name] {
			return fmt.Errorf("duplicate name %q", name)
		}
		seen[name] = true
		v, err := dec.ReadValue()
		if err != nil {
			return err
		}
		if name == "tags" && v.Kind() == '{' {
			var m map[string]jsontext.Value
			if err := json.Unmarshal(v, &m); err != nil { // strict: no duplicate keys
				return err
			}
		}
	}
	return nil
}

// refEnum is an enumeration value as the reference reads it: by its own
// table of the format's names, exact in case, "" standing for the zero value
// only for a step (absent) and a category (other).
type refEnum[T ~uint8] struct{ v T }

func (e *refEnum[T]) UnmarshalText(b []byte) error {
	var names []string
	switch any(e.v).(type) {
	case MemoryAction:
		names = []string{"alloc", "free"}
	case Phase:
		names = []string{"train", "infer"}
	case TimingMode:
		names = []string{"host", "device_synchronized"}
	case SpanKind:
		names = []string{"function", "op", "module"}
	case Step:
		names = []string{"", "forward", "backward", "optimizer"}
	case Category:
		if len(b) == 0 {
			e.v = 0
			return nil
		}
		names = []string{"other", "parameter", "activation", "gradient", "optimizer"}
	case GradientState:
		names = []string{"present", "missing", "zero", "non_finite"}
	default:
		panic(fmt.Sprintf("refEnum of %T", e.v))
	}
	for i, n := range names {
		if n == string(b) {
			e.v = T(i)
			return nil
		}
	}
	return fmt.Errorf("unknown %T %q", e.v, b)
}

func refStorage(explicit, dense *uint64, shape []uint64, dtype string) *uint64 {
	if dense != nil {
		return dense
	}
	if explicit != nil {
		return explicit
	}
	if _, ok := refBits(dtype); !ok {
		return nil
	}
	v := refDense(shape, dtype) // a big.Int product, not DenseBytes
	return &v
}

// refReadJSONL is the reference reader of a JSONL stream.
func refReadJSONL(r io.Reader) (*TraceDocument, error) {
	doc := &TraceDocument{}
	br := bufio.NewReader(r)
	line, sawMeta, records := 0, false, 0
	started := map[string]int{}
	for {
		text, rerr := br.ReadString('\n')
		if rerr != nil && rerr != io.EOF {
			return nil, rerr
		}
		if strings.Trim(text, " \t\r\n") == "" {
			if rerr == io.EOF {
				break
			}
			line++
			continue
		}
		line++
		records++
		var raw map[string]jsontext.Value
		if err := json.Unmarshal([]byte(text), &raw, refOpts); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		if err := refTopNames([]byte(text)); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		var kind string
		if string(raw["kind"]) == "null" { // a required field: null is no value
			return nil, fmt.Errorf("line %d: kind: null", line)
		}
		if err := json.Unmarshal(raw["kind"], &kind); err != nil {
			return nil, fmt.Errorf("line %d: kind: %w", line, err)
		}
		if !sawMeta && kind != "meta" || sawMeta && kind == "meta" {
			return nil, fmt.Errorf("line %d: meta first and once", line)
		}
		known := map[string]bool{"meta": true, "span_start": true, "span_end": true, "op": true, "tensor": true,
			"memory": true, "device_memory": true, "gradient": true, "edge": true}
		if !known[kind] {
			if rerr == io.EOF {
				break
			}
			continue
		}
		if err := refPlainInts(kind, raw); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		data := []byte(text)
		var err error
		switch kind {
		case "meta":
			var m refMeta
			if err = json.Unmarshal(data, &m, refOpts); err == nil {
				err = refRequired(map[string]bool{"schema": m.Schema != nil, "run_id": m.RunID != nil,
					"correlation_id": m.CorrelationID != nil, "entrypoint": m.Entrypoint != nil, "phase": m.Phase != nil,
					"timestamp": m.Timestamp != nil, "capture_step": m.CaptureStep != nil, "warmup_steps": m.WarmupSteps != nil,
					"device": m.Device != nil, "timing_mode": m.TimingMode != nil, "tags": raw["tags"] != nil})
			}
			if err == nil && *m.Schema != SchemaV6 && *m.Schema != SchemaV7 {
				err = errors.New("schema")
			}
			if err == nil {
				sawMeta = true
				doc.Schema = *m.Schema
				doc.Run = Run{RunID: *m.RunID, CorrelationID: *m.CorrelationID, Entrypoint: *m.Entrypoint, Phase: m.Phase.v,
					Timestamp: *m.Timestamp, CaptureStep: *m.CaptureStep, WarmupSteps: *m.WarmupSteps, Device: *m.Device,
					TimingMode: m.TimingMode.v, CandleVersion: refStr(m.CandleVersion)}
				if m.Tags != nil && len(*m.Tags) > 0 {
					doc.Run.Tags = map[string]string{}
					for k, v := range *m.Tags {
						if v == nil {
							return nil, fmt.Errorf("line %d: tags: null value", line)
						}
						doc.Run.Tags[k] = *v
					}
				}
			}
		case "span_start":
			var s refSpanStart
			if err = json.Unmarshal(data, &s, refOpts); err == nil {
				err = refRequired(map[string]bool{"id": s.ID != nil, "name": s.Name != nil, "start_ns": s.StartNs != nil,
					"span_kind": s.SpanKind != nil, "measured": s.Measured != nil})
			}
			if err == nil {
				if _, dup := started[*s.ID]; dup {
					err = errors.New("duplicate span")
				}
			}
			if err == nil {
				sp := Span{ID: *s.ID, ParentID: refStr(s.ParentID), Name: *s.Name, StartNs: *s.StartNs, Kind: s.SpanKind.v, Measured: *s.Measured}
				if s.Step != nil {
					sp.Step = s.Step.v
				}
				started[sp.ID] = len(doc.Spans)
				doc.Spans = append(doc.Spans, sp)
			}
		case "span_end":
			var s refSpanEnd
			if err = json.Unmarshal(data, &s, refOpts); err == nil {
				err = refRequired(map[string]bool{"id": s.ID != nil, "duration_ns": s.DurationNs != nil})
			}
			if err == nil {
				i, ok := started[*s.ID]
				switch {
				case !ok:
					err = errors.New("unknown span")
				case doc.Spans[i].Closed:
					err = errors.New("second span_end")
				default:
					doc.Spans[i].Closed, doc.Spans[i].DurationNs = true, *s.DurationNs
				}
			}
		case "op":
			var o refOp
			if err = json.Unmarshal(data, &o, refOpts); err == nil && o.StorageBytes != nil && o.OutputDenseBytes != nil ||
				err == nil && o.InputStorageBytes != nil && o.InputDenseBytes != nil {
				err = errors.New("both names of one field")
			}
			if err == nil {
				err = refRequired(map[string]bool{"span_id": o.SpanID != nil, "op_name": o.OpName != nil, "inputs": raw["inputs"] != nil,
					"shape": raw["shape"] != nil, "dtype": o.DType != nil, "device": o.Device != nil, "duration_ns": o.DurationNs != nil,
					"timestamp_ns": o.TimestampNs != nil, "input_storage_bytes": o.InputStorageBytes != nil || o.InputDenseBytes != nil})
			}
			var inputs []string
			var shape []uint64
			if err == nil {
				inputs, err = refElems(o.Inputs)
			}
			if err == nil {
				shape, err = refElems(o.Shape)
			}
			if err == nil {
				op := Op{SpanID: *o.SpanID, OpName: *o.OpName, Inputs: inputs, Output: refStr(o.Output),
					Shape: shape, DType: *o.DType, Device: *o.Device, DurationNs: *o.DurationNs, TimestampNs: *o.TimestampNs}
				op.StorageBytes = refStorage(o.StorageBytes, o.OutputDenseBytes, op.Shape, op.DType)
				if o.InputDenseBytes != nil {
					op.InputStorageBytes = *o.InputDenseBytes
				} else {
					op.InputStorageBytes = *o.InputStorageBytes
				}
				doc.Ops = append(doc.Ops, op)
			}
		case "tensor":
			var o refTensor
			if err = json.Unmarshal(data, &o, refOpts); err == nil && o.StorageBytes != nil && o.OutputDenseBytes != nil {
				err = errors.New("both names of one field")
			}
			if err == nil {
				err = refRequired(map[string]bool{"span_id": o.SpanID != nil, "tensor_id": o.TensorID != nil, "shape": raw["shape"] != nil,
					"dtype": o.DType != nil, "device": o.Device != nil, "requires_grad": o.RequiresGrad != nil})
			}
			var shape []uint64
			if err == nil {
				shape, err = refElems(o.Shape)
			}
			if err == nil {
				te := Tensor{SpanID: *o.SpanID, TensorID: *o.TensorID, Shape: shape, DType: *o.DType,
					Device: *o.Device, RequiresGrad: *o.RequiresGrad}
				te.StorageBytes = refStorage(o.StorageBytes, o.OutputDenseBytes, te.Shape, te.DType)
				if o.Category != nil {
					te.Category = o.Category.v
				}
				doc.Tensors = append(doc.Tensors, te)
			}
		case "memory":
			var o refMemory
			if err = json.Unmarshal(data, &o, refOpts); err == nil {
				err = refRequired(map[string]bool{"timestamp_ns": o.TimestampNs != nil, "tensor_id": o.TensorID != nil,
					"span_id": o.SpanID != nil, "device": o.Device != nil, "bytes": o.Bytes != nil, "action": o.Action != nil,
					"shape": raw["shape"] != nil, "dtype": o.DType != nil})
			}
			var shape []uint64
			if err == nil {
				shape, err = refElems(o.Shape)
			}
			if err == nil {
				ev := MemoryEvent{TimestampNs: *o.TimestampNs, TensorID: *o.TensorID, SpanID: *o.SpanID, OpName: refStr(o.OpName),
					Device: *o.Device, Bytes: *o.Bytes, Action: o.Action.v, Shape: shape, DType: *o.DType}
				if o.Category != nil {
					ev.Category = o.Category.v
				}
				doc.Memory = append(doc.Memory, ev)
			}
		case "device_memory":
			var o refDevMem
			if err = json.Unmarshal(data, &o, refOpts); err == nil {
				err = refRequired(map[string]bool{"timestamp_ns": o.TimestampNs != nil, "device": o.Device != nil,
					"used_bytes": o.UsedBytes != nil, "free_bytes": o.FreeBytes != nil})
			}
			if err == nil {
				doc.DeviceMemory = append(doc.DeviceMemory, DeviceMemorySample{TimestampNs: *o.TimestampNs, Device: *o.Device,
					UsedBytes: *o.UsedBytes, FreeBytes: *o.FreeBytes, ReservedBytes: o.ReservedBytes, CapacityBytes: o.CapacityBytes})
			}
		case "gradient":
			var o refGradient
			if err = json.Unmarshal(data, &o, refOpts); err == nil {
				err = refRequired(map[string]bool{"event_id": o.EventID != nil, "root": o.Root != nil, "key": o.Key != nil,
					"state": o.State != nil})
			}
			if err == nil {
				doc.Gradients = append(doc.Gradients, Gradient{EventID: *o.EventID, Root: *o.Root, Key: *o.Key, State: o.State.v, Norm: o.Norm})
			}
		case "edge":
			var o refEdge
			if err = json.Unmarshal(data, &o, refOpts); err == nil {
				err = refRequired(map[string]bool{"from_span": o.FromSpan != nil, "to_span": o.ToSpan != nil, "duration_ns": o.DurationNs != nil})
			}
			if err == nil {
				doc.Edges = append(doc.Edges, Edge{FromSpan: *o.FromSpan, ToSpan: *o.ToSpan, DurationNs: *o.DurationNs})
			}
		}
		if err != nil {
			return nil, fmt.Errorf("line %d: %s: %w", line, kind, err)
		}
		if rerr == io.EOF {
			break
		}
	}
	if !sawMeta {
		if records == 0 {
			return nil, ErrEmptyTrace
		}
		return nil, ErrMissingMeta
	}
	slices.SortFunc(doc.Spans, func(a, b Span) int { return strings.Compare(a.ID, b.ID) })
	return doc, nil
}

// refCompare reads in with both readers and reports a disagreement: one
// accepts what the other rejects, or the documents differ. The fast reader
// reads it twice: told its size, and with chunks of 4 values told a third
// of it, so that its sections are reserved too small and overflow.
func refCompare(in []byte) string {
	want, werr := refReadJSONL(bytes.NewReader(in))
	got, gerr := readJSONL(bytes.NewReader(in), int64(len(in)), nil)
	if msg := refDisagree(want, got, werr, gerr); msg != "" {
		return msg
	}
	defer func(old int) { maxChunk = old }(maxChunk)
	maxChunk = 4
	got, gerr2 := readJSONL(bytes.NewReader(in), int64(len(in))/3, nil)
	if msg := refDisagree(want, got, werr, gerr2); msg != "" {
		return "sections reserved too small: " + msg
	}
	// Every line longer than the buffer is copied aside, without the white
	// space it starts with: the same document, and the same error, line and
	// column included.
	defer func(old int) { lineBuffer = old }(lineBuffer)
	lineBuffer = 16 // bufio's least
	got, gerr2 = readJSONL(bytes.NewReader(in), int64(len(in)), nil)
	if msg := refDisagree(want, got, werr, gerr2); msg != "" {
		return "lines longer than the buffer: " + msg
	}
	if gerr != nil && gerr.Error() != gerr2.Error() {
		return fmt.Sprintf("lines longer than the buffer: error %q, with a long buffer %q", gerr2, gerr)
	}
	return ""
}

// refDisagree reports a disagreement between the reference's results and
// the fast reader's.
func refDisagree(want, got *TraceDocument, werr, gerr error) string {
	switch {
	case (werr == nil) != (gerr == nil):
		return fmt.Sprintf("reference error %v, ReadTrace error %v", werr, gerr)
	case werr != nil:
		if errors.Is(werr, ErrEmptyTrace) != errors.Is(gerr, ErrEmptyTrace) {
			return fmt.Sprintf("empty trace: reference %v, ReadTrace %v", werr, gerr)
		}
		return ""
	}
	if diff := cmp.Diff(want, got); diff != "" {
		return "(-reference +ReadTrace):\n" + diff
	}
	return ""
}

// TestReadTraceReference compares the JSONL reader with the reference on
// generated traces, the test traces and every error case of the tables.
func TestReadTraceReference(t *testing.T) {
	inputs := map[string]string{"full": rdFullTrace(), "kind last": rdKindLast(rdFullTrace())}
	for i, cfg := range []gen.Config{
		{Seed: 11, MemoryEvents: 1500, Devices: 2, Anomalies: true},
		{Seed: 12, MemoryEvents: 800, UnclosedSpans: true, SampleEvery: 3},
	} {
		var b bytes.Buffer
		if _, err := gen.Write(&b, cfg); err != nil {
			t.Fatal(err)
		}
		inputs[fmt.Sprint("gen", i)] = b.String()
	}
	// each line of the full trace mutated in ways that break a rule
	lines := strings.Split(strings.TrimSpace(rdFullTrace()), "\n")
	mutations := []struct{ from, to string }{
		{`:400`, `:-400`}, {`:400`, `:4.5`}, {`:400`, `:4e2`}, {`:400`, `:"400"`}, {`:400`, `:18446744073709551616`},
		{`"cuda:0"`, `null`}, {`"cuda:0"`, `7`}, {`[10,10]`, `[10,-1]`}, {`[10,10]`, `null`}, {`[10,10]`, `[]`},
		{`"f32"`, `"weird"`}, {`"alloc"`, `"Alloc"`}, {`"activation"`, `null`}, {`"activation"`, `""`},
		{`"root"`, `"r\u006f\u006ft"`}, {`"root"`, `"x"`}, {`"function"`, `"fn"`}, {`true`, `1`}, {`"train"`, `"eval"`},
		{`{"a":"b"}`, `{"a":"b","a":"c"}`}, {`{"a":"b"}`, `{"a":1}`}, {`{"a":"b"}`, `null`}, {`,"span_id":"root"`, ``},
		{`,"duration_ns":100`, ``}, {`["a","b"]`, `["a",null]`}, {`1.5`, `null`}, {`1.5`, `"x"`}, {`"present"`, `"gone"`},
		{`"output":"t1"`, `"output":null`}, {`"forward"`, `null`}, {`"parent_id":"root"`, `"parent_id":null`},
		{`"input_storage_bytes":800`, `"input_dense_bytes":800`}, {`"requires_grad":true`, `"requires_grad":true,"storage_bytes":3`},
		{`"tensor_id":"t1"`, `"tensor_id":"t1","tensor_id":"t2"`}, {`"kind":"memory"`, `"kind":"memoryx"`},
		{`}`, `,}`}, {`{`, `[`}, {`"timestamp_ns":10`, `"timestamp_ns":10,"storage_id":3`},
	}
	for li := range lines {
		for mi, m := range mutations {
			if !strings.Contains(lines[li], m.from) {
				continue
			}
			mut := slices.Clone(lines)
			mut[li] = strings.Replace(mut[li], m.from, m.to, 1)
			inputs[fmt.Sprintf("line%d/mut%d", li+1, mi)] = strings.Join(mut, "\n") + "\n"
			// White space before the line, past refCompare's short buffer.
			mut[li] = strings.Repeat(" ", 40) + mut[li]
			inputs[fmt.Sprintf("line%d/mut%d/indented", li+1, mi)] = strings.Join(mut, "\n") + "\n"
		}
	}
	inputs["indented, text after"] = rdLines(tMeta, strings.Repeat(" ", 40)+tMem+" x")
	inputs["blank lines, long and short"] = rdLines(tMeta, strings.Repeat(" ", 40), "", tRoot, strings.Repeat("\t", 17)+"\r", tRootEnd)
	for name, in := range inputs {
		if msg := refCompare([]byte(in)); msg != "" {
			t.Errorf("%s: %s\ninput:\n%s", name, msg, in)
		}
	}
}

// FuzzReadTraceReference: the JSONL reader agrees with the reference.
func FuzzReadTraceReference(f *testing.F) {
	fuzzSeeds(f)
	f.Add([]byte(rdFullTrace()))
	f.Add([]byte(rdKindLast(rdFullTrace())))
	f.Add([]byte(rdLines(tMeta, memPrefix+`"bytes":-5}`)))
	f.Add([]byte(rdLines(tMetaV7, `{"kind":"op","span_id":"s","op_name":"x","inputs":[],"shape":[4],"dtype":"i4","device":"d","duration_ns":1,"timestamp_ns":2,"input_dense_bytes":0,"output_dense_bytes":3}`)))
	f.Fuzz(func(t *testing.T, in []byte) {
		if msg := refCompare(in); msg != "" {
			t.Fatal(msg)
		}
	})
}
