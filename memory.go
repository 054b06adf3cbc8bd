// memory.go holds the memory profile of a trace and the one-call analysis functions.

package tracemem

import "errors"

// Options tunes an analysis. The zero value is the default.
type Options struct {
	// MaxTimelinePoints bounds the timeline points kept per device; 0 keeps
	// one point per memory event. See Analyze for the downsampling rule.
	MaxTimelinePoints int
}

// MemoryProfile is what a trace's memory events say about memory over time.
type MemoryProfile struct {
	Summary       MemorySummary       `json:"summary"`
	Timeline      []TimelinePoint     `json:"timeline"`       // in replay order
	PeakBreakdown []LiveAllocation    `json:"peak_breakdown"` // live on the peak device at the peak
	ByDevice      []DeviceMemoryStats `json:"by_device"`      // sorted by device
	Anomalies     Anomalies           `json:"anomalies"`
}

// MemorySummary holds the headline figures of a profile.
type MemorySummary struct {
	AllocCount            uint64        `json:"alloc_count"`       // alloc events, duplicates included
	FreeCount             uint64        `json:"free_count"`        // free events, double and unmatched frees included
	TotalAllocBytes       uint64        `json:"total_alloc_bytes"` // bytes of all alloc events (saturating)
	PeakBytes             uint64        `json:"peak_bytes"`        // highest device peak, bytes
	PeakTimestampNs       uint64        `json:"peak_timestamp_ns"` // when PeakBytes was first reached, ns since trace start
	PeakDevice            string        `json:"peak_device"`       // "" when there are no memory events
	PeakByCategory        CategoryBytes `json:"peak_by_category"`  // the peak device's non-zero categories at the peak
	AutogradRetainedBytes uint64        `json:"autograd_retained_bytes"`
	PreexistingBytes      uint64        `json:"preexisting_bytes"` // bytes freed but never allocated in the trace
}

// TimelinePoint is the state of one device after one memory event.
type TimelinePoint struct {
	TimestampNs uint64        `json:"timestamp_ns"` // ns since trace start
	Device      string        `json:"device"`
	LiveBytes   uint64        `json:"live_bytes"`   // bytes live on the device, pre-existing included
	HeapBytes   uint64        `json:"heap_bytes"`   // equal to LiveBytes (TensorFlow's name for it)
	FreeBytes   uint64        `json:"free_bytes"`   // capacity − live; 0 when capacity is unknown or exceeded
	ByCategory  CategoryBytes `json:"by_category"` // every category seen on the device so far
}

// LiveAllocation is one allocation live at the peak.
type LiveAllocation struct {
	TensorID string   `json:"tensor_id"`
	SpanID   string   `json:"span_id"`
	OpName   *string  `json:"op_name"` // nil (null) when the alloc event named none
	Bytes    uint64   `json:"bytes"`
	Shape    []uint64 `json:"shape"`
	DType    string   `json:"dtype"`
	Device   string   `json:"device"`
	Category Category `json:"category"`
}

// DeviceMemoryStats holds one device's figures.
type DeviceMemoryStats struct {
	Device          string `json:"device"`
	CapacityBytes   uint64 `json:"capacity_bytes"` // 0 when unknown
	PeakBytes       uint64 `json:"peak_bytes"`
	PeakTimestampNs uint64 `json:"peak_timestamp_ns"` // first time PeakBytes was reached
	AllocCount      uint64 `json:"alloc_count"`
	FreeCount       uint64 `json:"free_count"`
}

// Anomalies counts memory events that do not pair up.
type Anomalies struct {
	UnmatchedFrees  uint64 `json:"unmatched_frees"`  // frees of tensors never allocated (pre-existing)
	DoubleFrees     uint64 `json:"double_frees"`     // frees of tensors already freed
	DuplicateAllocs uint64 `json:"duplicate_allocs"` // allocs of tensors still live
	SizeMismatches  uint64 `json:"size_mismatches"`  // frees naming another size than the alloc
}

// ErrInvalidOptions is returned (wrapped) for options that make no sense.
var ErrInvalidOptions = errors.New("invalid options")

// AnalyzeMemory is Analyze with default options.
func AnalyzeMemory(doc *TraceDocument) *MemoryProfile {
	p, _ := Analyze(doc, Options{})
	return p
}

// Analyze replays the memory events of doc and returns its memory profile.
func Analyze(doc *TraceDocument, opts Options) (*MemoryProfile, error) {
	panic("not implemented yet")
}
