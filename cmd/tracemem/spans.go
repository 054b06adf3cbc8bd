// spans.go holds the call tree the command needs beside the analysis: span names, parents, times and op names, and span paths.

package main

import (
	"strings"

	"github.com/tracemem/tracemem"
)

// pathSep joins the names of a span path, root first.
const pathSep = " > "

// spanInfo is what the command keeps of one span.
type spanInfo struct {
	id, parent, name string
	kind             tracemem.SpanKind
	step             tracemem.Step
	startNs          uint64
	durationNs       uint64
	closed           bool
}

// spanTree is the spans of a trace by id, and the op names of each span in
// document order (only when asked for).
type spanTree struct {
	index map[string]int // span id → position in spans
	spans []spanInfo     // in the order first seen
	ops   map[string][]string
}

func newSpanTree() *spanTree {
	return &spanTree{index: make(map[string]int), ops: make(map[string][]string)}
}

// treeFromDocument takes the spans and ops of doc.
func treeFromDocument(doc *tracemem.TraceDocument) *spanTree {
	t := &spanTree{
		index: make(map[string]int, len(doc.Spans)),
		spans: make([]spanInfo, 0, len(doc.Spans)),
		ops:   make(map[string][]string),
	}
	for i := range doc.Spans {
		s := &doc.Spans[i]
		t.addSpan(spanInfo{id: s.ID, parent: s.ParentID, name: s.Name, kind: s.Kind, step: s.Step,
			startNs: s.StartNs, durationNs: s.DurationNs, closed: s.Closed})
	}
	for i := range doc.Ops {
		t.addOp(doc.Ops[i].SpanID, doc.Ops[i].OpName)
	}
	return t
}

// addSpan adds s; a second span of the same id is ignored (the reader
// reports it).
func (t *spanTree) addSpan(s spanInfo) {
	if _, dup := t.index[s.id]; dup {
		return
	}
	t.index[s.id] = len(t.spans)
	t.spans = append(t.spans, s)
}

// endSpan records the end of span id.
func (t *spanTree) endSpan(id string, durationNs uint64) {
	if i, ok := t.index[id]; ok {
		t.spans[i].durationNs = durationNs
		t.spans[i].closed = true
	}
}

func (t *spanTree) addOp(spanID, name string) { t.ops[spanID] = append(t.ops[spanID], name) }

// span returns the span of id, or nil.
func (t *spanTree) span(id string) *spanInfo {
	if i, ok := t.index[id]; ok {
		return &t.spans[i]
	}
	return nil
}

// maxPathNames bounds the names of a path as printed: deeper paths keep
// their root and their deepest names around a "…".
const maxPathNames = 12

// pathNames returns the names from the root down to span id. A span the
// tree does not know is named by its id; a parent link that closes a cycle
// ends the walk.
func (t *spanTree) pathNames(id string) []string {
	var names []string
	seen := 0
	for id != "" && seen <= len(t.spans) {
		s := t.span(id)
		if s == nil {
			names = append(names, id)
			break
		}
		names = append(names, s.name)
		id = s.parent
		seen++
	}
	for i, j := 0, len(names)-1; i < j; i, j = i+1, j-1 {
		names[i], names[j] = names[j], names[i]
	}
	return names
}

// path returns the span path of id as text, eliding the middle of paths
// deeper than maxPathNames names.
func (t *spanTree) path(id string) string {
	if id == "" {
		return "-"
	}
	return joinPath(t.pathNames(id))
}

func joinPath(names []string) string {
	if len(names) > maxPathNames {
		keep := make([]string, 0, maxPathNames+1)
		keep = append(keep, names[:2]...)
		keep = append(keep, "…")
		keep = append(keep, names[len(names)-(maxPathNames-2):]...)
		names = keep
	}
	return strings.Join(names, pathSep)
}

// nodeRef is a node of the node metrics named for people.
type nodeRef struct {
	kind string // "module", "function", "op span", or "op" for an op record
	path string // the span path, and for an op record its span's path and the op name
}

// describeNode tells what node key is: a span id, or "{span}/op/{index}".
func (t *spanTree) describeNode(key string) nodeRef {
	if s := t.span(key); s != nil {
		kind := s.kind.String()
		if s.kind == tracemem.SpanOp {
			kind = "op span"
		}
		return nodeRef{kind: kind, path: t.path(key)}
	}
	if i := strings.LastIndex(key, "/op/"); i >= 0 {
		spanID, idx := key[:i], key[i+len("/op/"):]
		name := "op " + idx
		if n, ok := atoiStrict(idx); ok {
			if ops := t.ops[spanID]; n < len(ops) {
				name = ops[n]
			}
		}
		return nodeRef{kind: "op", path: joinPath(append(t.pathNames(spanID), "["+name+"]"))}
	}
	return nodeRef{kind: "?", path: key}
}

// atoiStrict parses a non-negative decimal integer without sign or spaces.
func atoiStrict(s string) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	n := 0
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}
