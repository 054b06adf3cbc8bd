// nodes_test.go holds the tests of the nodes subcommand's text: which nodes are listed, their order, their count and their names.

package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tracemem/tracemem"
)

// nodeRow is one row of the nodes table.
type nodeRow struct{ kind, node, path string }

// nodesOutput runs nodes with args on trace and returns its second line
// (what was listed) and the rows of its table.
func nodesOutput(t *testing.T, trace string, args ...string) (string, []nodeRow) {
	t.Helper()
	path := writeFile(t, t.TempDir(), "trace.jsonl", []byte(trace))
	r := runCmd(t, nil, append(append([]string{"nodes"}, args...), path)...)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("nodes %q: exit %d, stderr %q", args, r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if len(lines) < 2 {
		t.Fatalf("nodes %q: stdout %q", args, r.stdout)
	}
	var rows []nodeRow
	sep := regexp.MustCompile(` {2,}`)
	in := false
	for _, line := range lines {
		if strings.HasPrefix(strings.TrimSpace(line), "PEAK  ") {
			in = true
			continue
		}
		if in {
			f := sep.Split(strings.TrimSpace(line), -1)
			if len(f) != 6 {
				t.Fatalf("nodes %q: row %q has %d columns, want 6", args, line, len(f))
			}
			rows = append(rows, nodeRow{kind: f[3], node: f[4], path: f[5]})
		}
	}
	return lines[1], rows
}

func rowNodes(rows []nodeRow) []string {
	var keys []string
	for _, r := range rows {
		keys = append(keys, r.node)
	}
	return keys
}

// TestNodesListsOnlyNonZero checks that nodes lists the nodes whose metric
// is > 0 and counts the others in "; N with 0 not listed". The nodes listed
// are worked out by hand from the trace (from a test audit: taken from the
// command's own nodeSort.metric, a sort by bytes that read the peak passed).
func TestNodesListsOnlyNonZero(t *testing.T) {
	// A requests 100 bytes by its op; B allocates 60 bytes without an op
	// record, so it requests none; C allocates nothing.
	trace := jsonlTrace(
		startRec("A", "A", "", 0), opRec(1, "A", "mm", "x", 100),
		memRec(1, "alloc", "x", "A", "cuda:0", 100, "activation"), memRec(2, "free", "x", "A", "cuda:0", 100, "activation"), endRec("A", 5),
		startRec("B", "B", "", 10), memRec(11, "alloc", "y", "B", "cuda:0", 60, "activation"), endRec("B", 5),
		startRec("C", "C", "", 20), endRec("C", 5))
	doc, _ := gapProfile(t, trace)
	metrics := tracemem.NodeMemoryMetrics(doc, nil)
	if len(metrics) != 4 {
		t.Fatalf("%d nodes, want 4 (A, B, C and A's op): %v", len(metrics), metrics)
	}
	cases := []struct {
		name   string
		by     nodeSort
		want   []string
		reason string
	}{
		{"bytes", sortBytes, []string{"A", "A/op/0"}, "B and C request nothing: two not listed"},
		{"peak", sortPeak, []string{"A", "A/op/0", "B"}, "only C has no peak: one not listed"},
		{"residual", sortResidual, []string{"B"}, "only B keeps bytes live at its end: three not listed"},
	}
	seenOne := false
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want, zero := c.want, len(metrics)-len(c.want)
			seenOne = seenOne || zero == 1
			head, rows := nodesOutput(t, trace, "--sort", string(c.by))
			got := rowNodes(rows)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("%s: listed %q, want the nodes with %s > 0: %q", c.reason, got, c.by, want)
			}
			wantHead := fmt.Sprintf("top %d of %d nodes by ", len(want), len(metrics))
			if zero > 0 {
				if !strings.HasPrefix(head, wantHead) || !strings.HasSuffix(head, fmt.Sprintf("; %d with 0 not listed", zero)) {
					t.Errorf("%s: header %q, want %q... ending in \"; %d with 0 not listed\"", c.reason, head, wantHead, zero)
				}
			} else if !strings.HasPrefix(head, wantHead) || strings.Contains(head, "not listed") {
				t.Errorf("%s: header %q, want %q... and no \"not listed\"", c.reason, head, wantHead)
			}
		})
	}
	if !seenOne {
		t.Errorf("no case has exactly one node with 0; the test wants one")
	}
}

// TestNodesTieBreak checks the documented order of nodes: by the metric,
// then peak, residual and bytes (most first), then by key.
func TestNodesTieBreak(t *testing.T) {
	// A: bytes 100, peak 100, residual 0 (its tensor is freed); B: bytes
	// 100 (60 + 40), peak 60, residual 40; C: bytes 80 (its op's record)
	// but peak 10 (its allocation), so that bytes and peak order it apart;
	// an op node's bytes and peak are its op's bytes, its residual its
	// tensor's.
	trace := jsonlTrace(
		startRec("A", "A", "", 0), opRec(1, "A", "op", "x", 100),
		memRec(1, "alloc", "x", "A", "cuda:0", 100, "activation"), memRec(2, "free", "x", "A", "cuda:0", 100, "activation"), endRec("A", 5),
		startRec("B", "B", "", 10), opRec(11, "B", "op", "y", 60), opRec(13, "B", "op", "z", 40),
		memRec(11, "alloc", "y", "B", "cuda:0", 60, "activation"), memRec(12, "free", "y", "B", "cuda:0", 60, "activation"), memRec(13, "alloc", "z", "B", "cuda:0", 40, "activation"), endRec("B", 5),
		startRec("C", "C", "", 20), opRec(21, "C", "op", "w", 80),
		memRec(21, "alloc", "w", "C", "cuda:0", 10, "activation"), memRec(22, "free", "w", "C", "cuda:0", 10, "activation"), endRec("C", 5))
	cases := []struct {
		name   string
		by     nodeSort
		want   []string
		reason string
	}{
		{"bytes", sortBytes, []string{"A", "A/op/0", "B", "C/op/0", "C", "B/op/0", "B/op/1"},
			"A and B both request 100 bytes: A's peak (100) beats B's (60) before B's residual (40) counts; A and A/op/0 tie on every figure and go by key; C's 80 bytes rank it above B/op/0's 60 though it peaks lower, and below C/op/0, which peaks at 80"},
		{"peak", sortPeak, []string{"A", "A/op/0", "C/op/0", "B", "B/op/0", "B/op/1", "C"},
			"B and B/op/0 both peak at 60: B's residual (40) puts it first; C's peak of 10 ranks it last, though it requests 80"},
		{"residual", sortResidual, []string{"B", "B/op/1"},
			"B and B/op/1 both keep 40 bytes: B's peak (60) puts it first"},
	}
	for _, c := range cases {
		_, rows := nodesOutput(t, trace, "--sort", string(c.by))
		if got := rowNodes(rows); !slices.Equal(got, c.want) {
			t.Errorf("%s: %s: order %q, want %q", c.name, c.reason, got, c.want)
		}
	}
}

// TestNodesDefaultTop checks that nodes lists at most 20 nodes unless --top
// says otherwise, and all for --top 0.
func TestNodesDefaultTop(t *testing.T) {
	var lines []string
	for i := range uint64(25) {
		id := fmt.Sprintf("s%02d", i)
		lines = append(lines, startRec(id, id, "", 10*i), memRec(10*i+1, "alloc", "t"+id, id, "cuda:0", 4*(i+1), "activation"), endRec(id, 5))
	}
	trace := jsonlTrace(lines...)
	cases := []struct {
		name   string
		args   []string
		want   int
		reason string
	}{
		{"default", nil, 20, "the default --top is 20"},
		{"top 25", []string{"--top", "25"}, 25, "--top raises it"},
		{"top 3", []string{"--top", "3"}, 3, "--top lowers it"},
		{"top 0", []string{"--top", "0"}, 25, "--top 0 lists all (from a user trial)"},
		{"top 1", []string{"--top", "1"}, 1, "1 is one, not all"},
	}
	for _, c := range cases {
		head, rows := nodesOutput(t, trace, c.args...)
		if len(rows) != c.want || !strings.HasPrefix(head, fmt.Sprintf("top %d of 25 nodes", c.want)) {
			t.Errorf("%s: %s: %d rows, header %q; want %d of 25", c.name, c.reason, len(rows), head, c.want)
		}
	}
}

// TestNodesOpNames checks how op nodes are named in the PATH column: by the
// op name at their index, however many digits it has, for stray ops too,
// with the key split at its last "/op/".
func TestNodesOpNames(t *testing.T) {
	lines := []string{startRec("s", "step", "", 0)}
	for i := range uint64(12) {
		lines = append(lines, opRec(i+1, "s", fmt.Sprintf("op%d", i), fmt.Sprint("t", i), 100+i))
	}
	lines = append(lines,
		opRec(20, "ghost", "ghostop", "g", 500),
		startRec("a/op/b", "a/op/b", "", 30), opRec(31, "a/op/b", "mm", "m", 300))
	for i := range 12 {
		lines = append(lines, fmt.Sprintf(`{"kind": "memory", "timestamp_ns": %d, "tensor_id": "t%d", "span_id": "s", "device": "cuda:0", "bytes": %d, "action": "alloc", "shape": [%d], "dtype": "u8", "category": "activation"}`, i+1, i, 100+i, 100+i))
	}
	lines = append(lines,
		`{"kind": "memory", "timestamp_ns": 20, "tensor_id": "g", "span_id": "ghost", "device": "cuda:0", "bytes": 500, "action": "alloc", "shape": [500], "dtype": "u8", "category": "activation"}`,
		`{"kind": "memory", "timestamp_ns": 31, "tensor_id": "m", "span_id": "a/op/b", "device": "cuda:0", "bytes": 300, "action": "alloc", "shape": [300], "dtype": "u8", "category": "activation"}`,
		endRec("a/op/b", 5), endRec("s", 100))
	_, rows := nodesOutput(t, jsonlTrace(lines...), "--top", "100")
	paths := map[string]string{}
	for _, r := range rows {
		paths[r.node] = r.path
	}
	cases := []struct {
		name, key, want, reason string
	}{
		{"one digit", "s/op/9", "step > [op9]", "the op at index 9 is named by its op"},
		{"two digits", "s/op/10", "step > [op10]", "so is the op at index 10"},
		{"eleven", "s/op/11", "step > [op11]", "and 11"},
		{"stray op", "ghost/op/0", "ghost > [ghostop]", "an op of a span the trace lacks is named by its op, after the span id"},
		{"/op/ in the span id", "a/op/b/op/0", "a/op/b > [mm]", "the key is split at its last /op/"},
	}
	for _, c := range cases {
		got, ok := paths[c.key]
		if !ok || got != c.want {
			t.Errorf("%s: %s: node %s has path %q (listed %v), want %q", c.name, c.reason, c.key, got, ok, c.want)
		}
	}
}

// TestNodesEmptyID: a span may have the id "" (the reader takes it); its
// row names it `""`, since a blank NODE cell reads as a row without an id
// (and shifts the columns for a reader of the table).
func TestNodesEmptyID(t *testing.T) {
	trace := jsonlTrace(
		startRec("", "root", "", 0),
		`{"kind": "memory", "timestamp_ns": 5, "tensor_id": "a", "span_id": "", "device": "cuda:0", "bytes": 4096, "action": "alloc", "shape": [4096], "dtype": "u8", "category": "activation"}`,
		endRec("", 10))
	_, rows := nodesOutput(t, trace)
	if len(rows) != 1 || rows[0].node != `""` || rows[0].path != "root" || rows[0].kind != "function" {
		t.Errorf("rows %+v, want one: node \"\" with path root", rows)
	}
	_, html := reportOf(t, trace)
	if want := "<td>function</td><td>&#34;&#34;</td><td class=\"path\">root</td>"; !strings.Contains(string(html), want) {
		t.Errorf("the report's node table has no row %s", want)
	}
}

// TestEmptyTensorID: a tensor may have the id "" too; summary's and the
// report's tables of top allocations name it `""`.
func TestEmptyTensorID(t *testing.T) {
	trace := jsonlTrace(`{"kind": "memory", "timestamp_ns": 5, "tensor_id": "", "span_id": "s", "device": "cuda:0", "bytes": 4096, "action": "alloc", "shape": [4096], "dtype": "u8", "category": "activation"}`)
	path, html := reportOf(t, trace)
	got := runCmd(t, nil, "summary", path)
	if want := regexp.MustCompile(`(?m)^  4\.00 KiB  activation  u8 +\[4096\]  - +"" +s$`); got.code != 0 || !want.MatchString(got.stdout) {
		t.Errorf("summary: exit %d, stdout:\n%s\nwant a row matching %s", got.code, got.stdout, want)
	}
	if want := "<td>-</td><td>&#34;&#34;</td>"; !strings.Contains(string(html), want) {
		t.Errorf("the report's allocation table has no cell %s", want)
	}
}

// TestNodesNoneListed: when no node has the sort's metric, nodes says which
// metric, as another sort may list some (from a user trial: "no node has
// memory" for --sort bytes on a trace whose spans peak).
func TestNodesNoneListed(t *testing.T) {
	trace := jsonlTrace(startRec("A", "A", "", 0), memRec(1, "alloc", "x", "A", "cuda:0", 100, "activation"), endRec("A", 5))
	for _, c := range []struct {
		sort, want string
	}{
		{"bytes", "no node has requested bytes"},
		{"peak", ""},
	} {
		path := writeFile(t, t.TempDir(), "trace.jsonl", []byte(trace))
		r := runCmd(t, nil, "nodes", "--sort", c.sort, path)
		if got := strings.Contains(r.stdout, "\n  no node has "); r.code != 0 || got != (c.want != "") || c.want != "" && !strings.Contains(r.stdout, "\n  "+c.want+"\n") {
			t.Errorf("--sort %s: exit %d, stdout:\n%s\nwant %q", c.sort, r.code, r.stdout, c.want)
		}
	}
}

// TestNodesNoMemory: when no node is listed because the trace has no memory
// events, nodes says so as summary does: for a PyTorch trace, when PyTorch
// writes them; for tracemem's own Chrome export, which trace to analyze.
func TestNodesNoMemory(t *testing.T) {
	dir := t.TempDir()
	exported := exportedSample(t, dir)
	for _, c := range []struct {
		name, file, want, reason string
	}{
		{"spans only", writeFile(t, dir, "spans.jsonl", []byte(jsonlTrace(startRec("A", "A", "", 0), endRec("A", 5)))),
			"no node has peak bytes: the trace has no memory events", "a span without memory peaks at 0"},
		{"PyTorch", filepath.Join("..", "..", "testdata", "chrome", "torch-1.13-cpu.json"),
			"no node has peak bytes: the trace has no memory events (PyTorch's profiler writes [memory] events with profile_memory=True, in builds with Kineto)",
			"a PyTorch trace recorded without profile_memory has spans but no memory (from a user trial)"},
		{"own export", exported,
			"no node has peak bytes: the trace is tracemem's own Chrome export, which holds memory as counters to view, not as memory events: analyze the trace it was made from, " + sample(t),
			"the export's counters are no memory events"},
	} {
		r := runCmd(t, nil, "nodes", c.file)
		if r.code != 0 || !strings.HasSuffix(r.stdout, "\n  "+c.want+"\n") {
			t.Errorf("%s: exit %d, stdout:\n%s\nwant it to end with %q (%s)", c.name, r.code, r.stdout, c.want, c.reason)
		}
	}
}

// TestNodesBytesPyTorch: --sort bytes lists no node of a PyTorch trace, whose
// ops have no output shapes or dtypes, and says why, while --sort peak lists
// the op that allocated (from a user trial: it said only "no node has
// requested bytes", which TestNodesNoneListed still wants for a JSONL trace).
func TestNodesBytesPyTorch(t *testing.T) {
	const trace = `{"traceEvents":[
{"ph":"X","cat":"cpu_op","name":"aten::empty","pid":1,"tid":1,"ts":10,"dur":10,"args":{"Input Dims":[[8,16]],"Input type":["float"]}},
{"ph":"i","cat":"cpu_instant_event","s":"t","name":"[memory]","pid":1,"tid":1,"ts":15,"args":{"Bytes":512,"Addr":4096,"Total Allocated":512,"Device Id":0,"Device Type":1}}]}`
	path := writeFile(t, t.TempDir(), "torch.json", []byte(trace))
	r := runCmd(t, nil, "nodes", "--sort", "bytes", path)
	const want = "\n  no node has requested bytes: a PyTorch trace gives no op's output shapes and dtypes, which the requested bytes are counted from (--sort peak or residual lists what the nodes allocated)\n"
	if r.code != 0 || !strings.HasSuffix(r.stdout, want) {
		t.Errorf("--sort bytes: exit %d, stdout:\n%s\nwant it to end with %q", r.code, r.stdout, want)
	}
	if r := runCmd(t, nil, "nodes", "--sort", "peak", path); r.code != 0 || !strings.Contains(r.stdout, "aten::empty") {
		t.Errorf("--sort peak: exit %d, stdout:\n%s\nwant the op listed", r.code, r.stdout)
	}
}
