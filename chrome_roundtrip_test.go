// chrome_roundtrip_test.go renders candle-graph traces as PyTorch Chrome traces and checks that importing them gives back the same memory profile.

package tracemem

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tracemem/tracemem/internal/gen"
)

// chromeRender chooses what renderChrome writes.
type chromeRender struct {
	Addr   bool // args.Addr on memory events
	Totals bool // args Total Allocated / Total Reserved (running totals per device, from 0)
	// Capacity, when set, gives deviceProperties for these cuda devices.
	Capacity map[string]uint64
}

// chromeBaseNs is added to every time so that ts look like real epoch
// microseconds with a fractional part.
const chromeBaseNs = 1_700_000_000_123_456_789

// chromeDeviceArgs returns the c10 device type and index of a device name.
func chromeDeviceArgs(t testing.TB, dev string) (int, int) {
	name, idx, ok := strings.Cut(dev, ":")
	id := -1
	if ok {
		n, err := strconv.Atoi(idx)
		if err != nil {
			t.Fatalf("device %q", dev)
		}
		id = n
	}
	for typ, n := range c10DeviceTypes {
		if n == name {
			return typ, id
		}
	}
	t.Fatalf("device %q has no c10 type", dev)
	return 0, 0
}

// appendMicros appends ns as microseconds with three decimals.
func appendMicros(b []byte, ns uint64) []byte {
	b = strconv.AppendUint(b, ns/1000, 10)
	b = append(b, '.')
	f := ns % 1000
	if f < 100 {
		b = append(b, '0')
	}
	if f < 10 {
		b = append(b, '0')
	}
	return strconv.AppendUint(b, f, 10)
}

// renderChrome writes doc as a PyTorch profiler trace, the way Kineto lays
// it out: spans as cpu_op (kind op) or user_annotation duration events and
// memory events as [memory] instant events, all on one host thread, memory
// events in record order. With Addr, every tensor id gets an address while
// it is in use: an address is reused only once its tensor was freed for the
// last time, a free of a tensor that has no address gets one never used
// (a pre-existing block), and a tensor keeps its address across double
// frees and duplicate allocs, so the importer sees the same pairing. It
// returns the smallest time written (ns, without chromeBaseNs): the
// importer's times are relative to it.
func renderChrome(t testing.TB, doc *TraceDocument, o chromeRender) ([]byte, uint64) {
	var b []byte
	b = append(b, `{"schemaVersion": 1, "deviceProperties": [`...)
	first := true
	for dev, c := range o.Capacity {
		typ, id := chromeDeviceArgs(t, dev)
		if typ != 1 {
			continue
		}
		if !first {
			b = append(b, ", "...)
		}
		first = false
		b = fmt.Appendf(b, `{"id": %d, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": %d, "computeMajor": 9}`, id, c)
	}
	b = append(b, "],\n\"traceEvents\": [\n"...)
	minTs := uint64(1<<64 - 1)
	sep := false
	for i := range doc.Spans {
		s := &doc.Spans[i]
		if sep {
			b = append(b, ",\n"...)
		}
		sep = true
		cat := "user_annotation"
		if s.Kind == SpanOp {
			cat = "cpu_op"
		}
		b = append(b, `  {"ph": "X", "cat": "`...)
		b = append(b, cat...)
		b = append(b, `", "name": `...)
		b = strconv.AppendQuote(b, s.Name)
		b = append(b, `, "pid": 4242, "tid": 4242, "ts": `...)
		b = appendMicros(b, s.StartNs+chromeBaseNs)
		b = append(b, `, "dur": `...)
		b = appendMicros(b, s.DurationNs)
		b = append(b, `, "args": {"External id": `...)
		b = strconv.AppendInt(b, int64(i+1), 10)
		b = append(b, `, "Record function id": 0, "Ev Idx": `...)
		b = strconv.AppendInt(b, int64(i), 10)
		if s.Kind == SpanOp {
			b = append(b, `, "Input Dims": [[8, 1024, 4096], [4096, 4096], []], "Input type": ["float", "float", "Scalar"], "Input Strides": [[4194304, 4096, 1], [4096, 1], []]`...)
		}
		b = append(b, "}}"...)
		minTs = min(minTs, s.StartNs)
		if s.Kind == SpanOp { // the runtime call and the kernel it launched: ignored
			b = append(b, `,
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 4242, "tid": 4242, "ts": `...)
			b = appendMicros(b, s.StartNs+chromeBaseNs)
			b = append(b, `, "dur": 3.5, "args": {"External id": `...)
			b = strconv.AppendInt(b, int64(i+1), 10)
			b = append(b, `, "cbid": 211, "correlation": `...)
			b = strconv.AppendInt(b, int64(i), 10)
			b = append(b, `}},
  {"ph": "X", "cat": "kernel", "name": "ampere_sgemm_128x64_tn", "pid": 0, "tid": 7, "ts": `...)
			b = appendMicros(b, s.StartNs+chromeBaseNs+5000)
			b = append(b, `, "dur": 12.25, "args": {"queued": 0, "device": 0, "context": 1, "stream": 7, "correlation": `...)
			b = strconv.AppendInt(b, int64(i), 10)
			b = append(b, `, "registers per thread": 128, "shared memory": 24576, "blocks per SM": 4.5, "warps per SM": 18, "grid": [256, 1, 1], "block": [128, 1, 1], "est. achieved occupancy %": 25}}`...)
		}
	}
	last := make(map[string]int, len(doc.Memory))
	for i := range doc.Memory {
		last[doc.Memory[i].TensorID] = i
	}
	type tensorAddr struct {
		addr uint64
		live bool
	}
	addrs := make(map[string]*tensorAddr)
	var pool []uint64
	next := uint64(0x7f3a00000000)
	fresh := func() uint64 { next += 512; return next }
	totals := make(map[string]int64)
	for i := range doc.Memory {
		m := &doc.Memory[i]
		typ, id := chromeDeviceArgs(t, m.Device)
		bytes := int64(m.Bytes)
		if m.Action == ActionFree {
			bytes = -bytes
		}
		ta := addrs[m.TensorID]
		switch {
		case ta != nil:
		case m.Action == ActionAlloc && len(pool) > 0:
			ta = &tensorAddr{addr: pool[len(pool)-1]}
			pool = pool[:len(pool)-1]
		default: // a new block, or a free of a block never seen: an address never used
			ta = &tensorAddr{addr: fresh()}
		}
		addrs[m.TensorID] = ta
		ta.live = m.Action == ActionAlloc
		if last[m.TensorID] == i && !ta.live {
			pool = append(pool, ta.addr)
		}
		totals[m.Device] += bytes
		b = append(b, ",\n"...)
		b = append(b, `  {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 4242, "tid": 4242, "ts": `...)
		b = appendMicros(b, m.TimestampNs+chromeBaseNs)
		b = append(b, `, "args": {`...)
		if o.Totals {
			b = append(b, `"Total Reserved": `...)
			b = strconv.AppendInt(b, totals[m.Device]+2<<20, 10)
			b = append(b, `, "Total Allocated": `...)
			b = strconv.AppendInt(b, totals[m.Device], 10)
			b = append(b, `, `...)
		}
		b = append(b, `"Bytes": `...)
		b = strconv.AppendInt(b, bytes, 10)
		if o.Addr {
			b = append(b, `, "Addr": `...)
			b = strconv.AppendUint(b, ta.addr, 10)
		}
		b = append(b, `, "Device Id": `...)
		b = strconv.AppendInt(b, int64(id), 10)
		b = append(b, `, "Device Type": `...)
		b = strconv.AppendInt(b, int64(typ), 10)
		b = append(b, `, "Ev Idx": `...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, "}}"...)
		minTs = min(minTs, m.TimestampNs)
	}
	b = append(b, "\n],\n\"traceName\": \"roundtrip.pt.trace.json\"}\n"...)
	if minTs == 1<<64-1 {
		minTs = 0
	}
	return b, minTs
}

// genDoc generates and reads a candle-graph trace.
func genDoc(t testing.TB, cfg gen.Config) *TraceDocument {
	t.Helper()
	var buf bytes.Buffer
	if _, err := gen.Write(&buf, cfg); err != nil {
		t.Fatal(err)
	}
	doc, err := ReadTrace(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// profileView is what the round trip must preserve, times rebased.
type profileView struct {
	PeakBytes, PeakTs      uint64
	PeakDevice             string
	AllocCount, FreeCount  uint64
	TotalAlloc, Preexist   uint64
	Anomalies              Anomalies
	ByDevice               []DeviceMemoryStats
	Timeline               map[string][][3]uint64 // device → (ts, live, free) per point
	BreakdownBytes, Points int
}

func viewProfile(p *MemoryProfile, minTs uint64) profileView {
	v := profileView{
		PeakBytes: p.Summary.PeakBytes, PeakTs: p.Summary.PeakTimestampNs - minTs, PeakDevice: p.Summary.PeakDevice,
		AllocCount: p.Summary.AllocCount, FreeCount: p.Summary.FreeCount, TotalAlloc: p.Summary.TotalAllocBytes,
		Preexist: p.Summary.PreexistingBytes, Anomalies: p.Anomalies, Timeline: map[string][][3]uint64{},
		BreakdownBytes: len(p.PeakBreakdown), Points: len(p.Timeline),
	}
	for _, d := range p.ByDevice {
		d.PeakTimestampNs -= minTs
		v.ByDevice = append(v.ByDevice, d)
	}
	for _, tp := range p.Timeline {
		v.Timeline[tp.Device] = append(v.Timeline[tp.Device], [3]uint64{tp.TimestampNs - minTs, tp.LiveBytes, tp.FreeBytes})
	}
	return v
}

// TestChromeRoundTrip renders generated candle-graph traces as Chrome traces
// and checks that import + AnalyzeMemory gives back the original's peak,
// per-device stats, anomalies and timeline (time, live and free bytes per
// device, every point).
func TestChromeRoundTrip(t *testing.T) {
	n := 20000
	if testing.Short() {
		n = 3000
	}
	for _, tc := range []struct {
		name, reason string
		cfg          gen.Config
		render       chromeRender
	}{
		{"addr totals", "Kineto >= 1.10 form; the totals agree, so no baseline", gen.Config{Seed: 1, MemoryEvents: n, Devices: 3}, chromeRender{Addr: true, Totals: true}},
		{"addr anomalies", "double frees, duplicate allocs and pre-existing frees survive address identity", gen.Config{Seed: 2, MemoryEvents: n, Devices: 2, Anomalies: true}, chromeRender{Addr: true}},
		{"addr-less", "size pairing frees the same bytes when every free names a live block", gen.Config{Seed: 3, MemoryEvents: n, Devices: 2}, chromeRender{Totals: true}},
		{"addr-less single device", "older traces without totals", gen.Config{Seed: 4, MemoryEvents: n}, chromeRender{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			orig := genDoc(t, tc.cfg)
			want := AnalyzeMemory(orig)
			tc.render.Capacity = map[string]uint64{}
			for _, d := range want.ByDevice {
				tc.render.Capacity[d.Device] = d.CapacityBytes
			}
			data, minTs := renderChrome(t, orig, tc.render)
			doc, err := ReadChromeTrace(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("ReadChromeTrace: %v", err)
			}
			got := AnalyzeMemory(doc)
			if d := cmp.Diff(viewProfile(want, minTs), viewProfile(got, 0)); d != "" {
				t.Errorf("%s: profile differs after the round trip (-candle +chrome):\n%s", tc.reason, d)
			}
			if len(doc.Memory) != len(orig.Memory) {
				t.Errorf("%d memory events, want %d", len(doc.Memory), len(orig.Memory))
			}
			if tc.render.Totals && doc.Run.Tags["total_allocated_mismatches"] != "" {
				t.Errorf("totals mismatch: %s", doc.Run.Tags["total_allocated_mismatches"])
			}
		})
	}
}
