// spans.go holds the call tree the command needs beside the analysis: span names, parents, times and op names, and span paths.

package main

import (
	"bytes"
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/tracemem/tracemem"
	"github.com/tracemem/tracemem/internal/parentwalk"
)

// pathSep joins the names of a span path, root first.
const pathSep = " > "

// spanInfo is one span as the command shows it.
type spanInfo struct {
	id, parent, name string
	kind             tracemem.SpanKind
	step             tracemem.Step
	startNs          uint64
	durationNs       uint64
	closed           bool
}

// spanRec is one span as the tree stores it: about 40 bytes, its id in the
// tree's arena, its name interned, its parent an index.
type spanRec struct {
	startNs, durationNs uint64
	idOff               int // the id is arena[idOff : idOff+idLen]
	idLen               uint32
	parent              int32  // index of the parent; noParent; or ≤ unresolvedBase: an id not (yet) seen, in unresolved
	name                uint32 // index in names
	kind                tracemem.SpanKind
	step                tracemem.Step
	closed              bool
	cut                 bool // the parent link closes a cycle: paths end here
}

const (
	noParent       = -1
	unresolvedBase = -2 // parent = unresolvedBase - i names unresolved[i]
)

// spanTree is the spans of a trace, and the op names of each span in
// document order (only when asked for). It is compact (about 95 bytes a
// span with short ids, no string per span) because a streamed trace may
// have millions of spans: ids live in one arena and are found by a hash,
// checked against the arena; names are interned. Not safe for concurrent
// use.
type spanTree struct {
	recs       []spanRec
	arena      []byte
	hash       func([]byte) uint64
	byHash     map[uint64]int32 // hash of the id → first span with that hash
	collisions map[string]int32 // spans whose id hash was already taken by another id
	names      []string
	nameIdx    map[string]uint32
	unresolved []string
	ops        map[int32][]string  // op names by span index
	strayOps   map[string][]string // op names of spans the tree does not have
	settled    int                 // spans whose cycles are cut (see settle)
	depth      []int32             // names in each span's path (see settle)
	second     []int32             // the span named second from the root in each path; -1 for a path of one name
}

func newSpanTree() *spanTree {
	seed := maphash.MakeSeed()
	return &spanTree{
		hash:       func(b []byte) uint64 { return maphash.Bytes(seed, b) },
		byHash:     make(map[uint64]int32),
		collisions: make(map[string]int32),
		nameIdx:    make(map[string]uint32),
		ops:        make(map[int32][]string),
		strayOps:   make(map[string][]string),
	}
}

// treeFromDocument takes the spans and ops of doc.
func treeFromDocument(doc *tracemem.TraceDocument) *spanTree {
	t := newSpanTree()
	t.recs = make([]spanRec, 0, len(doc.Spans))
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

// len returns the number of spans.
func (t *spanTree) len() int { return len(t.recs) }

func (t *spanTree) idOf(r *spanRec) []byte { return t.arena[r.idOff : r.idOff+int(r.idLen)] }

// find returns the index of span id, or -1.
func (t *spanTree) find(id []byte) int32 {
	i, ok := t.byHash[t.hash(id)]
	if !ok {
		return -1
	}
	if string(t.idOf(&t.recs[i])) == string(id) {
		return i
	}
	if j, ok := t.collisions[string(id)]; ok {
		return j
	}
	return -1
}

func (t *spanTree) findString(id string) int32 { return t.find(unsafeBytes(id)) }

// unsafeBytes views s as bytes for lookups that neither keep nor change them.
func unsafeBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

func (t *spanTree) intern(name string) uint32 {
	if i, ok := t.nameIdx[name]; ok {
		return i
	}
	i := uint32(len(t.names))
	t.names = append(t.names, name)
	t.nameIdx[name] = i
	return i
}

// addSpan adds s (its end too when closed).
func (t *spanTree) addSpan(s spanInfo) {
	t.addSpanBytes(unsafeBytes(s.id), unsafeBytes(s.parent), s.name, s.kind, s.step, s.startNs)
	if s.closed {
		t.endSpan(s.id, s.durationNs)
	}
}

// addSpanBytes adds a span from the bytes of its id and parent id (not
// kept). A second span of the same id is not added, and the result says so:
// the tree keeps the first (as the analyses do), and its caller reports it.
func (t *spanTree) addSpanBytes(id, parent []byte, name string, kind tracemem.SpanKind, step tracemem.Step, startNs uint64) (duplicate bool) {
	h := t.hash(id)
	first, taken := t.byHash[h]
	if _, dup := t.collisions[string(id)]; taken && (dup || string(t.idOf(&t.recs[first])) == string(id)) {
		return true
	}
	if len(t.recs) >= math.MaxInt32 {
		return false
	}
	idx := int32(len(t.recs))
	r := spanRec{idOff: len(t.arena), idLen: uint32(len(id)), parent: noParent, name: t.intern(name), kind: kind, step: step, startNs: startNs}
	t.arena = append(t.arena, id...)
	if len(parent) > 0 {
		if p := t.find(parent); p >= 0 {
			r.parent = p
		} else {
			r.parent = unresolvedBase - int32(len(t.unresolved))
			t.unresolved = append(t.unresolved, string(parent))
		}
	}
	t.recs = append(t.recs, r)
	if taken {
		t.collisions[string(id)] = idx
	} else {
		t.byHash[h] = idx
	}
	if len(t.strayOps) > 0 {
		// Ops that named the span before it came are its own, as the
		// reader makes them (found by FuzzTap, for the span id "").
		if ops, ok := t.strayOps[string(id)]; ok {
			t.ops[idx] = ops
			delete(t.strayOps, string(id))
		}
	}
	return false
}

// endSpan records the end of span id.
func (t *spanTree) endSpan(id string, durationNs uint64) { t.endSpanBytes(unsafeBytes(id), durationNs) }

func (t *spanTree) endSpanBytes(id []byte, durationNs uint64) {
	if i := t.find(id); i >= 0 {
		t.recs[i].durationNs = durationNs
		t.recs[i].closed = true
	}
}

// addOp appends an op name to span spanID's ops.
func (t *spanTree) addOp(spanID, name string) { t.addOpBytes(unsafeBytes(spanID), name) }

func (t *spanTree) addOpBytes(spanID []byte, name string) {
	name = t.names[t.intern(name)]
	if i := t.find(spanID); i >= 0 {
		t.ops[i] = append(t.ops[i], name)
		return
	}
	t.strayOps[string(spanID)] = append(t.strayOps[string(spanID)], name)
}

// opsOf returns the op names of span id in document order.
func (t *spanTree) opsOf(id string) []string {
	if i := t.findString(id); i >= 0 {
		return t.ops[i]
	}
	return t.strayOps[id]
}

// parentOf returns the index of the parent of span i, -1 for none, and the
// parent's id when the tree does not have that span.
func (t *spanTree) parentOf(i int32) (int32, string) {
	p := t.recs[i].parent
	switch {
	case p >= 0:
		return p, ""
	case p == noParent:
		return -1, ""
	}
	id := t.unresolved[unresolvedBase-p]
	if j := t.findString(id); j >= 0 { // a parent added after its child
		return j, ""
	}
	return -1, id
}

// lastNs returns the latest time the spans give: a start, or a closed
// span's end (saturating); 0 for no spans.
func (t *spanTree) lastNs() uint64 {
	var last uint64
	for i := range t.recs {
		r := &t.recs[i]
		last = max(last, r.startNs)
		if r.closed {
			last = max(last, r.startNs+min(r.durationNs, math.MaxUint64-r.startNs))
		}
	}
	return last
}

// at returns span i (in the order added).
func (t *spanTree) at(i int) spanInfo {
	r := &t.recs[i]
	s := spanInfo{id: string(t.idOf(r)), name: t.names[r.name], kind: r.kind, step: r.step,
		startNs: r.startNs, durationNs: r.durationNs, closed: r.closed}
	if p, stray := t.parentOf(int32(i)); p >= 0 {
		s.parent = string(t.idOf(&t.recs[p]))
	} else {
		s.parent = stray
	}
	return s
}

// span returns span id, and false when the tree does not have it.
func (t *spanTree) span(id string) (spanInfo, bool) {
	i := t.findString(id)
	if i < 0 {
		return spanInfo{}, false
	}
	return t.at(int(i)), true
}

// settle cuts the parent links that close cycles, as the library's analyses
// and Validate do for a document read by ReadTrace, with the same walk
// (parentwalk.Walk) in the same order: span ids ascending, as the readers
// sort them. A streamed trace's spans are added in file order, so they are
// walked sorted. It runs again, from scratch, when spans were added since,
// as they may change the cuts. It notes each span's depth and second name
// from the root on the way (the walk gives parents first), so a path is
// printed without walking past the names it keeps.
func (t *spanTree) settle() {
	if t.settled == len(t.recs) {
		return
	}
	t.settled = len(t.recs)
	for i := range t.recs { // cut afresh, as for a tree built whole
		t.recs[i].cut = false
	}
	byID := func(a, b int32) int { return bytes.Compare(t.idOf(&t.recs[a]), t.idOf(&t.recs[b])) }
	order := make([]int32, len(t.recs)) // walk position → span
	for i := range order {
		order[i] = int32(i)
	}
	if !slices.IsSortedFunc(order, byID) {
		slices.SortFunc(order, byID)
	}
	pos := make([]int32, len(t.recs)) // span → walk position
	for k, i := range order {
		pos[i] = int32(k)
	}
	parent := func(k int) int {
		if p, _ := t.parentOf(order[k]); p >= 0 {
			return int(pos[p])
		}
		return -1
	}
	t.depth = slices.Grow(t.depth[:0], len(t.recs))[:len(t.recs)]
	t.second = slices.Grow(t.second[:0], len(t.recs))[:len(t.recs)]
	parentwalk.Walk(len(t.recs), parent, nil, func(path []int, cut bool) {
		if cut {
			t.recs[order[path[len(path)-1]]].cut = true
		}
		for k := len(path) - 1; k >= 0; k-- { // root end first: the parent is done
			i := order[path[k]]
			depth, second := int32(1), int32(-1)
			if !t.recs[i].cut {
				if p, stray := t.parentOf(i); p >= 0 {
					depth, second = t.depth[p]+1, t.second[p]
				} else if stray != "" {
					depth = 2
				}
			}
			if depth == 2 {
				second = i
			}
			t.depth[i], t.second[i] = depth, second
		}
	})
}

// treeParent returns the index of the parent of span i in the tree, -1 for
// none (a root, a parent the tree does not have, or a cut link).
func (t *spanTree) treeParent(i int32) int32 {
	if t.recs[i].cut {
		return -1
	}
	p, _ := t.parentOf(i)
	return p
}

// maxPathNames bounds the names of a path as printed: deeper paths keep
// their root and their deepest names around a "…".
const maxPathNames = 12

// isSpan reports whether a record's span id names a span: any id but "",
// and "" when the trace has a span of that id (the readers accept one).
func (t *spanTree) isSpan(id string) bool { return id != "" || t.findString(id) >= 0 }

// pathNames returns the names from the root down to span id. A span the
// tree does not know is named by its id; a parent link that closes a cycle
// is cut (see settle).
func (t *spanTree) pathNames(id string) []string {
	// A path holds each span once and at most one stray parent id; a longer
	// one would be a cycle settle did not cut, which the walk would follow
	// until memory ran out.
	names, more := t.leafNames(nil, id, len(t.recs)+1)
	if more {
		panic(fmt.Sprintf("tracemem: the span path of %q is longer than the tree's %d spans: a cycle was not cut", id, len(t.recs)))
	}
	slices.Reverse(names)
	return names
}

// pathSteps counts the names leafNames walks, for a test that printing a
// path walks no more than it keeps.
var pathSteps atomic.Int64

// leafNames appends to dst the names of pathNames(id) from span id up,
// at most limit of them, and reports whether names were left out: a
// caller that keeps only the deepest names walks no further than those.
func (t *spanTree) leafNames(dst []string, id string, limit int) (names []string, more bool) {
	n0 := len(dst)
	defer func() { pathSteps.Add(int64(len(names) - n0)) }()
	i := t.findString(id)
	if i < 0 {
		if limit < 1 {
			return dst, true
		}
		return append(dst, id), false
	}
	t.settle()
	for n := 0; i >= 0; n++ {
		if n == limit {
			return dst, true
		}
		dst = append(dst, t.names[t.recs[i].name])
		if t.recs[i].cut {
			break
		}
		var stray string
		i, stray = t.parentOf(i)
		if stray != "" {
			if n+1 == limit {
				return dst, true
			}
			dst = append(dst, stray)
		}
	}
	return dst, false
}

// path returns the span path of id as text, eliding the middle of paths
// deeper than maxPathNames names.
func (t *spanTree) path(id string) string {
	if !t.isSpan(id) {
		return "-"
	}
	return t.pathTo(id)
}

// pathTo returns joinPath of the names of id's path followed by leaf,
// walking up no further than the deepest names it keeps: the depth and the
// names nearest the root are settle's (a walk of the whole chain per path
// made the paths of a chain's spans quadratic in its depth: 71 s for the
// summary of 40k nested spans).
func (t *spanTree) pathTo(id string, leaf ...string) string {
	i := t.findString(id)
	if i < 0 {
		if id == "" { // no span, named as path names it
			id = "-"
		}
		return joinPath(append([]string{id}, leaf...))
	}
	t.settle()
	if int(t.depth[i])+len(leaf) <= maxPathNames {
		return joinPath(append(t.pathNames(id), leaf...))
	}
	second := t.second[i]
	p, first := t.parentOf(second) // second's link is not cut: first is a stray id or p's name
	if p >= 0 {
		first = t.names[t.recs[p].name]
	}
	names := make([]string, 0, maxPathNames+1)
	names = append(names, first, t.names[t.recs[second].name], "…")
	names, _ = t.leafNames(names, id, maxPathNames-2-len(leaf))
	slices.Reverse(names[3:])
	return strings.Join(append(names, leaf...), pathSep)
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
	if s, ok := t.span(key); ok {
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
			if ops := t.opsOf(spanID); n < len(ops) {
				name = ops[n]
			}
		}
		return nodeRef{kind: "op", path: t.pathTo(spanID, "["+name+"]")}
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
