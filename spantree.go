// spantree.go holds SpanTree: a document's spans found by id, and each span's path from its root.

package tracemem

import (
	"slices"
	"strings"
)

// A SpanTree finds a document's spans by id and gives each span's path from
// its root, by the rules the analyses follow (and Validate reports): of
// spans that share an id, the first in doc.Spans is the span of that id; a
// parent id that names no span makes a root; a parent link that closes a
// cycle is cut, which makes the span it leaves a root.
//
// It is built once, in time linear in the spans, for any number of
// lookups: the span path of every entry of a peak breakdown, say. It keeps
// doc.Spans itself, not a copy, so the document must not change while the
// tree is used. A SpanTree is safe for concurrent use.
type SpanTree struct {
	spanFinder
	parent []int // index of each span's parent; -1 for a root, a cut link or an id's later span
}

// NewSpanTree returns the span tree of doc, which must not be nil.
func NewSpanTree(doc *TraceDocument) *SpanTree {
	t := &SpanTree{spanFinder: newSpanFinder(doc.Spans), parent: make([]int, len(doc.Spans))}
	for i := range t.parent {
		t.parent[i] = -1
	}
	for _, s := range orderSpans(doc.Spans) {
		if s.parent >= 0 && !s.cut {
			t.parent[s.index] = s.parent
		}
	}
	return t
}

// spanFinder finds the first span of an id among spans. Spans sorted by id
// (as readers return them) are found by binary search, with no map of
// every id; others through a map built once.
type spanFinder struct {
	spans []Span
	index map[string]int // id → index of its first span; nil when spans are sorted by id
}

func newSpanFinder(spans []Span) spanFinder {
	f := spanFinder{spans: spans}
	if !slices.IsSortedFunc(spans, func(x, y Span) int { return strings.Compare(x.ID, y.ID) }) {
		f.index = make(map[string]int, len(spans))
		for i := range spans {
			if _, dup := f.index[spans[i].ID]; !dup {
				f.index[spans[i].ID] = i
			}
		}
	}
	return f
}

// find returns the index of the first span of id, or -1.
func (f *spanFinder) find(id string) int {
	if f.index != nil {
		if i, ok := f.index[id]; ok {
			return i
		}
		return -1
	}
	// The first of equal ids: the first in the document, as it is sorted.
	if i, ok := slices.BinarySearchFunc(f.spans, id, func(s Span, id string) int { return strings.Compare(s.ID, id) }); ok {
		return i
	}
	return -1
}

// Span returns the span of id, or nil when the document has none. It points
// into the document's spans: do not change it.
func (t *SpanTree) Span(id string) *Span {
	if i := t.find(id); i >= 0 {
		return &t.spans[i]
	}
	return nil
}

// Path returns the names of the spans from the root down to the span of
// id, root first (the command joins them with " > "), or nil when the
// document has no span of that id: an event's SpanID may name none, and ""
// names none unless a span has the empty id, as in the analyses. The slice
// is new on each call: the caller may keep it.
func (t *SpanTree) Path(id string) []string {
	i := t.find(id)
	if i < 0 {
		return nil
	}
	n := 0
	for j := i; j >= 0; j = t.parent[j] {
		n++
	}
	path := make([]string, n)
	for j := i; j >= 0; j = t.parent[j] {
		n--
		path[n] = t.spans[j].Name
	}
	return path
}
