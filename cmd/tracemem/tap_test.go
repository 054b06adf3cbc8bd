// tap_test.go holds tests of the line tap: its memory on long lines, and what its collector reads of a record.

package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tracemem/tracemem"
)

// TestTapLongBlankLines: white space alone on a line, or before a record, is
// not held by the tap, and the record after it is still collected (a 522 KB
// gzip stream of a 512 MiB blank line took summary 3.3 GB and 52 s; found by
// a resource review).
func TestTapLongBlankLines(t *testing.T) {
	data, err := os.ReadFile(sample(t))
	if err != nil {
		t.Fatal(err)
	}
	first, rest, _ := bytes.Cut(data, []byte("\n"))
	const n = 64 << 20
	// A blank line of n spaces, then n spaces before the second record; made
	// once, before the measure.
	blank := "\n" + strings.Repeat(" ", n) + "\n" + strings.Repeat(" ", n)
	trace := func() io.Reader {
		return io.MultiReader(bytes.NewReader(first), strings.NewReader(blank), bytes.NewReader(rest))
	}
	doc, err := tracemem.ReadTrace(trace())
	if err != nil {
		t.Fatal(err)
	}
	c := newCollector(true)
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	tap := newLineTap(trace(), c)
	if _, err := io.Copy(io.Discard, tap); err != nil {
		t.Fatal(err)
	}
	if err := tap.wait(); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&m1)
	// The tap copies what it reads into buffers it reuses when the collector
	// has given them back: 16 MB here, on this trace of 1 MB.
	if a := m1.TotalAlloc - m0.TotalAlloc; a > n/2 {
		t.Errorf("the tap allocated %d bytes for %d bytes of white space, want at most %d", a, 2*n, n/2)
	}
	checkCollected(t, c, doc, treeFromDocument(doc))
}

// TestSpanIDUsedAgain: a span_start that uses the id of a span that has
// ended is refused by every command that names spans, as ReadTrace and the
// node metrics refuse it, at its line. The analysis without node metrics
// forgets a span when it ends and took the second span for a new one, while
// the span tree kept the first: summary showed the second span's memory under
// the first span's path (from a user trial). profile and the CSV export name
// no span and do not look (the README says so).
func TestSpanIDUsedAgain(t *testing.T) {
	const meta = `{"kind":"meta","schema":"candle-graph/trace/6","run_id":"r","correlation_id":"c","entrypoint":"e","phase":"train","timestamp":"t","capture_step":0,"warmup_steps":0,"device":"cuda:0","timing_mode":"host","tags":{}}` + "\n"
	span := func(name string, start int) string {
		return `{"kind":"span_start","id":"s","name":"` + name + `","start_ns":` + strconv.Itoa(start) + `,"span_kind":"function","measured":true}` + "\n"
	}
	alloc := func(id string, ts int) string {
		return `{"kind":"memory","timestamp_ns":` + strconv.Itoa(ts) + `,"tensor_id":"` + id + `","span_id":"s","device":"cuda:0","bytes":100,"action":"alloc","shape":[],"dtype":"u8","category":"activation"}` + "\n"
	}
	const end = `{"kind":"span_end","id":"s","duration_ns":2}` + "\n"
	first := meta + span("first", 0) + alloc("x", 1) + end // lines 1-4
	dir := t.TempDir()
	cases := []struct {
		name, trace, wantErr, reason string
	}{
		{"after its end", first + span("second", 5) + alloc("y", 6) + end, `line 5: span_start: span "s": duplicate span id`,
			"the second span_start is the error, where ReadTrace puts it"},
		{"blank lines count", first + "\n  \n" + span("second", 5) + alloc("y", 6), `line 7: span_start: span "s": duplicate span id`,
			"the tap counts every line, blank or not, as the analysis does"},
		{"last line, no newline", first + strings.TrimSuffix(span("second", 5), "\n"), `line 5: span_start: span "s": duplicate span id`,
			"a last line without a newline has the next number"},
		{"before a bad line", first + span("second", 5) + alloc("y", 6) + "{\"kind\": \"memory\", \n", `line 5: span_start: span "s": duplicate span id`,
			"the earlier of two errors is reported, whichever part of the command finds it"},
		{"after a bad line", meta + span("first", 0) + "{\"kind\": \"memory\", \n" + end + span("second", 5), `line 3: memory: `,
			"likewise when the analysis's error is the earlier"},
		{"another fault on the line", meta + strings.Replace(span("first", 0), `"id":"s"`, `"id":""`, 1) + `{"kind":"span_start","name":"b","start_ns":1,"span_kind":"function","measured":true}` + "\n",
			`line 3: span_start: id: missing required field`,
			"a span_start without an id, which the tap takes for the id \"\" used again, is the analysis's error: it wins a tie (found by FuzzTap)"},
	}
	commands := [][]string{
		{"summary"},
		{"nodes"},
		{"report", "-o", filepath.Join(dir, "r.html")},
		{"export", "--format", "pprof", "-o", filepath.Join(dir, "p.pb.gz")},
		{"export", "--format", "chrome", "-o", filepath.Join(dir, "c.json")},
	}
	for i, c := range cases {
		file := filepath.Join(dir, "t"+strconv.Itoa(i)+".jsonl")
		if err := os.WriteFile(file, []byte(c.trace), 0o644); err != nil {
			t.Fatal(err)
		}
		_, rerr := tracemem.ReadTrace(strings.NewReader(c.trace))
		if rerr == nil || !strings.Contains(rerr.Error(), c.wantErr[:strings.Index(c.wantErr, ":")]) {
			t.Errorf("%s: ReadTrace error %v, want one on the same line as %q", c.name, rerr, c.wantErr)
		}
		for _, cmd := range commands {
			r := runCmd(t, nil, append(slices.Clone(cmd), file)...)
			if r.code != 1 || !strings.Contains(r.stderr, file+": "+c.wantErr) {
				t.Errorf("%s: %s: exit %d, stderr %q; want 1 and %q\n(%s)", c.name, cmd[0], r.code, r.stderr, c.wantErr, c.reason)
			}
		}
	}
	// The streams that name no span do not look.
	file := filepath.Join(dir, "t0.jsonl")
	for _, cmd := range [][]string{{"profile"}, {"export", "--format", "csv", "-o", filepath.Join(dir, "t.csv")}} {
		if r := runCmd(t, nil, append(cmd, file)...); r.code != 0 {
			t.Errorf("%s: exit %d (stderr %q), want 0: it streams without the span tree", cmd[0], r.code, r.stderr)
		}
	}
}

// TestCollectorMembersOfItsKind: a record's members named like another
// kind's, with values of a type that kind would refuse, are skipped, as the
// reader skips them, and so are nested values with names given twice: the
// collector keeps the record (found by an audit: a span_start with
// "device": 5 was dropped, and its span named by its id in span paths,
// while the analysis took it).
func TestCollectorMembersOfItsKind(t *testing.T) {
	meta := `{"kind":"meta","schema":"candle-graph/trace/6","run_id":"r","correlation_id":"c","entrypoint":"e","phase":"train","timestamp":"t","capture_step":1,"warmup_steps":0,"device":"cuda:0","timing_mode":"host","tags":{"source":"s"}%s}`
	start := `{"kind":"span_start","id":"a","name":"A","start_ns":0,"span_kind":"function","measured":true%s}`
	child := `{"kind":"span_start","id":"b","parent_id":"a","name":"B","start_ns":1,"span_kind":"op","measured":true}`
	op := `{"kind":"op","span_id":"b","op_name":"mm","inputs":[],"shape":[1],"dtype":"f32","device":"cuda:0","duration_ns":1,"timestamp_ns":1,"input_storage_bytes":0%s}`
	end := `{"kind":"span_end","id":"b","duration_ns":2%s}`
	mem := `{"kind":"memory","timestamp_ns":2,"action":"alloc","tensor_id":"t","device":"cuda:0","bytes":4,"shape":[1],"dtype":"f32","span_id":"b"}`
	for _, c := range []struct {
		name, meta, start, op, end string
	}{
		{"meta", `,"id":5,"parent_id":[],"span_id":{},"name":6,"span_kind":7,"step":8,"op_name":9,"start_ns":"x","duration_ns":"y"`, "", "", ""},
		{"span_start", "", `,"device":5,"phase":1,"run_id":2,"entrypoint":3,"span_id":4,"op_name":6,"duration_ns":"x","tags":"t"`, "", ""},
		{"op", "", "", `,"id":5,"parent_id":6,"name":7,"span_kind":8,"step":9,"run_id":1,"phase":2,"entrypoint":3,"start_ns":"x","tags":"t"`, ""},
		{"span_end", "", "", "", `,"device":5,"phase":1,"run_id":2,"entrypoint":3,"span_id":4,"op_name":6,"name":7,"parent_id":8,"span_kind":9,"step":0,"start_ns":"x","tags":"t"`},
		// From a review: the reader checks names given twice only among
		// the record's own members, so it takes these.
		{"nested names given twice", `,"x":{"a":1,"a":2}`, `,"x":{"a":1,"\u0061":2}`, `,"x":[{"b":1,"b":2}]`, `,"x":{"c":{"d":1,"d":2}}`},
	} {
		data := []byte(strings.Join([]string{
			fmt.Sprintf(meta, c.meta), fmt.Sprintf(start, c.start), child,
			fmt.Sprintf(op, c.op), fmt.Sprintf(end, c.end), mem,
		}, "\n") + "\n")
		t.Run(c.name, func(t *testing.T) {
			doc, err := tracemem.ReadTrace(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("the reader refuses the trace: %v", err)
			}
			c := collectAll(t, data)
			if c.err != nil {
				t.Fatalf("the collector's error: %v", c.err)
			}
			checkCollected(t, c, doc, treeFromDocument(doc))
		})
	}
}
