// edges_test.go holds edge cases of the command's output and flags, found by mutation testing: each pins a rule no other test checked.

package main

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tracemem/tracemem"
)

// TestCmdRuns runs the command on small cases and checks its exit
// status and what stdout and stderr contain.
func TestCmdRuns(t *testing.T) {
	tests := []struct {
		name, reason string
		skip         func() bool
		args         []string
		code         int
		stdout       []string // substrings of stdout
		stderr       []string // substrings of stderr
	}{
		{"output is the trace, not a regular file", "only a regular file is refused as the output being the trace: /dev/null as both is read (an empty trace, exit 1), not a usage error",
			func() bool { _, err := os.Stat("/dev/null"); return err != nil },
			[]string{"export", "--format", "csv", "-o", "/dev/null", "/dev/null"}, 1, nil, []string{"/dev/null: empty trace"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.skip != nil && tc.skip() {
				t.Skip("not on this system")
			}
			r := runCmd(t, nil, tc.args...)
			if r.code != tc.code {
				t.Errorf("%s: exit %d, want %d; stderr:\n%s", tc.reason, r.code, tc.code, r.stderr)
			}
			for _, s := range tc.stdout {
				if !strings.Contains(r.stdout, s) {
					t.Errorf("%s: stdout lacks %q:\n%s", tc.reason, s, r.stdout)
				}
			}
			for _, s := range tc.stderr {
				if !strings.Contains(r.stderr, s) {
					t.Errorf("%s: stderr lacks %q:\n%s", tc.reason, s, r.stderr)
				}
			}
		})
	}
}

// TestPrintableMixed checks printable on text that mixes what it keeps
// with what it escapes.
func TestPrintableMixed(t *testing.T) {
	for _, c := range []struct {
		in, want, reason string
	}{
		{"\ufffd\n", "\ufffd" + `\n`, "a real U+FFFD (valid UTF-8, printable) is kept whole, not shown as the \\xef of its first byte, also when a newline beside it is escaped"},
		{"\ufffd\xff", "\ufffd" + `\xff`, "U+FFFD is kept; the invalid byte after it is shown as its value"},
	} {
		if got := printable(c.in); got != c.want {
			t.Errorf("%s: printable(%q) = %q, want %q", c.reason, c.in, got, c.want)
		}
	}
}

// TestPprofSaturated checks the pprof samples of a peak whose
// counts saturated (a device past 2^63 bytes): the pre-existing samples
// never add up to more than the peak less the breakdown, so no sample of
// nearly 2^63 bytes appears from a subtraction that wrapped.
func TestPprofSaturated(t *testing.T) {
	ev := func(ts uint64, action tracemem.MemoryAction, id string, bytes uint64, c tracemem.Category) tracemem.MemoryEvent {
		return tracemem.MemoryEvent{TimestampNs: ts, Action: action, TensorID: id, Device: "d", Bytes: bytes, Category: c}
	}
	tests := []struct {
		name, reason string
		doc          *tracemem.TraceDocument
		want         []string
	}{
		{"category above what is left", "the peak's other bytes (50) exceed the peak less the breakdown (49, the counts saturated): the other sample is capped at 49 and no sample is left over",
			&tracemem.TraceDocument{Memory: []tracemem.MemoryEvent{
				ev(1, tracemem.ActionAlloc, "a", 1<<63, tracemem.CategoryActivation),
				ev(2, tracemem.ActionAlloc, "b", 1<<63, tracemem.CategoryActivation),
				ev(3, tracemem.ActionFree, "p", 50, tracemem.CategoryOther),
			}},
			[]string{fmt.Sprintf("[1 %d] [activation]", int64(math.MaxInt64)), "[0 49] [other]"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := tracemem.AnalyzeMemory(tc.doc)
			prof, err := buildPprof(&trace{name: "sat", profile: p, tree: newSpanTree()})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range prof.Sample {
				got = append(got, fmt.Sprintf("%v %v", s.Value, s.Label["category"]))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("%s: samples %q, want %q (peak %d, by category %v)", tc.reason, got, tc.want, p.Summary.PeakBytes, p.Summary.PeakByCategory.Bytes)
			}
		})
	}
}

// TestSummaryWriteErrorWins: when some traces fail and stdout
// cannot be written either, the summary says why its output was lost
// (exit 1 and the write error), besides the failed trace.
func TestSummaryWriteErrorWins(t *testing.T) {
	tests := []struct {
		name, reason string
		args         func(t *testing.T) []string
		stderr       []string
	}{
		{"one missing file, stdout full", "the write error is reported, not swallowed by the failed trace's errReported",
			func(t *testing.T) []string {
				return []string{"summary", sample(t), filepath.Join(t.TempDir(), "missing.jsonl")}
			},
			[]string{"missing.jsonl", "no space left on device"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			code := run(tc.args(t), nil, failWriter{}, &stderr)
			if code != 1 {
				t.Errorf("%s: exit %d, want 1", tc.reason, code)
			}
			for _, s := range tc.stderr {
				if !strings.Contains(stderr.String(), s) {
					t.Errorf("%s: stderr lacks %q:\n%s", tc.reason, s, stderr.String())
				}
			}
		})
	}
}

// TestDashesAfterInlineValue: a flag given as -name=value takes no
// argument after it, so a "--" right after it ends the flags, and what
// follows it, "--top" included, names trace files.
func TestDashesAfterInlineValue(t *testing.T) {
	tests := []struct {
		name, reason string
		args         []string // SAMPLE is the committed sample
		code         int
		stderr       []string
	}{
		{"inline value then --", "--top=3 has its value: the -- after it ends the flags, so --top and 1 are files (missing), not a flag setting top to 1",
			[]string{"summary", "--top=3", "--", "SAMPLE", "--top", "1"}, 1, []string{"tracemem: --top:", "tracemem: 1:"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := slices.Clone(tc.args)
			for i, a := range args {
				if a == "SAMPLE" {
					args[i] = sample(t)
				}
			}
			r := runCmd(t, nil, args...)
			if r.code != tc.code {
				t.Errorf("%s: exit %d, want %d; stderr:\n%s", tc.reason, r.code, tc.code, r.stderr)
			}
			for _, s := range tc.stderr {
				if !strings.Contains(r.stderr, s) {
					t.Errorf("%s: stderr lacks %q:\n%s", tc.reason, s, r.stderr)
				}
			}
		})
	}
}

// TestSpanLanesSaturatedEnd: a closed span whose start + duration
// passes 2^64 ends at the largest time when placed on threads, so it does
// not nest in a span that ends before it.
func TestSpanLanesSaturatedEnd(t *testing.T) {
	tests := []struct {
		name, reason string
		spans        []spanInfo
		want         map[string]int32
	}{
		{"end past 2^64", "A starts inside B and ends at 2^64 - 1 (saturated), after B: it overlaps B without nesting, so it takes thread 2, not thread 1 as a wrapped end (9) would",
			[]spanInfo{
				{id: "B", name: "B", startNs: 5, closed: true, durationNs: 95},
				{id: "A", name: "A", startNs: 10, closed: true, durationNs: math.MaxUint64},
			},
			map[string]int32{"B": 1, "A": 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tree := newSpanTree()
			for _, s := range tc.spans {
				tree.addSpan(s)
			}
			_, lanes := spanLanes(tree, 0)
			got := map[string]int32{}
			for i := range tree.len() {
				got[tree.at(i).id] = lanes[i]
			}
			if !maps.Equal(got, tc.want) {
				t.Errorf("%s: threads %v, want %v", tc.reason, got, tc.want)
			}
		})
	}
}

// TestNiceAxisTolerance: a top a few bytes above a tick of a GiB axis
// (less than a billionth of the top) ends the axis at that tick: the
// difference cannot be drawn, and an extra tick would squash the chart.
func TestNiceAxisTolerance(t *testing.T) {
	tests := []struct {
		name, reason string
		top          uint64
		maxBytes     float64
		ticks        int
	}{
		{"3 GiB + 1 byte", "3 GiB + 1 byte over steps of 1 GiB is 3.0000000009 steps: within the tolerance, so 3 steps (0 to 3 GiB), not 4", 3*gib + 1, 3 * gib, 4},
		{"3 GiB + 3 bytes", "3 bytes over is still within a billionth of the top (3.2 bytes)", 3*gib + 3, 3 * gib, 4},
		{"3 GiB + 4 bytes", "4 bytes over is past the tolerance: a fourth step", 3*gib + 4, 4 * gib, 5},
		{"1000 MiB + 1 byte", "within the tolerance of a step of 200 MiB, so 5 steps of it, not 6 (from an audit: 7 ticks)", 1000*mib + 1, 1000 * mib, 6},
		{"10 GiB + 3 bytes", "likewise 5 steps of 2 GiB (it had 7 ticks)", 10*gib + 3, 10 * gib, 6},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ax := niceAxis(tc.top)
			if ax.maxBytes != tc.maxBytes || len(ax.ticks) != tc.ticks {
				t.Errorf("%s: axis to %g bytes with %d ticks, want %g with %d", tc.reason, ax.maxBytes, len(ax.ticks), tc.maxBytes, tc.ticks)
			}
		})
	}
}
