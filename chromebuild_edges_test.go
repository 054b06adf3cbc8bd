// chromebuild_edges_test.go holds edge cases of the document ReadChromeTrace builds, found by mutation testing.

package tracemem

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestChromeBuild checks rules of the document ReadChromeTrace
// builds, on small hand-made traces.
func TestChromeBuild(t *testing.T) {
	memOn := func(tid, ts int) string {
		return fmt.Sprintf(`{"name":"[memory]","ph":"i","ts":%d,"pid":1,"tid":%d,"args":{"Bytes":8,"Device Type":1,"Device Id":0}}`, ts, tid)
	}
	tenThreads := func() []string {
		var ev []string
		for i := range 10 {
			ev = append(ev, memOn(i+1, i+1))
		}
		return ev
	}
	tests := []struct {
		name, reason string
		events       []string
		check        func(*TraceDocument) string
	}{
		{"ten thread roots", "root ids are padded to the digits of the last one: thread:0 to thread:9 for ten roots, not thread:00",
			tenThreads(),
			func(d *TraceDocument) string {
				var ids []string
				for _, s := range d.Spans {
					ids = append(ids, s.ID)
				}
				want := []string{"thread:0", "thread:1", "thread:2", "thread:3", "thread:4", "thread:5", "thread:6", "thread:7", "thread:8", "thread:9"}
				return cmp.Diff(want, ids)
			}},
		{"equal times keep file order", "memory events of one time stay in file order when the file is not in time order (a stable sort): 40 allocations of sizes 1..40 at one time after one at a later time",
			func() []string {
				ev := []string{`{"name":"[memory]","ph":"i","ts":100,"pid":1,"tid":1,"args":{"Bytes":1000,"Device Type":1,"Device Id":0}}`}
				for i := range 40 {
					ev = append(ev, fmt.Sprintf(`{"name":"[memory]","ph":"i","ts":1,"pid":1,"tid":1,"args":{"Bytes":%d,"Device Type":1,"Device Id":0}}`, i+1))
				}
				return ev
			}(),
			func(d *TraceDocument) string {
				var got, want []uint64
				for i := range 40 {
					want = append(want, uint64(i+1))
				}
				want = append(want, 1000)
				for _, m := range d.Memory {
					got = append(got, m.Bytes)
				}
				return cmp.Diff(want, got)
			}},
		{"negative totals clamp to 0", "a negative Total Allocated or Total Reserved (a broken trace) gives a sample of 0 bytes, not one that wrapped to 2^64 - n",
			[]string{`{"name":"[memory]","ph":"i","ts":1,"pid":1,"tid":1,"args":{"Bytes":8,"Device Type":1,"Device Id":0,"Total Allocated":-5,"Total Reserved":-7}}`},
			func(d *TraceDocument) string {
				if len(d.DeviceMemory) != 1 {
					return fmt.Sprintf("%d samples, want 1", len(d.DeviceMemory))
				}
				s := d.DeviceMemory[0]
				if s.ReservedBytes == nil {
					return "no reserved bytes, want 0"
				}
				if s.UsedBytes != 0 || *s.ReservedBytes != 0 {
					return fmt.Sprintf("used %d, reserved %d, want 0 and 0", s.UsedBytes, *s.ReservedBytes)
				}
				return ""
			}},
		{"free of the most negative Bytes", "Bytes -2^63 is a free of 2^63 - 1 bytes (negated with saturation), not of 2^63 (the negation wrapped)",
			[]string{`{"name":"[memory]","ph":"i","ts":1,"pid":1,"tid":1,"args":{"Bytes":-9223372036854775808,"Device Type":1,"Device Id":0}}`},
			func(d *TraceDocument) string {
				if len(d.Memory) != 1 || d.Memory[0].Action != ActionFree || d.Memory[0].Bytes != math.MaxInt64 {
					return fmt.Sprintf("memory %+v, want one free of %d bytes", d.Memory, uint64(math.MaxInt64))
				}
				return ""
			}},
		{"eleven spans", "span ids are zero-padded to the digits of the last: 00 to 10 for eleven spans, so that they sort as numbers",
			func() []string {
				var ev []string
				for i := range 11 {
					ev = append(ev, fmt.Sprintf(`{"name":"s%d","ph":"X","cat":"user_annotation","ts":%d,"dur":1,"pid":1,"tid":1}`, i, 10*i))
				}
				return ev
			}(),
			func(d *TraceDocument) string {
				var ids []string
				for _, s := range d.Spans {
					ids = append(ids, s.ID)
				}
				return cmp.Diff([]string{"00", "01", "02", "03", "04", "05", "06", "07", "08", "09", "10"}, ids)
			}},
		{"no op spans, ops nil", "a trace without op spans has nil Ops, as the readers leave every empty list",
			[]string{memOn(1, 1), `{"name":"step","ph":"X","cat":"user_annotation","ts":0,"dur":10,"pid":1,"tid":1}`},
			func(d *TraceDocument) string {
				if d.Ops != nil {
					return fmt.Sprintf("Ops = %#v, want nil", d.Ops)
				}
				return ""
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc := mustReadChrome(t, []byte("["+strings.Join(tc.events, ",")+"]"))
			if msg := tc.check(doc); msg != "" {
				t.Errorf("%s:\n%s", tc.reason, msg)
			}
		})
	}
}
