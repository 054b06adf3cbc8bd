// stream.go holds AnalyzeStream and Analyzer.AddJSONLine: a trace read record by record straight into an Analyzer.

package tracemem

import (
	"bytes"
	"io"
	"strconv"
)

// AnalyzeStream reads a trace from r and returns its memory profile and node
// metrics (opNodeIDs nil), as Analyze and NodeMemoryMetrics would for the
// document ReadTrace makes of it.
//
// A candle-graph JSONL stream (gzip or not) is read record by record into an
// Analyzer and never held whole: memory stays bounded by what is live (and what
// was live at each device's peak) plus the timeline points kept (see
// Options.MaxTimelinePoints), plus, for the node metrics, a record per span and
// op (Options.SkipNodeMetrics leaves them out), plus a hash per freed tensor id
// (see Analyzer), plus the longest record's line (white space before it aside),
// held whole while it is decoded. Its records must come in the order an
// Analyzer needs: memory records in nondecreasing timestamp order, each
// span_start before the records that name the span, a span_end and the span's
// ops before memory records stamped after its end that change what they measure
// (records written as they happen are). A record out of that order is an error
// naming its line (and, for a span_start, the line of the first record that
// named the span) and wrapping ErrOutOfOrder; such a trace can be read whole
// with ReadTrace and analyzed with Analyze, unless ReadTrace refuses it for a
// reason of its own (see ErrOutOfOrder). The span errors of ReadTrace are
// errors here too. Other formats ReadTrace accepts (the document form, Chrome
// traces) are read into memory first, as ReadTrace reads them (near-JSON in a
// Chrome trace too: see ReadChromeTrace), then replayed.
//
// On any error, including a corrupt input or one cut inside a record (or
// inside a gzip stream), AnalyzeStream returns no profile: a partial one
// would pass for the whole. A JSONL trace cut exactly between two records
// cannot be told from a whole one (neither can it by ReadTrace): its
// profile is that of the records it has.
func AnalyzeStream(r io.Reader, opts Options) (*MemoryProfile, map[string]NodeMetrics, error) {
	a := NewAnalyzer(opts)
	if a.err != nil {
		return nil, nil, a.err
	}
	streamed := false
	// The other formats are read as ReadTrace reads them, near-JSON
	// included.
	doc, err := readRepaired(r, func() (*TraceDocument, error) {
		src, closeSrc, _, err := decompress(r)
		if err != nil {
			return nil, err
		}
		defer closeSrc()
		format, src, err := detect(src)
		if err != nil {
			return nil, err
		}
		if format == formatJSONL {
			streamed = true
			return nil, streamJSONL(a, newRecordDecoder(src))
		}
		return readDecoded(src, -1, nil)
	})
	if err != nil {
		return nil, nil, err
	}
	if !streamed {
		if a, err = replayDocument(doc, opts, !opts.SkipNodeMetrics); err != nil {
			return nil, nil, err
		}
	}
	return a.lastProfile(), a.NodeMetrics(nil), nil
}

// streamJSONL feeds every record of dec to a.
func streamJSONL(a *Analyzer, dec *recordDecoder) error {
	for {
		kind, err := dec.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := a.feedLine(dec, kind); err != nil {
			return err
		}
	}
}

// feedLine gives a the record of the given kind that dec just decoded from
// a line, and names that line in its error.
func (a *Analyzer) feedLine(dec *recordDecoder, kind recordKind) error {
	a.line = dec.line
	err := feedRecord(a, dec, kind)
	a.line = 0 // records added after it (with Add, say) name no line
	if err != nil {
		return &ParseError{Line: dec.line, Kind: kind.String(), Msg: err.Error(), Err: err}
	}
	return nil
}

// AddJSONLine decodes line, the next line of a candle-graph JSONL trace, and
// adds its record, as AnalyzeStream does with each line of its input: a
// program that follows a trace as it is written (a file that grows, a
// socket) feeds it the lines as they come and asks for Profile or
// NodeMetrics at any moment.
//
// Each call is one whole line, so that errors name lines as the trace has
// them: call it for blank lines too, or the line numbers fall behind. line
// may end with its newline ("\n", "\r\n" or a final "\r") or not; a
// newline before its end is an error (a record is one line). A line is whole
// once its newline came: a follower keeps the bytes after the last newline
// until the rest of their line comes (bufio.Scanner, at the end of a file
// that is still being written, hands them over as a line; a record cut so is
// refused as truncated, and its rest would be taken for the next line). The
// input is not decompressed (gzip is the caller's).
//
// Lines may be mixed with records given by the other methods (Add, AddSpan,
// ...), before the first line or between lines, in the order the Analyzer
// needs: the rules of lines below (meta first, and once) count lines only.
//
// It reads JSONL only: where AnalyzeStream tells the format from the first
// object, AddJSONLine takes every line for a record, so input of another
// form is refused by the rules of records (a first line without kind is
// `kind: missing required field`, not ErrUnknownFormat).
//
// The rules are AnalyzeStream's, record by record: the first record must be
// meta, and it must come once; blank lines, unknown record kinds and
// unknown fields are skipped; records must come in the order the Analyzer
// needs (see Analyzer), or get an error wrapping ErrOutOfOrder. There is no
// end of input here: until a meta record and others come, the answers are
// those of an empty trace (where AnalyzeStream would say ErrEmptyTrace at
// the end), and a trace cut between two records is answered as far as it
// goes.
//
// An error is a *ParseError naming the line (counted over the calls of this
// Analyzer's AddJSONLine, from 1), its Offset in the line and the record
// kind, as AnalyzeStream's, with the errors of Add, AddSpan, EndSpan, AddOp
// and AddDeviceMemory inside it; the record is not added, and the Analyzer
// is as it was but for the count of lines, so a caller may report it and go
// on with the next line. Invalid options are returned as by the other
// methods.
//
// Ownership: line is only read during the call, and nothing refers to it
// afterwards: the caller may reuse its buffer for the next line. The
// records' strings are copied (and shared between records that repeat
// them).
func (a *Analyzer) AddJSONLine(line []byte) error {
	if err := a.start(); err != nil {
		return err
	}
	if a.dec == nil {
		a.dec = newLineDecoder()
	}
	d := a.dec
	d.line++
	d.lead, d.lastLine = 0, false
	if i := bytes.IndexByte(line, '\n'); i >= 0 && i < len(line)-1 {
		return &ParseError{Line: d.line, Offset: int64(i), Msg: "want one record a line, found a newline at column " +
			strconv.Itoa(i+1) + " before the line's end", Err: ErrInvalidJSON}
	}
	if isBlank(line) {
		return nil
	}
	kind, err := d.parseLine(line)
	// The decoder's views of line (the line itself, the names of ignored
	// fields) would keep the caller's buffer alive until the next call.
	d.scan.b = nil
	clear(d.p.unknown[:cap(d.p.unknown)])
	if err != nil || kind == recNone {
		return err
	}
	return a.feedLine(d, kind)
}

// feedRecord gives a the record of the given kind that dec just read.
func feedRecord(a *Analyzer, dec *recordDecoder, kind recordKind) error {
	switch kind {
	case recSpanStart:
		return a.AddSpan(&dec.span)
	case recSpanEnd:
		return a.EndSpan(dec.spanEnd.ID, dec.spanEnd.DurationNs)
	case recOp:
		return a.AddOp(&dec.op)
	case recDeviceMemory:
		return a.AddDeviceMemory(&dec.devMem)
	case recMemory:
		return a.Add(&dec.mem)
	}
	return nil
}
