// document.go holds the trace document model: a candle-graph trace assembled in memory.

package tracemem

// Schema versions the readers accept.
const (
	SchemaV6 = "candle-graph/trace/6"
	SchemaV7 = "candle-graph/trace/7"
)

// TraceDocument is a whole trace held in memory: the document form of a
// candle-graph/trace/6 or /7 trace. Field names in JSON are those of the
// producer's document form.
//
// Strings that repeat across records (devices, dtypes, span ids, op names)
// share their backing memory when the document was made by a reader, so a
// document is cheap to hold; treat them as immutable.
type TraceDocument struct {
	Schema       string               `json:"schema"`
	Run          Run                  `json:"run"`
	Spans        []Span               `json:"spans"`         // sorted by ID when made by a reader
	Ops          []Op                 `json:"ops"`           // in record order
	Tensors      []Tensor             `json:"tensors"`       // in record order
	Memory       []MemoryEvent        `json:"memory"`        // in record order (not necessarily by time)
	DeviceMemory []DeviceMemorySample `json:"device_memory"` // in record order
	Gradients    []Gradient           `json:"gradients"`
	Edges        []Edge               `json:"edges"`
}

// Run describes the traced run. Its fields are the producer's, kept as
// written; of them the analysis reads none (the command prints RunID,
// Phase, Entrypoint and Device, and Tags["source"] tells a PyTorch trace).
type Run struct {
	RunID         string            `json:"run_id"`         // the run's id, e.g. "example"
	CorrelationID string            `json:"correlation_id"` // ties the trace to the producer's other records of the run, e.g. "example/update-1"
	Entrypoint    string            `json:"entrypoint"`     // the function the capture wrapped, e.g. "example::step"
	Phase         Phase             `json:"phase"`
	Timestamp     string            `json:"timestamp"`    // ISO-8601, as the producer wrote it
	CaptureStep   uint64            `json:"capture_step"` // the step (iteration) captured, as the producer counts them
	WarmupSteps   uint64            `json:"warmup_steps"` // steps run before the capture
	Device        string            `json:"device"`       // the run's main device, e.g. "cuda:0"
	TimingMode    TimingMode        `json:"timing_mode"`
	Tags          map[string]string `json:"tags"`                     // free-form; a reader leaves it nil when empty
	CandleVersion string            `json:"candle_version,omitempty"` // "" when absent
}

// Span is one node of the call tree: a module, function or op that ran.
type Span struct {
	ID         string   `json:"id"`
	ParentID   string   `json:"parent_id,omitempty"` // "" for a root
	Name       string   `json:"name"`
	Kind       SpanKind `json:"kind"`
	Measured   bool     `json:"measured"`    // as the producer wrote it: whether it timed the span; nothing here reads it
	StartNs    uint64   `json:"start_ns"`    // ns since trace start
	Closed     bool     `json:"closed"`      // whether the span ended within the trace
	DurationNs uint64   `json:"duration_ns"` // ns; 0 when not closed
	Step       Step     `json:"step,omitzero"`
}

// EndNs returns the time the span ended (ns since trace start), and true
// for a closed span. For a span that never closed it returns false, with
// StartNs + DurationNs (StartNs for a span a reader made, whose DurationNs is
// then 0); the analyses end such a span with the trace.
func (s *Span) EndNs() (uint64, bool) {
	return addSat(s.StartNs, s.DurationNs), s.Closed
}

// Op is one timed operation inside a span.
type Op struct {
	SpanID            string   `json:"span_id"`
	OpName            string   `json:"op_name"`
	Inputs            []string `json:"inputs"`           // input tensor ids
	Output            string   `json:"output,omitempty"` // output tensor id; "" when none
	Shape             []uint64 `json:"shape"`            // output shape; empty for a scalar, or when unknown (a PyTorch trace gives none)
	DType             string   `json:"dtype"`            // "" when unknown (a PyTorch trace)
	Device            string   `json:"device"`           // "" when unknown (a PyTorch trace)
	DurationNs        uint64   `json:"duration_ns"`
	TimestampNs       uint64   `json:"timestamp_ns"`            // ns since trace start
	StorageBytes      *uint64  `json:"storage_bytes,omitempty"` // output bytes; nil when absent
	InputStorageBytes uint64   `json:"input_storage_bytes"`     // bytes of all inputs
}

// Bytes returns the op's output bytes: StorageBytes when set, else the dense
// size of Shape × DType (0 for an unknown dtype).
func (o *Op) Bytes() uint64 { return ResolveBytes(o.StorageBytes, o.Shape, o.DType) }

// Tensor is a tensor snapshot recorded in a span.
type Tensor struct {
	SpanID       string   `json:"span_id"`
	TensorID     string   `json:"tensor_id"`
	Shape        []uint64 `json:"shape"`
	DType        string   `json:"dtype"`
	Device       string   `json:"device"`
	RequiresGrad bool     `json:"requires_grad"`
	StorageBytes *uint64  `json:"storage_bytes,omitempty"` // nil when absent
	Category     Category `json:"category"`
}

// MemoryEvent is one allocation or free.
type MemoryEvent struct {
	TimestampNs uint64       `json:"timestamp_ns"` // ns since trace start
	TensorID    string       `json:"tensor_id"`
	SpanID      string       `json:"span_id"`           // the span that made the event
	OpName      string       `json:"op_name,omitempty"` // "" when absent
	Device      string       `json:"device"`
	Bytes       uint64       `json:"bytes"`
	Action      MemoryAction `json:"action"`
	Shape       []uint64     `json:"shape"`    // empty for a scalar, or when unknown (a PyTorch trace gives none)
	DType       string       `json:"dtype"`    // "" when unknown (a PyTorch trace)
	Category    Category     `json:"category"` // CategoryOther when absent
}

// DeviceMemorySample is a device-level reading of the allocator or driver
// (cudaMemGetInfo style).
type DeviceMemorySample struct {
	TimestampNs   uint64  `json:"timestamp_ns"` // ns since trace start
	Device        string  `json:"device"`
	UsedBytes     uint64  `json:"used_bytes"`
	FreeBytes     uint64  `json:"free_bytes"`
	ReservedBytes *uint64 `json:"reserved_bytes,omitempty"` // nil when absent
	CapacityBytes *uint64 `json:"capacity_bytes,omitempty"` // nil when absent; 0 means unknown (see Analyze for how a device's capacity is chosen)
}

// Gradient is a fact about a parameter's gradient, kept as the producer
// wrote it (the analysis does not read gradients).
type Gradient struct {
	EventID string        `json:"event_id"` // the producer's id of the fact
	Root    string        `json:"root"`     // the module whose parameters Key names
	Key     string        `json:"key"`      // parameter key under Root
	State   GradientState `json:"state"`
	Norm    *float64      `json:"norm,omitempty"` // nil when absent
}

// Edge is a call edge between two spans, kept as the producer wrote it (the
// analysis reads the call tree from Span.ParentID, not from edges).
type Edge struct {
	FromSpan   string `json:"from_span"`   // the caller's span id
	ToSpan     string `json:"to_span"`     // the callee's span id
	DurationNs uint64 `json:"duration_ns"` // ns, the producer's figure for the edge
}
