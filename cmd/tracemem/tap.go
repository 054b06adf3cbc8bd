// tap.go holds the line tap that collects run, span and op records from a JSONL trace while the streaming analysis reads it.

package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/tracemem/tracemem"
)

// runInfo is what the command shows of a trace's run record.
type runInfo struct {
	id, entrypoint, phase, device string
	source                        string // Run.Tags["source"]: "chrome_trace" for a PyTorch trace
	// Run.Tags["out_of_memory_events"] and ["total_allocated_mismatches"]
	// of a PyTorch trace, as written ("" when absent)
	oomEvents, totalMismatches string
	// Run.Tags["out_of_memory_first_*"] of a PyTorch trace (its first
	// [OutOfMemory] event), by the part of the key after that prefix, as
	// written; nil when none
	oomFirst map[string]string
	// export is set for a Chrome trace that tracemem's own export wrote;
	// exportOf is the trace it names as its source ("" when not known).
	export   bool
	exportOf string
}

// lineTap passes a JSONL stream through unchanged and hands a copy of
// what goes by to a collector running in its own goroutine, so the analysis
// and the collection share one read of the input and run on two cores. At
// most tapBuffers chunks wait in the channel (besides the one the collector
// is splitting and the one Read is handing over); when the collector falls
// behind, Read waits. Call wait before using the collector.
type lineTap struct {
	r      io.Reader
	c      *collector
	chunks chan []byte // read data, in order
	free   chan []byte // buffers to reuse
	done   chan struct{}
	closed bool
	err    error // a panic of the collector, set before done is closed
}

// tapBuffers bounds the chunks between the reader and the collector.
const tapBuffers = 8

func newLineTap(r io.Reader, c *collector) *lineTap {
	t := &lineTap{r: r, c: c, chunks: make(chan []byte, tapBuffers), free: make(chan []byte, tapBuffers), done: make(chan struct{})}
	go t.consume()
	return t
}

func (t *lineTap) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if n > 0 && !t.closed {
		var buf []byte
		select {
		case buf = <-t.free:
		default:
		}
		t.chunks <- append(buf[:0], p[:n]...)
	}
	if err != nil {
		t.close()
	}
	return n, err
}

func (t *lineTap) close() {
	if !t.closed {
		t.closed = true
		close(t.chunks)
	}
}

// wait ends the stream (when the reader stopped before its end), waits
// until the collector has seen every line, and returns the error of a
// collector that panicked (its own error, a duplicate span id, is its err).
func (t *lineTap) wait() error {
	t.close()
	<-t.done
	return t.err
}

// consume splits the chunks into lines for the collector; a line without a
// final newline is handed over at the end.
func (t *lineTap) consume() {
	defer close(t.done)
	defer func() {
		if v := recover(); v != nil {
			t.err = fmt.Errorf("internal error while collecting spans: %v", v)
			for range t.chunks { // let the reader finish
			}
		}
	}()
	var carry []byte // the start of a line not yet ended
	n := 0           // lines ended so far
	for buf := range t.chunks {
		data := buf
		for len(data) > 0 {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				if len(carry) == 0 {
					// White space before a record says nothing, and a
					// line of it alone can be gigabytes long.
					data = bytes.TrimLeft(data, " \t\r")
				}
				carry = append(carry, data...)
				break
			}
			n++
			if len(carry) > 0 {
				carry = append(carry, data[:i]...)
				t.c.line(n, carry)
				carry = carry[:0]
			} else {
				t.c.line(n, data[:i])
			}
			data = data[i+1:]
		}
		select {
		case t.free <- buf:
		default:
		}
	}
	if len(carry) > 0 {
		t.c.line(n+1, carry)
	}
}

// collector keeps the run, spans and (when asked) op names of the records
// it is shown. It decodes only the records of those kinds, found by their
// "kind" member without parsing the other records, reading their members
// as JSON tokens with one reused decoder. Like the reader, it reads only the
// members of the record's kind; a record whose own members it cannot
// decode is skipped, as the reader refuses it (the analysis reports it). A
// span id used twice is its error: the analysis without node metrics
// forgets a span when it ends, so it takes a later span of the same id for
// a new span, where the tree would show the first span's path for the
// second's memory.
type collector struct {
	tree    *spanTree
	run     *runInfo
	err     error // the first duplicate span id, a *tracemem.ParseError
	wantOps bool
	strs    map[string]string // interned names
	rd      bytes.Reader
	dec     *jsontext.Decoder
	scratch []byte
}

func newCollector(wantOps bool) *collector {
	c := &collector{tree: newSpanTree(), wantOps: wantOps, strs: make(map[string]string)}
	c.dec = jsontext.NewDecoder(&c.rd, jsontext.AllowDuplicateNames(true))
	return c
}

// intern returns b as a string shared by every equal name.
func (c *collector) intern(b []byte) string {
	if v, ok := c.strs[string(b)]; ok {
		return v
	}
	v := string(b)
	c.strs[v] = v
	return v
}

// oomFirstTags returns the tags of tags that describe a PyTorch trace's
// first [OutOfMemory] event, by the part of the key after
// "out_of_memory_first_"; nil when none.
func oomFirstTags(tags map[string]string) map[string]string {
	var m map[string]string
	for k, v := range tags {
		if rest, ok := strings.CutPrefix(k, "out_of_memory_first_"); ok {
			if m == nil {
				m = make(map[string]string)
			}
			m[rest] = v
		}
	}
	return m
}

// tapRecord holds the members of the records the collector reads.
type tapRecord struct {
	name, spanKind, step, opName     string
	runID, entrypoint, phase, device string
	source                           string            // the meta record's tags.source
	oomEvents, totalMismatches       string            // its tags.out_of_memory_events and total_allocated_mismatches
	oomFirst                         map[string]string // its tags.out_of_memory_first_* (see runInfo)
	id, parentID, spanID             []byte            // span ids, valid until the next record
	startNs, durationNs              uint64
}

// kindPrefix starts the records the producer writes.
var kindPrefix = []byte(`{"kind": `)

// recordKind returns the value of the top-level "kind" member of a JSON
// line, or nil when it has none that is a string. It follows the line's
// structure (strings and nesting) without decoding the other values, so a
// "kind" that is a value, or the member of a nested object, is not taken
// for it. A line that is not JSON may give anything: the analysis reports
// it.
func recordKind(line []byte) []byte {
	if bytes.HasPrefix(line, kindPrefix) { // the producer's form
		return stringValue(line[len(kindPrefix)-1:])
	}
	depth := 0
	name := false // the next string is a member name of the top-level object
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '{':
			depth++
			name = depth == 1
		case '[':
			depth++
			name = false
		case '}', ']':
			depth--
		case ',':
			name = depth == 1
		case '"':
			end := stringEnd(line, i)
			if end < 0 {
				return nil
			}
			if name {
				name = false
				if n := line[i+1 : end]; string(n) == "kind" || bytes.IndexByte(n, '\\') >= 0 && string(unquote(line[i:end+1])) == "kind" {
					rest := bytes.TrimLeft(line[end+1:], " \t\r")
					if len(rest) == 0 || rest[0] != ':' {
						return nil
					}
					return stringValue(rest[1:])
				}
			}
			i = end
		}
	}
	return nil
}

// stringValue returns the JSON string that b starts with (after white
// space), unquoted; nil when b does not start with one.
func stringValue(b []byte) []byte {
	b = bytes.TrimLeft(b, " \t\r")
	if len(b) == 0 || b[0] != '"' {
		return nil
	}
	end := stringEnd(b, 0)
	if end < 0 {
		return nil
	}
	if bytes.IndexByte(b[1:end], '\\') < 0 {
		return b[1:end]
	}
	return unquote(b[:end+1])
}

// stringEnd returns the index of the quote that ends the JSON string
// starting at line[start], or -1 when the line ends first.
func stringEnd(line []byte, start int) int {
	for j := start + 1; j < len(line); j++ {
		switch line[j] {
		case '\\':
			j++
		case '"':
			return j
		}
	}
	return -1
}

// unquote decodes a JSON string with its quotes; nil when it is not valid.
func unquote(q []byte) []byte {
	v, err := jsontext.AppendUnquote(nil, q)
	if err != nil {
		return nil
	}
	return v
}

// tapKind is the kind of a record the collector keeps, from its "kind"
// member as recordKind finds it.
type tapKind uint8

const (
	tapMeta tapKind = iota
	tapSpanStart
	tapSpanEnd
	tapOp
)

// line takes the record on line n (1-based) of the input.
func (c *collector) line(n int, line []byte) {
	var kind tapKind
	switch string(recordKind(line)) {
	case "meta":
		kind = tapMeta
	case "span_start":
		kind = tapSpanStart
	case "span_end":
		kind = tapSpanEnd
	case "op":
		if !c.wantOps {
			return
		}
		kind = tapOp
	default:
		return
	}
	r, ok := c.decode(kind, line)
	if !ok {
		return
	}
	switch kind {
	case tapMeta:
		if c.run == nil {
			c.run = &runInfo{id: r.runID, entrypoint: r.entrypoint, phase: r.phase, device: r.device,
				source: r.source, oomEvents: r.oomEvents, totalMismatches: r.totalMismatches, oomFirst: r.oomFirst}
		}
	case tapSpanStart:
		var sk tracemem.SpanKind
		var step tracemem.Step
		_ = sk.UnmarshalText([]byte(r.spanKind))
		_ = step.UnmarshalText([]byte(r.step))
		if c.tree.addSpanBytes(r.id, r.parentID, r.name, sk, step, r.startNs) && c.err == nil {
			// As AnalyzeStream reports it when it keeps every span.
			serr := &tracemem.SpanError{SpanID: string(r.id), Msg: "duplicate span id"}
			c.err = &tracemem.ParseError{Line: n, Kind: "span_start", Msg: serr.Error(), Err: serr}
		}
	case tapSpanEnd:
		c.tree.endSpanBytes(r.id, r.durationNs)
	case tapOp:
		c.tree.addOpBytes(r.spanID, r.opName)
	}
}

// decode reads the members of one record the collector keeps, of kind;
// false when the line is not a JSON object or a member has
// the wrong type. As the reader does, it reads only the members of the
// record's kind and skips the others whatever they hold: a span_start's
// "device" or "phase" is not the meta record's.
func (c *collector) decode(kind tapKind, line []byte) (r tapRecord, ok bool) {
	c.rd.Reset(line)
	// Names given twice in a nested value are the reader's to ignore (it
	// checks the record's own); Reset drops options given before.
	c.dec.Reset(&c.rd, jsontext.AllowDuplicateNames(true))
	c.scratch = c.scratch[:0]
	if tok, err := c.dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return r, false
	}
	for c.dec.PeekKind() != '}' {
		name, err := c.dec.ReadValue()
		if err != nil {
			return r, false
		}
		if bytes.IndexByte(name, '\\') >= 0 { // a name written with escapes: match it decoded
			name = append(append([]byte{'"'}, unquote(name)...), '"')
		}
		var str *string
		var raw *[]byte
		var num *uint64
		// Only the first meta record's tags are kept, and it comes first;
		// name is valid only until val is read.
		tags := kind == tapMeta && c.run == nil && string(name) == `"tags"`
		switch m := string(name); kind {
		case tapMeta:
			switch m {
			case `"run_id"`:
				str = &r.runID
			case `"entrypoint"`:
				str = &r.entrypoint
			case `"phase"`:
				str = &r.phase
			case `"device"`:
				str = &r.device
			}
		case tapSpanStart:
			switch m {
			case `"id"`:
				raw = &r.id
			case `"parent_id"`:
				raw = &r.parentID
			case `"name"`:
				str = &r.name
			case `"span_kind"`:
				str = &r.spanKind
			case `"step"`:
				str = &r.step
			case `"start_ns"`:
				num = &r.startNs
			}
		case tapSpanEnd:
			switch m {
			case `"id"`:
				raw = &r.id
			case `"duration_ns"`:
				num = &r.durationNs
			}
		case tapOp:
			switch m {
			case `"span_id"`:
				raw = &r.spanID
			case `"op_name"`:
				str = &r.opName
			}
		}
		val, err := c.dec.ReadValue()
		if err != nil {
			return r, false
		}
		switch {
		case (str != nil || raw != nil) && val.Kind() == 'n':
			// null: absent
		case str != nil || raw != nil:
			if val.Kind() != '"' {
				return r, false
			}
			start := len(c.scratch)
			c.scratch, err = jsontext.AppendUnquote(c.scratch, val)
			if err != nil {
				return r, false
			}
			if str != nil {
				*str = c.intern(c.scratch[start:])
				c.scratch = c.scratch[:start]
			} else {
				*raw = c.scratch[start:len(c.scratch):len(c.scratch)]
			}
		case num != nil:
			v, ok := parseUint(val)
			if !ok {
				return r, false
			}
			*num = v
		case tags && val.Kind() == '{': // the meta record's: decoded plainly
			var all map[string]any
			if json.Unmarshal(val, &all) == nil {
				tags := make(map[string]string, len(all))
				for k, v := range all {
					if s, ok := v.(string); ok { // the reader refuses others
						tags[k] = s
					}
				}
				r.source, r.oomEvents, r.totalMismatches = tags["source"], tags["out_of_memory_events"], tags["total_allocated_mismatches"]
				r.oomFirst = oomFirstTags(tags)
			}
		}
	}
	return r, true
}

// parseUint parses a JSON number that is an unsigned integer.
func parseUint(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	var v uint64
	for _, d := range b {
		if d < '0' || d > '9' {
			return 0, false
		}
		n := v*10 + uint64(d-'0')
		if n/10 != v {
			return 0, false // overflow
		}
		v = n
	}
	return v, true
}
