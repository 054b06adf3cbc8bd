// input_edges_test.go holds edge cases of the input side found by mutation
// testing: the run record's source, span ids "" as parents, the cuts of a
// grown tree and pprof stacks at their limit.

package main

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tracemem/tracemem"
)

// TestTapRunSource: the run's source is its meta record's tags.source,
// streamed as read whole, not a "source" member of another object of the
// meta record (found by mutation: decoding every object value of a record
// for its source went unnoticed).
func TestTapRunSource(t *testing.T) {
	const pytorch = "PyTorch's profiler"
	for _, c := range []struct {
		name   string
		tags   string // replaces `"tags": {}` in testMeta
		chrome bool
		reason string
	}{
		{"tags", `"tags": {"source": "chrome_trace"}`, true, "a PyTorch trace converted to JSONL names its source in tags"},
		{"other member", `"tags": {}, "extra": {"source": "chrome_trace"}`, false, "a source in another member is not the run's"},
		{"before tags", `"extra": {"source": "chrome_trace"}, "tags": {"source": "candle"}`, false, "nor before the tags"},
	} {
		meta := strings.Replace(testMeta, `"tags": {}`, c.tags, 1)
		if meta == testMeta {
			t.Fatal("testMeta has no empty tags")
		}
		jsonlPath, _, docPath, _ := writeForms(t, []byte(meta+"\n"))
		for _, path := range []string{jsonlPath, docPath} {
			got := runCmd(t, nil, "summary", path)
			if got.code != 0 {
				t.Fatalf("%s: exit %d: %s", c.reason, got.code, got.stderr)
			}
			if strings.Contains(got.stdout, pytorch) != c.chrome {
				t.Errorf("%s (%s): the summary mentions %q: %v, want %v:\n%s", c.reason, path, pytorch, !c.chrome, c.chrome, got.stdout)
			}
		}
	}
}

// TestEmptyParentIsNone: a span whose parent_id is "" is a root, streamed as
// read whole, even when the trace has a span whose id is "" (found by
// mutation: taking a present but empty parent_id for a parent went
// unnoticed).
func TestEmptyParentIsNone(t *testing.T) {
	for _, c := range []struct {
		name    string
		records []string
		reason  string
	}{
		{"empty span first", []string{
			`{"kind": "span_start", "id": "", "name": "empty", "start_ns": 0, "span_kind": "function", "measured": true}`,
			`{"kind": "span_start", "id": "a", "name": "a", "start_ns": 1, "span_kind": "function", "measured": true, "parent_id": ""}`,
		}, `parent_id "" names no parent, though a span "" exists`},
		{"empty span after", []string{
			`{"kind": "span_start", "id": "a", "name": "a", "start_ns": 1, "span_kind": "function", "measured": true, "parent_id": ""}`,
			`{"kind": "span_start", "id": "", "name": "empty", "start_ns": 2, "span_kind": "function", "measured": true}`,
		}, "nor when the span \"\" comes after"},
	} {
		recs := append(c.records, memRec(5, "alloc", "t", "a", "cuda:0", 1024, "activation"), endRec("a", 10), endRec("", 10))
		jsonlPath, _, docPath, _ := writeForms(t, []byte(jsonlTrace(recs...)))
		want := runCmd(t, nil, "nodes", docPath)
		got := runCmd(t, nil, "nodes", jsonlPath)
		if want.code != 0 || got.code != 0 {
			t.Fatalf("%s: exit %d and %d: %s%s", c.reason, want.code, got.code, want.stderr, got.stderr)
		}
		if strings.Contains(got.stdout, "empty > a") || strings.ReplaceAll(got.stdout, jsonlPath, docPath) != want.stdout {
			t.Errorf("%s: streamed output differs from the document's: %s", c.reason, lineDiff(want.stdout, strings.ReplaceAll(got.stdout, jsonlPath, docPath)))
		}
	}
}

// TestSpanPathsSettleAfterEarlierID: a span added after paths were asked for
// whose id sorts first changes where a cycle is cut; the paths are those
// of the tree built whole (found by mutation: TestSpanPathsSettleAgain
// passed with settle run once, or with the old cuts kept).
func TestSpanPathsSettleAfterEarlierID(t *testing.T) {
	grown, whole := newSpanTree(), newSpanTree()
	for _, s := range []spanInfo{{id: "a", parent: "b", name: "a"}, {id: "b", parent: "a", name: "b"}} {
		grown.addSpan(s)
		whole.addSpan(s)
	}
	if got := grown.pathNames("a"); !slices.Equal(got, []string{"b", "a"}) {
		t.Fatalf("path of a before growing: %q, want b > a (the walk from a cuts b's link)", got)
	}
	zero := spanInfo{id: "0", parent: "b", name: "0"} // walked first: cuts a's link
	grown.addSpan(zero)
	whole.addSpan(zero)
	for _, id := range []string{"0", "a", "b"} {
		if got, want := grown.pathNames(id), whole.pathNames(id); !slices.Equal(got, want) {
			t.Errorf("path of %s: %q after growing, %q for the tree built whole", id, got, want)
		}
	}
}

// TestPprofStrayParentAtTheLimit: a stack whose last known span's parent is
// not in the trace (its id stands for it) keeps at most maxStackFrames
// frames, the last one the elision marker when names were left out
// (found by mutation: appending the stray parent past the limit went
// unnoticed, giving 1025 frames and no marker).
func TestPprofStrayParentAtTheLimit(t *testing.T) {
	for _, c := range []struct {
		name   string
		spans  int // a chain of this many spans under a parent not in the trace
		frames int
		elided bool
		reason string
	}{
		{"room for the stray", maxStackFrames - 1, maxStackFrames, false, "1023 names and the stray id: 1024 frames, nothing left out"},
		{"no room", maxStackFrames, maxStackFrames, true, "1024 names and the stray id: cut to 1023 and the marker"},
	} {
		tree := newSpanTree()
		addChain(tree, c.spans, "ghost")
		leaf := "s" + strconv.Itoa(c.spans-1)
		p := &tracemem.MemoryProfile{Summary: tracemem.MemorySummary{PeakDevice: "d", PeakBytes: 1}}
		p.PeakBreakdown = []tracemem.LiveAllocation{{TensorID: "t", SpanID: leaf, Bytes: 1, Device: "d"}}
		prof, err := buildPprof(&trace{name: "stray", profile: p, tree: tree})
		if err != nil {
			t.Fatal(err)
		}
		if len(prof.Sample) != 1 {
			t.Fatalf("%s: %d samples, want 1", c.reason, len(prof.Sample))
		}
		locs := prof.Sample[0].Location
		last := locs[len(locs)-1].Line[0].Function.Name
		if len(locs) != c.frames || (last == elidedFrame) != c.elided || !c.elided && last != "ghost" {
			t.Errorf("%s: %d frames, the last %q; want %d, elided %v", c.reason, len(locs), last, c.frames, c.elided)
		}
	}
}

// TestSourceSizeOfStdin: standard input from a regular file counts what is
// left of it from where it stands (a shell may hand over a file already
// partly read), so the progress bar's total and time left are right; a
// pipe's size is unknown.
func TestSourceSizeOfStdin(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(path, make([]byte, 1000), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		at     int64
		want   int64
		reason string
	}{
		{"from the start", 0, 1000, "a file read from its start counts whole"},
		{"partly read", 400, 600, "a file already read to 400 has 600 bytes left"},
		{"read to its end", 1000, 0, "a file read to its end has nothing left"},
		{"beyond its end", 1500, 0, "a position beyond the end (a seek may put it there) leaves nothing, not a negative size"},
	} {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Seek(c.at, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		if got := sourceSize(&env{stdin: f}, "-"); got != c.want {
			t.Errorf("%s: %s: sourceSize = %d, want %d", c.name, c.reason, got, c.want)
		}
		f.Close()
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if got := sourceSize(&env{stdin: r}, "-"); got != -1 {
		t.Errorf("a pipe: sourceSize = %d, want -1 (unknown)", got)
	}
}

// TestStdinStatFails: standard input whose Stat fails (here a closed file)
// has no known size and is an input error on one line naming <stdin>, not a
// crash on the missing file info (found by mutation: err == nil || a mode
// check went unnoticed, both when sizing the input and when opening it).
func TestStdinStatFails(t *testing.T) {
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := f.Stat(); err == nil {
		t.Fatal("the test wants a file whose Stat fails")
	}
	if got := sourceSize(&env{stdin: f}, "-"); got != -1 {
		t.Errorf("sourceSize = %d, want -1 (unknown)", got)
	}
	for _, c := range []struct {
		name   string
		args   []string
		reason string
	}{
		{"summary", []string{"summary", "-"}, "the files of summary are sized for the progress bar, then opened"},
		{"nodes", []string{"nodes", "-"}, "one trace goes the same way"},
	} {
		r := runCmd(t, f, c.args...)
		if r.code != 1 || !strings.HasPrefix(r.stderr, "tracemem: <stdin>: ") || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("%s: %s: exit %d, stderr %q; want 1 and one line naming <stdin>", c.name, c.reason, r.code, r.stderr)
		}
	}
}
