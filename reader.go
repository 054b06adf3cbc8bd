// reader.go holds ReadTrace and ReadTraceFile: gzip and format detection, assembly of the JSONL stream into a document, and the counting reader every reader reads through.

package tracemem

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tracemem/tracemem/internal/gzipread"
	"github.com/tracemem/tracemem/internal/lenient"
	"github.com/tracemem/tracemem/internal/prefault"
	"github.com/tracemem/tracemem/internal/traceformat"
)

// ReadTraceFile reads the trace in the named file (see ReadTrace). Errors
// name the path: a *ParseError gets its Path set, errors of opening the
// file (and a directory, which is not read) are *fs.PathError, and other
// errors are prefixed with the path.
func ReadTraceFile(path string) (*TraceDocument, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err // *fs.PathError names the path
	}
	defer f.Close()
	// Reading a directory fails at offset 0, which a *ParseError would
	// report as a trace at fault.
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return nil, &fs.PathError{Op: "read", Path: path, Err: errDirectory}
	}
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

// errDirectory is the error of ReadTraceFile given a directory.
var errDirectory = errors.New("is a directory, not a trace file")

// ReadTrace reads a whole trace into memory. The format is detected from
// the content, not from any file name:
//
//   - a gzip stream (by its magic bytes) is decompressed first, its members
//     one after another, and zero bytes after the last member taken as
//     padding, as gzip(1) does; other bytes after a member that do not
//     start one are an error wrapping gzip.ErrHeader, and gzip inside gzip
//     is an error (other compressions and zip archives are not read:
//     ErrUnknownFormat, naming them);
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
// Input cut short (a JSONL stream inside its last record, a document or
// Chrome trace inside any value, a gzip stream before its end) is an error
// wrapping io.ErrUnexpectedEOF in every form; a record that ends inside a
// value on a line of its own, before more input, is ErrInvalidJSON only.
// A Chrome trace with near-JSON (non-finite numbers, N/A, Windows paths
// unescaped) is read a second time when r is an io.Seeker (see
// ReadChromeTrace). Near-JSON before the first deciding key is repaired only
// when that read finds a Chrome trace (its first deciding key traceEvents
// or deviceProperties, and a traceEvents array); otherwise the error is the
// near-JSON's, as from a reader that cannot seek.
//
// JSONL assembly: the first record must be meta and appear once; a second
// span_start for an id, a span_end for an unknown span and a second span_end
// for a span are errors (each wraps a *SpanError, with the SpanID and Msg an
// Analyzer with node metrics gives for it). Span ids are checked for duplicates
// when the spans are sorted at the end, which spares a lookup per span: a
// second span_start for an id is reported, at its line, once the rest of the
// input is read, or in place of the first error on a later line. Spans come out
// sorted by id with Closed and DurationNs from their span_end; the other
// sections keep record order. Records of an unknown kind are skipped (they must
// still be JSON objects, without a name given twice). Document form: "schema"
// and "run" are required, span ids must be unique (a *SpanError, as above), and
// a span that is not closed must have duration_ns 0. Both forms: a record's
// fields are required when their JSON tag in the document types has neither
// omitempty nor omitzero, except category and, in JSONL, a span's closed and
// duration_ns (its span_end gives them); a required field that is absent is an
// error ("missing required field"). null is absent for an optional field and
// empty for shape, inputs and tags; for another required field it is of the
// wrong type. Fields the types do not have are ignored (later producers add
// fields), but the names schema /7 gave storage_bytes and input_storage_bytes,
// output_dense_bytes and input_dense_bytes, are read as those fields in either
// schema, and a record that gives one field under both its names is an error.
// An op's or tensor's absent storage_bytes is set to the dense size of shape ×
// dtype when the dtype is known (nil otherwise); an absent category is
// CategoryOther; empty arrays, objects and sections are nil (never empty
// non-nil), so a document compares equal to what reading its WriteJSONL output
// gives. A name given twice in a record (or a tags object, or among the
// document's own keys) is an error wrapping ErrInvalidJSON; inside the value of
// a field that is ignored, it is ignored too. A JSONL record or a document
// nested more than 10,000 deep is refused, in ignored values too (the limit
// encoding/json/v2 has).
//
// Strings that repeat are interned: the document's strings and shape
// slices are shared between records; treat them as immutable.
//
// ReadTrace reads r until its end or an error (in blocks, so possibly past
// the record at fault), may seek it (see ReadChromeTrace), and does not
// close it; it keeps no reference to r after it returns. Any reader works. One
// that tells its size (a regular file, as
// ReadTraceFile opens, or a bytes.Reader, strings.Reader or bytes.Buffer)
// lets a JSONL trace's sections be sized early, which spares copying them
// at the end: less time and a lower memory peak on big traces. For gzip
// input the decompressed size is estimated from the compressed size and
// the ratio so far. A section's memory may then have up to 1/16 unused
// room.
func ReadTrace(r io.Reader) (*TraceDocument, error) {
	return readRepaired(r, func() (*TraceDocument, error) { return readTrace(r) })
}

func readTrace(r io.Reader) (*TraceDocument, error) {
	size := inputSize(r)
	if size <= 0 {
		src, closeSrc, _, err := decompress(r)
		if err != nil {
			return nil, err
		}
		defer closeSrc()
		return readDecoded(src, -1, nil)
	}
	in := &readErrs{r: r} // for its count of bytes read
	br := bufio.NewReaderSize(in, decompressBuffer)
	src, closeSrc, gz, err := decompressBuffered(br)
	if err != nil {
		return nil, err
	}
	defer closeSrc()
	if !gz {
		return readDecoded(src, size, nil)
	}
	out := &readErrs{r: src}
	return readDecoded(out, -1, func() int64 { return estimateSize(out.n, in.n-int64(br.Buffered()), size) })
}

// estimateSize returns the decompressed size of a compressed input of size
// bytes, of which consumed bytes have given out bytes so far, if the rest
// decompresses at the same ratio, or at maxRatio if that is less. It returns
// -1 until minEstimated bytes were consumed (or all of them): before, gzip's
// header and a block's code tables weigh too much in the ratio.
func estimateSize(out, consumed, size int64) int64 {
	if out <= 0 || consumed < min(minEstimated, size) {
		return -1
	}
	ratio := min(float64(out)/float64(consumed), maxRatio)
	return out + int64(float64(size-consumed)*ratio)
}

// minEstimated is the compressed bytes estimateSize needs.
const minEstimated = 64 << 10

// maxRatio bounds the ratio estimateSize projects onto the rest of the input,
// and so what a wrong estimate can make the reader reserve: a trace's start
// may compress far better than its rest (blank lines, a record repeated: a
// thousand times over), and projected, that ratio reserved memory for records
// that never came. JSONL traces compress about 15 times; one that compresses
// better than maxRatio is sized low, which costs a copy at the end.
const maxRatio = 64

// inputSize returns the bytes left to read in r when r tells them without
// being read: its Len (bytes.Reader, strings.Reader, bytes.Buffer), or a
// regular file's size less its offset. It returns -1 otherwise. The size
// only sizes the reader's buffers; a wrong one costs copies, never content.
func inputSize(r io.Reader) int64 {
	switch r := r.(type) {
	case interface{ Len() int }:
		return int64(r.Len())
	case interface {
		Stat() (fs.FileInfo, error)
		io.Seeker
	}:
		fi, err := r.Stat()
		if err != nil || !fi.Mode().IsRegular() {
			return -1
		}
		off, err := r.Seek(0, io.SeekCurrent)
		if err != nil || off > fi.Size() {
			return -1
		}
		return fi.Size() - off
	}
	return -1
}

// decompress returns the content of r: r itself, or its decompression when
// r starts with the gzip magic bytes (gz). The caller calls the returned
// close function when done.
func decompress(r io.Reader) (src io.Reader, closeFn func(), gz bool, err error) {
	return decompressBuffered(bufio.NewReaderSize(r, decompressBuffer))
}

// decompressBuffer is the size of the buffer between the input and gzip.
const decompressBuffer = 64 << 10

// decompressBuffered is decompress reading from br.
func decompressBuffered(br *bufio.Reader) (src io.Reader, closeFn func(), gz bool, err error) {
	if _, err := br.Peek(2); err != nil && err != io.EOF {
		return nil, nil, false, &ParseError{Msg: "read: " + err.Error(), Err: err} // at offset 0
	}
	return gzipread.Open(br)
}

// compressedAs names the compressed or archive format that b starts with by
// its magic bytes, with what to do, or returns "". Gzip is not among them:
// it is decompressed before (and gzip inside gzip is gzipread.ErrTwice).
func compressedAs(b []byte) string {
	for _, m := range [...]struct{ magic, what string }{
		{"\x28\xb5\x2f\xfd", "zstd data; decompress it first (gzip is read as is)"},
		{"BZh", "bzip2 data; decompress it first (gzip is read as is)"},
		{"\xfd7zXZ\x00", "xz data; decompress it first (gzip is read as is)"},
		{"PK\x03\x04", "a zip archive; extract the trace first"},
	} {
		if bytes.HasPrefix(b, []byte(m.magic)) {
			return m.what
		}
	}
	return ""
}

// traceFormat is what detectFormat found.
type traceFormat uint8

const (
	formatJSONL traceFormat = iota + 1
	formatDocument
	formatChrome
)

// readDecoded detects the format of the decompressed stream r and reads it.
// size and estimate are readJSONL's.
func readDecoded(r io.Reader, size int64, estimate func() int64) (*TraceDocument, error) {
	format, src, err := detect(r)
	if err != nil {
		return nil, err
	}
	switch format {
	case formatJSONL:
		return readJSONL(src, size, estimate)
	case formatDocument:
		return readDocument(src)
	default:
		return readChrome(src, false) // ReadTrace retries it when r can seek
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

// detectFormat reads the start of r to decide its format; seen returns the
// bytes read so far (for line numbers in errors).
func detectFormat(r io.Reader, seen func() []byte) (traceFormat, error) {
	in := &readErrs{r: r}
	// notTrace starts the message of a syntax error: inside the first
	// object, the input may well be a trace with a defect (a stray comma in
	// a PyTorch trace's deviceProperties, before its traceEvents), so it is
	// not called no trace there.
	notTrace := "not a trace: invalid JSON: "
	// Lenient: only the format is decided here; its reader applies the
	// rules (names given twice, UTF-8) where they apply.
	dec := jsontext.NewDecoder(in, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	fail := func(err error) error {
		if in.failed(err) {
			// The reader failed (a gzip stream cut short, say), even if
			// before any byte: that is not an empty trace.
			return in.readError("")
		}
		if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) && isBlank(seen()) {
			return ErrEmptyTrace
		}
		var ioe interface{ Unwrap() error }
		var se *jsontext.SyntacticError
		if errors.As(err, &se) {
			line, col := lineCol(seen(), int(se.ByteOffset))
			b := in.ahead(seen(), int(se.ByteOffset))
			if start, end, d := lenient.DefectAt(b, int(se.ByteOffset), true); d != lenient.None {
				// A Chrome trace can have one before traceEvents (in
				// metadata): ReadTrace then reads it as one, once more.
				// Where is where its text starts (the sign of -N/A, where
				// the decoder stopped at the N), as ReadChromeTrace says.
				line, col = lineCol(b, start)
				return &ParseError{Line: line, Offset: col, Msg: notTrace + defectMsg(d, string(b[start:end])),
					Err: fmt.Errorf("%w: %w: %w: %w", ErrUnknownFormat, ErrInvalidJSON, errChromeLenient, err)}
			}
			msg := notTrace + syntaxText(se)
			switch at := seen()[min(int(se.ByteOffset), len(seen())):]; {
			case errors.Is(err, io.ErrUnexpectedEOF):
				msg = "truncated input: it ends inside a JSON value"
			case se.ByteOffset == 0 && bytes.HasPrefix(at, bom):
				// Editors on Windows write one; JSON has none.
				msg = "not a trace: invalid JSON: a byte-order mark (U+FEFF) before the first value; remove it"
			case se.ByteOffset == 0 && compressedAs(at) != "":
				// Traces are shared compressed; only gzip is read.
				msg = "not a trace: " + compressedAs(at)
			}
			return &ParseError{Line: line, Offset: col, Msg: msg, Err: fmt.Errorf("%w: %w: %w", ErrUnknownFormat, ErrInvalidJSON, err)}
		}
		if errors.As(err, &ioe) {
			return fmt.Errorf("read: %w", err)
		}
		return err
	}
	// valueAt is where the first value starts (its line and the offset in
	// it), once it is read.
	valueAt := func() (int, int64) {
		b := bytes.TrimLeft(seen(), " \t\r\n")
		return lineCol(seen(), len(seen())-len(b))
	}
	switch dec.PeekKind() {
	case '[':
		return formatChrome, nil
	case '{':
	case 0:
		_, err := dec.ReadToken()
		return 0, fail(err)
	default:
		// A value that is not JSON (nope, -x) is invalid JSON; a JSON value
		// of the wrong type (null, 42, "x") is not a trace.
		v, err := dec.ReadValue()
		var got string
		if err == nil {
			got = describe(firstValue(v)) // v is valid until the next read
			// The bytes right after it may still not be JSON (nulls, 42x).
			if _, err2 := dec.ReadToken(); err2 != nil && err2 != io.EOF {
				err = err2
			}
		}
		if err != nil {
			return 0, fail(err)
		}
		line, col := valueAt()
		return 0, &ParseError{Line: line, Offset: col,
			Msg: "not a trace: want a JSON object or array, got " + got, Err: ErrUnknownFormat}
	}
	if _, err := dec.ReadToken(); err != nil {
		return 0, fail(err)
	}
	notTrace = "invalid JSON before any key that tells the trace's format: "
	sawSchema := false
	for dec.PeekKind() == '"' {
		name, err := dec.ReadToken()
		if err != nil {
			return 0, fail(err)
		}
		switch k := name.String(); traceformat.OfKey(k) {
		case traceformat.JSONL:
			return formatJSONL, nil
		case traceformat.Chrome:
			return formatChrome, nil
		case traceformat.Document:
			return formatDocument, nil
		default:
			sawSchema = sawSchema || k == "schema"
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
	line, col := valueAt()
	return 0, &ParseError{Line: line, Offset: col, Msg: `not a trace: the first object has none of the keys "kind" (JSONL), "traceEvents" (PyTorch) or "schema", "run", "spans", "ops", "tensors", "memory", "device_memory", "gradients", "edges" (document)`,
		Err: ErrUnknownFormat}
}

// lineCol returns the 1-based line of b[off] and its 0-based offset in that
// line (off is clipped to len(b)).
func lineCol(b []byte, off int) (int, int64) {
	b = b[:min(max(off, 0), len(b))]
	start := bytes.LastIndexByte(b, '\n') + 1
	return 1 + bytes.Count(b, []byte{'\n'}), int64(len(b) - start)
}

// firstValue returns a prefix of b for describe, which shortens it: longer
// than what describe shows by a character, so that describe sees it is cut
// (and adds "...") and cuts it between characters itself.
func firstValue(b []byte) []byte {
	if i := bytes.IndexAny(b, " \t\r\n,:"); i > 0 {
		b = b[:i]
	}
	if n := describeMax + utf8.UTFMax; len(b) > n {
		b = b[:n]
	}
	return b
}

// readJSONL assembles the JSONL stream r into a document. size is the bytes
// in r, or -1 when unknown; when known, the sections are sized early on
// (see sizer), so that most traces need no final copy of their sections.
//
// estimate, when not nil, stands in for size: for compressed input it
// returns the decompressed size as estimated so far (-1 while it cannot
// tell). The sizer starts once it can, and asks again at each step.
func readJSONL(r io.Reader, size int64, estimate func() int64) (*TraceDocument, error) {
	d := newRecordDecoder(r)
	z := newSizer(size)
	doc := &TraceDocument{}
	var sec sections
	defer sec.release()
	// Span ids are checked for duplicates when they are sorted at the end
	// (sortedSpans), instead of by a lookup per span_start, which took a tenth
	// of the read's time; fail looks for a duplicate before it returns another
	// error, so errors still come in line order. A span_end finds its span
	// among the last few opened, which traces written as things happen end
	// first, or else in spanAt, built over order only when it is not found
	// there.
	var order []spanKey // spans in line order; sorted by id at the end
	// open lists the spans started, in start order, less those a span_end
	// found in it; one ended through spanAt stays until it is the last.
	var open []*Span
	var spanAt map[string]*Span
	indexed := 0 // order[:indexed] are in spanAt
	fail := func(err error) (*TraceDocument, error) {
		if dup := firstDuplicate(slices.Clone(order)); dup != nil {
			return nil, dup
		}
		return nil, err
	}
	for {
		k, err := d.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fail(err)
		}
		if estimate != nil && z.at < 0 && !z.noted {
			if size := estimate(); size > 0 {
				z = newSizer(size)
			}
		}
		if z.at >= 0 && d.offset >= z.at {
			if estimate != nil {
				z.size = max(estimate(), d.offset)
			}
			z.step(&sec, d.offset)
		}
		switch k {
		case recMeta:
			doc.Schema = d.schema
			doc.Run = d.run
		case recSpanStart:
			p := sec.spans.add(&d.span)
			order = append(order, spanKey{d.span.ID, p, d.line})
			open = append(open, p)
		case recSpanEnd:
			id := d.spanEnd.ID
			var span *Span
			for i := len(open) - 1; i >= max(0, len(open)-openScan); i-- {
				if open[i].ID == id {
					span = open[i]
					open = slices.Delete(open, i, i+1)
					break
				}
			}
			if span == nil {
				if spanAt == nil {
					spanAt = make(map[string]*Span, len(order))
				}
				for _, k := range order[indexed:] {
					if _, dup := spanAt[k.id]; !dup { // reported by fail or at the end
						spanAt[k.id] = k.span
					}
				}
				indexed = len(order)
				span = spanAt[id]
			}
			// Worded as AnalyzeStream words them.
			if span == nil {
				serr := &SpanError{SpanID: id, Msg: "end of an unknown span"}
				return fail(&ParseError{Line: d.line, Kind: "span_end", Msg: serr.Error(), Err: serr})
			}
			if span.Closed {
				serr := &SpanError{SpanID: id, Msg: "span ended twice"}
				return fail(&ParseError{Line: d.line, Kind: "span_end", Msg: serr.Error(), Err: serr})
			}
			span.Closed = true
			span.DurationNs = d.spanEnd.DurationNs
			for len(open) > 0 && open[len(open)-1].Closed { // ended through spanAt
				open = open[:len(open)-1]
			}
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
	spans, err := sortedSpans(order)
	if err != nil {
		return nil, err
	}
	doc.Spans = spans
	sec.into(doc)
	return doc, nil
}

// openScan is how many of the last spans opened a span_end looks through
// before it looks its span up among all.
const openScan = 8

// spanKey is a span_start read: its span's id, its span (in the chunk
// storage, which never moves) and its line.
type spanKey struct {
	id   string
	span *Span
	line int
}

// sortedSpans sorts keys, which are in line order, by id and returns their
// spans in that order, or the error for the first duplicate span (see
// firstDuplicate). Sorting keys, not 88-byte spans, moves less; finding
// duplicates here, not by a lookup per span_start, spares a map of every id,
// whose lookups miss the cache, as long as span_ends end the spans opened
// last (readJSONL builds spanAt for those that do not). The document form
// sorts its spans in place and keeps the map: keys would cost it more memory
// than the map's time.
func sortedSpans(keys []spanKey) ([]Span, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	if dup := firstDuplicate(keys); dup != nil {
		return nil, dup
	}
	spans := make([]Span, len(keys))
	for i, k := range keys {
		spans[i] = *k.span
	}
	return spans, nil
}

// firstDuplicate sorts keys, which are in line order, by id and returns the
// error for the first span_start, in line order, whose id one before it has,
// naming the first with that id; nil when the ids are unique. A reader that
// stops on another error calls it first on a copy of the keys so far: a
// duplicate before that error is reported, as if it had been found on its
// line.
func firstDuplicate(keys []spanKey) *ParseError {
	slices.SortFunc(keys, func(a, b spanKey) int {
		if c := strings.Compare(a.id, b.id); c != 0 {
			return c
		}
		return cmp.Compare(a.line, b.line) // only where ids are duplicated
	})
	var second, first spanKey
	for i := 1; i < len(keys); i++ {
		if keys[i].id == keys[i-1].id && (i == 1 || keys[i-2].id != keys[i].id) &&
			(second.span == nil || keys[i].line < second.line) {
			second, first = keys[i], keys[i-1]
		}
	}
	if second.span == nil {
		return nil
	}
	return &ParseError{Line: second.line, Kind: "span_start", Field: "id",
		Msg: "duplicate span id " + strconv.Quote(second.id) + " (first on line " + strconv.Itoa(first.line) + ")",
		Err: &SpanError{SpanID: second.id, Msg: "duplicate span id"}}
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

// sizer sizes the sections of an input of known size: once a thirty-second
// of it is read, it notes their counts; at a sixteenth, it reserves each
// for the rest of the input at the rate it grew in between. The rate skips
// the input's start, where a trace's preamble (meta, parameters) does not
// grow as its steps do.
type sizer struct {
	size   int64 // of the input
	at     int64 // offset of the next step; -1 when done
	from   int64 // offset at which counts were noted
	noted  bool
	counts sectionCounts
}

func newSizer(size int64) sizer {
	if size <= 0 {
		return sizer{at: -1}
	}
	return sizer{size: size, at: size / 32}
}

// step is called once read, the input read so far, has reached z.at.
func (z *sizer) step(s *sections, read int64) {
	if !z.noted {
		z.from, z.counts, z.noted = read, s.counts(), true
		z.at = max(z.size/16, read+1)
		return
	}
	s.reserve(z.counts, read-z.from, z.size-read)
	z.at = -1
}

// sectionCounts holds the values in the sections but spans.
type sectionCounts [6]int

func (s *sections) counts() sectionCounts {
	return sectionCounts{s.ops.n, s.tensors.n, s.mem.n, s.devMem.n, s.grads.n, s.edges.n}
}

// reserve sizes the sections but spans (whose pointers the reader keeps)
// for rest more bytes of input, as if each went on growing as it did over
// the last over bytes, since it held before values.
func (s *sections) reserve(before sectionCounts, over, rest int64) {
	reserveFor(&s.ops, before[0], over, rest)
	reserveFor(&s.tensors, before[1], over, rest)
	reserveFor(&s.mem, before[2], over, rest)
	reserveFor(&s.devMem, before[3], over, rest)
	reserveFor(&s.grads, before[4], over, rest)
	reserveFor(&s.edges, before[5], over, rest)
}

func reserveFor[T any](c *chunked[T], before int, over, rest int64) {
	c.reserve(expect(c.n, c.n-before, over, rest, int64(unsafe.Sizeof(*new(T)))))
}

// expect returns the values a section of n will hold after rest more bytes
// of input, if it grows as it grew by grown over the last over bytes, with
// 1/32 to spare: in a trace of repeated steps the sections grow in
// proportion to the input. The values to come are given at most rest bytes
// of memory (elem bytes each), so that a wrong guess costs no more than the
// input's size.
func expect(n, grown int, over, rest, elem int64) int {
	if grown <= 0 || over <= 0 || rest <= 0 {
		return n
	}
	more := float64(grown) / float64(over) * float64(rest)
	return n + int(min(more+more/32, float64(rest/max(elem, 1))))
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
// as one slice. For large sections this does a third of the copying and
// clearing of append's 1.25x growth and leaves no slack capacity in the
// document. When the reader can tell how many values are coming, reserve
// puts them in one block that needs no copy at the end.
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
		size := min(max(2*cap(c.cur), 64), maxChunk)
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

// maxChunk is the most values a chunk holds. Tests lower it to cross chunk
// boundaries and reserve on small inputs.
var maxChunk = 1 << 15

// reserve makes room for total values in one block, which slice hands out
// without a copy if the count ends within 1/16 of it. The values added so
// far move into the block, so pointers that add returned before are no
// longer valid: the reader never reserves its spans, whose pointers it
// keeps. Totals of one chunk or less are left to the chunks.
func (c *chunked[T]) reserve(total int) {
	if total <= maxChunk || total <= c.n {
		return
	}
	block := make([]T, 0, total)
	for _, ch := range c.full {
		block = append(block, ch...)
	}
	block = append(block, c.cur...)
	c.release()
	c.full, c.cur = nil, block
	c.stop = prefault.Ahead(prefault.Bytes(block[len(block):]))
}

// slice returns the values in order; nil when there are none. Its capacity
// is its length; the memory behind it has at most 1/16 more room, or 64
// values for a section that fits in the first chunk.
func (c *chunked[T]) slice() []T {
	c.release()
	switch {
	case c.n == 0:
		return nil
	case len(c.full) == 0 && cap(c.cur)-len(c.cur) <= max(64, cap(c.cur)/16):
		return slices.Clip(c.cur)
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

// readErrs is a reader that keeps the error its reader returned, other
// than io.EOF, and counts the bytes it read.
type readErrs struct {
	r   io.Reader
	err error
	n   int64 // bytes read
}

func (r *readErrs) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.n += int64(n)
	if err != nil && err != io.EOF {
		r.err = err
	}
	return n, err
}

// ahead returns b, all that was read so far from some point on, with up to
// lenient.Lookahead more bytes of the input when b holds fewer past b[i],
// where a syntax error points, so that near-JSON the decoder's buffer cuts
// off (a '+' at its end, the nan after it not read yet) is seen whole. The
// bytes are consumed: it is for an input whose decoding failed. A read
// error here is not recorded: it would not be the decoder's.
func (r *readErrs) ahead(b []byte, i int) []byte {
	if len(b)-i >= lenient.Lookahead {
		return b
	}
	var more [lenient.Lookahead]byte
	n, _ := io.ReadFull(r.r, more[:])
	return append(slices.Clip(b), more[:n]...)
}

// failed reports whether err, returned by a decoder reading r, is r's read
// error (the decoder may report one wrapped in a syntax error).
func (r *readErrs) failed(err error) bool { return r.err != nil && errors.Is(err, r.err) }

// readError is the error of a read that failed: at the offset the input
// was read to, with the reader's own message (not the decoder's wrapping,
// which names another offset).
func (r *readErrs) readError(kind string) *ParseError {
	return &ParseError{Offset: r.n, Kind: kind, Msg: "read: " + r.err.Error(), Err: r.err}
}
