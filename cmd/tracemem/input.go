// input.go holds how the command opens and analyzes trace files: gzip, format sniffing, streaming JSONL, concurrent files.

package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/tracemem/tracemem"
	"github.com/tracemem/tracemem/internal/gzipread"
	"github.com/tracemem/tracemem/internal/traceformat"
)

// stdinName is how standard input ("-") is named in messages.
const stdinName = "<stdin>"

// trace is one analyzed trace file.
type trace struct {
	name     string // the path as given, or stdinName
	run      *runInfo
	profile  *tracemem.MemoryProfile
	nodes    map[string]tracemem.NodeMetrics
	tree     *spanTree
	streamed bool // analyzed by AnalyzeStream, not held as a document
	// memoryEndNs is the time of the last memory event, when the timeline
	// may have dropped its point (see reportTrim); 0 when not known.
	memoryEndNs uint64
}

// loadOptions says what a subcommand needs of a trace.
type loadOptions struct {
	opts      tracemem.Options
	wantNodes bool // node metrics; without them a stream keeps only open spans
	wantOps   bool // op names, to name op nodes
	noSpans   bool // no span paths, and of the run meta only its first line's: a stream is not tapped at all
}

// fileError is a failure to read or analyze one file.
type fileError struct {
	file string
	err  error
}

func (e *fileError) Error() string {
	name := e.file
	if name == "" {
		name = `""` // as the text outputs name an empty name, so that the line does not start with ": "
	}
	return name + ": " + oneLine(e.err.Error())
}
func (e *fileError) Unwrap() error { return e.err }

// source is an opened input.
type source struct {
	name string
	r    io.Reader
	c    io.Closer // nil for stdin
	size int64     // bytes; -1 when unknown
}

// openSource opens the file arg names ("-" is standard input).
func openSource(e *env, arg string) (*source, error) {
	if arg == "-" {
		if isTerminal(e.stdin) {
			// Nobody types a trace: say why nothing happens.
			fmt.Fprintln(e.stderr, "tracemem: reading a trace from standard input, a terminal; give a file, or pipe the trace in")
		}
		s := &source{name: stdinName, r: e.stdin, size: -1}
		if f, ok := e.stdin.(*os.File); ok {
			if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
				s.size = fi.Size()
			}
		}
		if s.size < 0 {
			s.r = &endOnce{r: e.stdin}
		}
		return s, nil
	}
	f, err := os.Open(arg)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, &fileError{file: arg, err: err}
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, &fileError{file: arg, err: err}
	}
	if fi.IsDir() {
		f.Close()
		return nil, &fileError{file: arg, err: errors.New("is a directory, not a trace file")}
	}
	s := &source{name: arg, r: f, c: f, size: -1}
	if fi.Mode().IsRegular() {
		s.size = fi.Size()
	}
	return s, nil
}

// endOnce reads r until its first end, and then reads nothing more from it:
// at a terminal each read after an end (Ctrl-D) waits for more typing, and
// the readers look again after an end (a peek, then a read), so an empty
// input took five Ctrl-Ds (from a review).
type endOnce struct {
	r   io.Reader
	end bool
}

func (e *endOnce) Read(p []byte) (int, error) {
	if e.end {
		return 0, io.EOF
	}
	n, err := e.r.Read(p)
	e.end = err == io.EOF
	return n, err
}

// sourceSize returns the size of the input arg names (for standard input,
// what is left of it from where it stands), or -1 when it is not a regular
// file or cannot be told, without opening it.
func sourceSize(e *env, arg string) int64 {
	var fi fs.FileInfo
	var err error
	var at int64
	if arg == "-" {
		f, ok := e.stdin.(*os.File)
		if !ok {
			return -1
		}
		if fi, err = f.Stat(); err == nil && fi.Mode().IsRegular() {
			// A shell may hand over a file already partly read.
			at, err = f.Seek(0, io.SeekCurrent)
		}
	} else {
		fi, err = os.Stat(arg)
	}
	if err != nil || !fi.Mode().IsRegular() {
		return -1
	}
	return max(fi.Size()-at, 0)
}

// readers keeps the readers of inputs done for the next ones: a summary of
// thousands of small files allocated one or two readers of sniffSize per
// file, most of what it allocated, and a garbage collection every few files
// (13.6–14.7 s against 10.6 s for 3000 files of 2000 events, once only the
// traces not yet written were held).
var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, sniffSize) }}

// getReader returns a reader of sniffSize bytes of r; putReader gives it
// back once nothing reads through it, nor holds what it returned.
func getReader(r io.Reader) *bufio.Reader {
	br := readers.Get().(*bufio.Reader)
	br.Reset(r)
	return br
}

func putReader(br *bufio.Reader) {
	br.Reset(nil)
	readers.Put(br)
}

// sniffSize is how much of the input is looked at to tell JSONL from the
// other formats, and the size of the input's buffer: a JSONL trace whose
// first line (its meta record, which may carry large tags) is longer, and
// whose "kind" member does not come within it, is read whole, as a
// document is.
const sniffSize = 1 << 20

// analyze reads and analyzes one opened source. A JSONL trace (see isJSONL)
// streams through tracemem.AnalyzeStream while a tap collects its spans,
// with SkipNodeMetrics unless node metrics are wanted, so memory stays
// bounded by what is live, the spans and the timeline points kept; any
// other input is read with tracemem.ReadTrace and analyzed as a document.
// So is a JSONL trace whose records come in an order a stream cannot take
// (tracemem.ErrOutOfOrder), read again from the start when it is a regular
// file. Panics of the library become errors.
func analyze(src *source, lo loadOptions, prog *progress) (t *trace, err error) {
	defer func() {
		if v := recover(); v != nil {
			t, err = nil, &fileError{file: src.name, err: fmt.Errorf("internal error: %v", v)}
		}
	}()
	seeker, _ := src.r.(io.Seeker)
	start := int64(-1)
	if seeker != nil && src.size >= 0 {
		if at, err := seeker.Seek(0, io.SeekCurrent); err == nil {
			start = at
		}
	}
	t, err = analyzeFrom(src, lo, prog, true, start)
	if err == nil || !errors.Is(err, tracemem.ErrOutOfOrder) {
		return t, err
	}
	if start < 0 {
		return nil, &fileError{file: src.name, err: fmt.Errorf("%w (such a trace can be read whole from a file, not from a pipe)", errors.Unwrap(err))}
	}
	// The bar counted the bytes the stream read, up to where it stopped:
	// those are read again.
	at, serr := seeker.Seek(0, io.SeekCurrent)
	if serr == nil {
		_, serr = seeker.Seek(start, io.SeekStart)
	}
	if serr != nil {
		return nil, err
	}
	prog.again(at - start)
	return analyzeFrom(src, lo, prog, false, start)
}

// analyzeFrom reads and analyzes src from where it stands, streaming a JSONL
// trace when stream is set. start is where src started, -1 when it cannot
// seek.
func analyzeFrom(src *source, lo loadOptions, prog *progress, stream bool, start int64) (t *trace, err error) {
	br := getReader(prog.wrap(src.r))
	defer putReader(br)
	r := br
	dec, closeDec, gz, err := gzipread.Open(br)
	if err != nil {
		return nil, &fileError{file: src.name, err: err}
	}
	defer closeDec()
	if gz {
		r = getReader(dec)
		defer putReader(r)
	}
	t = &trace{name: src.name}
	if stream && isJSONL(r) {
		opts := lo.opts
		opts.SkipNodeMetrics = !lo.wantNodes
		var in io.Reader = r
		c := newCollector(lo.wantOps)
		var tap *lineTap
		if lo.noSpans {
			c.run = firstRun(r) // before the stream reads past it
		} else {
			tap = newLineTap(r, c)
			defer tap.wait() // ends the collector after a panic too
			in = tap
		}
		p, nodes, err := tracemem.AnalyzeStream(in, opts)
		if tap != nil {
			if terr := tap.wait(); err == nil {
				err = terr
			}
			err = earlierLine(err, c.err)
		}
		if err != nil {
			return nil, &fileError{file: src.name, err: err}
		}
		t.profile, t.nodes, t.tree, t.run, t.streamed = p, nodes, c.tree, c.run, true
		return t, nil
	}
	// Peeked before src is moved back to its start: r reads src.
	head, _ := r.Peek(sniffSize)
	exportOf, export := exportedFrom(head)
	var whole io.Reader = r
	if seeker, ok := src.r.(io.Seeker); ok && start >= 0 {
		// From the start, as the file itself (gzip or not), which
		// ReadTrace can read again: it does for a Chrome trace with
		// near-JSON (non-finite numbers, say).
		at, err := seeker.Seek(0, io.SeekCurrent)
		if err == nil {
			_, err = seeker.Seek(start, io.SeekStart)
		}
		if err != nil {
			return nil, &fileError{file: src.name, err: err}
		}
		prog.again(at - start)
		whole = prog.wrap(src.r)
	}
	doc, err := tracemem.ReadTrace(whole)
	if err != nil {
		return nil, &fileError{file: src.name, err: err}
	}
	p, err := tracemem.Analyze(doc, lo.opts)
	if err != nil {
		return nil, &fileError{file: src.name, err: err}
	}
	t.profile, t.tree = p, treeFromDocument(doc)
	if lo.wantNodes {
		t.nodes = tracemem.NodeMemoryMetrics(doc, nil)
	}
	t.run = &runInfo{id: doc.Run.RunID, entrypoint: doc.Run.Entrypoint, phase: doc.Run.Phase.String(), device: doc.Run.Device,
		source: doc.Run.Tags["source"], oomEvents: doc.Run.Tags["out_of_memory_events"], totalMismatches: doc.Run.Tags["total_allocated_mismatches"],
		oomFirst: oomFirstTags(doc.Run.Tags),
		export:   export, exportOf: exportOf}
	return t, nil
}

// earlierLine returns the analysis's error, or the collector's when it is
// on an earlier line (the reader reports the first bad line) or the
// analysis had none.
func earlierLine(analysis, collector error) error {
	if collector == nil {
		return analysis
	}
	if analysis == nil {
		return collector
	}
	var a, c *tracemem.ParseError
	if errors.As(analysis, &a) && errors.As(collector, &c) && a.Line > 0 && c.Line < a.Line {
		return collector
	}
	return analysis
}

// firstRun returns what the meta record on the first line of a JSONL trace
// gives of its run (the first record must be meta), read from what r holds
// buffered; nil when that line is longer than the buffer or no meta record.
// It lets an untapped stream tell, for a trace without memory events, where
// such traces come from.
func firstRun(r *bufio.Reader) *runInfo {
	head, err := r.Peek(sniffSize)
	head = bytes.TrimLeft(head, " \t\r\n")
	i := bytes.IndexByte(head, '\n')
	if i < 0 {
		if err == nil { // the line goes on past the buffer
			return nil
		}
		i = len(head) // the input ends: a last line without a newline
	}
	c := newCollector(false)
	c.line(1, head[:i])
	return c.run
}

// isJSONL reports whether r holds a JSONL trace, by the library's rule (the
// first top-level key of the first object that decides a format is
// "kind"), read from the first non-blank line within sniffSize bytes: a
// JSONL record is one line.
func isJSONL(r *bufio.Reader) bool {
	head, _ := r.Peek(sniffSize)
	head = bytes.TrimLeft(head, " \t\r\n")
	if i := bytes.IndexByte(head, '\n'); i >= 0 {
		head = head[:i]
	}
	dec := jsontext.NewDecoder(bytes.NewReader(head), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return false
	}
	for dec.PeekKind() == '"' {
		name, err := dec.ReadToken()
		if err != nil {
			return false
		}
		if f := traceformat.OfKey(name.String()); f != traceformat.None {
			return f == traceformat.JSONL
		}
		if dec.SkipValue() != nil {
			return false
		}
	}
	return false
}

// loadEach opens and analyzes the files args names, at most GOMAXPROCS at a
// time, with one progress bar over all of them when stderr is a terminal and
// they are large, and hands each file's trace, or its error, to use in the
// order of args, as soon as that file and those before it are done. A file
// is opened only when its turn comes, so that the files of a run with
// thousands of ranks need no more descriptors than that, and no more than
// twice GOMAXPROCS files are started and not yet handed over, so that their
// traces, which use may drop, are never all held at once. use runs on the
// calling goroutine, with the bar erased and not drawn, so that it may
// write to the terminal.
func loadEach(e *env, args []string, lo loadOptions, use func(i int, t *trace, err error)) {
	type result struct {
		t   *trace
		err error
	}
	var total int64
	for _, a := range args {
		total += max(sourceSize(e, a), 0)
	}
	prog := newProgress(e.stderr, total)
	procs := runtime.GOMAXPROCS(0)
	results := make([]chan result, len(args))
	for i := range results {
		results[i] = make(chan result, 1) // a worker never waits to hand over
	}
	window := make(chan struct{}, 2*procs) // files started and not yet used
	busy := make(chan struct{}, procs)     // files being analyzed
	go func() {
		for i, a := range args {
			window <- struct{}{}
			busy <- struct{}{}
			go func() {
				defer func() { <-busy }()
				var r result
				if src, err := openSource(e, a); err != nil {
					r.err = err
				} else {
					r.t, r.err = analyze(src, lo, prog)
					if src.c != nil {
						src.c.Close()
					}
				}
				results[i] <- r
			}()
		}
	}()
	for i := range args {
		r := <-results[i]
		prog.pause(func() { use(i, r.t, r.err) })
		<-window
	}
	prog.finish()
}

// loadOne opens and analyzes one file.
func loadOne(e *env, arg string, lo loadOptions) (t *trace, err error) {
	loadEach(e, []string{arg}, lo, func(_ int, tt *trace, terr error) { t, err = tt, terr })
	return t, err
}
