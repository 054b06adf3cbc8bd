// exportchrome.go holds the Chrome trace export: memory counters per device and the spans, for Perfetto UI and chrome://tracing.

package main

import (
	"io"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/tracemem/tracemem"
)

// Process ids of the Chrome export: the spans are process spansPid, thread
// 1; device i (in by_device order) is process firstDevicePid+i.
const (
	spansPid       = 1
	firstDevicePid = 2
)

// writeChrome writes t as Chrome trace JSON (the JSON object format):
//   - per device, a process named "memory DEVICE" with one counter track
//     ("ph":"C") named "DEVICE bytes" whose series are the categories seen on
//     that device, in bytes, one counter event per timeline point;
//   - the spans as complete events ("ph":"X") of process "spans", thread 1,
//     with their kind as category and their id and step as args; a span
//     that never closed ends at the last timestamp of the trace.
//
// Timestamps are microseconds since the trace start with three decimals, so
// nanoseconds are kept exactly.
func writeChrome(w io.Writer, t *trace) error {
	cw := &chromeWriter{w: w, buf: make([]byte, 0, 1<<12)}
	p := t.profile
	cw.raw(`{"displayTimeUnit":"ms","otherData":{"tool":"tracemem","trace":`)
	cw.str(t.name)
	cw.raw("},\"traceEvents\":[\n")

	devPid := make(map[string]int, len(p.ByDevice))
	seen := make(map[string]tracemem.CategorySet, len(p.ByDevice))
	for i, d := range p.ByDevice {
		devPid[d.Device] = firstDevicePid + i
	}
	var endNs uint64
	for i := range p.Timeline {
		pt := &p.Timeline[i]
		seen[pt.Device] |= pt.ByCategory.Present
		endNs = max(endNs, pt.TimestampNs)
	}
	for i := range t.tree.len() {
		s := t.tree.at(i)
		endNs = max(endNs, s.startNs)
		if s.closed {
			endNs = max(endNs, s.startNs+s.durationNs)
		}
	}

	first := true
	sep := func() {
		if !first {
			cw.raw(",\n")
		}
		first = false
	}
	sep()
	cw.raw(`{"ph":"M","name":"process_name","pid":` + strconv.Itoa(spansPid) + `,"tid":1,"args":{"name":"spans"}}`)
	for _, d := range p.ByDevice {
		sep()
		cw.raw(`{"ph":"M","name":"process_name","pid":` + strconv.Itoa(devPid[d.Device]) + `,"args":{"name":`)
		cw.str("memory " + d.Device)
		cw.raw("}}")
	}
	names := make(map[string][]byte, len(p.ByDevice)) // the counter name of each device, quoted
	for _, d := range p.ByDevice {
		names[d.Device], _ = jsontext.AppendQuote(nil, d.Device+" bytes")
	}
	for i := range p.Timeline {
		pt := &p.Timeline[i]
		sep()
		cw.raw(`{"ph":"C","name":`)
		cw.buf = append(cw.buf, names[pt.Device]...)
		cw.raw(`,"pid":`)
		cw.buf = strconv.AppendInt(cw.buf, int64(devPid[pt.Device]), 10)
		cw.raw(`,"ts":`)
		cw.ts(pt.TimestampNs)
		cw.raw(`,"args":{`)
		n := 0
		for _, c := range tracemem.Categories {
			if !seen[pt.Device].Has(c) {
				continue
			}
			if n > 0 {
				cw.raw(",")
			}
			n++
			cw.buf = append(cw.buf, '"')
			cw.raw(c.String())
			cw.raw(`":`)
			cw.buf = strconv.AppendUint(cw.buf, pt.ByCategory.Get(c), 10)
		}
		cw.raw("}}")
	}
	for i := range t.tree.len() {
		s := t.tree.at(i)
		dur := s.durationNs
		if !s.closed {
			dur = endNs - min(s.startNs, endNs)
		}
		sep()
		cw.raw(`{"ph":"X","name":`)
		cw.str(s.name)
		cw.raw(`,"cat":`)
		cw.str(s.kind.String())
		cw.raw(`,"pid":` + strconv.Itoa(spansPid) + `,"tid":1,"ts":`)
		cw.ts(s.startNs)
		cw.raw(`,"dur":`)
		cw.ts(dur)
		cw.raw(`,"args":{"id":`)
		cw.str(s.id)
		if s.step != tracemem.StepNone {
			cw.raw(`,"step":`)
			cw.str(s.step.String())
		}
		if !s.closed {
			cw.raw(`,"closed":false`)
		}
		cw.raw("}}")
	}
	cw.raw("\n]}\n")
	cw.flush()
	return cw.err
}

// chromeWriter appends JSON text to a buffer and writes it out in chunks,
// keeping the first write error.
type chromeWriter struct {
	w   io.Writer
	buf []byte
	err error
}

func (c *chromeWriter) raw(s string) {
	c.buf = append(c.buf, s...)
	c.maybeFlush()
}

// str appends s as a JSON string (invalid UTF-8 becomes U+FFFD).
func (c *chromeWriter) str(s string) {
	c.buf, _ = jsontext.AppendQuote(c.buf, s)
	c.maybeFlush()
}

// ts appends ns as microseconds with three decimals.
func (c *chromeWriter) ts(ns uint64) {
	c.buf = strconv.AppendUint(c.buf, ns/1000, 10)
	frac := ns % 1000
	c.buf = append(c.buf, '.', byte('0'+frac/100), byte('0'+frac/10%10), byte('0'+frac%10))
}

func (c *chromeWriter) maybeFlush() {
	if len(c.buf) >= 1<<15 {
		c.flush()
	}
}

func (c *chromeWriter) flush() {
	if c.err == nil && len(c.buf) > 0 {
		_, c.err = c.w.Write(c.buf)
	}
	c.buf = c.buf[:0]
}
