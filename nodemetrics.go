// nodemetrics.go holds the memory attributed to every span and op of the call tree.

package tracemem

// OpKey names one op of a document: the span it ran in and its index among
// that span's ops, in document order.
type OpKey struct {
	SpanID string // Op.SpanID
	Index  int    // 0 for the span's first op in doc.Ops, 1 for its second, ...
}

// NodeMetrics is the memory of one node of the call tree (a span or an op).
type NodeMetrics struct {
	Bytes         uint64 `json:"bytes"`          // bytes requested: an op's output bytes; a span's own ops' sum
	PeakBytes     uint64 `json:"peak_bytes"`     // highest bytes live at once that the node's subtree allocated
	ResidualBytes uint64 `json:"residual_bytes"` // bytes the subtree allocated still live when the node ended
	StorageBytes  uint64 `json:"storage_bytes"`  // an op's output storage bytes; 0 for a span
}

// NodeMemoryMetrics returns the memory of every span and op of doc, keyed by
// span id and by op node id: opNodeIDs[key] when present, else
// "{span}/op/{index}". A nil opNodeIDs is allowed; entries that name no op,
// or an op of 0 bytes, are ignored, and any string is an id (also ""). An id
// names one node: a span whose id is also an op's node id keeps it and the
// op has no node (Validate reports this for the default op ids, as it is
// given no opNodeIDs); of ops with the same node id, given by opNodeIDs or
// by default (an op mapped to "s/op/1" and the op of that default id), the
// first in document order has the node and the others have none. To keep
// every op, give ids unique among themselves and the span ids.
//
// The rules:
//   - An op's index is its position among the document's ops with the same
//     span id, in document order, counting every op. An op's bytes are its
//     storage_bytes, else shape × dtype; an op of 0 bytes gets no node.
//   - An op node's Bytes, StorageBytes and PeakBytes are the op's bytes; its
//     ResidualBytes are the bytes of its output tensor still live when the
//     op's span ends (0 when never allocated in the trace).
//   - A span's Bytes are the sum of its own ops' bytes (not its children's);
//     its StorageBytes are 0.
//   - A span's PeakBytes are the most bytes live at one moment, over all
//     devices, that memory events of the span or its descendants allocated,
//     replayed as Analyze does (a free returns the bytes to the subtree that
//     allocated them; pre-existing memory belongs to no span). With no memory
//     events at all, it is the static estimate max(own bytes, children's
//     PeakBytes).
//   - A span's ResidualBytes are the bytes its subtree allocated still live
//     when it ended (StartNs + DurationNs; events stamped at that time count
//     as inside); a span never closed ends with the trace.
//   - Every span has a node, with zeros where nothing was measured. A parent
//     id naming no span makes a root; a parent link closing a cycle is cut
//     (see Validate). Trees of any depth work: nothing recurses on depth.
//
// A document with a memory event whose action or category is out of range
// (only a document built in Go can have one; Analyze refuses it, and
// Validate names the event) cannot be replayed: the result is an empty map,
// not spans with zeros, which would read as measured.
func NodeMemoryMetrics(doc *TraceDocument, opNodeIDs map[OpKey]string) map[string]NodeMetrics {
	// One timeline point per device is all node metrics need of the timeline.
	a, err := replayDocument(doc, Options{MaxTimelinePoints: 1}, true)
	if err != nil {
		return map[string]NodeMetrics{}
	}
	return a.NodeMetrics(opNodeIDs)
}
