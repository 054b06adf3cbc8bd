// validate.go holds the structural checks of a document's call tree.

package tracemem

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/tracemem/tracemem/internal/parentwalk"
)

// SpanCycleError reports spans whose parent links form a cycle. The analyses
// cut the link from Cut to its parent, making Cut a root.
type SpanCycleError struct {
	Spans []string // the span ids of the cycle, each the child of the next, the last the child of the first
	Cut   string   // the span whose parent link is cut
}

// Error renders e.g. `span "b": parent links form a cycle (a -> b); the link to its parent is cut`.
func (e *SpanCycleError) Error() string {
	return fmt.Sprintf("span %q: parent links form a cycle (%s); the link to its parent is cut",
		e.Cut, strings.Join(e.Spans, " -> "))
}

// Validate checks the document's structure and returns every problem it
// finds, joined (use errors.As for *SpanError and *SpanCycleError), or nil:
// duplicate span ids (the analyses keep the first), parent links that form a
// cycle (the analyses cut the link that closes it), span ids that are also
// the default node id "{span}/op/{index}" of an op of nonzero bytes (node
// metrics with no opNodeIDs for that op keep the span's node, and the op has
// none; Validate takes no opNodeIDs, so it neither knows of an op given
// another id nor checks the ids given), and memory events whose action or
// category is out of range (an *EventError each, matching ErrInvalidEvent).
// Callers may run it before an analysis to learn what the analysis will work
// around.
func (doc *TraceDocument) Validate() error {
	var errs []error
	seen := make(map[string]bool, len(doc.Spans))
	for _, s := range doc.Spans {
		if seen[s.ID] {
			errs = append(errs, &SpanError{SpanID: s.ID, Msg: "duplicate span id"})
		}
		seen[s.ID] = true
	}
	for _, o := range orderSpans(doc.Spans) {
		if o.cut {
			errs = append(errs, o.cycle)
		}
	}
	errs = append(errs, doc.opIDClashes()...)
	for i := range doc.Memory {
		errs = append(errs, eventErrors(&doc.Memory[i], i)...)
	}
	return errors.Join(errs...)
}

// opIDClashes returns a *SpanError for each span whose id is also the
// default node id of an op with a node (one of more than 0 bytes).
func (doc *TraceDocument) opIDClashes() []error {
	var opLike map[string]bool // span ids that could be an op's node id
	for i := range doc.Spans {
		if id := doc.Spans[i].ID; strings.Contains(id, "/op/") {
			if opLike == nil {
				opLike = make(map[string]bool)
			}
			opLike[id] = true
		}
	}
	if opLike == nil {
		return nil
	}
	var errs []error
	count := make(map[string]int)
	for i := range doc.Ops {
		op := &doc.Ops[i]
		index := count[op.SpanID]
		count[op.SpanID]++
		if op.Bytes() == 0 {
			continue
		}
		if id := op.SpanID + "/op/" + strconv.Itoa(index); opLike[id] {
			errs = append(errs, &SpanError{SpanID: id,
				Msg: fmt.Sprintf("the id is also the node id of ops[%d] (op %d of span %q), which node metrics leave out", i, index, op.SpanID)})
		}
	}
	return errs
}

type spanSlot struct {
	index  int             // into the spans slice
	parent int             // index of the parent span, -1 for none
	cut    bool            // the parent link is cut
	cycle  *SpanCycleError // when cut
}

// orderSpans returns the spans (the first of each id) with every parent
// before its children (parentwalk.Walk: a chain that comes back to a span
// on the walk is a cycle, and the link from the last span walked to its
// parent is cut).
func orderSpans(spans []Span) []spanSlot {
	index := make(map[string]int, len(spans))
	for i := range spans {
		if _, dup := index[spans[i].ID]; !dup {
			index[spans[i].ID] = i
		}
	}
	parent := func(i int) int {
		if p, ok := index[spans[i].ParentID]; ok && spans[i].ParentID != "" {
			return p
		}
		return -1
	}
	out := make([]spanSlot, 0, len(index))
	parentwalk.Walk(len(spans), parent, func(i int) bool { return index[spans[i].ID] != i }, func(path []int, cut bool) {
		for k := len(path) - 1; k >= 0; k-- {
			slot := spanSlot{index: path[k], parent: parent(path[k])}
			if cut && k == len(path)-1 {
				slot.cut = true
				top := slot.parent
				cyc := &SpanCycleError{Cut: spans[path[k]].ID}
				start := 0
				for start < len(path) && path[start] != top {
					start++
				}
				for _, m := range path[start:] {
					cyc.Spans = append(cyc.Spans, spans[m].ID)
				}
				slot.cycle = cyc
			}
			out = append(out, slot)
		}
	})
	return out
}
