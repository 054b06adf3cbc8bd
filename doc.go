// Package tracemem turns memory traces of ML workloads into answers: how
// much memory each device used over time, what was live at the peak and who
// allocated it, and how much each module, function and op of the model's
// call tree requested, peaked at and left behind.
//
// # Input formats
//
// ReadTrace and ReadTraceFile read any of these, gzip-compressed or not,
// recognised by content rather than by file name:
//
//   - the candle-graph JSONL stream (schema candle-graph/trace/6, and /7):
//     one JSON object a line, discriminated by "kind" (meta, span_start,
//     span_end, op, tensor, memory, device_memory, gradient, edge);
//   - the candle-graph document form: one JSON object with the sections of
//     TraceDocument;
//   - PyTorch profiler traces (Chrome trace JSON with [memory] events, as
//     torch.profiler writes with profile_memory=True); see ReadChromeTrace.
//
// # The JSONL records
//
// Each line of a JSONL trace is one JSON object, a record, whose "kind"
// names what it holds. Its other members are the fields of the document
// type it fills, named by that type's JSON tags, except as the table says:
//
//	kind           fills                   members
//	meta           TraceDocument.Run       "schema" and the fields of Run
//	span_start     a Span                  Span's, its Kind as "span_kind"; no closed or duration_ns
//	span_end       the Span of that id     "id" and "duration_ns"; the span is then Closed
//	op             an Op                   Op's
//	tensor         a Tensor                Tensor's
//	memory         a MemoryEvent           MemoryEvent's
//	device_memory  a DeviceMemorySample    DeviceMemorySample's
//	gradient       a Gradient              Gradient's
//	edge           an Edge                 Edge's
//
// meta comes first, once. Records of kinds not in the table are skipped
// (later schemas add kinds), as are members the types do not have (later
// producers add fields), so a misspelt kind or optional field is skipped,
// not reported. ReadTrace has the rules: which fields are required, what
// null means, the names schema /7 gave some fields. A trace with one span
// and one allocation in it:
//
//	{"kind":"meta","schema":"candle-graph/trace/6","run_id":"r","correlation_id":"r/1","entrypoint":"train","phase":"train","timestamp":"2026-12-01T00:00:00Z","capture_step":1,"warmup_steps":0,"device":"cuda:0","timing_mode":"host","tags":{}}
//	{"kind":"span_start","id":"s","name":"forward","start_ns":0,"span_kind":"module","measured":true,"step":"forward"}
//	{"kind":"memory","timestamp_ns":5,"tensor_id":"t","span_id":"s","op_name":"matmul","device":"cuda:0","bytes":4096,"action":"alloc","shape":[32,32],"dtype":"f32","category":"activation"}
//	{"kind":"span_end","id":"s","duration_ns":10}
//
// WriteJSONL writes this form.
//
// # Analyses
//
// AnalyzeMemory and Analyze replay a document's memory events into a
// MemoryProfile: a timeline per device, the peak and what was live at it,
// per-device figures and the events that do not pair up; its PeakBetween
// gives a device's peak within a window of time (a training step's span,
// say). NodeMemoryMetrics attributes memory to every span and op of the call
// tree. The rules follow the TensorFlow Memory Profile and PyTorch's memory
// timeline; Analyze and NodeMemoryMetrics spell them out. Validate reports
// what the analyses work around in a document (span cycles, duplicate span
// ids, span ids that are also op node ids). A SpanTree finds spans by id and
// gives each span's path from its root by the same rules: the module path of
// an allocation at the peak, say.
//
// For traces larger than memory, AnalyzeStream reads a JSONL trace record by
// record into an Analyzer, which the one-call functions also use: there is
// one replay. An Analyzer can also be fed by a profiler as events happen, or
// the lines of a JSONL trace as it is written (AddJSONLine), and asked for a
// profile at any moment, or, cheaply, for the summary, a device's figures
// and its live bytes (Summary, DeviceStats, LiveBytes: what a budget check
// asks after each record). A replay in one pass needs records in the order
// they happen (memory in time order, each span before the records that name
// it); a record that comes too late to give the answers of the whole trace
// is an error wrapping ErrOutOfOrder, never a different answer. The default
// Options keep a timeline point per memory event and a record per span and
// op; for memory bounded by what is live, set
// Options{MaxTimelinePoints: 1000, SkipNodeMetrics: true} (when the node
// metrics are not needed).
//
// # Units
//
// Sizes are bytes and times are nanoseconds since the trace started, in
// uint64 unless a field says otherwise. Byte sums saturate instead of
// wrapping. The analysis counts a device's live bytes relative to its
// pre-existing memory in 64-bit signed integers: its figures are exact while
// every allocation, and a device's live and pre-existing bytes, stay below
// 2⁶³ (8 EiB); beyond that they saturate and are no longer exact.
//
// # Ownership
//
// A document made by a reader shares the backing memory of repeated strings
// and shapes between its records: treat them as immutable. Profiles, node
// metric maps and documents returned to the caller are the caller's to
// keep, but a profile's peak breakdown shares the shapes and op names of
// the events it lists (with the document they came from, and between
// profiles of it): treat those as immutable too, and copy one to change
// it. The Analyzer keeps references to the strings and shapes of the
// records it is given, which must not change afterwards; of a line given
// to AddJSONLine it keeps nothing (the buffer may be reused).
//
// Analyze, AnalyzeMemory, NodeMemoryMetrics, NewSpanTree (and the tree it
// returns), Validate, WriteJSON and WriteJSONL only read the document (and
// NodeMemoryMetrics its map): any number of them may run on one document at
// once, from any goroutines, while nothing changes it; so may PeakBetween on
// one profile. The functions keep no shared state: the readers,
// AnalyzeStream and the others may run at once on separate inputs. An
// Analyzer is for one goroutine at a time, but separate Analyzers may be
// used from separate goroutines. A document passed to any of them must not
// be nil.
//
// On Linux, the readers and Analyze have a second goroutine map in the
// pages of their big buffers (a few MB and up) while they write them, since
// faulting fresh memory in can cost more than writing it; that goroutine
// has ended when the call returns, and with GOMAXPROCS 1 there is none.
// Where the kernel gives huge pages only to memory that asks for them
// (transparent huge pages in "madvise" mode), buffers of 8 MB and more ask
// while they are written and are marked against them afterwards
// (MADV_NOHUGEPAGE, which stays on that heap memory: in that mode it gets
// none unasked anyway). GODEBUG=disablethp=1 turns this off.
package tracemem
