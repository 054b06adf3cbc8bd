// exportchrome.go holds the Chrome trace export: memory counters per device and the spans, for Perfetto UI and chrome://tracing.

package main

import (
	"bytes"
	"cmp"
	"container/heap"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/tracemem/tracemem"
	"github.com/tracemem/tracemem/internal/parentwalk"
)

// Process ids of the Chrome export: the spans are process spansPid, on
// threads 1, 2, ... (see spanLanes); device i in devicesInOrder's order is
// process firstDevicePid+i.
const (
	spansPid       = 1
	firstDevicePid = 2
)

// chromeExportPrefix starts every Chrome trace writeChrome writes; the name
// of the trace it was made from follows, as a JSON string.
const chromeExportPrefix = `{"displayTimeUnit":"ms","otherData":{"tool":"tracemem","trace":`

// exportedFrom tells whether head, the start of an input, is a Chrome trace
// that writeChrome wrote, which reads as a trace without memory events (its
// memory is counters), and returns the name of the trace it was made from:
// "" when head does not hold that name whole, or it was standard input.
// Only the export's own bytes are told: the same trace written again by
// another program reads as any other Chrome trace.
func exportedFrom(head []byte) (source string, ok bool) {
	rest, ok := bytes.CutPrefix(head, []byte(chromeExportPrefix))
	if !ok {
		return "", false
	}
	v, err := jsontext.NewDecoder(bytes.NewReader(rest)).ReadValue()
	if err != nil || v.Kind() != '"' {
		return "", true
	}
	s, err := jsontext.AppendUnquote(nil, v)
	if err != nil || string(s) == stdinName {
		return "", true
	}
	return string(s), true
}

// writeChrome writes t as Chrome trace JSON (the JSON object format):
//   - per device, a process named "memory DEVICE" with one counter track
//     ("ph":"C") named "DEVICE bytes" whose series are the categories seen on
//     that device, in bytes, one counter event per timeline point;
//   - the spans as complete events ("ph":"X") of process "spans", with their
//     kind as category and their id and step as args, on threads where a
//     viewer draws each under its parent or under nothing (see spanLanes), so
//     a trace whose spans all nest, none of no length, is one thread;
//   - a span that never closed ends where the exported data ends (the last
//     timeline point, which is the last memory event's unless --max-points
//     is 1, or the latest span start or end, if later).
//
// Timestamps are microseconds since the trace start with three decimals, so
// nanoseconds are kept exactly.
func writeChrome(w io.Writer, t *trace) error {
	cw := &chromeWriter{w: w, buf: make([]byte, 0, 1<<12)}
	p := t.profile
	cw.raw(chromeExportPrefix)
	cw.str(t.name)
	cw.raw("},\"traceEvents\":[\n")

	devPid := make(map[string]int, len(p.ByDevice))
	seen := make(map[string]tracemem.CategorySet, len(p.ByDevice))
	devices := devicesInOrder(p) // pids in that order: viewers list processes by pid
	for i, d := range devices {
		devPid[d.Device] = firstDevicePid + i
	}
	var endNs uint64
	for i := range p.Timeline {
		pt := &p.Timeline[i]
		seen[pt.Device] |= pt.ByCategory.Present
		endNs = max(endNs, pt.TimestampNs)
	}
	endNs = max(endNs, t.tree.lastNs())

	first := true
	sep := func() {
		if !first {
			cw.raw(",\n")
		}
		first = false
	}
	sep()
	cw.raw(`{"ph":"M","name":"process_name","pid":` + strconv.Itoa(spansPid) + `,"tid":1,"args":{"name":"spans"}}`)
	for _, d := range devices {
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
	order, lanes := spanLanes(t.tree, endNs)
	for _, i := range order {
		s := t.tree.at(int(i))
		dur := s.durationNs
		if !s.closed {
			dur = endNs - min(s.startNs, endNs)
		}
		sep()
		cw.raw(`{"ph":"X","name":`)
		cw.str(s.name)
		cw.raw(`,"cat":`)
		cw.str(s.kind.String())
		cw.raw(`,"pid":` + strconv.Itoa(spansPid) + `,"tid":`)
		cw.buf = strconv.AppendInt(cw.buf, int64(lanes[i]), 10)
		cw.raw(`,"ts":`)
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

// spanLanes places the spans of t on threads (1, 2, ...) so that each
// thread's stacks are the call tree: trace viewers draw a thread's complete
// events as stacks, a slice under the innermost one open when it starts,
// whatever the tree says. A span goes on its parent's thread when the
// parent is the innermost span open there at its start and it ends by the
// parent's end; otherwise (a root, a child overlapping a sibling or
// outlasting its parent) on the lowest thread with no span open, else on a
// new one. So a trace whose spans nest takes one thread per root span open
// at once (one for a training loop of steps), a PyTorch trace one per
// thread root open at once, and spans of no length at one instant under
// one parent one thread each (a viewer would draw each under the one
// before). A span that never closed ends at endNs. It
// returns the span indexes in the order to write them (by start, the longer
// first, the shallower first, so that a parent comes before a child that
// starts with it, even one as long: viewers nest such events in the order
// they come) and each span's thread.
func spanLanes(t *spanTree, endNs uint64) (order []int32, lane []int32) {
	n := t.len()
	start := make([]uint64, n)
	end := make([]uint64, n)
	order = make([]int32, n)
	for i := range n {
		r := &t.recs[i]
		start[i] = r.startNs
		if r.closed {
			end[i] = r.startNs + min(r.durationNs, math.MaxUint64-r.startNs)
		} else {
			end[i] = max(endNs, r.startNs)
		}
		order[i] = int32(i)
	}
	t.settle()
	depth := spanDepths(t)
	slices.SortFunc(order, func(a, b int32) int {
		return cmp.Or(cmp.Compare(start[a], start[b]), cmp.Compare(end[b], end[a]), cmp.Compare(depth[a], depth[b]), cmp.Compare(a, b))
	})
	lane = make([]int32, n)
	var (
		stacks [][]int32 // per thread, the spans open on it, outermost first
		gen    []int32   // per thread, bumped each time it goes from empty to used
		busy   laneHeap  // used threads by the end of their outermost span
		idle   idleHeap  // threads whose spans all ended (or may have)
	)
	// done reports whether span j, on a thread, is over by the start of
	// span i. A span of no length at the end of another is taken to be
	// inside it, as a memory event at a span's end is: viewers differ on
	// such ties, so such a span is kept off that thread.
	done := func(j, i int32) bool { return end[j] <= start[i] && end[j] < end[i] }
	// Free threads whose last span ends at blockedAt, held back from the
	// spans of no length at that time, which that span would hold: each
	// such thread is held back once, however many such spans there are.
	var blocked []int32
	var blockedAt uint64
	for _, i := range order {
		if len(blocked) > 0 && (start[i] != blockedAt || end[i] != start[i]) {
			for _, j := range blocked {
				heap.Push(&idle, j)
			}
			blocked = blocked[:0]
		}
		for len(busy) > 0 && busy[0].end <= start[i] {
			if b := heap.Pop(&busy).(laneEnd); b.gen == gen[b.lane] {
				heap.Push(&idle, b.lane)
			}
		}
		k := -1
		if p := t.treeParent(i); p >= 0 && lane[p] > 0 {
			// The spans above the parent that ended before i's start are
			// over for every span to come (they come by start): dropped.
			// Those that end at i's start are over for i unless it has
			// no length, and dropped only if i goes there; a span of no
			// length placed next would be missed. The parent must then be
			// the innermost span open, and hold i.
			l := int(lane[p] - 1)
			st := stacks[l]
			for len(st) > 0 && st[len(st)-1] != p && end[st[len(st)-1]] < start[i] {
				st = st[:len(st)-1]
			}
			stacks[l] = st
			m := len(st)
			for m > 0 && st[m-1] != p && done(st[m-1], i) {
				m--
			}
			if m > 0 && st[m-1] == p && end[p] >= end[i] {
				stacks[l] = st[:m]
				k = l
			}
		}
		for k < 0 && len(idle) > 0 {
			j := heap.Pop(&idle).(int32)
			switch st := stacks[j]; {
			case len(st) == 0 || done(st[0], i): // the outermost is over: all are
				stacks[j] = st[:0]
				k = int(j)
			case end[st[0]] <= start[i]: // over, but i has no length and ends with it
				blocked, blockedAt = append(blocked, j), start[i]
			}
			// else used again since: its new outermost span is in busy
		}
		if k < 0 {
			k = len(stacks)
			stacks = append(stacks, nil)
			gen = append(gen, 0)
		}
		if len(stacks[k]) == 0 {
			gen[k]++
			heap.Push(&busy, laneEnd{end: end[i], lane: int32(k), gen: gen[k]})
		}
		stacks[k] = append(stacks[k], i)
		lane[i] = int32(k + 1)
	}
	return order, lane
}

// spanDepths returns each span's depth in the tree, 0 for a root; settle
// must have cut the cycles. The walk gives parents before children.
func spanDepths(t *spanTree) []int32 {
	depth := make([]int32, t.len())
	parent := func(i int) int { return int(t.treeParent(int32(i))) }
	parentwalk.Walk(t.len(), parent, nil, func(path []int, _ bool) {
		for k := len(path) - 1; k >= 0; k-- {
			if p := parent(path[k]); p >= 0 {
				depth[path[k]] = depth[p] + 1
			}
		}
	})
	return depth
}

// laneEnd is a used thread and the end of its outermost span.
type laneEnd struct {
	end       uint64
	lane, gen int32
}

// laneHeap is a min-heap (container/heap) of laneEnd by end, then thread.
type laneHeap []laneEnd

func (h laneHeap) Len() int { return len(h) }
func (h laneHeap) Less(a, b int) bool {
	return h[a].end < h[b].end || h[a].end == h[b].end && h[a].lane < h[b].lane
}
func (h laneHeap) Swap(a, b int) { h[a], h[b] = h[b], h[a] }
func (h *laneHeap) Push(x any)   { *h = append(*h, x.(laneEnd)) }
func (h *laneHeap) Pop() any {
	x := (*h)[len(*h)-1]
	*h = (*h)[:len(*h)-1]
	return x
}

// idleHeap is a min-heap (container/heap) of thread numbers.
type idleHeap []int32

func (h idleHeap) Len() int           { return len(h) }
func (h idleHeap) Less(a, b int) bool { return h[a] < h[b] }
func (h idleHeap) Swap(a, b int)      { h[a], h[b] = h[b], h[a] }
func (h *idleHeap) Push(x any)        { *h = append(*h, x.(int32)) }
func (h *idleHeap) Pop() any {
	x := (*h)[len(*h)-1]
	*h = (*h)[:len(*h)-1]
	return x
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
