// spans_test.go holds the tests of the span tree, span paths and the line tap that collects spans from a stream.

package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/tracemem/tracemem"
)

// chunkReader returns data in chunks of random sizes from 1 to 64 bytes.
type chunkReader struct {
	data []byte
	rng  *rand.Rand
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), 1+c.rng.IntN(64), len(c.data))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

// TestTapCollectsWhatTheReaderReads streams the sample through the tap in
// tiny chunks (and one byte at a time), and compares the spans, ends and op
// names it collected with the document the library's reader makes, and the
// bytes passed through with the input. It does so again with span and op
// names that start with and hold white space, which the tap must keep
// wherever a chunk ends (from a test audit: the sample's names have none,
// and trimming white space at the start of every chunk passed).
func TestTapCollectsWhatTheReaderReads(t *testing.T) {
	sampleData, err := os.ReadFile(sample(t))
	if err != nil {
		t.Fatal(err)
	}
	spaced := bytes.ReplaceAll(sampleData, []byte(`"name": "`), []byte(`"name": "  my layer `))
	spaced = bytes.ReplaceAll(spaced, []byte(`"op_name": "`), []byte(`"op_name": " \t op `))
	if bytes.Equal(spaced, sampleData) {
		t.Fatal("the sample has no names to put spaces in")
	}
	for _, ds := range []struct {
		name string
		data []byte
	}{{"sample", sampleData}, {"spaced names", spaced}} {
		data := ds.data
		doc, err := tracemem.ReadTrace(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		want := treeFromDocument(doc)
		readers := map[string]io.Reader{
			"random chunks":    &chunkReader{data: data, rng: rand.New(rand.NewPCG(1, 2))},
			"one byte":         iotest.OneByteReader(bytes.NewReader(data)),
			"no final newline": &chunkReader{data: bytes.TrimSuffix(data, []byte("\n")), rng: rand.New(rand.NewPCG(3, 4))},
		}
		for name, r := range readers {
			t.Run(ds.name+"/"+name, func(t *testing.T) {
				c := newCollector(true)
				tap := newLineTap(r, c)
				passed, err := io.ReadAll(tap)
				if err != nil {
					t.Fatal(err)
				}
				if err := tap.wait(); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(passed, data) && !bytes.Equal(passed, bytes.TrimSuffix(data, []byte("\n"))) {
					t.Fatalf("the tap changed the bytes")
				}
				checkCollected(t, c, doc, want)
			})
		}
	}
}

// collectAll streams data through a tap and returns the collector that
// saw it.
func collectAll(t *testing.T, data []byte) *collector {
	t.Helper()
	c := newCollector(true)
	tap := newLineTap(bytes.NewReader(data), c)
	if _, err := io.Copy(io.Discard, tap); err != nil {
		t.Fatal(err)
	}
	if err := tap.wait(); err != nil {
		t.Fatal(err)
	}
	return c
}

// checkCollected checks that the collector gathered the spans, op names and
// run record of doc, whose tree is want.
func checkCollected(t *testing.T, c *collector, doc *tracemem.TraceDocument, want *spanTree) {
	t.Helper()
	got := c.tree
	if got.len() != want.len() {
		t.Fatalf("collected %d spans, the reader %d", got.len(), want.len())
	}
	for i := range want.len() {
		ws := want.at(i)
		gs, ok := got.span(ws.id)
		if !ok || gs != ws {
			t.Fatalf("span %s: collected %+v, the reader %+v", ws.id, gs, ws)
		}
		if !slices.Equal(got.opsOf(ws.id), want.opsOf(ws.id)) {
			t.Errorf("ops of %s = %q, the reader %q", ws.id, got.opsOf(ws.id), want.opsOf(ws.id))
		}
	}
	for i := range want.len() {
		id := want.at(i).id
		if g, w := got.pathNames(id), want.pathNames(id); !slices.Equal(g, w) {
			t.Errorf("path of %s: collected %q, the reader's %q", id, g, w)
		}
	}
	if len(got.ops) != len(want.ops) || len(got.strayOps) != len(want.strayOps) {
		t.Errorf("ops of %d+%d spans, the reader %d+%d", len(got.ops), len(got.strayOps), len(want.ops), len(want.strayOps))
	}
	if c.run == nil || c.run.id != doc.Run.RunID || c.run.phase != doc.Run.Phase.String() || c.run.device != doc.Run.Device || c.run.entrypoint != doc.Run.Entrypoint || c.run.source != doc.Run.Tags["source"] {
		t.Errorf("run %+v, want %q %q %q %q, source %q", c.run, doc.Run.RunID, doc.Run.Entrypoint, doc.Run.Phase, doc.Run.Device, doc.Run.Tags["source"])
	}
	if c.run != nil && !maps.Equal(c.run.oomFirst, oomFirstTags(doc.Run.Tags)) {
		t.Errorf("first out-of-memory tags %q, the reader's %q", c.run.oomFirst, oomFirstTags(doc.Run.Tags))
	}
}

// FuzzTap: for any JSONL trace the library's reader accepts, the tap's
// collector (a second, lighter parser of the same lines) gathers what the
// reader read, so the command's span paths and op names are the trace's,
// and reports no error. A span id used twice is the reader's first error
// exactly when it is the collector's, on the same line (the collector sees
// no other fault, so its error is never on an earlier line than the
// reader's; on the same line the command reports the analysis's).
func FuzzTap(f *testing.F) {
	if data, err := os.ReadFile(sample(f)); err == nil {
		f.Add(data)
	}
	meta := `{"kind":"meta","schema":"candle-graph/trace/6","run_id":"r\u0031","correlation_id":"c","entrypoint":"e\"x","phase":"train","timestamp":"t","capture_step":1,"warmup_steps":0,"device":"cuda:0","timing_mode":"host","tags":{}}`
	f.Add([]byte(meta + "\n" +
		`{"id":"s\u00e9","kind":"span_start","name":"a\/b","start_ns":0,"span_kind":"function","measured":true,"step":"forward"}` + "\n" +
		` { "kind" : "span_start" , "id" : "c", "parent_id": "s\u00e9", "name":"n","start_ns":5,"span_kind":"op","measured":false}` + "\n" +
		`{"kind":"op","span_id":"c","op_name":"m\tm","inputs":[],"shape":[1],"dtype":"f32","device":"cuda:0","duration_ns":1,"timestamp_ns":1,"input_storage_bytes":0}` + "\n" +
		`{"kind":"span_end","id":"c","duration_ns":3}` + "\n" +
		`{"id":"k","name":"kind","start_ns":6,"span_kind":"function","measured":true,"kind":"span_start"}` + "\n" +
		`{"\u006bind":"span_start","\u0069d":"e","parent\u005fid":"k","name":"esc","start_ns":7,"span_kind":"module","measured":true}` + "\n"))
	cycle := func(id, parent string) string {
		return `{"kind":"span_start","id":"` + id + `","parent_id":"` + parent + `","name":"` + id + `","start_ns":0,"span_kind":"function","measured":true}` + "\n"
	}
	f.Add([]byte(meta + "\n" + cycle("b", "a") + cycle("c", "b") + cycle("a", "b")))
	f.Add([]byte(strings.Replace(meta, `"tags":{}`, `"tags":{"x":"{\"source\":1}","source":"chrome_trace"}`, 1) + "\n" + cycle("a", "")))
	f.Add([]byte(strings.Replace(meta, `"tags":{}`, `"tags":{"out_of_memory_first_device":"cuda:0","out_of_memory_first_bytes":"5","out_of_memory_first_\u0073pan":"a"}`, 1) + "\n" + cycle("a", "")))
	f.Add([]byte(meta + "\n" + cycle("a", "") + "\n" + `{"kind":"span_end","id":"a","duration_ns":1}` + "\n" + cycle("a", "")))
	f.Add([]byte(meta + "\n" + cycle("a", "") + `{"kind":"memory"}` + "\n" + cycle("a", "")))
	// Members named like another kind's, which the reader skips, and names
	// given twice in a nested value, which it does not check.
	f.Add([]byte(meta + "\n" + strings.Replace(cycle("a", ""), "}", `,"device":5,"phase":1,"duration_ns":"x","op_name":2,"x":{"a":1,"a":2}}`, 1) +
		`{"kind":"span_end","id":"a","duration_ns":1,"name":3,"start_ns":"y"}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if !isJSONL(bufio.NewReader(bytes.NewReader(data))) {
			return
		}
		doc, err := tracemem.ReadTrace(bytes.NewReader(data))
		c := collectAll(t, data)
		if err == nil {
			if c.err != nil {
				t.Fatalf("the collector's error %v for a trace the reader reads", c.err)
			}
			checkCollected(t, c, doc, treeFromDocument(doc))
			return
		}
		var pe, cpe *tracemem.ParseError
		var se, cse *tracemem.SpanError
		readDup := errors.As(err, &se) && se.Msg == "duplicate span id" && errors.As(err, &pe)
		collDup := c.err != nil && errors.As(c.err, &cpe) && errors.As(c.err, &cse)
		switch {
		case readDup && (!collDup || cpe.Line != pe.Line || cse.SpanID != se.SpanID):
			t.Fatalf("the reader's error %v, the collector's %v: want a duplicate of the same span on the same line", err, c.err)
		case !readDup && collDup && errors.As(err, &pe) && pe.Line > 0 && cpe.Line < pe.Line:
			// On the same line, another fault (a span_start without an
			// id, which the collector takes for ""), which the command
			// reports: the analysis's error wins a tie.
			t.Fatalf("the reader's error %v, the collector's duplicate on an earlier line: %v", err, c.err)
		}
	})
}

func TestRecordKind(t *testing.T) {
	cases := []struct {
		line, want, reason string
	}{
		{`{"kind": "span_start", "id": "a"}`, "span_start", "the usual form"},
		{`{"id":"a","kind":"op"}`, "op", "kind need not come first, nor spaces"},
		{`{"kind" :  "meta"}`, "meta", "spaces around the colon"},
		{`{"name": "kind", "kind": "span_start"}`, "span_start", `"kind" as a value is not taken for the member`},
		{`{"tags": {"kind": "x"}, "kind": "meta"}`, "meta", "the member of a nested object is not the record's"},
		{`{"a": ["kind", {"kind": "x"}], "kind": "op"}`, "op", "nor a string or an object in an array"},
		{`{"a": [1, "kind"], "kind": "op"}`, "op", "a string after a comma inside an array is a value, not a member name"},
		{`{"a": {"b": [1, "kind"]}, "kind": "op"}`, "op", "nor after a comma in an array in an object"},
		{`{"name": "a\"kind\": \"x", "kind": "op"}`, "op", "escaped quotes do not end a string"},
		{`{"name": "a\\", "kind": "op"}`, "op", "an escaped backslash does not escape the quote after it"},
		{`{"\u006bind": "span_end"}`, "span_end", "a name written with escapes is decoded, as the reader decodes it"},
		{`{"kind": "span\u005fstart"}`, "span_start", "so is a value"},
		{`{"kind": "\u0073pan_start"}`, "span_start", "also when its first character is escaped"},
		{`{"n\u0061me": "x", "kind": "op"}`, "op", "a name written with escapes that decodes to another name is not the kind member"},
		{`{"kind": "a\"b"}`, `a"b`, "an escaped quote in the producer's form"},
		{`{"id": "kind"}`, "", "no kind member"},
		{`{"kind": 5}`, "", "a kind that is not a string"},
		{`{"kind": "unterminated`, "", "a cut line"},
		{`not json`, "", "no kind at all"},
	}
	for _, c := range cases {
		if got := string(recordKind([]byte(c.line))); got != c.want {
			t.Errorf("%s: recordKind(%s) = %q, want %q", c.reason, c.line, got, c.want)
		}
	}
}

// TestOpsBeforeTheirSpan: ops that name a span before its span_start are
// that span's once it comes, in record order, as the reader makes them (a
// JSONL trace may list them first); ops of a span that never comes stay
// stray (found by FuzzTap: the collector kept them apart).
func TestOpsBeforeTheirSpan(t *testing.T) {
	for _, id := range []string{"s", ""} {
		tr := newSpanTree()
		tr.addOp(id, "early")
		tr.addOp("never", "lost")
		tr.addSpan(spanInfo{id: id, name: "n"})
		tr.addOp(id, "late")
		if got := tr.opsOf(id); !slices.Equal(got, []string{"early", "late"}) {
			t.Errorf("span %q: ops %q, want [early late]", id, got)
		}
		if got := tr.opsOf("never"); !slices.Equal(got, []string{"lost"}) || len(tr.strayOps) != 1 {
			t.Errorf("span %q: the stray ops of a span never added: %q of %d, want [lost] of 1", id, got, len(tr.strayOps))
		}
	}
}

// TestSpanPaths checks span paths: root first, unknown spans named by id,
// cycles cut, deep paths elided in the middle (and walked without
// recursion), and op nodes named by their op.
func TestSpanPaths(t *testing.T) {
	for _, h := range []struct {
		name string
		hash func([]byte) uint64
	}{{"maphash", nil}, {"every id colliding", func([]byte) uint64 { return 42 }}} {
		t.Run(h.name, func(t *testing.T) { testSpanPaths(t, h.hash) })
	}
}

func testSpanPaths(t *testing.T, hash func([]byte) uint64) {
	tr := newSpanTree()
	if hash != nil {
		tr.hash = hash
	}
	tr.addSpan(spanInfo{id: "late-child", parent: "late", name: "child"})
	tr.addSpan(spanInfo{id: "r", name: "step"})
	tr.addSpan(spanInfo{id: "m", parent: "r", name: "layer", kind: tracemem.SpanModule})
	tr.addSpan(spanInfo{id: "o", parent: "m", name: "matmul", kind: tracemem.SpanOp})
	tr.addSpan(spanInfo{id: "orphan", parent: "gone", name: "lost"})
	tr.addSpan(spanInfo{id: "c1", parent: "c2", name: "ping"})
	tr.addSpan(spanInfo{id: "c2", parent: "c1", name: "pong"})
	tr.addSpan(spanInfo{id: "r", name: "duplicate"})
	tr.addSpan(spanInfo{id: "late", name: "parent"})
	tr.addSpan(spanInfo{id: "self", parent: "self", name: "me"})
	tr.addOp("o", "matmul")
	tr.addOp("o", "scale")
	cases := []struct {
		id, want, reason string
	}{
		{"o", "step > layer > matmul", "names from the root down, joined with ' > '"},
		{"r", "step", "a root is its own path; a duplicate span id does not replace the first"},
		{"orphan", "gone > lost", "a parent the trace does not have is named by its id"},
		{"nosuch", "nosuch", "an unknown span is named by its id"},
		{"late-child", "parent > child", "a parent added after its child is found (the document's spans are sorted by id)"},
		{"c1", "pong > ping", "the cycle c1 -> c2 -> c1, walked from c1 (the lower id), is cut at the link from c2"},
		{"c2", "pong", "c2's cut link makes it a root"},
		{"self", "me", "a span that is its own parent is a root"},
		{"", "-", "no span"},
	}
	for _, c := range cases {
		if got := tr.path(c.id); got != c.want {
			t.Errorf("%s: path(%q) = %q, want %q", c.reason, c.id, got, c.want)
		}
	}
	tr.addOp("", "mm")
	if got := tr.describeNode("/op/0"); got.kind != "op" || got.path != "- > [mm]" {
		t.Errorf(`describeNode("/op/0") = %+v with no span of id "", want op "- > [mm]": an op that names no span starts its path as an allocation's, not with an empty name`, got)
	}
	tr.addSpan(spanInfo{id: "", name: "empty id"})
	if got := tr.path(""); got != "empty id" {
		t.Errorf(`path("") = %q in a trace with a span of id "", want its name "empty id"`, got)
	}

	nodes := []struct {
		key, kind, path, reason string
	}{
		{"o", "op span", "step > layer > matmul", "a span of kind op"},
		{"m", "module", "step > layer", "a module span"},
		{"o/op/1", "op", "step > layer > matmul > [scale]", "an op record is named by its op, by index"},
		{"o/op/7", "op", "step > layer > matmul > [op 7]", "an index past the ops collected keeps the number"},
		{"o/op/2", "op", "step > layer > matmul > [op 2]", "so does the index just past them (o has 2 ops)"},
		{"/op/0", "op", "empty id > [mm]", `an op of the span of id "" (key "/op/0") is an op too`},
		{"weird", "?", "weird", "a key that is neither"},
	}
	for _, c := range nodes {
		if got := tr.describeNode(c.key); got.kind != c.kind || got.path != c.path {
			t.Errorf("%s: describeNode(%q) = %+v, want %s %q", c.reason, c.key, got, c.kind, c.path)
		}
	}

	if hash != nil {
		return // the deep tree with one hash would take quadratic time
	}
	deep := newSpanTree()
	const depth = 100_000
	addChain(deep, depth, "")
	names := deep.pathNames("s" + strconv.Itoa(depth-1))
	if len(names) != depth || names[0] != "n0" || names[depth-1] != "n99999" {
		t.Fatalf("deep path: %d names from %s to %s", len(names), names[0], names[len(names)-1])
	}
	p := deep.path("s" + strconv.Itoa(depth-1))
	if strings.Count(p, pathSep) != maxPathNames || !strings.HasPrefix(p, "n0 > n1 > … > ") || !strings.HasSuffix(p, " > n99999") {
		t.Errorf("deep path printed as %q", p)
	}
}

// TestSpanPathsUncutCyclePanics: a cycle settle failed to cut makes
// pathNames panic with a message, where it walked the cycle until memory
// ran out (from a rule-level mutation run: the test process was killed
// after 252 s, naming nothing).
func TestSpanPathsUncutCyclePanics(t *testing.T) {
	doc := &tracemem.TraceDocument{Spans: []tracemem.Span{
		{ID: "a", Name: "ping", ParentID: "b"},
		{ID: "b", Name: "pong", ParentID: "a"},
	}}
	tree := treeFromDocument(doc)
	if got := tree.pathNames("a"); !slices.Equal(got, []string{"pong", "ping"}) {
		t.Fatalf("path of a %q, want [pong ping]: the link from b, which closes the cycle walked from a, is cut", got)
	}
	for i := range tree.recs {
		tree.recs[i].cut = false // as a settle that cut nothing would leave it
	}
	defer func() {
		msg, _ := recover().(string)
		if !strings.Contains(msg, "a cycle was not cut") {
			t.Errorf("recovered %q, want the panic that names an uncut cycle", msg)
		}
	}()
	tree.pathNames("a")
}

// TestSpanPathsCutCyclesAsTheLibrary: in random documents whose parent
// links form cycles, a path is the chain of parents up to a root, a parent
// the document lacks, or a span whose link the library cuts (Validate's
// SpanCycleError.Cut).
func TestSpanPathsCutCyclesAsTheLibrary(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for n := range 2000 {
		doc := &tracemem.TraceDocument{}
		spans := 1 + rng.IntN(8)
		for i := range spans {
			s := tracemem.Span{ID: "s" + strconv.Itoa(rng.IntN(spans+1)), Name: "n" + strconv.Itoa(i)}
			if rng.IntN(6) > 0 {
				s.ParentID = "s" + strconv.Itoa(rng.IntN(spans+2))
			}
			doc.Spans = append(doc.Spans, s)
		}
		// Sorted by id, as the readers sort them (stable: the first of
		// an id is the span, as for Validate and the tree).
		slices.SortStableFunc(doc.Spans, func(a, b tracemem.Span) int { return strings.Compare(a.ID, b.ID) })
		cut := map[string]bool{}
		if joined, ok := doc.Validate().(interface{ Unwrap() []error }); ok { // errors.Join's
			for _, err := range joined.Unwrap() {
				var ce *tracemem.SpanCycleError
				if errors.As(err, &ce) {
					cut[ce.Cut] = true
				}
			}
		}
		first := map[string]tracemem.Span{}
		for _, s := range doc.Spans {
			if _, dup := first[s.ID]; !dup {
				first[s.ID] = s
			}
		}
		tree := treeFromDocument(doc)
		for id := range first {
			var want []string
			for cur := id; ; {
				s, ok := first[cur]
				if !ok {
					want = append(want, cur) // a parent the document lacks
					break
				}
				want = append(want, s.Name)
				if s.ParentID == "" || cut[cur] || len(want) > spans+1 {
					break
				}
				cur = s.ParentID
			}
			slices.Reverse(want)
			if got := tree.pathNames(id); !slices.Equal(got, want) {
				t.Fatalf("document %d, span %s: path %q, want %q\nspans: %+v", n, id, got, want, doc.Spans)
			}
		}
	}
}

// TestSpanPathsSettleAgain: spans added after paths were asked for are cut
// as if the tree had been built whole (found in review: earlier cuts stayed).
func TestSpanPathsSettleAgain(t *testing.T) {
	grown, whole := newSpanTree(), newSpanTree()
	for _, s := range []spanInfo{{id: "x", parent: "z", name: "x"}, {id: "a", parent: "b", name: "a"}, {id: "b", parent: "a", name: "b"}} {
		grown.addSpan(s)
		whole.addSpan(s)
	}
	grown.pathNames("b")
	z := spanInfo{id: "z", parent: "b", name: "z"}
	grown.addSpan(z)
	whole.addSpan(z)
	for _, id := range []string{"a", "b", "x", "z"} {
		if got, want := grown.pathNames(id), whole.pathNames(id); !slices.Equal(got, want) {
			t.Errorf("path of %s: %q after growing, %q for the tree built whole", id, got, want)
		}
	}
}

// TestTapSurvivesCollectorPanic checks that a collector that panics stops
// collecting but lets the stream through, and that wait reports it.
func TestTapSurvivesCollectorPanic(t *testing.T) {
	c := newCollector(false)
	c.tree = nil // addSpan on a nil tree panics
	data := strings.Repeat(`{"kind": "span_start", "id": "a", "name": "x", "start_ns": 0, "span_kind": "function", "measured": true}`+"\n", 10000)
	tap := newLineTap(strings.NewReader(data), c)
	passed, err := io.ReadAll(tap)
	if err != nil || len(passed) != len(data) {
		t.Fatalf("read %d of %d bytes: %v", len(passed), len(data), err)
	}
	if err := tap.wait(); err == nil || !strings.Contains(err.Error(), "internal error") {
		t.Errorf("wait = %v, want the collector's internal error", err)
	}
}

// TestJoinPathElision checks that a path of up to 12 names is printed
// whole and a deeper one as its first 2 and last 10 names around "…".
func TestJoinPathElision(t *testing.T) {
	names := func(n int) []string {
		var s []string
		for i := range n {
			s = append(s, "n"+strconv.Itoa(i))
		}
		return s
	}
	cases := []struct {
		name   string
		depth  int
		want   string
		reason string
	}{
		{"11", 11, "n0 > n1 > n2 > n3 > n4 > n5 > n6 > n7 > n8 > n9 > n10", "a short path is whole"},
		{"12", 12, "n0 > n1 > n2 > n3 > n4 > n5 > n6 > n7 > n8 > n9 > n10 > n11", "12 names are the most printed whole"},
		{"13", 13, "n0 > n1 > … > n3 > n4 > n5 > n6 > n7 > n8 > n9 > n10 > n11 > n12", "13 names lose the third: first 2, …, last 10"},
		{"14", 14, "n0 > n1 > … > n4 > n5 > n6 > n7 > n8 > n9 > n10 > n11 > n12 > n13", "14 names lose two"},
	}
	for _, c := range cases {
		if got := joinPath(names(c.depth)); got != c.want {
			t.Errorf("%s names: %s: joinPath = %q, want %q", c.name, c.reason, got, c.want)
		}
	}
}

// TestTapRecordForms checks that the tap collects the span of a record the
// library's reader accepts in a less usual form, as the reader does.
func TestTapRecordForms(t *testing.T) {
	const rest = `"span_kind": "function", "measured": true`
	cases := []struct {
		name, span, reason string
		startNs            uint64
	}{
		{"null parent", `{"kind": "span_start", "id": "r", "name": "root", "start_ns": 0, ` + rest + `, "parent_id": null}`,
			"an explicit null parent_id is absent: a root", 0},
		{"null step", `{"kind": "span_start", "id": "r", "name": "root", "start_ns": 0, ` + rest + `, "step": null}`,
			"an explicit null step (a string member) is absent too (from a mutation test: only the raw member parent_id was tried)", 0},
		{"kind in a nested array", `{"id": "r", "tags": [1, "kind"], "kind": "span_start", "name": "root", "start_ns": 0, ` + rest + `}`,
			`"kind" after a comma inside an array is a value, not the record's kind`, 0},
		{"20-digit start_ns", `{"kind": "span_start", "id": "r", "name": "root", "start_ns": 10000000000000000000, ` + rest + `}`,
			"a start_ns of 20 digits fits in 64 bits", 10000000000000000000},
		{"largest start_ns", `{"kind": "span_start", "id": "r", "name": "root", "start_ns": 18446744073709551615, ` + rest + `}`,
			"the largest uint64 is accepted", math.MaxUint64},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := []byte(testMeta + "\n" + c.span + "\n" + `{"kind": "span_end", "id": "r", "duration_ns": 100}` + "\n")
			doc, err := tracemem.ReadTrace(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("%s: the reader refuses the trace: %v", c.reason, err)
			}
			col := collectAll(t, data)
			s, ok := col.tree.span("r")
			if !ok || s.name != "root" || s.parent != "" || s.startNs != c.startNs || !s.closed {
				t.Fatalf("%s: collected span r = %+v (found %v), want root, no parent, start %d, closed", c.reason, s, ok, c.startNs)
			}
			if got := col.tree.path("r"); got != "root" {
				t.Errorf("%s: path of r = %q, want root", c.reason, got)
			}
			checkCollected(t, col, doc, treeFromDocument(doc))
		})
	}
}

// TestTapCutsCyclesAsTheReader: spans whose parent links form a cycle,
// streamed in an order other than their ids', give the span paths of the
// trace read whole, whose spans the reader sorts by id (found in review:
// the tap's tree cut cycles in file order, so summary and the pprof export
// named a streamed trace's spans by other paths).
func TestTapCutsCyclesAsTheReader(t *testing.T) {
	span := func(id, parent, name string) string {
		return `{"kind": "span_start", "id": "` + id + `", "parent_id": "` + parent + `", "name": "` + name + `", "start_ns": 0, "span_kind": "function", "measured": true}` + "\n"
	}
	data := []byte(testMeta + "\n" + span("b", "a", "B") + span("c", "b", "C") + span("a", "b", "A"))
	doc, err := tracemem.ReadTrace(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	col := collectAll(t, data)
	// Walked from a (the lowest id): a, b, back to a; the link from b is cut.
	for id, want := range map[string]string{"a": "B > A", "b": "B", "c": "B > C"} {
		if got := col.tree.path(id); got != want {
			t.Errorf("path of %s = %q, want %q", id, got, want)
		}
	}
	checkCollected(t, col, doc, treeFromDocument(doc))
}

// TestParseUint checks the tap's number parser: up to 20 digits, no overflow.
func TestParseUint(t *testing.T) {
	cases := []struct {
		name, in string
		want     uint64
		ok       bool
		reason   string
	}{
		{"zero", "0", 0, true, "one digit"},
		{"19 digits", "9999999999999999999", 9999999999999999999, true, "below 2^64"},
		{"20 digits", "10000000000000000000", 10000000000000000000, true, "20 digits fit"},
		{"max", "18446744073709551615", math.MaxUint64, true, "2^64-1 fits"},
		{"overflow", "18446744073709551616", 0, false, "2^64 overflows"},
		{"21 digits", "100000000000000000000", 0, false, "21 digits cannot fit"},
		{"negative", "-1", 0, false, "unsigned"},
		{"fraction", "1.5", 0, false, "an integer"},
		{"exponent", "1e3", 0, false, "no exponent"},
	}
	for _, c := range cases {
		if got, ok := parseUint([]byte(c.in)); got != c.want || ok != c.ok {
			t.Errorf("%s: %s: parseUint(%s) = %d, %v; want %d, %v", c.name, c.reason, c.in, got, ok, c.want, c.ok)
		}
	}
}

// pathWalked is how a path was printed before pathTo: every name of the
// chain, joined, and past maxPathNames elided to the first two and the last
// maxPathNames−2 around "…" (spelled out here, not joinPath, which pathTo
// calls). The reference pathTo is checked against.
func pathWalked(t *spanTree, id string, leaf ...string) string {
	names := append(t.pathNames(id), leaf...)
	if n := len(names); n > maxPathNames {
		names = slices.Concat(names[:2], []string{"…"}, names[n-(maxPathNames-2):])
	}
	return strings.Join(names, pathSep)
}

// TestPathToAsWalked: on random forests of chains 0 to 40 spans deep (with
// parents the tree lacks, parents added after their children, cycles, and
// spans added after paths were printed), every span's path, and an op
// node's, prints as the whole chain walked and elided does.
func TestPathToAsWalked(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	elided, strayRoot := 0, 0
	for n := range 400 {
		spans := rng.IntN(41)
		var infos []spanInfo
		for i := range spans {
			s := spanInfo{id: "s" + strconv.Itoa(i), name: "n" + strconv.Itoa(i)}
			switch r := rng.IntN(20); {
			case r < 17 && i > 0: // mostly chains, for depth
				s.parent = "s" + strconv.Itoa(i-1)
			case r < 19:
				s.parent = "s" + strconv.Itoa(rng.IntN(spans+3)) // a parent later, missing, or a cycle
			}
			infos = append(infos, s)
		}
		if rng.IntN(2) == 0 {
			rng.Shuffle(len(infos), func(i, j int) { infos[i], infos[j] = infos[j], infos[i] })
		}
		tree := newSpanTree()
		check := func() {
			for _, id := range append([]string{"", "missing"}, func() (ids []string) {
				for _, s := range infos {
					ids = append(ids, s.id)
				}
				return ids
			}()...) {
				if !tree.isSpan(id) {
					continue
				}
				if names := tree.pathNames(id); len(names) > maxPathNames {
					elided++
					if strings.HasPrefix(names[0], "s") { // an id: names are n…
						strayRoot++
					}
				}
				if got, want := tree.path(id), pathWalked(tree, id); got != want {
					t.Fatalf("forest %d: path of %s = %q, want %q as walked\nspans: %+v", n, id, got, want, infos)
				}
				if got, want := tree.pathTo(id, "[op]"), pathWalked(tree, id, "[op]"); got != want {
					t.Fatalf("forest %d: path of %s with an op = %q, want %q as walked\nspans: %+v", n, id, got, want, infos)
				}
			}
		}
		for k, s := range infos {
			tree.addSpan(s)
			if k == len(infos)/2 {
				check() // settled, then grown
			}
		}
		check()
	}
	if elided-strayRoot < 100 || strayRoot < 100 {
		t.Errorf("%d paths elided, %d of them from a parent the tree lacks: want 100 of each kind", elided, strayRoot)
	}
}

// TestPathWalksOnlyWhatItKeeps: printing the path of the deepest span of a
// chain, or of an op node there, walks no more names than it prints (the
// whole chain per path made summary --top 0 and nodes --top 0 quadratic in
// the depth: 71 s for 40k nested spans).
func TestPathWalksOnlyWhatItKeeps(t *testing.T) {
	const depth = 10_000
	tree := newSpanTree()
	addChain(tree, depth, "")
	tree.addOp("s9999", "matmul")
	tree.path("s0") // settled
	before := pathSteps.Load()
	p := tree.path("s9999")
	op := tree.describeNode("s9999/op/0").path
	if got := pathSteps.Load() - before; got > 2*maxPathNames {
		t.Errorf("two paths of a span %d deep walked %d names, want at most %d", depth, got, 2*maxPathNames)
	}
	if want := "n0 > n1 > … > n9990 > n9991 > n9992 > n9993 > n9994 > n9995 > n9996 > n9997 > n9998 > n9999"; p != want {
		t.Errorf("path %q, want %q", p, want)
	}
	if want := "n0 > n1 > … > n9991 > n9992 > n9993 > n9994 > n9995 > n9996 > n9997 > n9998 > n9999 > [matmul]"; op != want {
		t.Errorf("op node path %q, want %q", op, want)
	}
}

// TestAtoiStrict: an op node's index is digits only (found by mutation: an
// empty index read as 0 went unnoticed).
func TestAtoiStrict(t *testing.T) {
	for _, c := range []struct {
		s   string
		n   int
		ok  bool
		why string
	}{
		{"0", 0, true, "the first op"},
		{"12", 12, true, "digits"},
		{"", 0, false, "a key that ends in /op/ names no op"},
		{"+1", 0, false, "no sign"},
		{" 1", 0, false, "no space"},
		{"1a", 0, false, "digits only"},
		{"999999999", 999999999, true, "nine digits"},
		{"1000000000", 0, false, "ten digits could overflow an int on 32-bit systems"},
	} {
		if n, ok := atoiStrict(c.s); n != c.n || ok != c.ok {
			t.Errorf("atoiStrict(%q) = %d, %v; want %d, %v (%s)", c.s, n, ok, c.n, c.ok, c.why)
		}
	}
}

// addChain adds to tree a chain of depth spans, s0 to s{depth-1}, each the
// child of the one before and named n0 to n{depth-1}; the first has parent
// root ("" for none).
func addChain(tree *spanTree, depth int, root string) {
	for i := range depth {
		parent := root
		if i > 0 {
			parent = "s" + strconv.Itoa(i-1)
		}
		tree.addSpan(spanInfo{id: "s" + strconv.Itoa(i), parent: parent, name: "n" + strconv.Itoa(i), kind: tracemem.SpanFunction})
	}
}
