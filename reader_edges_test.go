// reader_edges_test.go holds edge cases of the trace readers, found by
// mutation testing: each pins a rule that no other test checked.

package tracemem

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// mtDocPrefix is a document up to its sections: schema and a run.
const mtDocPrefix = `{"schema":"candle-graph/trace/6","run":{"run_id":"r","correlation_id":"c","entrypoint":"e","phase":"train","timestamp":"t","capture_step":0,"warmup_steps":0,"device":"d","timing_mode":"host","tags":{}},`

// mtDocRun is the run of mtDocPrefix.
func mtDocRun() Run {
	return Run{RunID: "r", CorrelationID: "c", Entrypoint: "e", Phase: PhaseTrain, Timestamp: "t", Device: "d", TimingMode: TimingHost}
}

// TestReadEdgesValid: inputs the readers must accept, with the document
// they must give.
func TestReadEdgesValid(t *testing.T) {
	minimal := func(f func(*TraceDocument)) *TraceDocument {
		d := &TraceDocument{Schema: SchemaV6, Run: rdFullDoc().Run}
		f(d)
		return d
	}
	minimalDoc := func(f func(*TraceDocument)) *TraceDocument {
		d := &TraceDocument{Schema: SchemaV6, Run: mtDocRun()}
		f(d)
		return d
	}
	rootSpan := Span{ID: "root", Name: "step", Kind: SpanFunction, Measured: true, Closed: true, DurationNs: 100}
	tests := []struct {
		name, reason string
		input        string
		want         *TraceDocument
	}{
		{"JSONL span_start closed ignored", "closed is a field of the document's spans only: a span_start's closed is an unknown field, and the span_end closes the span",
			rdLines(tMeta, strings.Replace(tRoot, `"measured":true`, `"measured":true,"closed":true`, 1), tRootEnd),
			minimal(func(d *TraceDocument) { d.Spans = []Span{rootSpan} })},
		{"shape with spaces", "white space around the elements of a shape is JSON's; the elements are read the same",
			rdLines(tMeta, strings.Replace(tMem, `[10,10]`, `[ 10 , 10 ]`, 1)),
			minimal(func(d *TraceDocument) { d.Memory = rdFullDoc().Memory[:1] })},
		{"nesting depth 10000", "an object nested 10000 deep (the record is depth 1) is within the limit jsontext has too",
			rdLines(tMeta, strings.Replace(tRoot, `{"kind":"span_start",`, `{"kind":"span_start","x":`+strings.Repeat("[", 9998)+`{}`+strings.Repeat("]", 9998)+`,`, 1), tRootEnd),
			minimal(func(d *TraceDocument) { d.Spans = []Span{rootSpan} })},
		{"JSONL span_start duration ignored", "duration_ns is a field of span_end: on a span_start it is an unknown field, and a span without span_end has no duration",
			rdLines(tMeta, strings.Replace(tRoot, `"measured":true`, `"measured":true,"duration_ns":5`, 1)),
			minimal(func(d *TraceDocument) {
				d.Spans = []Span{{ID: "root", Name: "step", Kind: SpanFunction, Measured: true}}
			})},
		{"document run schema ignored", "a document's schema is its top-level key; a schema inside run is an unknown field, whatever its type",
			strings.Replace(mtDocPrefix, `"run":{`, `"run":{"schema":1,`, 1) + `"spans":[]}`,
			minimalDoc(func(*TraceDocument) {})},
		{"document span span_kind ignored", "a document span's kind is kind; span_kind (JSONL's name) is an unknown field there",
			mtDocPrefix + `"spans":[{"id":"a","name":"n","kind":"op","span_kind":"module","measured":true,"start_ns":0,"closed":false,"duration_ns":0}]}`,
			minimalDoc(func(d *TraceDocument) { d.Spans = []Span{{ID: "a", Name: "n", Kind: SpanOp, Measured: true}} })},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadTrace(strings.NewReader(tc.input))
			if err != nil {
				t.Fatalf("%s: %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s: document (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

// TestReadEdgesErrors: bad input, and the exact error it gives.
func TestReadEdgesErrors(t *testing.T) {
	tests := []struct {
		name, reason string
		input        string
		want         string // regexp of the error text
		is           error  // sentinel the error wraps; nil: none checked
	}{
		{"doc open span duration 1", "an open span's duration must be 0: 1 is the smallest wrong value",
			mtDocPrefix + `"spans":[{"id":"a","name":"n","kind":"op","measured":true,"start_ns":0,"closed":false,"duration_ns":1}]}`,
			`^offset \d+: spans: duration_ns: want 0 for a span that is not closed, got 1$`, nil},
		{"output_dense_bytes negative", "an error names the field as written: the /7 name output_dense_bytes, not storage_bytes",
			rdLines(tMetaV7, strings.Replace(tOp, `"input_storage_bytes":800`, `"input_storage_bytes":800,"output_dense_bytes":-1`, 1)),
			`^line 2: op: output_dense_bytes: want an unsigned integer, got negative number -1$`, nil},
		{"exponent upper case", "1E3 is a number with an exponent like 1e3: non-integer, not an overflow",
			rdLines(tMeta, memPrefix+`"bytes":1E3}`),
			`^line 2: memory: bytes: want an unsigned integer, got non-integer number 1E3$`, nil},
		{"negative fraction", "a negative number is reported as negative first, even when it is also fractional",
			rdLines(tMeta, memPrefix+`"bytes":-1.5}`),
			`^line 2: memory: bytes: want an unsigned integer, got negative number -1.5$`, nil},
		{"value of exactly 40 bytes", "a value is shortened only beyond 40 bytes: one of exactly 40 is shown whole, with no ellipsis",
			rdLines(tMeta, memPrefix+`"bytes":"`+strings.Repeat("x", 38)+`"}`),
			`^line 2: memory: bytes: want an unsigned integer, got string "x{38}"$`, nil},
		{"value cut inside a character", "a long value is cut between characters, so that the message stays valid UTF-8 (é is 2 bytes: 19 of them and the quote fill 39 of the 40)",
			rdLines(tMeta, memPrefix+`"bytes":"`+strings.Repeat("é", 30)+`"}`),
			`^line 2: memory: bytes: want an unsigned integer, got string "(é){19}\.\.\.$`, nil},
		{"value not UTF-8", "bytes of a value that are not UTF-8 (a top-level string the scanner has not checked) show as U+FFFD, so that the message stays valid UTF-8",
			"\"\x95\"",
			`^line 1: not a trace: want a JSON object or array, got string "\x{FFFD}"$`, ErrUnknownFormat},
		{"norm a string", "norm is a number: a string is the wrong type, not a number out of range",
			rdLines(tMeta, strings.Replace(tGradient, `1.5`, `"1.5"`, 1)),
			`^line 2: gradient: norm: want a number, got string "1.5"$`, nil},
		{"duplicate kind, known kind first", "kind given twice names no record kind, whichever path reads the line: as when kind is not first",
			rdLines(tMeta, strings.Replace(tMem, `"kind":"memory",`, `"kind":"memory","kind":"memory",`, 1)),
			`^line 2: kind: duplicate field$`, ErrInvalidJSON},
		{"data after a record, column", "the column of the data after a record is that of its first byte, past the white space (the fused path of a known kind)",
			rdLines(tMeta, tRoot+"  "+tRootEnd),
			`^line 2: want one JSON object a line, found more after it at column ` + strconv.Itoa(len(tRoot)+3) + `$`, ErrInvalidJSON},
		{"first missing field", "of several missing fields the first in field order is named: tensor_id before bytes",
			rdLines(tMeta, strings.Replace(strings.Replace(tMem, `"tensor_id":"t1",`, ``, 1), `"bytes":400,`, ``, 1)),
			`^line 2: memory: tensor_id: missing required field$`, nil},
		{"doc span missing kind", "a document span's kind is named kind, also when missing (span_kind is JSONL's name)",
			mtDocPrefix + `"spans":[{"id":"a","name":"n","measured":true,"start_ns":0,"closed":false,"duration_ns":0}]}`,
			`^offset \d+: spans: kind: missing required field$`, nil},
		{"doc empty schema", "an empty schema is no supported schema",
			strings.Replace(mtDocPrefix, `"candle-graph/trace/6"`, `""`, 1) + `"spans":[]}`,
			`^offset 10: schema: unsupported schema ""`, ErrUnsupportedSchema},
		{"carriage return inside a string", "a CR not followed by LF inside a string is a control character, not the end of the line",
			rdLines(tMeta, strings.Replace(tMem, `"t1"`, "\"t\rx\"", 1)),
			`^line 2: memory: invalid JSON at column \d+: invalid control character byte 0xd in string$`, ErrInvalidJSON},
		{"overflow by a carry into the high word", "18446744073709551620 is 2^64+4: the multiply by 10 overflows (high word 1), no silent wrap",
			rdLines(tMeta, memPrefix+`"bytes":18446744073709551620}`),
			`^line 2: memory: bytes: number 18446744073709551620 overflows uint64$`, nil},
		{"schema then unknown keys", "a first object with schema and no deciding key is a document, whatever comes after schema",
			`{"schema":"candle-graph/trace/6","foo":1}`,
			`^offset 0: run: missing required field$`, nil},
		{"plus infinity before kind", "a non-finite number with a plus sign is named whole, sign and all",
			`{"x": +inf, "kind": "meta"}`,
			`^line 1: not a trace: invalid JSON: \+inf is not a JSON number`, ErrUnknownFormat},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := ReadTrace(strings.NewReader(tc.input))
			if err == nil {
				t.Fatalf("%s: no error; document %+v", tc.reason, doc)
			}
			if !utf8.ValidString(err.Error()) {
				t.Errorf("%s: error %q is not valid UTF-8", tc.reason, err)
			}
			if !regexp.MustCompile(tc.want).MatchString(err.Error()) {
				t.Errorf("%s: error %q does not match %q", tc.reason, err, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("%s: error %q does not wrap %v", tc.reason, err, tc.is)
			}
		})
	}
}

// TestGzipReadErrorAfterMember: a read that fails right after a
// gzip member is a read error, not the end of the stream.
func TestGzipReadErrorAfterMember(t *testing.T) {
	boom := errors.New("boom")
	_, err := ReadTrace(&rdErrReader{data: rdGzip(t, []byte(rdFullTrace())), err: boom})
	if !errors.Is(err, boom) {
		t.Errorf("error %v, want the reader's error: the stream did not end", err)
	}
}
