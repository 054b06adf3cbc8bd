// summary.go holds the summary subcommand: a plain-text report of one or more traces.

package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/tracemem/tracemem"
)

// fewTimelinePoints is the timeline kept per device by the commands that
// show none (summary, nodes, the pprof export): downsampling keeps every
// peak exact.
const fewTimelinePoints = 16

func cmdSummary(e *env, args []string) error {
	fs := e.newFlags("summary")
	top := boundedInt{v: 10, min: 0}
	fs.Var(&top, "top", "allocations at the peak to list; 0 lists all")
	files, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if err := checkFiles("summary", files, -1); err != nil {
		return err
	}
	if err := checkStdout(e, "summary", files); err != nil {
		return err
	}
	// Each file's report is written as soon as it and those before it are
	// done, and its trace dropped: only its row of the files table is kept.
	failed, wrote := false, false
	out := &stickyWriter{w: e.stdout}
	var rows []fileRow
	loadEach(e, files, summaryLoad, func(i int, t *trace, err error) {
		if len(files) > 1 {
			rows = append(rows, rowOf(files[i], t))
		}
		if err != nil {
			fmt.Fprintf(e.stderr, "tracemem: %s\n", oneLine(err.Error()))
			failed = true
			return
		}
		if wrote { // a blank line between summaries, none before the first
			fmt.Fprintln(out)
		}
		writeSummary(out, t, top.v)
		wrote = true
	})
	if len(files) > 1 {
		if wrote {
			fmt.Fprintln(out)
		}
		writeFilesTable(out, rows)
	}
	if out.err != nil {
		return out.err
	}
	if failed {
		return errReported
	}
	return nil
}

// checkFiles checks the number of trace arguments (want < 0: at least one)
// and that standard input is named at most once.
func checkFiles(cmd string, files []string, want int) error {
	switch {
	case len(files) == 0:
		return usagef("%s: no trace file given", cmd)
	case want > 0 && len(files) != want:
		return usagef("%s: want %d trace file, got %d: %s", cmd, want, len(files), someQuoted(files))
	}
	stdin := 0
	for _, f := range files {
		if f == "-" {
			stdin++
		}
	}
	if stdin > 1 {
		return usagef("%s: standard input (-) given more than once", cmd)
	}
	return nil
}

// writeSummary writes the plain-text report of one trace, with the top
// allocations at the peak (all for top 0).
func writeSummary(w io.Writer, t *trace, top int) {
	p := t.profile
	s := &p.Summary
	fmt.Fprintf(w, "== %s ==\n", printable(t.name))
	if r := t.run; r != nil {
		fmt.Fprintf(w, "run %s (%s), entrypoint %s, main device %s\n",
			printable(orDash(r.id)), printable(orDash(r.phase)), printable(orDash(r.entrypoint)), printable(orDash(r.device)))
	}
	fmt.Fprintln(w, "sizes in 1024-based units (1 KiB = 1024 B, 1 MiB = 1024 KiB, 1 GiB = 1024 MiB, 1 TiB = 1024 GiB); times in ms since the trace start")

	fmt.Fprintln(w, "\nDevices")
	if len(p.ByDevice) == 0 {
		fmt.Fprintln(w, "  none: "+noMemoryEvents(t.run))
	} else {
		tb := newTable("DEVICE", "CAPACITY", "PEAK", "OF CAPACITY", "PEAK AT (ms)", "ALLOCS", "FREES").alignRight(1, 2, 3, 4, 5, 6)
		for _, d := range devicesInOrder(p) {
			capacity := "unknown"
			if d.CapacityBytes > 0 {
				capacity = formatBytes(d.CapacityBytes)
			}
			tb.add(orDash(d.Device), capacity, formatBytes(d.PeakBytes), formatPercent(d.PeakBytes, d.CapacityBytes),
				formatMs(d.PeakTimestampNs), fmt.Sprint(d.AllocCount), fmt.Sprint(d.FreeCount))
		}
		tb.write(w, "  ")
	}

	if !hasMemory(t.profile) {
		fmt.Fprintln(w, "\nPeak: none (no memory events)")
	} else {
		peakDev := printable(orDash(s.PeakDevice))
		fmt.Fprintf(w, "\nPeak: %s (%d %s) on %s at %s ms\n", formatBytes(s.PeakBytes), s.PeakBytes, plural(s.PeakBytes, "byte", "bytes"), peakDev, formatMs(s.PeakTimestampNs))
		fmt.Fprintf(w, "\nPeak by category (%s at the peak)\n", peakDev)
		tb := newTable("CATEGORY", "BYTES", "SHARE").alignRight(1, 2)
		for c, b := range s.PeakByCategory.All() {
			if b > 0 {
				tb.add(c.String(), formatBytes(b), formatPercent(b, s.PeakBytes))
			}
		}
		if len(tb.rows) == 1 { // the header only: a peak of 0 B
			fmt.Fprintln(w, "  none")
		} else {
			tb.write(w, "  ")
		}

		n := len(p.PeakBreakdown)
		if top > 0 {
			n = min(top, n)
		}
		fmt.Fprintf(w, "\nTop %d %s at the peak (of %d live on %s)\n", n, plural(uint64(n), "allocation", "allocations"), len(p.PeakBreakdown), peakDev)
		if n == 0 {
			fmt.Fprintln(w, "  none")
		} else {
			tb := newTable("BYTES", "CATEGORY", "DTYPE", "SHAPE", "OP", "TENSOR", "SPAN PATH").alignRight(0)
			for _, a := range p.PeakBreakdown[:n] {
				tb.add(formatBytes(a.Bytes), a.Category.String(), orDash(a.DType), formatShape(a.Shape, a.DType),
					orDash(opName(a.OpName)), idCell(a.TensorID), t.tree.path(a.SpanID))
			}
			tb.write(w, "  ")
		}
	}

	fmt.Fprintf(w, "\nPre-existing: %s (freed in the trace but allocated before it began; live in every timeline point before its free)\n", formatBytes(s.PreexistingBytes))
	fmt.Fprintf(w, "Autograd-retained activations: %s (live just before the first memory event of a backward step)\n", formatBytes(s.AutogradRetainedBytes))
	fmt.Fprintf(w, "Anomalies: %s\n", anomalies(&p.Anomalies))
	for _, n := range allocatorNotes(t) {
		fmt.Fprintf(w, "%s: %s\n", n[0], n[1])
	}
	fmt.Fprintf(w, "Events: %s\n", events(s))
}

// fileRow is what the files table keeps of one file's trace.
type fileRow struct {
	name          string
	failed, none  bool   // no trace; a trace without memory events
	peak          uint64 // bytes
	device        string
	peakNs        uint64
	allocs, frees uint64
	anomalies     uint64 // the four kinds summed
}

// hasPeak reports whether the row's file has a peak: it was read and has
// memory events.
func (r fileRow) hasPeak() bool { return !r.failed && !r.none }

// rowOf returns the files table's row of the file named arg, whose trace
// is t (nil when it failed).
func rowOf(arg string, t *trace) fileRow {
	if t == nil {
		if arg == "-" {
			arg = stdinName // as in the error line above the table
		}
		return fileRow{name: arg, failed: true}
	}
	s, a := &t.profile.Summary, &t.profile.Anomalies
	return fileRow{name: t.name, none: !hasMemory(t.profile), peak: s.PeakBytes, device: s.PeakDevice, peakNs: s.PeakTimestampNs,
		allocs: s.AllocCount, frees: s.FreeCount, anomalies: a.UnmatchedFrees + a.DoubleFrees + a.DuplicateAllocs + a.SizeMismatches}
}

// writeFilesTable writes the table that compares the files of one summary,
// in argument order, with a * on every file whose peak is the highest (to
// the byte: ranks of one data-parallel run often tie).
func writeFilesTable(w io.Writer, rows []fileRow) {
	var best uint64
	for _, r := range rows {
		if r.hasPeak() {
			best = max(best, r.peak)
		}
	}
	fmt.Fprintln(w, "Files (* = highest peak)")
	tb := newTable("", "FILE", "PEAK", "DEVICE", "PEAK AT (ms)", "ALLOCS", "FREES", "ANOMALIES").alignRight(2, 4, 5, 6, 7)
	for _, r := range rows {
		mark := ""
		if r.hasPeak() && r.peak == best {
			mark = "*"
		}
		switch {
		case r.failed:
			tb.add(mark, idCell(r.name), "failed", "-", "-", "-", "-", "-")
		case r.none: // not a peak of 0 B at 0 ms (from a user trial)
			tb.add(mark, idCell(r.name), "none", "-", "-", "0", "0", "0")
		default:
			tb.add(mark, idCell(r.name), formatBytes(r.peak), orDash(r.device), formatMs(r.peakNs),
				fmt.Sprint(r.allocs), fmt.Sprint(r.frees), fmt.Sprint(r.anomalies))
		}
	}
	tb.write(w, "  ")
}

// formatShape renders a shape as [d0,d1,...]; a scalar is [], and "-"
// stands for a shape that is not known: empty with no dtype either, as in
// PyTorch traces.
func formatShape(shape []uint64, dtype string) string {
	if len(shape) == 0 && dtype == "" {
		return "-"
	}
	var b strings.Builder
	b.WriteByte('[')
	for i, d := range shape {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatUint(d, 10))
	}
	b.WriteByte(']')
	return b.String()
}

func opName(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// hasMemory reports whether the trace had memory events: its peak device
// may be named "".
func hasMemory(p *tracemem.MemoryProfile) bool { return len(p.ByDevice) > 0 }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// idCell is how an id from the trace (a tensor's, a node's) shows in a
// table: as it is, but `""` for the empty id, which the readers take and a
// blank cell would hide (in text, it also shifts the columns).
func idCell(id string) string {
	if id == "" {
		return `""`
	}
	return id
}

// allocatorNotes returns, as (heading, text) pairs, what a PyTorch trace's
// reader counted of its allocator's events that the profile does not show:
// allocations that failed (and what the first asked for, where), and totals
// that disagree with the total before them and the allocs and frees since.
// Counts that are absent, 0 or not counts give none.
func allocatorNotes(t *trace) [][2]string {
	r := t.run
	if r == nil {
		return nil
	}
	var notes [][2]string
	if n, err := strconv.ParseUint(r.oomEvents, 10, 64); err == nil && n > 0 {
		text := fmt.Sprintf("%d [OutOfMemory] %s (%s PyTorch's allocator failed, which no figure here counts)",
			n, plural(n, "event", "events"), plural(n, "an allocation", "allocations"))
		if first := firstOOM(t); first != "" {
			text += "; the first " + first
		}
		notes = append(notes, [2]string{"Out of memory", text})
	}
	if n, err := strconv.ParseUint(r.totalMismatches, 10, 64); err == nil && n > 0 {
		notes = append(notes, [2]string{"Lost events", fmt.Sprintf("on %d [memory] %s, Total Allocated disagrees with the total before it and the allocs and frees since (events were lost there; the figures here miss them)",
			n, plural(n, "event", "events"))})
	}
	return notes
}

// firstOOM describes a PyTorch trace's first [OutOfMemory] event from its
// tags: what it asked for on which device, and when, with how much
// allocated and in which span, as far as the tags tell; "" when they do not
// give the device and the request.
func firstOOM(t *trace) string {
	f := t.run.oomFirst
	dev, ok := f["device"]
	asked, err := strconv.ParseUint(f["bytes"], 10, 64)
	if !ok || err != nil {
		return ""
	}
	s := "asked for " + formatBytes(asked) + " on " + printable(dev)
	if ns, err := strconv.ParseUint(f["ns"], 10, 64); err == nil {
		s += " at " + formatMs(ns) + " ms"
	}
	if total, err := strconv.ParseUint(f["total_allocated"], 10, 64); err == nil {
		s += " with " + formatBytes(total) + " allocated"
	}
	if span, ok := f["span"]; ok {
		if t.tree != nil && t.tree.findString(span) >= 0 {
			s += ", in " + t.tree.path(span)
		} else { // a command that reads no spans, or a span the trace lacks
			s += ", in span " + idCell(span)
		}
	}
	return s
}

// noMemoryEvents says that the trace has no memory events and, for a
// PyTorch trace, when PyTorch writes them: a user who profiled without
// profile_memory, or with a build that has no Kineto (whose profiler
// exports the legacy form, without them), gets one with none. For
// tracemem's own Chrome export, it names the trace to analyze instead.
func noMemoryEvents(r *runInfo) string {
	if r != nil && r.export {
		s := "the trace is tracemem's own Chrome export, which holds memory as counters to view, not as memory events: analyze the trace it was made from"
		if r.exportOf != "" {
			s += ", " + printable(r.exportOf)
		}
		return s
	}
	if r != nil && r.source == "chrome_trace" {
		return "the trace has no memory events (PyTorch's profiler writes [memory] events with profile_memory=True, in builds with Kineto)"
	}
	return "the trace has no memory events"
}

// events is the summary's line of event counts: "1 alloc, 2 frees, 3.00 KiB
// allocated in total".
func events(s *tracemem.MemorySummary) string {
	return fmt.Sprintf("%d %s, %d %s, %s allocated in total", s.AllocCount, plural(s.AllocCount, "alloc", "allocs"),
		s.FreeCount, plural(s.FreeCount, "free", "frees"), formatBytes(s.TotalAllocBytes))
}

// anomalies is the summary's line of anomaly counts, each kind named even
// at 0 so that a reader sees what was checked.
func anomalies(a *tracemem.Anomalies) string {
	return fmt.Sprintf("%d %s, %d %s, %d %s, %d %s",
		a.UnmatchedFrees, plural(a.UnmatchedFrees, "unmatched free", "unmatched frees"),
		a.DoubleFrees, plural(a.DoubleFrees, "double free", "double frees"),
		a.DuplicateAllocs, plural(a.DuplicateAllocs, "duplicate alloc", "duplicate allocs"),
		a.SizeMismatches, plural(a.SizeMismatches, "size mismatch", "size mismatches"))
}

// plural returns one for n == 1, else many.
func plural(n uint64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// summaryLoad is what summary needs of a trace: span paths, no node metrics.
var summaryLoad = loadOptions{opts: tracemem.Options{MaxTimelinePoints: fewTimelinePoints}}
