// Package traceformat holds the rule that tells a trace's format from the top-level keys of its first object: the one rule the library's readers and the command's sniffing share.
package traceformat

// Format is a trace format.
type Format uint8

const (
	None     Format = iota // a key that decides nothing
	JSONL                  // candle-graph JSONL: the first object is a record
	Document               // a candle-graph document
	Chrome                 // a PyTorch profiler (Chrome) trace
)

// OfKey returns the format that a top-level key of a trace's first object
// decides: the first key that decides one is the format. "schema" decides
// nothing, as both candle forms have it; a first object with "schema" and
// no deciding key is a document.
func OfKey(k string) Format {
	switch k {
	case "kind":
		return JSONL
	case "traceEvents":
		return Chrome
	case "run", "spans", "ops", "tensors", "memory", "device_memory", "gradients", "edges":
		return Document
	}
	return None
}
