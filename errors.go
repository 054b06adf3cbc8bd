// errors.go holds the typed parse error of the trace readers and their sentinel errors.

package tracemem

import (
	"errors"
	"strconv"
)

// Sentinel errors of the readers. They are wrapped (test them with
// errors.Is), usually inside a *ParseError that says where.
var (
	// ErrEmptyTrace is returned for an input that holds no record at all
	// (no bytes, or white space only, after any gzip layer).
	ErrEmptyTrace = errors.New("empty trace")
	// ErrUnknownFormat is returned for an input that is neither a
	// candle-graph JSONL stream, a candle-graph document nor a Chrome trace.
	ErrUnknownFormat = errors.New("unknown trace format")
	// ErrMissingMeta is returned for a JSONL stream whose first record is
	// not a meta record, or that has none.
	ErrMissingMeta = errors.New("meta record missing")
	// ErrUnsupportedSchema is returned for a schema other than
	// candle-graph/trace/6 or candle-graph/trace/7. Another schema may name
	// or type any field differently, so the schema's error comes first: a
	// JSONL meta record's schema is checked before its other fields, and a
	// document's, wherever it is, outranks the error of a value before it
	// (the reader reads on to it, unless the JSON itself is broken).
	ErrUnsupportedSchema = errors.New("unsupported schema")
	// ErrInvalidJSON is wrapped by the errors for input that is not valid
	// JSON (or, in a JSONL stream, not one JSON object a line).
	ErrInvalidJSON = errors.New("invalid JSON")
)

// ParseError reports bad input: where it is and what is wrong with it.
//
// A JSONL error names the 1-based Line of the record and, in Offset, the
// 0-based byte offset in that line of what is at fault: the value of the
// field at fault (of its second occurrence when a name is given twice; of the
// element or the tag at fault, when Field names one), the byte where invalid
// JSON was found (for a record cut short, the line's end, before its
// newline), or what follows the record's object; 0 when the fault is the
// record as a whole (a required field missing, a span error, a record out of
// order). A column in Msg is that offset plus 1. A document-form error has
// Line 0 and names the byte Offset (from the start of the decompressed
// document) of the value at fault, a Chrome trace's error that of the event
// at fault (see ReadChromeTrace). An input that is not a trace
// (ErrUnknownFormat) names the Line and the offset in it where its first
// value starts, or where its invalid JSON was found. Kind is the record kind
// ("memory", "span_start", ...; in a document, the section the element or the
// error is in, e.g. "memory" or "run"), empty when the error is not about one
// record or section.
// Field is the JSON field at fault, with the element of a list or the key of
// an object when one is at fault ("shape[1]", "inputs[0]", "tags.host"), empty
// when none or when Msg names it (an unknown enumeration value: the
// *EnumError in Err has the field as its Type).
// Err is the underlying cause when there is one (a sentinel such as
// ErrMissingMeta, an *EnumError, a *SpanError, a *jsontext.SyntacticError, an
// I/O error); errors.Is and errors.As see through to it.
type ParseError struct {
	Path   string // file path, set by ReadTraceFile; "" otherwise
	Line   int    // 1-based line of the JSONL record; 0 for the document form
	Offset int64  // byte offset: from the input's start when Line is 0, else from the line's start
	Kind   string // record kind or document section; "" when none
	Field  string // JSON field name; "" when none
	Msg    string // what is wrong, e.g. `unknown action "alocate" (want alloc or free)`
	Err    error  // underlying cause, may be nil
}

// Error renders e.g. `trace.jsonl: line 17: memory: unknown action "alocate" (want alloc or free)`
// or `offset 1234: memory: bytes: want an unsigned integer, got negative number -5`.
func (e *ParseError) Error() string {
	b := make([]byte, 0, 64+len(e.Msg))
	if e.Path != "" {
		b = append(b, e.Path...)
		b = append(b, ": "...)
	}
	if e.Line > 0 {
		b = append(b, "line "...)
		b = strconv.AppendInt(b, int64(e.Line), 10)
	} else {
		b = append(b, "offset "...)
		b = strconv.AppendInt(b, e.Offset, 10)
	}
	if e.Kind != "" {
		b = append(b, ": "...)
		b = append(b, e.Kind...)
	}
	if e.Field != "" {
		b = append(b, ": "...)
		b = append(b, e.Field...)
	}
	b = append(b, ": "...)
	b = append(b, e.Msg...)
	return string(b)
}

// Unwrap returns the underlying cause.
func (e *ParseError) Unwrap() error { return e.Err }
