// stream.go holds AnalyzeStream: a trace read record by record straight into an Analyzer.

package tracemem

import "io"

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
		a.line = dec.line
		if err := feedRecord(a, dec, kind); err != nil {
			return &ParseError{Line: dec.line, Kind: kind.String(), Msg: err.Error(), Err: err}
		}
	}
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
