// input_test.go holds the tests of the inputs: stdin, gzip, the document form, several files at once, and flags around the trace.

package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tracemem/tracemem"
	"github.com/tracemem/tracemem/internal/gen"
	"github.com/tracemem/tracemem/internal/txtar"
)

// writeForms writes a JSONL trace to a temporary directory as it is,
// gzipped, and in the document form (as ReadTrace reads it), and returns
// the three paths and the gzipped bytes.
func writeForms(t *testing.T, data []byte) (jsonlPath, gzPath, docPath string, gz []byte) {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(data)
	zw.Close()
	doc, err := tracemem.ReadTrace(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	docJSON, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	return writeFile(t, dir, "trace.jsonl", data), writeFile(t, dir, "trace.jsonl.gz", b.Bytes()), writeFile(t, dir, "trace.json", docJSON), b.Bytes()
}

// TestSameOutputWhateverTheInput checks that a trace gives the same summary,
// nodes and profile read from a file, from stdin, gzipped, and in the
// document form (read whole by ReadTrace rather than streamed, with spans
// from the document rather than from the tap).
func TestSameOutputWhateverTheInput(t *testing.T) {
	path := sample(t)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, gzPath, docPath, gz := writeForms(t, data)

	for _, args := range [][]string{{"summary"}, {"nodes", "--top", "40"}, {"nodes", "--sort", "residual"}, {"profile", "--max-points", "30"}} {
		want := runCmd(t, nil, append(args, path)...)
		if want.code != 0 {
			t.Fatalf("%v: exit %d: %s", args, want.code, want.stderr)
		}
		inputs := []struct {
			name  string
			arg   string
			stdin []byte
		}{
			{"stdin", "-", data},
			{"gzip", gzPath, nil},
			{"gzip on stdin", "-", gz},
			{"gzip padded with zero bytes, on stdin", "-", append(append([]byte{}, gz...), make([]byte, 1000)...)},
			{"document JSON", docPath, nil},
		}
		for _, in := range inputs {
			got := runCmd(t, bytes.NewReader(in.stdin), append(args, in.arg)...)
			name := in.arg
			if name == "-" {
				name = stdinName
			}
			gotOut := strings.ReplaceAll(got.stdout, "== "+name+" ==", "== "+path+" ==")
			if got.code != 0 || gotOut != want.stdout {
				t.Errorf("%v on %s: exit %d, stderr %q, output differs from the JSONL file's: %s", args, in.name, got.code, got.stderr, lineDiff(want.stdout, gotOut))
			}
		}
	}
}

// TestSummarySeveralFiles summarizes three ranks at once and checks the
// files table: one row per file in argument order, the highest peak marked,
// each row's figures those of the file analyzed alone.
func TestSummarySeveralFiles(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for i, cfg := range []gen.Config{
		{Seed: 1, MemoryEvents: 1500},
		{Seed: 2, MemoryEvents: 2500, Devices: 2},
		{Seed: 3, MemoryEvents: 1000},
	} {
		var b bytes.Buffer
		if _, err := gen.Write(&b, cfg); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "rank"+string(rune('0'+i))+".jsonl")
		os.WriteFile(p, b.Bytes(), 0o644)
		files = append(files, p)
	}
	r := runCmd(t, nil, append([]string{"summary"}, files...)...)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	best, bestPeak := -1, uint64(0)
	for i, f := range files {
		_, p := wantAnalysis(t, f, tracemem.Options{})
		if best < 0 || p.Summary.PeakBytes > bestPeak {
			best, bestPeak = i, p.Summary.PeakBytes
		}
		alone := runCmd(t, nil, "summary", f)
		if !strings.Contains(r.stdout, alone.stdout) {
			t.Errorf("the summary of %s alone is not part of the combined output", f)
		}
		row := regexp.MustCompile(`(?m)^  ([ *])  ` + regexp.QuoteMeta(f) + `\s+` + regexp.QuoteMeta(formatBytes(p.Summary.PeakBytes)) + `\s+` +
			regexp.QuoteMeta(p.Summary.PeakDevice) + `\s+` + regexp.QuoteMeta(formatMs(p.Summary.PeakTimestampNs)) + `\s`)
		if !row.MatchString(r.stdout) {
			t.Errorf("no row for %s with peak %s on %s:\n%s", f, formatBytes(p.Summary.PeakBytes), p.Summary.PeakDevice, r.stdout)
		}
	}
	table := r.stdout[strings.Index(r.stdout, "Files (* = highest peak)"):]
	var order []string
	for line := range strings.SplitSeq(table, "\n") {
		for _, f := range files {
			if strings.Contains(line, f) {
				order = append(order, f)
				if strings.HasPrefix(line, "  *") != (f == files[best]) {
					t.Errorf("row %q: marked %v, want the mark on %s only", line, strings.HasPrefix(line, "  *"), files[best])
				}
			}
		}
	}
	if !slices.Equal(order, files) {
		t.Errorf("rows in order %v, want %v", order, files)
	}

	// Traces without memory events have no peak: no row is marked (from a
	// mutation test: the first was).
	none := writeFile(t, dir, "none.jsonl", []byte(jsonlTrace()))
	r = runCmd(t, nil, "summary", none, none)
	table = r.stdout[strings.Index(r.stdout, "Files (* = highest peak)"):]
	if r.code != 0 || strings.Contains(table, "*  ") || strings.Count(table, "none.jsonl  none") != 2 {
		t.Errorf("two traces without memory events: exit %d, files table:\n%s\nwant two rows of peak none, neither marked", r.code, table)
	}
}

// TestSummaryTopOne: --top 1 lists one allocation (from a mutation test:
// only --top 0 and larger values were tried).
func TestSummaryTopOne(t *testing.T) {
	r := runCmd(t, nil, "summary", "--top", "1", sample(t))
	_, section, _ := strings.Cut(r.stdout, "\nTop ")
	section, _, _ = strings.Cut(section, "\n\n")
	lines := strings.Split(section, "\n")
	if r.code != 0 || !strings.HasPrefix(section, "1 allocation at the peak") || len(lines) != 3 {
		t.Errorf("summary --top 1: exit %d, section:\nTop %s\nwant a heading, a header and one row", r.code, section)
	}
}

// TestParseFlags checks that flags may come before and after the trace
// arguments, and that "--" ends the flags.
func TestParseFlags(t *testing.T) {
	cases := []struct {
		args    []string
		wantPos []string
		wantTop int
		reason  string
	}{
		{[]string{"--top", "3", "a"}, []string{"a"}, 3, "flags first"},
		{[]string{"a", "--top", "3"}, []string{"a"}, 3, "flags after the trace"},
		{[]string{"a", "-top=4", "b"}, []string{"a", "b"}, 4, "flags between traces"},
		{[]string{"-", "--top", "2"}, []string{"-"}, 2, "- is a trace (stdin), not a flag"},
		{[]string{"--", "--top", "a"}, []string{"--top", "a"}, 10, "-- ends the flags"},
		{[]string{"a", "--", "-b"}, []string{"a", "-b"}, 10, "-- after a trace"},
		{[]string{"--", "a", "--top", "1"}, []string{"a", "--top", "1"}, 10, "--top after -- and a trace is a file name"},
		{[]string{"--top", "3", "--", "a", "--top"}, []string{"a", "--top"}, 3, "flags before -- are flags"},
		{[]string{"-o", "--", "a", "--top", "2"}, []string{"a"}, 2, "-- as a flag's value is a file name: the flags go on"},
		{[]string{"-o=x", "--", "--top"}, []string{"--top"}, 10, "-- after a flag given its value with = ends the flags"},
		{[]string{"-v", "--", "--top"}, []string{"--top"}, 10, "a bool flag takes no value: the -- after it ends the flags"},
		{[]string{"--top", "05", "a"}, []string{"a"}, 5, "leading zeros are decimal"},
		{[]string{"--top", " 6 ", "a"}, []string{"a"}, 6, "spaces around the number are no harm"},
	}
	for _, c := range cases {
		fs := (&env{}).newFlags("t")
		top := boundedInt{v: 10, min: 1}
		fs.Var(&top, "top", "")
		fs.String("o", "", "")
		fs.Bool("v", false, "")
		pos, err := parseFlags(fs, c.args)
		if err != nil || !slices.Equal(pos, c.wantPos) || top.v != c.wantTop {
			t.Errorf("%s: parseFlags(%q) = %q, top %d, %v; want %q, top %d", c.reason, c.args, pos, top.v, err, c.wantPos, c.wantTop)
		}
	}
}

// TestJSONLStreams checks that a JSONL trace, gzipped or not, goes through
// the streaming analysis and the document form through ReadTrace, by content
// whatever the file name.
func TestJSONLStreams(t *testing.T) {
	data, err := os.ReadFile(sample(t))
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := tracemem.ReadTrace(bytes.NewReader(data))
	docJSON, _ := json.Marshal(doc)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(data)
	zw.Close()
	// Tags of 200 KB in the meta record, the first line.
	bigMeta := []byte(strings.Replace(string(data), `"tags": {`, `"tags": {"config": "`+strings.Repeat("x", 200<<10)+`", `, 1))
	if len(bigMeta) == len(data) {
		t.Fatal("the sample's meta record has no tags")
	}
	// The kind last in the meta record, after a key that decides nothing.
	kindLast := []byte(strings.Replace(string(data), `{"kind": "meta", "schema": "candle-graph/trace/6", `, `{"schema": "candle-graph/trace/6", `, 1))
	kindLast = []byte(strings.Replace(string(kindLast), `"tags": {`, `"kind": "meta", "tags": {`, 1))
	// Tags of 2 MiB, past the sniff, after the kind.
	hugeMeta := []byte(strings.Replace(string(data), `"tags": {`, `"tags": {"config": "`+strings.Repeat("x", 2<<20)+`", `, 1))
	// A one-line document with a "kind" member after its deciding keys.
	docKind := append(bytes.Clone(bytes.TrimSuffix(bytes.TrimSpace(docJSON), []byte("}"))), `, "kind": "trace"}`...)
	if bytes.Equal(kindLast, data) || bytes.Count(docKind, []byte("\n")) > 0 {
		t.Fatal("the sample's meta record is not as the test expects, or the document is not one line")
	}
	var bigMetaGz bytes.Buffer
	zw = gzip.NewWriter(&bigMetaGz)
	zw.Write(bigMeta)
	zw.Close()
	cases := []struct {
		name   string
		data   []byte
		stream bool
		reason string
	}{
		{"trace.json", data, true, "JSONL by content, whatever the name"},
		{"trace.gz", gz.Bytes(), true, "gzipped JSONL streams too"},
		{"blank-first.jsonl", append([]byte("\n\n"), data...), true, "leading blank lines are skipped"},
		{"doc.jsonl", docJSON, false, "the document form is read whole"},
		{"big-meta.jsonl", bigMeta, true, "a meta record of 200 KB (large tags) streams too"},
		{"big-meta.gz", bigMetaGz.Bytes(), true, "gzipped as well"},
		{"kind-last.jsonl", kindLast, true, `"kind" after a key that decides nothing ("schema") is JSONL, as the library has it`},
		{"huge-meta.jsonl", hugeMeta, true, "a first line longer than the sniff streams when its kind comes within it"},
		{"doc-kind.json", docKind, false, `a one-line document with a top-level "kind" after its first deciding key is a document, as the library reads it (found in review: it streamed, and the tap collected no spans)`},
	}
	for _, c := range cases {
		path := filepath.Join(t.TempDir(), c.name)
		os.WriteFile(path, c.data, 0o644)
		tr, err := loadOne(&env{stdin: bytes.NewReader(nil), stderr: &bytes.Buffer{}}, path, loadOptions{wantNodes: true})
		if err != nil {
			t.Fatalf("%s: %v", c.reason, err)
		}
		if tr.streamed != c.stream {
			t.Errorf("%s: streamed = %v", c.reason, tr.streamed)
		}
		if tr.tree.len() != len(doc.Spans) || len(tr.nodes) == 0 {
			t.Errorf("%s: %d spans and %d nodes, want %d spans and nodes", c.reason, tr.tree.len(), len(tr.nodes), len(doc.Spans))
		}
	}
}

// TestIsJSONLFirstToken: only a first line that is a JSON object can be
// JSONL; an array is a Chrome trace to the library whatever its elements,
// even a first element that is the string "kind" (found by mutation: a
// check of the first token's kind joined to the read error by && went
// unnoticed).
func TestIsJSONLFirstToken(t *testing.T) {
	cases := []struct {
		name, head string
		want       bool
		reason     string
	}{
		{"object", `{"kind": "meta"}` + "\n", true, "an object whose first deciding key is kind"},
		{"array of kind", `["kind", "meta"]` + "\n", false, "an array is not a record, though its first element reads as the key"},
		{"string", `"kind"` + "\n", false, "nor is a string"},
		{"not JSON", "kind: meta\n", false, "nor what is not JSON"},
	}
	for _, c := range cases {
		if got := isJSONL(bufio.NewReader(strings.NewReader(c.head))); got != c.want {
			t.Errorf("%s: %s: isJSONL(%q) = %v, want %v", c.name, c.reason, c.head, got, c.want)
		}
	}
}

// reorderedSample returns the sample with two memory records next to each
// other swapped: a trace ReadTrace takes but a stream cannot.
func reorderedSample(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(sample(t))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	ts := regexp.MustCompile(`^\{"kind": "memory", "timestamp_ns": (\d+),`)
	swapped := false
	for i := len(lines) / 2; i+1 < len(lines) && !swapped; i++ {
		a, b := ts.FindStringSubmatch(lines[i]), ts.FindStringSubmatch(lines[i+1])
		if a != nil && b != nil && a[1] != b[1] {
			lines[i], lines[i+1] = lines[i+1], lines[i]
			swapped = true
		}
	}
	if !swapped {
		t.Fatal("no two memory records with different timestamps next to each other in the sample")
	}
	reordered := []byte(strings.Join(lines, ""))
	if _, _, err := tracemem.AnalyzeStream(bytes.NewReader(reordered), tracemem.Options{}); !errors.Is(err, tracemem.ErrOutOfOrder) {
		t.Fatalf("the reordered sample streams (err %v): the test needs one that does not", err)
	}
	return reordered
}

// TestOutOfOrderReadWhole: a JSONL trace whose records a stream cannot take
// (two memory records out of time order) is read again from the start and
// analyzed whole when it is a file, gzipped or not, or standard input
// redirected from a file: the output is that of the same trace in the
// document form. From a pipe it cannot be read again; the error says so.
func TestOutOfOrderReadWhole(t *testing.T) {
	reordered := reorderedSample(t)
	jsonlPath, gzPath, docPath, _ := writeForms(t, reordered)

	for _, args := range [][]string{{"summary"}, {"nodes", "--top", "40"}, {"profile", "--max-points", "30"}} {
		want := runCmd(t, nil, append(args, docPath)...)
		if want.code != 0 {
			t.Fatalf("%v: exit %d: %s", args, want.code, want.stderr)
		}
		for _, path := range []string{jsonlPath, gzPath} {
			got := runCmd(t, nil, append(args, path)...)
			gotOut := strings.ReplaceAll(got.stdout, "== "+path+" ==", "== "+docPath+" ==")
			if got.code != 0 || gotOut != want.stdout {
				t.Errorf("%v %s: exit %d, stderr %q, output differs from the document's: %s", args, path, got.code, got.stderr, lineDiff(want.stdout, gotOut))
			}
		}
		f, err := os.Open(jsonlPath)
		if err != nil {
			t.Fatal(err)
		}
		got := runCmd(t, f, append(args, "-")...)
		f.Close()
		gotOut := strings.ReplaceAll(got.stdout, "== "+stdinName+" ==", "== "+docPath+" ==")
		if got.code != 0 || gotOut != want.stdout {
			t.Errorf("%v on stdin from a file: exit %d, stderr %q, output differs from the document's: %s", args, got.code, got.stderr, lineDiff(want.stdout, gotOut))
		}
	}
	got := runCmd(t, bytes.NewReader(reordered), "summary", "-")
	wantErr := regexp.MustCompile(`^tracemem: <stdin>: line \d+: memory: out of order: timestamp_ns \d+ comes after \d+ \(such a trace can be read whole from a file, not from a pipe\)\n$`)
	if got.code != 1 || !wantErr.MatchString(got.stderr) {
		t.Errorf("summary of a pipe: exit %d, stderr %q; want exit 1 and an error matching %s", got.code, got.stderr, wantErr)
	}
}

// TestChromeNonFinite: a PyTorch trace with inf in args (older Kineto
// versions wrote it) is read from a file, gzipped or not, as the same trace
// without it is, by reading it again with the numbers replaced; from a pipe
// it cannot be read again, and the error says so.
func TestChromeNonFinite(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "summary_chrome.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	_, files := txtar.Parse(data)
	var clean []byte
	for _, f := range files {
		if f.Name == "trace.jsonl" {
			clean = f.Data
		}
	}
	const from, to = `"cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10, "dur": 20, "args": {}`, `"cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10, "dur": 20, "args": {"bw": inf}`
	withInf := bytes.Replace(clean, []byte(from), []byte(to), 1)
	if bytes.Equal(withInf, clean) {
		t.Fatal("the sample has changed: no op to put inf in")
	}
	dir := t.TempDir()
	want := runCmd(t, nil, "summary", writeFile(t, dir, "clean.json", clean))
	if want.code != 0 {
		t.Fatalf("clean trace: exit %d: %s", want.code, want.stderr)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(withInf)
	zw.Close()
	for _, name := range []string{"inf.json", "inf.json.gz"} {
		content := withInf
		if strings.HasSuffix(name, ".gz") {
			content = gz.Bytes()
		}
		path := writeFile(t, dir, name, content)
		got := runCmd(t, nil, "summary", path)
		gotOut := strings.ReplaceAll(got.stdout, path, filepath.Join(dir, "clean.json"))
		if got.code != 0 || gotOut != want.stdout {
			t.Errorf("%s: exit %d, stderr %q, output differs from the clean trace's: %s", name, got.code, got.stderr, lineDiff(want.stdout, gotOut))
		}
	}
	got := runCmd(t, bytes.NewReader(withInf), "summary", "-")
	wantErr := regexp.MustCompile(`^tracemem: <stdin>: offset \d+: traceEvents\[1\]: invalid JSON: inf is not a JSON number .*io\.Seeker\n$`)
	if got.code != 1 || !wantErr.MatchString(got.stderr) {
		t.Errorf("summary of a pipe: exit %d, stderr %q; want exit 1 and an error matching %s", got.code, got.stderr, wantErr)
	}
}

// TestStreamKeepsNoNodesUnasked: a stream that needs no node metrics (summary,
// profile, export) analyzes with SkipNodeMetrics, so that its memory is
// bounded by what is live and not by the spans (issue 7: large inputs
// stream); nodes and report ask for them. The options are the commands' own.
// From a spec audit: the stream could keep every span's record, and no test
// saw it.
func TestStreamKeepsNoNodesUnasked(t *testing.T) {
	path := sample(t)
	for _, c := range []struct {
		name      string
		lo        loadOptions
		wantNodes bool
	}{
		{"summary", summaryLoad, false},
		{"profile", profileLoad(0), false},
		{"export chrome", exportLoad(formatChrome, 0), false},
		{"export pprof", exportLoad(formatPprof, 0), false},
		{"export csv", exportLoad(formatCSV, 1000), false},
		{"nodes", nodesLoad, true},
		{"report", reportLoad(0), true},
	} {
		tr, err := loadOne(&env{stdin: bytes.NewReader(nil), stderr: &bytes.Buffer{}}, path, c.lo)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !tr.streamed {
			t.Fatalf("%s: the sample was not streamed", c.name)
		}
		if got := tr.nodes != nil; got != c.wantNodes {
			t.Errorf("%s: node metrics kept: %v (%d nodes), want %v", c.name, got, len(tr.nodes), c.wantNodes)
		}
	}
}

// typedInput is standard input at a terminal: its text, then an end (a
// Ctrl-D), after which a read waits for more typing, here more text.
type typedInput struct {
	text, more   io.Reader
	ended        bool
	readsAfterIt int
}

func (t *typedInput) Read(p []byte) (int, error) {
	if !t.ended {
		n, err := t.text.Read(p)
		if err == io.EOF {
			t.ended = true
		}
		return n, err
	}
	t.readsAfterIt++
	return t.more.Read(p)
}

// TestStdinEndsAtFirstEnd: the command stops reading standard input at its
// first end, as cat does, and never reads again after it (from a review: an
// empty input at a terminal took five Ctrl-Ds, as the readers look again
// after an end).
func TestStdinEndsAtFirstEnd(t *testing.T) {
	trace := rootTrace(memRec(1, "alloc", "a", "root", "cuda:0", 4096, "activation"))
	for _, c := range []struct {
		name, typed, reason string
		code                int
		stderr              string
	}{
		{"nothing typed", "", "an empty input is empty at once", 1, "empty"},
		{"a trace typed", trace, "a trace typed whole is read up to the end", 0, ""},
		{"half a trace typed", trace[:len(trace)/2], "a trace cut by the end is cut there", 1, "line"},
	} {
		for _, cmd := range []string{"summary", "profile", "nodes"} {
			in := &typedInput{text: strings.NewReader(c.typed), more: strings.NewReader(trace)}
			r := runCmd(t, in, cmd, "-")
			if r.code != c.code || !strings.Contains(r.stderr, c.stderr) || in.readsAfterIt != 0 {
				t.Errorf("%s: %s: exit %d, stderr %q, %d reads after the end; want %d, %q and none", c.reason, cmd, r.code, r.stderr, in.readsAfterIt, c.code, c.stderr)
			}
		}
	}
}
