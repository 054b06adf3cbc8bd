// spantree_test.go holds the tests of SpanTree: cases for each rule, and random span forests against a slow reference.

package tracemem

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tracemem/tracemem/internal/gen"
)

// TestSpanTreePath: each rule of SpanTree, with the path of every id asked.
func TestSpanTreePath(t *testing.T) {
	sp := func(id, parent, name string) Span { return Span{ID: id, ParentID: parent, Name: name} }
	tests := []struct {
		name, reason string
		spans        []Span
		want         map[string][]string // id → path; ids not listed must give nil
	}{
		{"chain", "root first, each child after its parent",
			[]Span{sp("m", "f", "matmul"), sp("s", "", "step"), sp("f", "s", "forward")},
			map[string][]string{"s": {"step"}, "f": {"step", "forward"}, "m": {"step", "forward", "matmul"}}},
		{"unknown parent", "a parent id naming no span makes a root",
			[]Span{sp("a", "gone", "A"), sp("b", "a", "B")},
			map[string][]string{"a": {"A"}, "b": {"A", "B"}}},
		{"duplicate id", "the first span of an id is its span: its name, its parent, and its children's parent",
			[]Span{sp("r", "", "R"), sp("x", "r", "first"), sp("x", "", "second"), sp("c", "x", "C")},
			map[string][]string{"r": {"R"}, "x": {"R", "first"}, "c": {"R", "first", "C"}}},
		{"cycle", "the walk from a comes back to a: the link from b, the last span walked, is cut (Validate's Cut)",
			[]Span{sp("a", "b", "A"), sp("b", "a", "B"), sp("c", "a", "C")},
			map[string][]string{"b": {"B"}, "a": {"B", "A"}, "c": {"B", "A", "C"}}},
		{"self parent", "a span that is its own parent is a root",
			[]Span{sp("a", "a", "A"), sp("b", "a", "B")},
			map[string][]string{"a": {"A"}, "b": {"A", "B"}}},
		{"empty name", "a span without a name still has its place in the path",
			[]Span{sp("a", "", ""), sp("b", "a", "B")},
			map[string][]string{"a": {""}, "b": {"", "B"}}},
		{"empty id", "a span may have the empty id, which then finds it, as in the analyses; an empty parent id is still no parent",
			[]Span{sp("", "", "anon"), sp("b", "", "B")},
			map[string][]string{"": {"anon"}, "b": {"B"}}},
		{"no spans", "nothing to find", nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, sorted := range []bool{false, true} {
				spans := slices.Clone(tc.spans)
				if sorted { // the binary search, where readers' documents go
					slices.SortStableFunc(spans, func(x, y Span) int { return strings.Compare(x.ID, y.ID) })
					if tc.name == "cycle" {
						continue // the document's order decides these
					}
				}
				tree := NewSpanTree(&TraceDocument{Spans: spans})
				for _, id := range []string{"a", "b", "c", "f", "m", "r", "s", "x", "", "gone", "nope"} {
					if got, want := tree.Path(id), tc.want[id]; !cmp.Equal(got, want) {
						t.Errorf("sorted %v: Path(%q) = %q, want %q (%s)", sorted, id, got, want, tc.reason)
					}
					if s := tree.Span(id); (s == nil) != (tc.want[id] == nil) || s != nil && s.Name != tc.want[id][len(tc.want[id])-1] {
						t.Errorf("sorted %v: Span(%q) = %+v, want the span named last in %q", sorted, id, s, tc.want[id])
					}
				}
			}
		})
	}
}

// TestSpanTreeReference compares SpanTree with refSpanPaths on random span
// forests: ids from a small pool (so ids repeat), parents from the pool, ""
// and an id no span has (so cycles, self links and unknown parents occur),
// in document order and sorted by id. The reference's cuts are checked
// against Validate's.
func TestSpanTreeReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	pool := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	cycles, dups := 0, 0
	for n := range 5000 {
		spans := make([]Span, rng.IntN(13))
		for i := range spans {
			spans[i] = Span{ID: pool[rng.IntN(len(pool))], Name: "n" + strconv.Itoa(i)}
			switch r := rng.IntN(10); {
			case r == 0:
				spans[i].ParentID = "zz"
			case r < 3:
			default:
				spans[i].ParentID = pool[rng.IntN(len(pool))]
			}
		}
		if n%2 == 1 {
			slices.SortStableFunc(spans, func(x, y Span) int { return strings.Compare(x.ID, y.ID) })
		}
		doc := &TraceDocument{Spans: spans}
		want, cut := refSpanPaths(spans)
		var validateCut []string
		for _, err := range unjoin(doc.Validate()) {
			var ce *SpanCycleError
			if errors.As(err, &ce) {
				validateCut = append(validateCut, ce.Cut)
			} else {
				dups++
			}
		}
		slices.Sort(validateCut)
		slices.Sort(cut)
		if !cmp.Equal(validateCut, cut) {
			t.Fatalf("%+v: the reference cuts the links of %q, Validate %q", spans, cut, validateCut)
		}
		cycles += len(cut)
		tree := NewSpanTree(doc)
		for _, id := range append(pool, "", "zz") {
			if got := tree.Path(id); !cmp.Equal(got, want[id]) {
				t.Fatalf("%+v: Path(%q) = %q, want %q", spans, id, got, want[id])
			}
			if s := tree.Span(id); s != nil && s != &spans[slices.IndexFunc(spans, func(x Span) bool { return x.ID == id })] {
				t.Fatalf("%+v: Span(%q) is not the first span of the id", spans, id)
			}
		}
	}
	if cycles < 100 || dups < 100 {
		t.Errorf("%d cycles and %d duplicate ids in the random forests: too few to test their rules", cycles, dups)
	}
}

// refSpanPaths is the slow reference of SpanTree.Path for every id of
// spans, and the ids of the spans whose parent link it cuts. It follows
// the documented rules one by one: the first span of an id is its span;
// from each such span in document order not yet visited, follow parent
// links until a span visited before, a root, or a span already on this
// walk, whose link from the last span walked is cut.
func refSpanPaths(spans []Span) (map[string][]string, []string) {
	first := map[string]int{}
	for i, s := range spans {
		if _, ok := first[s.ID]; !ok {
			first[s.ID] = i
		}
	}
	parentOf := func(i int) int {
		if j, ok := first[spans[i].ParentID]; ok && spans[i].ParentID != "" {
			return j
		}
		return -1
	}
	cut := map[int]bool{}
	visited := map[int]bool{}
	for i := range spans {
		if first[spans[i].ID] != i || visited[i] {
			continue
		}
		var walk []int
		for j := i; j >= 0 && !visited[j]; j = parentOf(j) {
			if slices.Contains(walk, j) {
				cut[walk[len(walk)-1]] = true
				break
			}
			walk = append(walk, j)
		}
		for _, k := range walk {
			visited[k] = true
		}
	}
	paths := map[string][]string{}
	for id, i := range first {
		var path []string
		for j := i; j >= 0; j = parentOf(j) {
			path = append([]string{spans[j].Name}, path...)
			if cut[j] {
				break
			}
		}
		paths[id] = path
	}
	var cutIDs []string
	for i := range cut {
		cutIDs = append(cutIDs, spans[i].ID)
	}
	return paths, cutIDs
}

// TestSpanTreeConcurrent: one SpanTree asked from several goroutines at
// once gives each the answers a lone caller gets (its doc says it is safe
// for concurrent use; run with -race).
func TestSpanTreeConcurrent(t *testing.T) {
	docs := readOnlyDocs(t)
	for _, name := range []string{"big anomalies", "unsorted"} { // sorted by id, and not
		doc := docs[name]
		tree := NewSpanTree(doc)
		ask := func() [][]string {
			var out [][]string
			for _, s := range doc.Spans {
				out = append(out, tree.Path(s.ID))
			}
			return out
		}
		want := ask()
		if len(want) == 0 || len(want[0]) == 0 {
			t.Fatalf("%s: no spans to ask for", name)
		}
		got := make([][][]string, 4)
		var wg sync.WaitGroup
		for i := range got {
			wg.Go(func() { got[i] = ask() })
		}
		wg.Wait()
		for i := range got {
			if !cmp.Equal(want, got[i]) {
				t.Errorf("%s: goroutine %d got other paths than a lone caller", name, i)
			}
		}
	}
}

// BenchmarkSpanTree builds the span tree of a generated trace and asks the
// path of every span, in the readers' order (sorted by id: binary search)
// and shuffled (a map of the ids). Per span, the time should not grow with
// the spans.
func BenchmarkSpanTree(b *testing.B) {
	for _, spans := range []int{25_000, 250_000} {
		doc := genDoc(b, gen.Config{Seed: 1, MemoryEvents: spans, Devices: 1, Spans: spans})
		shuffled := &TraceDocument{Spans: slices.Clone(doc.Spans)}
		rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled.Spans), func(i, j int) {
			shuffled.Spans[i], shuffled.Spans[j] = shuffled.Spans[j], shuffled.Spans[i]
		})
		for _, c := range []struct {
			name string
			doc  *TraceDocument
		}{{"sorted", doc}, {"shuffled", shuffled}} {
			b.Run("spans="+strconv.Itoa(len(c.doc.Spans))+"/"+c.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					tree := NewSpanTree(c.doc)
					for i := range c.doc.Spans {
						tree.Path(c.doc.Spans[i].ID)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(c.doc.Spans)), "ns/span")
			})
		}
	}
}
