// example_test.go holds runnable examples of the command, run in-process on a tiny trace.

package main

import (
	"os"
	"strings"
)

// tinyTrace is a training step on one device: a weight, an activation kept
// for backward and a temporary, then the gradient.
const tinyTrace = `{"kind": "meta", "schema": "candle-graph/trace/6", "run_id": "tiny", "correlation_id": "tiny/1", "entrypoint": "demo::step", "phase": "train", "timestamp": "2026-12-01T00:00:00Z", "capture_step": 1, "warmup_steps": 0, "device": "cuda:0", "timing_mode": "host", "tags": {}}
{"kind": "device_memory", "timestamp_ns": 0, "device": "cuda:0", "used_bytes": 0, "free_bytes": 8589934592, "capacity_bytes": 8589934592}
{"kind": "span_start", "id": "step", "name": "train_step", "start_ns": 0, "span_kind": "function", "measured": true}
{"kind": "memory", "timestamp_ns": 1000, "tensor_id": "w", "span_id": "step", "device": "cuda:0", "bytes": 67108864, "action": "alloc", "shape": [4096, 4096], "dtype": "f32", "category": "parameter", "op_name": "load"}
{"kind": "span_start", "id": "fwd", "parent_id": "step", "name": "forward", "start_ns": 2000, "span_kind": "module", "measured": true, "step": "forward"}
{"kind": "span_start", "id": "mm", "parent_id": "fwd", "name": "matmul", "start_ns": 2000, "span_kind": "op", "measured": true}
{"kind": "op", "span_id": "mm", "op_name": "matmul", "inputs": ["w"], "output": "a", "shape": [64, 4096], "dtype": "bf16", "device": "cuda:0", "duration_ns": 900, "timestamp_ns": 2100, "input_storage_bytes": 67108864}
{"kind": "memory", "timestamp_ns": 2100, "tensor_id": "a", "span_id": "mm", "device": "cuda:0", "bytes": 524288, "action": "alloc", "shape": [64, 4096], "dtype": "bf16", "category": "activation", "op_name": "matmul"}
{"kind": "memory", "timestamp_ns": 2500, "tensor_id": "tmp", "span_id": "mm", "device": "cuda:0", "bytes": 33554432, "action": "alloc", "shape": [2048, 4096], "dtype": "f32", "category": "activation", "op_name": "matmul"}
{"kind": "memory", "timestamp_ns": 2900, "tensor_id": "tmp", "span_id": "mm", "device": "cuda:0", "bytes": 33554432, "action": "free", "shape": [2048, 4096], "dtype": "f32", "category": "activation"}
{"kind": "span_end", "id": "mm", "duration_ns": 1000}
{"kind": "span_end", "id": "fwd", "duration_ns": 1000}
{"kind": "span_start", "id": "bwd", "parent_id": "step", "name": "backward", "start_ns": 3000, "span_kind": "module", "measured": true, "step": "backward"}
{"kind": "memory", "timestamp_ns": 3500, "tensor_id": "gw", "span_id": "bwd", "device": "cuda:0", "bytes": 67108864, "action": "alloc", "shape": [4096, 4096], "dtype": "f32", "category": "gradient", "op_name": "matmul_backward"}
{"kind": "memory", "timestamp_ns": 3600, "tensor_id": "a", "span_id": "bwd", "device": "cuda:0", "bytes": 524288, "action": "free", "shape": [64, 4096], "dtype": "bf16", "category": "activation"}
{"kind": "span_end", "id": "bwd", "duration_ns": 1000}
{"kind": "span_end", "id": "step", "duration_ns": 5000}
`

// The summary of a trace read from standard input.
func Example_summary() {
	run([]string{"summary", "-"}, strings.NewReader(tinyTrace), os.Stdout, os.Stderr)
	// Output:
	// == <stdin> ==
	// run tiny (train), entrypoint demo::step, main device cuda:0
	// sizes in 1024-based units (1 KiB = 1024 B, 1 MiB = 1024 KiB, 1 GiB = 1024 MiB, 1 TiB = 1024 GiB); times in ms since the trace start
	//
	// Devices
	//   DEVICE  CAPACITY        PEAK  OF CAPACITY  PEAK AT (ms)  ALLOCS  FREES
	//   cuda:0  8.00 GiB  128.50 MiB         1.6%      0.003500       4      2
	//
	// Peak: 128.50 MiB (134742016 bytes) on cuda:0 at 0.003500 ms
	//
	// Peak by category (cuda:0 at the peak)
	//   CATEGORY         BYTES  SHARE
	//   parameter    64.00 MiB  49.8%
	//   activation  512.00 KiB   0.4%
	//   gradient     64.00 MiB  49.8%
	//
	// Top 3 allocations at the peak (of 3 live on cuda:0)
	//        BYTES  CATEGORY    DTYPE  SHAPE        OP               TENSOR  SPAN PATH
	//    64.00 MiB  gradient    f32    [4096,4096]  matmul_backward  gw      train_step > backward
	//    64.00 MiB  parameter   f32    [4096,4096]  load             w       train_step
	//   512.00 KiB  activation  bf16   [64,4096]    matmul           a       train_step > forward > matmul
	//
	// Pre-existing: 0 B (freed in the trace but allocated before it began; live in every timeline point before its free)
	// Autograd-retained activations: 512.00 KiB (live just before the first memory event of a backward step)
	// Anomalies: 0 unmatched frees, 0 double frees, 0 duplicate allocs, 0 size mismatches
	// Events: 4 allocs, 2 frees, 160.50 MiB allocated in total
}

// The nodes of the call tree with the highest peak.
func Example_nodes() {
	run([]string{"nodes", "--top", "4", "-"}, strings.NewReader(tinyTrace), os.Stdout, os.Stderr)
	// Output:
	// == <stdin> ==
	// top 4 of 5 nodes by peak bytes (sizes 1024-based)
	// peak: most bytes live at once that its subtree allocated, summed over devices;
	// residual: bytes its subtree allocated still live when it ended; bytes: requested by the node (a span: its own ops)
	//
	//         PEAK    RESIDUAL       BYTES  KIND      NODE  PATH
	//   128.50 MiB  128.00 MiB         0 B  function  step  train_step
	//    64.00 MiB   64.00 MiB         0 B  module    bwd   train_step > backward
	//    32.50 MiB  512.00 KiB  512.00 KiB  op span   mm    train_step > forward > matmul
	//    32.50 MiB  512.00 KiB         0 B  module    fwd   train_step > forward
}
