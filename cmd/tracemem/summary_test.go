// summary_test.go holds the tests of the summary's text: several reports, the files table and the shape column.

package main

import (
	"fmt"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tracemem/tracemem"
)

// gapProfile analyzes a trace with the library's document path, as the
// reference the command's output is checked against.
func gapProfile(t *testing.T, trace string) (*tracemem.TraceDocument, *tracemem.MemoryProfile) {
	t.Helper()
	doc, err := tracemem.ReadTrace(strings.NewReader(trace))
	if err != nil {
		t.Fatal(err)
	}
	p, err := tracemem.Analyze(doc, tracemem.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return doc, p
}

// filesRow is one row of the files table.
type filesRow struct {
	marked          bool
	file, anomalies string
}

// filesTable parses the files table at the end of a summary of several files.
func filesTable(t *testing.T, stdout string) []filesRow {
	t.Helper()
	const title = "Files (* = highest peak)\n"
	_, after, ok := strings.Cut(stdout, title)
	if !ok {
		t.Fatalf("no files table in:\n%s", stdout)
	}
	lines := strings.Split(strings.TrimSuffix(after, "\n"), "\n")
	var rows []filesRow
	for _, line := range lines[1:] { // lines[0] is the header
		if len(line) < 4 || !strings.HasPrefix(line, "  ") {
			t.Fatalf("files table row %q: not indented", line)
		}
		f := strings.Fields(line[3:])
		rows = append(rows, filesRow{marked: line[2] == '*', file: f[0], anomalies: f[len(f)-1]})
	}
	return rows
}

// The traces of TestSummarySeveralFiles: two with the same peak (300 B),
// one with every anomaly kind (an unmatched free first, whose pre-existing
// bytes are in no point, so they leave the peak as it is), and a smaller
// one read from standard input.
var (
	summaryStdinTrace = jsonlTrace(startRec("root", "step", "", 0), memRec(10, "alloc", "a", "root", "cuda:0", 100, "activation"), endRec("root", 100))
	summaryAnomTrace  = jsonlTrace(startRec("root", "step", "", 0), memRec(5, "free", "u", "root", "cuda:0", 50, "activation"),
		memRec(10, "alloc", "a", "root", "cuda:0", 100, "activation"), memRec(20, "free", "a", "root", "cuda:0", 100, "activation"), memRec(30, "free", "a", "root", "cuda:0", 100, "activation"),
		memRec(40, "alloc", "b", "root", "cuda:0", 200, "activation"), memRec(50, "alloc", "b", "root", "cuda:0", 300, "activation"), memRec(60, "free", "b", "root", "cuda:0", 999, "activation"),
		endRec("root", 100))
	summaryBasicTrace = jsonlTrace(startRec("root", "step", "", 0),
		memRec(10, "alloc", "a", "root", "cuda:0", 100, "activation"), memRec(20, "alloc", "b", "root", "cuda:0", 200, "activation"), memRec(30, "free", "a", "root", "cuda:0", 100, "activation"),
		endRec("root", 100))
)

// TestSummarySeveralFilesLayout checks the rules of a summary of several
// files (standard input first, then two files whose peaks tie), each
// against the library's analysis of each trace.
func TestSummarySeveralFilesLayout(t *testing.T) {
	dir := t.TempDir()
	pa := writeFile(t, dir, "anomalies.jsonl", []byte(summaryAnomTrace))
	pb := writeFile(t, dir, "basic.jsonl", []byte(summaryBasicTrace))
	r := runCmd(t, strings.NewReader(summaryStdinTrace), "summary", "-", pa, pb)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	names := []string{"<stdin>", pa, pb}
	var profiles []*tracemem.MemoryProfile
	var best uint64
	for _, tr := range []string{summaryStdinTrace, summaryAnomTrace, summaryBasicTrace} {
		_, p := gapProfile(t, tr)
		profiles = append(profiles, p)
		best = max(best, p.Summary.PeakBytes)
	}
	if profiles[1].Summary.PeakBytes != profiles[2].Summary.PeakBytes || profiles[1].Summary.PeakBytes != best || profiles[0].Summary.PeakBytes == best {
		t.Fatalf("the test wants a tie of the highest peaks at files 1 and 2; peaks %d %d %d",
			profiles[0].Summary.PeakBytes, profiles[1].Summary.PeakBytes, profiles[2].Summary.PeakBytes)
	}
	if a := profiles[1].Anomalies; a.UnmatchedFrees == 0 || a.SizeMismatches == 0 || a.DoubleFrees == 0 || a.DuplicateAllocs == 0 {
		t.Fatalf("the test wants every anomaly kind in %s: %+v", pa, a)
	}
	rows := filesTable(t, r.stdout)

	t.Run("blank line between reports", func(t *testing.T) {
		// Rule: each report after the first, and the files table, follow a blank line.
		if !strings.HasPrefix(r.stdout, "== <stdin> ==\n") {
			t.Errorf("stdout does not start with the first report: %q", r.stdout[:min(len(r.stdout), 40)])
		}
		for _, heading := range []string{"== " + pa + " ==\n", "== " + pb + " ==\n", "Files (* = highest peak)\n"} {
			i := strings.Index(r.stdout, heading)
			if i < 2 || r.stdout[i-2:i] != "\n\n" {
				t.Errorf("%q does not follow a blank line:\n%s", heading, r.stdout)
			}
		}
	})
	if len(rows) != len(names) {
		t.Fatalf("%d rows in the files table, want %d:\n%s", len(rows), len(names), r.stdout)
	}
	for i, row := range rows {
		a := profiles[i].Anomalies
		cases := []struct {
			name, reason string
			ok           bool
			got, want    any
		}{
			{"name", "rows come in argument order and standard input is named <stdin>", row.file == names[i], row.file, names[i]},
			{"mark", "* marks every file at the highest peak, both of a tie (from a review: ranks of one run often tie, and only the first was marked)",
				row.marked == (profiles[i].Summary.PeakBytes == best), row.marked, profiles[i].Summary.PeakBytes == best},
			{"anomalies", "ANOMALIES is the sum of the four anomaly kinds", row.anomalies == fmt.Sprint(a.UnmatchedFrees+a.DoubleFrees+a.DuplicateAllocs+a.SizeMismatches),
				row.anomalies, a.UnmatchedFrees + a.DoubleFrees + a.DuplicateAllocs + a.SizeMismatches},
		}
		for _, c := range cases {
			if !c.ok {
				t.Errorf("row %d, %s: %s: got %v, want %v", i, c.name, c.reason, c.got, c.want)
			}
		}
	}
}

// TestSummaryFilesMark: the * of the files table marks the highest peak
// wherever it is in the argument order, the first file included, and
// only the files at that peak.
func TestSummaryFilesMark(t *testing.T) {
	dir := t.TempDir()
	big := writeFile(t, dir, "big.jsonl", []byte(summaryBasicTrace))     // a peak of 300 B
	small := writeFile(t, dir, "small.jsonl", []byte(summaryStdinTrace)) // a peak of 100 B
	cases := []struct {
		name, reason string
		files        []string
		want         string // the marked file
	}{
		{"highest first", "the first file keeps the mark against a lower peak after it", []string{big, small}, big},
		{"highest first of three", "and against several lower ones", []string{big, small, small}, big},
		{"highest last", "a higher peak after the first takes the mark", []string{small, big}, big},
		{"tie", "every file at the highest peak has it", []string{big, small, big}, big + " " + big},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runCmd(t, nil, append([]string{"summary"}, c.files...)...)
			if r.code != 0 {
				t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
			}
			var marked []string
			for _, row := range filesTable(t, r.stdout) {
				if row.marked {
					marked = append(marked, row.file)
				}
			}
			if strings.Join(marked, " ") != c.want {
				t.Errorf("%s: marked %q, want only %q:\n%s", c.reason, marked, c.want, r.stdout)
			}
		})
	}
}

// TestSummaryFailedFiles: a file that cannot be read has a row in the
// files table, named as its error line names it, and leaves no blank line
// where its report would have been.
func TestSummaryFailedFiles(t *testing.T) {
	dir := t.TempDir()
	good := writeFile(t, dir, "basic.jsonl", []byte(summaryBasicTrace))
	junk := writeFile(t, dir, "junk.jsonl", []byte("junk\n"))
	cases := []struct {
		name, reason string
		stdin        string
		args         []string
		wantStart    string   // what stdout starts with
		wantRows     []string // the files table's FILE column
	}{
		{"failed stdin first", "standard input is <stdin> in the table, as in its error line; the first report starts stdout",
			"junk\n", []string{"-", good}, "== " + good + " ==\n", []string{"<stdin>", good}},
		{"failed file first", "no blank line for a report that was not written",
			"", []string{junk, good}, "== " + good + " ==\n", []string{junk, good}},
		{"empty file name", `an empty name is "" in the table, as in its error line (from a review: the cell was blank)`,
			"", []string{"", good}, "== " + good + " ==\n", []string{`""`, good}},
		{"all failed", "with no report, the table starts stdout",
			"junk\n", []string{junk, "-"}, "Files (* = highest peak)\n", []string{junk, "<stdin>"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runCmd(t, strings.NewReader(c.stdin), append([]string{"summary"}, c.args...)...)
			if r.code != 1 || !strings.Contains(r.stderr, "tracemem: ") {
				t.Fatalf("exit %d, stderr %q; want 1 and an error line", r.code, r.stderr)
			}
			if !strings.HasPrefix(r.stdout, c.wantStart) {
				t.Errorf("%s: stdout starts %q, want %q", c.reason, r.stdout[:min(len(r.stdout), 60)], c.wantStart)
			}
			var got []string
			for _, row := range filesTable(t, r.stdout) {
				got = append(got, row.file)
			}
			if !slices.Equal(got, c.wantRows) {
				t.Errorf("%s: files %q, want %q", c.reason, got, c.wantRows)
			}
		})
	}
}

// TestPeakByCategoryNone: a trace with memory events whose peak is 0 B
// (its only event an alloc of 0 bytes) says "none" under the peak by
// category, in the summary and in the report, rather than an empty table
// or cell.
func TestPeakByCategoryNone(t *testing.T) {
	trace := jsonlTrace(startRec("root", "step", "", 0), memRec(10, "alloc", "a", "root", "cuda:0", 0, "activation"), endRec("root", 100))
	if _, p := gapProfile(t, trace); len(p.ByDevice) == 0 || p.Summary.PeakBytes != 0 {
		t.Fatalf("the test wants a device with a peak of 0 B: %+v", p.Summary)
	}
	sum := runCmd(t, strings.NewReader(trace), "summary", "-")
	if sum.code != 0 {
		t.Fatalf("summary: exit %d, stderr %q", sum.code, sum.stderr)
	}
	if want := "\nPeak by category (cuda:0 at the peak)\n  none\n"; !strings.Contains(sum.stdout, want) {
		t.Errorf("summary does not say %q:\n%s", want, sum.stdout)
	}
	rep := runCmd(t, strings.NewReader(trace), "report", "-o", "-", "-")
	if rep.code != 0 {
		t.Fatalf("report: exit %d, stderr %q", rep.code, rep.stderr)
	}
	if want := "<tr><th>Peak by category</th><td>none</td></tr>"; !strings.Contains(rep.stdout, want) {
		t.Errorf("the report has no %q", want)
	}
}

// TestFormatShape checks the SHAPE column: a scalar is [], an unknown shape "-".
func TestFormatShape(t *testing.T) {
	cases := []struct {
		name   string
		shape  []uint64
		dtype  string
		want   string
		reason string
	}{
		{"scalar", nil, "f32", "[]", "an empty shape with a known dtype is a scalar"},
		{"scalar, empty slice", []uint64{}, "bf16", "[]", "empty, not nil, is a scalar too"},
		{"unknown", nil, "", "-", "no shape and no dtype (PyTorch traces) is not known"},
		{"matrix", []uint64{2, 3}, "f32", "[2,3]", "dimensions joined by commas without spaces"},
		{"shape without dtype", []uint64{7}, "", "[7]", "a shape is shown even without a dtype"},
	}
	for _, c := range cases {
		if got := formatShape(c.shape, c.dtype); got != c.want {
			t.Errorf("%s: %s: formatShape(%v, %q) = %q, want %q", c.name, c.reason, c.shape, c.dtype, got, c.want)
		}
	}
}

// TestCountLines checks the Events and Anomalies lines: a count of one
// takes the singular, every other count (0 included) the plural.
func TestCountLines(t *testing.T) {
	cases := []struct {
		name      string
		s         tracemem.MemorySummary
		a         tracemem.Anomalies
		events    string
		anomalies string
		reason    string
	}{
		{"zero", tracemem.MemorySummary{}, tracemem.Anomalies{},
			"0 allocs, 0 frees, 0 B allocated in total", "0 unmatched frees, 0 double frees, 0 duplicate allocs, 0 size mismatches",
			"zero takes the plural, and every kind is named even when none was seen"},
		{"one each", tracemem.MemorySummary{AllocCount: 1, FreeCount: 1, TotalAllocBytes: 1}, tracemem.Anomalies{UnmatchedFrees: 1, DoubleFrees: 1, DuplicateAllocs: 1, SizeMismatches: 1},
			"1 alloc, 1 free, 1 B allocated in total", "1 unmatched free, 1 double free, 1 duplicate alloc, 1 size mismatch",
			"one takes the singular, mismatch without its -es"},
		{"mixed", tracemem.MemorySummary{AllocCount: 2, FreeCount: 1, TotalAllocBytes: 2048}, tracemem.Anomalies{UnmatchedFrees: 2, DoubleFrees: 1, DuplicateAllocs: 11, SizeMismatches: 2},
			"2 allocs, 1 free, 2.00 KiB allocated in total", "2 unmatched frees, 1 double free, 11 duplicate allocs, 2 size mismatches",
			"each count takes its own number, 11 the plural"},
	}
	for _, c := range cases {
		if got := events(&c.s); got != c.events {
			t.Errorf("%s: %s: events = %q, want %q", c.name, c.reason, got, c.events)
		}
		if got := anomalies(&c.a); got != c.anomalies {
			t.Errorf("%s: %s: anomalies = %q, want %q", c.name, c.reason, got, c.anomalies)
		}
	}
}

// TestSummaryScalarShape checks that summary prints a scalar allocation's shape as [], not "-".
func TestSummaryScalarShape(t *testing.T) {
	trace := jsonlTrace(startRec("root", "step", "", 0),
		`{"kind": "memory", "timestamp_ns": 10, "tensor_id": "s", "span_id": "root", "device": "cuda:0", "bytes": 4, "action": "alloc", "shape": [], "dtype": "f32", "category": "activation", "op_name": "sum"}`,
		endRec("root", 100))
	path := writeFile(t, t.TempDir(), "scalar.jsonl", []byte(trace))
	r := runCmd(t, nil, "summary", path)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var row []string
	for line := range strings.SplitSeq(r.stdout, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == "4" && len(f) >= 6 && f[5] == "sum" {
			row = f // BYTES is "4 B": fields 4, B, CATEGORY, DTYPE, SHAPE, OP, ...
		}
	}
	if row == nil || row[4] != "[]" {
		t.Errorf("allocation row %q: want SHAPE [] for the scalar; stdout:\n%s", row, r.stdout)
	}
}

// TestSummaryTop: summary lists the 10 biggest allocations at the peak
// unless --top says otherwise, and all of them for --top 0.
func TestSummaryTop(t *testing.T) {
	recs := []string{startRec("root", "step", "", 0)}
	for i := range uint64(15) {
		recs = append(recs, memRec(10+i, "alloc", fmt.Sprintf("t%02d", i), "root", "cuda:0", 100+i, "activation"))
	}
	trace := jsonlTrace(append(recs, endRec("root", 100))...)
	head := regexp.MustCompile(`(?m)^Top (\d+) allocations at the peak \(of 15 live on cuda:0\)\n((?:  .*\n)+)`)
	for _, c := range []struct {
		name   string
		args   []string
		want   int
		reason string
	}{
		{"default", nil, 10, "the default --top is 10"},
		{"top 3", []string{"--top", "3"}, 3, "--top lowers it"},
		{"top 0", []string{"--top", "0"}, 15, "--top 0 lists all (from a user trial)"},
		{"top 20", []string{"--top", "20"}, 15, "no more than there are"},
	} {
		r := runCmd(t, strings.NewReader(trace), append(append([]string{"summary"}, c.args...), "-")...)
		m := head.FindStringSubmatch(r.stdout)
		if r.code != 0 || m == nil {
			t.Fatalf("%s: exit status %d, no top allocations in:\n%s%s", c.name, r.code, r.stdout, r.stderr)
		}
		if rows := strings.Count(m[2], "\n") - 1; m[1] != fmt.Sprint(c.want) || rows != c.want { // the table's header row
			t.Errorf("%s: %s: header says %s, %d rows; want %d", c.name, c.reason, m[1], rows, c.want)
		}
	}
}

// TestSummaryFilesNoMemory: in the files table, a trace without memory
// events has no peak ("none", no device, no time), not a peak of 0 B at
// 0 ms (from a user trial); it never has the mark.
func TestSummaryFilesNoMemory(t *testing.T) {
	dir := t.TempDir()
	none := writeFile(t, dir, "none.jsonl", []byte(jsonlTrace(startRec("root", "step", "", 0), endRec("root", 100))))
	basic := writeFile(t, dir, "basic.jsonl", []byte(summaryBasicTrace))
	r := runCmd(t, nil, "summary", none, basic)
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	_, table, _ := strings.Cut(r.stdout, "Files (* = highest peak)\n")
	want := map[string][]string{
		none:  {none, "none", "-", "-", "0", "0", "0"},
		basic: {"*", basic, "300", "B", "cuda:0", "0.000020", "2", "1", "0"},
	}
	for line := range strings.Lines(table) {
		f := strings.Fields(line)
		for file, w := range want {
			if slices.Contains(f, file) {
				if !slices.Equal(f, w) {
					t.Errorf("row %q, want the fields %q", strings.TrimSpace(line), w)
				}
				delete(want, file)
			}
		}
	}
	if len(want) > 0 {
		t.Errorf("no rows for %v in:\n%s", want, table)
	}
}

// TestSummaryAllocatorNotes: summary, the report and nodes say how many
// [OutOfMemory] events a PyTorch trace had and on how many events its
// Total Allocated disagreed with the total before it and the Bytes since (the
// reader's run tags), which the profile's JSON has no place for (from a
// trial on public traces), and profile and the exports say it on stderr;
// both from the Chrome trace itself and from a JSONL trace that keeps the
// tags; and nothing when the counts are absent, 0 or not counts.
func TestSummaryAllocatorNotes(t *testing.T) {
	mem := func(name string, ts, addr int, bytes, total int64) string {
		return fmt.Sprintf(`{"ph":"i","s":"t","name":%q,"pid":1,"tid":1,"ts":%d,"args":{"Device Type":1,"Device Id":0,"Addr":%d,"Bytes":%d,"Total Allocated":%d}}`,
			name, ts, addr, bytes, total)
	}
	chrome := func(evs ...string) string { return `{"traceEvents":[` + strings.Join(evs, ",") + `]}` }
	withTags := func(tags string) string {
		return strings.Replace(jsonlTrace(startRec("root", "step", "", 0), memRec(10, "alloc", "t", "root", "cuda:0", 8, "other"), endRec("root", 100)),
			`"tags": {}`, `"tags": `+tags, 1)
	}
	oom1 := "Out of memory: 1 [OutOfMemory] event (an allocation PyTorch's allocator failed, which no figure here counts)"
	oom2 := "Out of memory: 2 [OutOfMemory] events (allocations PyTorch's allocator failed, which no figure here counts)"
	oom3 := "Out of memory: 3 [OutOfMemory] events (allocations PyTorch's allocator failed, which no figure here counts)"
	lost1 := "Lost events: on 1 [memory] event, Total Allocated disagrees with the total before it and the allocs and frees since (events were lost there; the figures here miss them)"
	lost2 := "Lost events: on 2 [memory] events, Total Allocated disagrees with the total before it and the allocs and frees since (events were lost there; the figures here miss them)"
	for _, c := range []struct {
		name, reason, file, trace string
		want                      []string
	}{
		{"chrome", "two OOM events, and a total 1 KiB above the events' sum: counts that differ, so that one cannot stand for the other (from a mutation test)", "t.json",
			chrome(mem("[memory]", 10, 1, 1024, 1024), mem("[memory]", 11, 2, 1024, 3072), mem("[OutOfMemory]", 12, 0, 1<<30, 3072), mem("[OutOfMemory]", 13, 0, 1<<30, 3072)),
			[]string{oom2 + "; the first asked for 1.00 GiB on cuda:0 at 0.002000 ms with 3.00 KiB allocated", lost1}},
		{"chrome, in an op", "the first [OutOfMemory] event names its span's path (from a review: only the count was said)", "op.json",
			chrome(`{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":10,"dur":10}`, mem("[memory]", 10, 1, 1024, 1024), mem("[OutOfMemory]", 15, 0, 4096, 1024)),
			[]string{oom1 + "; the first asked for 4.00 KiB on cuda:0 at 0.005000 ms with 1.00 KiB allocated, in aten::mm"}},
		{"consistent", "a PyTorch trace whose totals agree and that never ran out", "ok.json",
			chrome(mem("[memory]", 10, 1, 1024, 1024), mem("[memory]", 11, 1, -1024, 0)), nil},
		{"jsonl", "a JSONL trace written from a PyTorch one keeps the tags", "t.jsonl",
			withTags(`{"source": "chrome_trace", "out_of_memory_events": "3", "total_allocated_mismatches": "2"}`), []string{oom3, lost2}},
		{"zero", "counts of 0 say nothing", "zero.jsonl",
			withTags(`{"out_of_memory_events": "0", "total_allocated_mismatches": "0"}`), nil},
		{"not counts", "tags of another producer that are not counts say nothing", "other.jsonl",
			withTags(`{"out_of_memory_events": "many", "total_allocated_mismatches": "-1"}`), nil},
		{"no source", "the counts say what they say without a source tag", "nosource.jsonl",
			withTags(`{"out_of_memory_events": "1"}`), []string{oom1}},
		{"jsonl, first", "the tags of the first [OutOfMemory] event, kept in a JSONL trace; the span by its path", "first.jsonl",
			withTags(`{"out_of_memory_events": "1", "out_of_memory_first_device": "cuda:1", "out_of_memory_first_ns": "1500000", "out_of_memory_first_bytes": "2048", "out_of_memory_first_span": "root"}`),
			[]string{oom1 + "; the first asked for 2.00 KiB on cuda:1 at 1.500000 ms, in step"}},
		{"jsonl, first without a request", "tags that give no device or no request say nothing of the first", "norequest.jsonl",
			withTags(`{"out_of_memory_events": "1", "out_of_memory_first_device": "cuda:1", "out_of_memory_first_bytes": "-5"}`), []string{oom1}},
		{"other bases", "counts are decimal: hex and binary are not counts", "hex.jsonl",
			withTags(`{"out_of_memory_events": "0x2", "total_allocated_mismatches": "0b11"}`), nil},
		{"beyond 64 bits", "nor is a number beyond 64 bits", "big.jsonl",
			withTags(`{"out_of_memory_events": "99999999999999999999", "total_allocated_mismatches": "18446744073709551616"}`), nil},
	} {
		path := writeFile(t, t.TempDir(), c.file, []byte(c.trace))
		r := runCmd(t, nil, "summary", path)
		if r.code != 0 {
			t.Fatalf("%s: exit %d: %s", c.name, r.code, r.stderr)
		}
		var got []string
		for line := range strings.Lines(r.stdout) {
			if strings.HasPrefix(line, "Out of memory:") || strings.HasPrefix(line, "Lost events:") {
				got = append(got, strings.TrimSuffix(line, "\n"))
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %s: summary says %q, want %q", c.name, c.reason, got, c.want)
		}
		out := filepath.Join(t.TempDir(), "r.html")
		if r := runCmd(t, nil, "report", path, "-o", out); r.code != 0 {
			t.Fatalf("%s: report: exit %d: %s", c.name, r.code, r.stderr)
		}
		page, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		got = nil
		for _, m := range regexp.MustCompile(`<tr><th>(Out of memory|Lost events)</th><td>([^<]*)</td></tr>`).FindAllStringSubmatch(string(page), -1) {
			got = append(got, m[1]+": "+html.UnescapeString(m[2]))
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %s: report says %q, want %q", c.name, c.reason, got, c.want)
		}
		// nodes ends its text with them; profile and the exports, whose
		// formats have no place for them, say them on stderr (from a
		// review: they said nothing).
		r = runCmd(t, nil, "nodes", path)
		got = nil
		for line := range strings.Lines(r.stdout) {
			if strings.HasPrefix(line, "Out of memory:") || strings.HasPrefix(line, "Lost events:") {
				got = append(got, strings.TrimSuffix(line, "\n"))
			}
		}
		if r.code != 0 || !slices.Equal(got, c.want) || len(c.want) > 0 && !strings.HasSuffix(r.stdout, "\n\n"+strings.Join(c.want, "\n")+"\n") {
			t.Errorf("%s: %s: nodes: exit %d, says %q at the end of:\n%s\nwant %q", c.name, c.reason, r.code, got, r.stdout, c.want)
		}
		for _, args := range [][]string{{"profile", path}, {"export", "--format", "csv", "-o", filepath.Join(t.TempDir(), "t.csv"), path}} {
			r := runCmd(t, nil, args...)
			var want strings.Builder
			for _, w := range c.want {
				if c.name == "jsonl, first" { // a stream of no spans names the span by its id
					w = strings.Replace(w, ", in step", ", in span root", 1)
				}
				want.WriteString("tracemem: note: " + path + ": " + w + "\n")
			}
			if r.code != 0 || r.stderr != want.String() {
				t.Errorf("%s: %s: %s: exit %d, stderr %q, want %q", c.name, c.reason, args[0], r.code, r.stderr, want.String())
			}
		}
	}
}
