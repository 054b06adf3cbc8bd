// tracebuild_test.go holds the builders of the small JSONL traces that the command's tests write inline.

package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// testMeta is the meta record the tests' inline traces begin with.
const testMeta = `{"kind": "meta", "schema": "candle-graph/trace/6", "run_id": "example", "correlation_id": "example/update-1", "entrypoint": "example::step", "phase": "train", "timestamp": "2026-12-01T00:00:00Z", "capture_step": 1, "warmup_steps": 0, "device": "cuda:0", "timing_mode": "host", "tags": {}}`

// jsonlTrace returns a JSONL trace: testMeta, then records, one a line.
func jsonlTrace(records ...string) string {
	return testMeta + "\n" + strings.Join(records, "\n") + "\n"
}

// rootTrace returns a JSONL trace whose records lie in one span "root"
// (named "root", from 0 ns for 1 s).
func rootTrace(records ...string) string {
	return jsonlTrace(append(append([]string{startRec("root", "root", "", 0)}, records...), endRec("root", 1e9))...)
}

// writeTrace writes rootTrace(records...) as the file name in a new
// temporary directory and returns its path.
func writeTrace(t *testing.T, name string, records ...string) string {
	t.Helper()
	return writeFile(t, t.TempDir(), name, []byte(rootTrace(records...)))
}

// jsonString returns s as a JSON string.
func jsonString(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// startRec is the start of a function span; parent "" for a root.
func startRec(id, name, parent string, startNs uint64) string {
	p := ""
	if parent != "" {
		p = `, "parent_id": ` + jsonString(parent)
	}
	return fmt.Sprintf(`{"kind": "span_start", "id": %s, "name": %s, "start_ns": %d, "span_kind": "function", "measured": true%s}`, jsonString(id), jsonString(name), startNs, p)
}

// endRec is the end of span id.
func endRec(id string, durationNs uint64) string {
	return fmt.Sprintf(`{"kind": "span_end", "id": %s, "duration_ns": %d}`, jsonString(id), durationNs)
}

// memRec is a memory record (action "alloc" or "free") of bytes of f32,
// shape [bytes/4].
func memRec(ts uint64, action, tensor, span, device string, bytes uint64, category string) string {
	return fmt.Sprintf(`{"kind": "memory", "timestamp_ns": %d, "tensor_id": %s, "span_id": %s, "device": %s, "bytes": %d, "action": %q, "shape": [%d], "dtype": "f32", "category": %q}`,
		ts, jsonString(tensor), jsonString(span), jsonString(device), bytes, action, bytes/4, category)
}

// opRec is an op record of span on cuda:0 whose output is tensor, of bytes
// bytes (u8, shape [bytes]).
func opRec(ts uint64, span, name, tensor string, bytes uint64) string {
	return fmt.Sprintf(`{"kind": "op", "span_id": %s, "op_name": %s, "inputs": [], "output": %s, "shape": [%d], "dtype": "u8", "device": "cuda:0", "duration_ns": 1, "timestamp_ns": %d, "input_storage_bytes": 0}`,
		jsonString(span), jsonString(name), jsonString(tensor), bytes, ts)
}

// capRec is a device_memory record giving the capacity of device.
func capRec(ts uint64, device string, capacity uint64) string {
	return fmt.Sprintf(`{"kind": "device_memory", "timestamp_ns": %d, "device": %s, "used_bytes": 0, "free_bytes": %d, "capacity_bytes": %d}`, ts, jsonString(device), capacity, capacity)
}
