// errors_test.go holds the tests of the sentinel errors: each condition matches its own and no other.

package tracemem

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestSentinelsDistinct: each error a caller tests for matches exactly the
// sentinels its condition names (from a mutation test: ErrMissingMeta made
// an alias of ErrUnknownFormat went unseen, as no test asked for it).
func TestSentinelsDistinct(t *testing.T) {
	sentinels := map[string]error{"ErrEmptyTrace": ErrEmptyTrace, "ErrUnknownFormat": ErrUnknownFormat,
		"ErrMissingMeta": ErrMissingMeta, "ErrUnsupportedSchema": ErrUnsupportedSchema, "ErrInvalidJSON": ErrInvalidJSON,
		"ErrOutOfOrder": ErrOutOfOrder, "ErrInvalidOptions": ErrInvalidOptions, "ErrInvalidEvent": ErrInvalidEvent}
	read := func(in string) func() error {
		return func() error { _, err := ReadTrace(strings.NewReader(in)); return err }
	}
	for _, c := range []struct {
		name, reason string
		err          func() error
		want         []string
	}{
		{"empty", "no record at all", read(" \n"), []string{"ErrEmptyTrace"}},
		{"not JSON", "no trace, and not JSON either", read("hello\n"), []string{"ErrUnknownFormat", "ErrInvalidJSON"}},
		{"no meta first", "a JSONL stream must open with meta", read(tRootEnd + "\n"), []string{"ErrMissingMeta"}},
		{"schema", "a schema before /6", read(strings.Replace(tMeta, "trace/6", "trace/5", 1) + "\n"), []string{"ErrUnsupportedSchema"}},
		{"bad JSON", "a record that is not JSON", read(tMeta + "\n{]\n"), []string{"ErrInvalidJSON"}},
		{"out of order", "a memory event stamped before the one before, fed to an Analyzer", func() error {
			a := NewAnalyzer(Options{})
			a.Add(&MemoryEvent{TimestampNs: 2, TensorID: "a", Device: "d"})
			return a.Add(&MemoryEvent{TimestampNs: 1, TensorID: "b", Device: "d"})
		}, []string{"ErrOutOfOrder"}},
		{"options", "a negative number of points", func() error { _, err := Analyze(&TraceDocument{}, Options{MaxTimelinePoints: -1}); return err },
			[]string{"ErrInvalidOptions"}},
		{"event", "an action out of range", func() error {
			_, err := Analyze(&TraceDocument{Memory: []MemoryEvent{{TensorID: "a", Device: "d", Action: 9}}}, Options{})
			return err
		}, []string{"ErrInvalidEvent"}},
	} {
		err := c.err()
		for name, s := range sentinels {
			if want := slices.Contains(c.want, name); errors.Is(err, s) != want {
				t.Errorf("%s (%s): %v: errors.Is %s = %v, want %v", c.name, c.reason, err, name, !want, want)
			}
		}
	}
}

// TestParseErrorOffset: a JSONL error's Offset is the byte offset in its
// line of what is at fault (marked ⟨ in the cases), 0 when the record as a
// whole is; a column in the message is that offset plus 1; ReadTrace and
// AnalyzeStream, which share the record decoder, agree. (From a user trial:
// Offset was set on some paths only, relative to different starts.)
func TestParseErrorOffset(t *testing.T) {
	const mark = "⟨"
	long := strings.Repeat(" ", lineBuffer+100) // white space the reader does not hold
	for _, c := range []struct {
		name, reason string
		in           string // the trace, with mark before the byte at fault
		line         int
	}{
		{"field, kind first", "the fused path: a negative byte count",
			rdLines(tMeta, memPrefix+`"bytes":⟨-5}`), 2},
		{"enum, kind first", "an unknown action, on the fused path",
			rdLines(tMeta, `{"kind":"memory","timestamp_ns":1,"tensor_id":"a","span_id":"s","device":"d","bytes":1,"action":⟨"alocate","shape":[],"dtype":"f32"}`), 2},
		{"field, kind later", "the collecting path: kind is not the first member",
			rdLines(tMeta, `{"timestamp_ns":1,"bytes":⟨-5,"kind":"memory"}`), 2},
		{"indented", "white space before the object counts in the offset",
			rdLines(tMeta, "  \t"+memPrefix+`"bytes":⟨-5}`), 2},
		{"long indent", "white space past the reader's buffer, which it drops, still counts",
			rdLines(tMeta, long+memPrefix+`"bytes":⟨-5}`), 2},
		{"schema", "meta's schema is checked before its other fields",
			rdLines(`{"kind":"meta","schema":⟨"candle-graph/trace/5"}`), 1},
		{"duplicate field", "the second occurrence's value",
			rdLines(tMeta, memPrefix+`"bytes":1,"bytes":⟨2}`), 2},
		{"shape element", "a list's element at fault, not the list (from the check of AddJSONLine: the list's start)",
			rdLines(tMeta, memPrefix+`"bytes":1,"shape":[2, ⟨-3]}`), 2},
		{"shape element, kind later", "likewise on the collecting path",
			rdLines(tMeta, `{"shape":[2,⟨"x"],"kind":"memory"}`), 2},
		{"inputs element", "an op's input that is no string",
			rdLines(tMeta, `{"kind":"op","span_id":"s","op_name":"mm","inputs":["a", ⟨7]}`), 2},
		{"bad escape in an input", "the scanner's error (it validates every string before the fields are read), at the string",
			rdLines(tMeta, `{"kind":"op","span_id":"s","op_name":"mm","inputs":["a",⟨"\ud800x\q"]}`), 2},
		{"duplicate tag", "a tag given twice: the second's value, as for a field (from the check of AddJSONLine: the tags' start)",
			rdLines(`{"kind":"meta","schema":"candle-graph/trace/6","tags":{"a":"1", "a":⟨"2"}}`), 1},
		{"tag not a string", "a tag's value of another type",
			rdLines(`{"kind":"meta","schema":"candle-graph/trace/6","tags":{"a":"1","b":⟨2}}`), 1},
		{"duplicate ignored field", "a field the types do not have, given twice",
			rdLines(tMeta, memPrefix+`"bytes":1,"x":1,"x":⟨2}`), 2},
		{"duplicate in skipped record", "a record of an unknown kind is still checked for duplicates",
			rdLines(tMeta, `{"kind":"future","a":1,"a":⟨2}`), 2},
		{"duplicate kind", "kind given twice",
			rdLines(tMeta, `{"kind":"memory","kind":⟨"memory"}`), 2},
		{"duplicate kind, collected", "kind given twice, the first not first",
			rdLines(tMeta, `{"a":1,"kind":"memory","kind":⟨"memory"}`), 2},
		{"kind not a string", "the discriminator's type",
			rdLines(tMeta, `{"a":1,"kind":⟨5}`), 2},
		{"syntax", "the byte where the JSON goes wrong",
			rdLines(tMeta, `{"kind":"memory", ⟨nope}`), 2},
		{"line cut short", "a value open at the line's end: the end, before the newline",
			rdLines(tMeta, `{"kind":"memory","a":[1⟨`, tRoot), 2},
		{"input cut short", "a value open at the input's end",
			tMeta + "\n" + `{"kind":"memory","a":[1⟨`, 2},
		{"trailing data", "more after the record's object",
			rdLines(tMeta, `{"kind":"future"} ⟨x`), 2},
		{"not an object", "a line holding another JSON value",
			rdLines(tMeta, `  ⟨[1]`), 2},
		{"missing field", "the record as a whole is at fault",
			rdLines(tMeta, `{"kind":"memory","timestamp_ns":1}`), 2},
		{"span error", "a span_end for an unknown span: the record as a whole",
			rdLines(tMeta, `{"kind":"span_end","id":"nope","duration_ns":1}`), 2},
		{"not a trace, syntax", "before the format is known: the byte of the syntax error",
			"\n\n  n⟨ope\n", 3}, // jsontext stops at the o
		{"not a trace, value", "before the format is known: where the value starts",
			"\n ⟨42\n", 2},
		{"not a trace, object", "an object with none of the deciding keys",
			"\n\n⟨{\"a\":1}\n", 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := strings.Replace(c.in, mark, "", 1)
			lines := strings.Split(c.in, "\n")
			want := int64(max(strings.Index(lines[c.line-1], mark), 0))
			check := func(what string, err error) *ParseError {
				t.Helper()
				var perr *ParseError
				if !errors.As(err, &perr) {
					t.Fatalf("%s: got %v, want a *ParseError (%s)", what, err, c.reason)
				}
				if perr.Line != c.line || perr.Offset != want {
					t.Errorf("%s: %v: Line %d, Offset %d; want %d, %d (%s)", what, err, perr.Line, perr.Offset, c.line, want, c.reason)
				}
				if _, col, ok := strings.Cut(perr.Msg, " column "); ok {
					if n, _, _ := strings.Cut(col, ":"); n != strconv.FormatInt(want+1, 10) {
						t.Errorf("%s: %v: column %s, want %d (Offset + 1)", what, err, n, want+1)
					}
				}
				return perr
			}
			_, err := ReadTrace(strings.NewReader(in))
			read := check("ReadTrace", err)
			if strings.HasPrefix(c.name, "not a trace") {
				return // not JSONL: the stream's reader is not reached
			}
			_, _, err = AnalyzeStream(strings.NewReader(in), Options{})
			if stream := check("AnalyzeStream", err); stream.Field != read.Field || stream.Kind != read.Kind {
				t.Errorf("AnalyzeStream: %v; ReadTrace: %v: different kind or field", stream, read)
			}
		})
	}
}
