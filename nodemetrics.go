// nodemetrics.go holds the memory attributed to every span and op of the call tree.

package tracemem

// OpKey names one op of a document: the span it ran in and its index among
// that span's ops, in document order.
type OpKey struct {
	SpanID string
	Index  int
}

// NodeMetrics is the memory of one node of the call tree (a span or an op).
type NodeMetrics struct {
	Bytes         uint64 `json:"bytes"`          // bytes requested: an op's output bytes; a span's own ops' sum
	PeakBytes     uint64 `json:"peak_bytes"`     // highest bytes live at once that the node's subtree allocated
	ResidualBytes uint64 `json:"residual_bytes"` // bytes the subtree allocated still live when the node ended
	StorageBytes  uint64 `json:"storage_bytes"`  // an op's output storage bytes; 0 for a span
}

// NodeMemoryMetrics returns the memory of every span and op of doc, keyed by
// span id and by op node id (opNodeIDs[key], or "{span}/op/{index}").
func NodeMemoryMetrics(doc *TraceDocument, opNodeIDs map[OpKey]string) map[string]NodeMetrics {
	panic("not implemented yet")
}
