// reader.go holds ReadTrace and ReadTraceFile: gzip and format detection, and assembly of the JSONL stream into a document.

package tracemem

import (
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tracemem/tracemem/internal/prefault"
)

// ReadTraceFile reads the trace in the named file (see ReadTrace). Errors
// name the path: a *ParseError gets its Path set, other errors are
// prefixed with it.
func ReadTraceFile(path string) (*TraceDocument, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err // *fs.PathError names the path
	}
	defer f.Close()
	doc, err := ReadTrace(f)
	if err != nil {
		if perr, ok := errors.AsType[*ParseError](err); ok && perr.Path == "" {
			perr.Path = path
			return nil, err
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return doc, nil
}

// ReadTrace reads a whole trace into memory. The format is detected from
// the content, not from any file name:
//
//   - a gzip stream (by its magic bytes) is decompressed first;
//   - a candle-graph JSONL stream: the first object has a top-level "kind";
//   - a candle-graph document: an object with "run", "spans", "ops",
//     "tensors", "memory", "device_memory", "gradients" or "edges" (or only
//     "schema");
//   - a Chrome trace (PyTorch profiler): an object with "traceEvents", or a
//     top-level array; it is handed to ReadChromeTrace.
//
// The decision is made on the top-level keys of the first object, reading
// only as far as the first deciding key.
//
// Errors say where and what: a *ParseError with the 1-based line of a JSONL
// record or the byte offset in a document (offsets count decompressed
// bytes). Empty input gives ErrEmptyTrace, anything else that is not a
// trace ErrUnknownFormat (both wrapped); I/O and gzip errors are wrapped.
//
// JSONL assembly: the first record must be meta and appear once; a second
// span_start for an id, a span_end for an unknown span and a second
// span_end for a span are errors; spans come out sorted by id with Closed
// and DurationNs from their span_end; the other sections keep record
// order. Both forms: an op's or tensor's absent storage_bytes is set to the
// dense size of shape × dtype when the dtype is known (nil otherwise); an
// absent category is CategoryOther; empty arrays, objects and sections are
// nil (never empty non-nil), so a document compares equal to what reading
// its WriteJSONL output gives.
//
// Strings that repeat are interned: the document's strings and shape
// slices are shared between records; treat them as immutable.
func ReadTrace(r io.Reader) (*TraceDocument, error) {
	src, closeSrc, err := decompress(r)
	if err != nil {
		return nil, err
	}
	defer closeSrc()
	return readDecoded(src)
}

// decompress returns the content of r: r itself, or its decompression when
// r starts with the gzip magic bytes. The caller calls the returned close
// function when done.
func decompress(r io.Reader) (io.Reader, func(), error) {
	br := bufio.NewReaderSize(r, 64<<10)
	magic, err := br.Peek(2)
	if err != nil && err != io.EOF {
		return nil, nil, fmt.Errorf("read: %w", err)
	}
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, fmt.Errorf("gzip: %w", err)
		}
		return &gzipErrReader{zr}, func() { zr.Close() }, nil
	}
	return br, func() {}, nil
}

// gzipErrReader names gzip in the errors of the decompressed stream.
type gzipErrReader struct{ r io.Reader }

func (g *gzipErrReader) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("gzip: %w", err)
	}
	return n, err
}

// traceFormat is what detectFormat found.
type traceFormat uint8

const (
	formatJSONL traceFormat = iota + 1
	formatDocument
	formatChrome
)

// readDecoded detects the format of the decompressed stream r and reads it.
func readDecoded(r io.Reader) (*TraceDocument, error) {
	format, src, err := detect(r)
	if err != nil {
		return nil, err
	}
	switch format {
	case formatJSONL:
		return readJSONL(src)
	case formatDocument:
		return readDocument(src)
	default:
		return ReadChromeTrace(src)
	}
}

// detect reads the start of the decompressed stream r to decide its format,
// and returns a reader that replays r from its first byte.
func detect(r io.Reader) (traceFormat, io.Reader, error) {
	var prefix bytes.Buffer
	format, err := detectFormat(io.TeeReader(r, &prefix), prefix.Bytes)
	if err != nil {
		return 0, nil, err
	}
	return format, io.MultiReader(&prefix, r), nil
}

// docKeys are top-level keys that only a document has.
func isDocKey(k string) bool {
	switch k {
	case "run", "spans", "ops", "tensors", "memory", "device_memory", "gradients", "edges":
		return true
	}
	return false
}

// detectFormat reads the start of r to decide its format; seen returns the
// bytes read so far (for line numbers in errors).
func detectFormat(r io.Reader, seen func() []byte) (traceFormat, error) {
	dec := jsontext.NewDecoder(r)
	fail := func(err error) error {
		if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) && isBlank(seen()) {
			return ErrEmptyTrace
		}
		var ioe interface{ Unwrap() error }
		var se *jsontext.SyntacticError
		if errors.As(err, &se) {
			line := 1 + bytes.Count(seen()[:min(int(se.ByteOffset), len(seen()))], []byte{'\n'})
			msg := "not a trace: invalid JSON: " + strings.TrimPrefix(se.Error(), "jsontext: ")
			if errors.Is(err, io.ErrUnexpectedEOF) {
				msg = "truncated input: it ends inside a JSON value"
			}
			return &ParseError{Line: line, Msg: msg, Err: fmt.Errorf("%w: %w", ErrUnknownFormat, err)}
		}
		if errors.As(err, &ioe) {
			return fmt.Errorf("read: %w", err)
		}
		return err
	}
	switch dec.PeekKind() {
	case '[':
		return formatChrome, nil
	case '{':
	case 0:
		_, err := dec.ReadToken()
		return 0, fail(err)
	default:
		b := bytes.TrimLeft(seen(), " \t\r\n")
		return 0, &ParseError{Line: 1 + bytes.Count(seen()[:len(seen())-len(b)], []byte{'\n'}),
			Msg: "not a trace: want a JSON object or array, got " + describe(firstValue(b)), Err: ErrUnknownFormat}
	}
	if _, err := dec.ReadToken(); err != nil {
		return 0, fail(err)
	}
	sawSchema := false
	for dec.PeekKind() == '"' {
		name, err := dec.ReadToken()
		if err != nil {
			return 0, fail(err)
		}
		switch k := name.String(); {
		case k == "kind":
			return formatJSONL, nil
		case k == "traceEvents":
			return formatChrome, nil
		case isDocKey(k):
			return formatDocument, nil
		case k == "schema":
			sawSchema = true
		}
		if err := dec.SkipValue(); err != nil {
			return 0, fail(err)
		}
	}
	if _, err := dec.ReadToken(); err != nil { // '}' or a syntax error
		return 0, fail(err)
	}
	if sawSchema {
		return formatDocument, nil
	}
	return 0, &ParseError{Line: 1, Msg: `not a trace: the first object has none of the keys "kind", "schema", "run" or "traceEvents"`,
		Err: ErrUnknownFormat}
}

// firstValue returns a short prefix of b for an error message.
func firstValue(b []byte) []byte {
	if i := bytes.IndexAny(b, " \t\r\n,:"); i > 0 {
		b = b[:i]
	}
	if len(b) > 40 {
		b = b[:40]
	}
	return b
}

// readJSONL assembles the JSONL stream r into a document.
func readJSONL(r io.Reader) (*TraceDocument, error) {
	d := newRecordDecoder(r)
	doc := &TraceDocument{}
	var sec sections
	defer sec.release()
	type spanRef struct {
		span *Span // in spans' chunk storage, which never moves
		line int   // line of its span_start
	}
	spanAt := make(map[string]spanRef, 1024)
	type spanKey struct {
		id   string
		span *Span
	}
	var order []spanKey // sorted by id at the end, then copied out
	for {
		k, err := d.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch k {
		case recMeta:
			doc.Schema = d.schema
			doc.Run = d.run
		case recSpanStart:
			if first, dup := spanAt[d.span.ID]; dup {
				return nil, &ParseError{Line: d.line, Kind: "span_start", Field: "id",
					Msg: "duplicate span id " + strconv.Quote(d.span.ID) + " (first on line " + strconv.Itoa(first.line) + ")"}
			}
			p := sec.spans.add(&d.span)
			spanAt[d.span.ID] = spanRef{p, d.line}
			order = append(order, spanKey{d.span.ID, p})
		case recSpanEnd:
			ref, ok := spanAt[d.spanEnd.ID]
			if !ok {
				return nil, &ParseError{Line: d.line, Kind: "span_end", Field: "id",
					Msg: "span_end of unknown span " + strconv.Quote(d.spanEnd.ID)}
			}
			if ref.span.Closed {
				return nil, &ParseError{Line: d.line, Kind: "span_end", Field: "id",
					Msg: "second span_end for span " + strconv.Quote(d.spanEnd.ID)}
			}
			ref.span.Closed = true
			ref.span.DurationNs = d.spanEnd.DurationNs
		case recOp:
			sec.ops.add(&d.op)
		case recTensor:
			sec.tensors.add(&d.tensor)
		case recMemory:
			sec.mem.add(&d.mem)
		case recDeviceMemory:
			sec.devMem.add(&d.devMem)
		case recGradient:
			sec.grads.add(&d.grad)
		case recEdge:
			sec.edges.add(&d.edge)
		}
	}
	if len(order) > 0 { // sort keys, not 80-byte spans
		slices.SortFunc(order, func(a, b spanKey) int { return strings.Compare(a.id, b.id) })
		doc.Spans = make([]Span, len(order))
		for i, k := range order {
			doc.Spans[i] = *k.span
		}
	}
	sec.into(doc)
	return doc, nil
}

// sections collects the sections of a document as a reader meets their
// records.
type sections struct {
	spans   chunked[Span]
	ops     chunked[Op]
	tensors chunked[Tensor]
	mem     chunked[MemoryEvent]
	devMem  chunked[DeviceMemorySample]
	grads   chunked[Gradient]
	edges   chunked[Edge]
}

// into hands the sections but spans to doc: each reader orders its spans.
func (s *sections) into(doc *TraceDocument) {
	doc.Ops = s.ops.slice()
	doc.Tensors = s.tensors.slice()
	doc.Memory = s.mem.slice()
	doc.DeviceMemory = s.devMem.slice()
	doc.Gradients = s.grads.slice()
	doc.Edges = s.edges.slice()
}

// release stops the mapping in of every section's current chunk; readers
// defer it for the paths that return (an error) without calling into.
func (s *sections) release() {
	s.spans.release()
	s.ops.release()
	s.tensors.release()
	s.mem.release()
	s.devMem.release()
	s.grads.release()
	s.edges.release()
}

// chunked collects values in chunks that never move, then hands them out
// as one slice of the exact length. For large sections this does a third
// of the copying and clearing of append's 1.25x growth and leaves no slack
// capacity in the document.
type chunked[T any] struct {
	full [][]T
	cur  []T
	n    int
	stop func() // ends the mapping in of cur's pages (see add); nil for none
}

// release ends the mapping in of the current chunk's pages, if any.
func (c *chunked[T]) release() {
	if c.stop != nil {
		c.stop()
		c.stop = nil
	}
}

// add appends a copy of *v and returns a pointer to it, valid until slice.
func (c *chunked[T]) add(v *T) *T {
	if len(c.cur) == cap(c.cur) {
		size := min(max(2*cap(c.cur), 64), 1<<15)
		if c.cur != nil {
			c.full = append(c.full, c.cur)
		}
		c.release()
		c.cur = make([]T, 0, size)
		// A full-size chunk of memory events is 4 MB of fresh memory,
		// slower to fault in than to fill: another core maps it in.
		c.stop = prefault.Ahead(prefault.Bytes(c.cur))
	}
	c.cur = append(c.cur, *v)
	c.n++
	return &c.cur[len(c.cur)-1]
}

// slice returns the values in order; nil when there are none.
func (c *chunked[T]) slice() []T {
	c.release()
	switch {
	case c.n == 0:
		return nil
	case len(c.full) == 0 && cap(c.cur)-len(c.cur) <= 64:
		return c.cur
	}
	out := make([]T, 0, c.n)
	// out is fresh memory, slower to fault in than to copy into.
	stop := prefault.Ahead(prefault.Bytes(out))
	defer stop()
	for _, ch := range c.full {
		out = append(out, ch...)
	}
	return append(out, c.cur...)
}

func sortSpans(spans []Span) {
	slices.SortFunc(spans, func(a, b Span) int { return cmp.Compare(a.ID, b.ID) })
}
