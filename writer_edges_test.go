// writer_edges_test.go holds edge cases of WriteJSONL found by mutation testing: each pins a rule no other test checked.

package tracemem

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestWriteJSONLTieBreaks checks the order of span_start and
// span_end records that tie on time: by depth (the depth of a span whose
// parent link closes a cycle is 0, as the analyses cut it), then by id.
func TestWriteJSONLTieBreaks(t *testing.T) {
	tests := []struct {
		name, reason string
		doc          *TraceDocument
		want         []string
	}{
		{"span_starts by id", "roots that start at one time are written in id order, not the reverse",
			&TraceDocument{Spans: []Span{
				{ID: "a", StartNs: 0, DurationNs: 10, Closed: true},
				{ID: "b", StartNs: 0, DurationNs: 20, Closed: true},
			}},
			[]string{"meta", "span_start a", "span_start b", "span_end a", "span_end b"}},
		{"span_ends by id", "roots that end at one time end in id order, not the reverse",
			&TraceDocument{Spans: []Span{
				{ID: "a", StartNs: 0, DurationNs: 10, Closed: true},
				{ID: "b", StartNs: 5, DurationNs: 5, Closed: true},
			}},
			[]string{"meta", "span_start a", "span_start b", "span_end a", "span_end b"}},
		{"cut span is a root", "the span whose parent link closes a cycle is cut there: depth 0, so it ties with the other roots by id, before its child",
			&TraceDocument{Spans: []Span{
				{ID: "a", ParentID: "b", StartNs: 0, DurationNs: 10, Closed: true},
				{ID: "b", ParentID: "a", StartNs: 0, DurationNs: 10, Closed: true},
				{ID: "c", StartNs: 0, DurationNs: 10, Closed: true},
			}},
			[]string{"meta", "span_start b", "span_start c", "span_start a", "span_end a", "span_end b", "span_end c"}},
		{"span end saturates", "a span whose start + duration passes the largest uint64 ends at the largest time, after every record, not at the wrapped sum",
			&TraceDocument{
				Spans:  []Span{{ID: "a", StartNs: 10, DurationNs: math.MaxUint64, Closed: true}},
				Memory: []MemoryEvent{{TimestampNs: 20, TensorID: "t", SpanID: "a", Device: "d", Bytes: 1}},
			},
			[]string{"meta", "span_start a", "memory 20", "span_end a"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tc.doc.WriteJSONL(&buf); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, wrRecords(t, buf.String())); diff != "" {
				t.Errorf("%s: records (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

// TestWriteJSONLTagsSorted checks that the meta record lists the
// tags sorted by key, whatever the map's iteration order: the output of
// one document is always the same bytes.
func TestWriteJSONLTagsSorted(t *testing.T) {
	tags := map[string]string{}
	var want []string
	for i := range 12 {
		k := fmt.Sprintf("k%02d", i)
		tags[k] = "v"
		want = append(want, fmt.Sprintf("%q:\"v\"", k))
	}
	wantTags := `"tags":{` + strings.Join(want, ",") + `}`
	for range 5 { // map order is random: an unsorted writer would be caught
		var buf bytes.Buffer
		doc := &TraceDocument{Run: Run{Tags: tags}}
		if err := doc.WriteJSONL(&buf); err != nil {
			t.Fatal(err)
		}
		meta, _, _ := strings.Cut(buf.String(), "\n")
		if !strings.Contains(meta, wantTags) {
			t.Fatalf("tags are written sorted by key, so the output is the same every time:\n got %s\nwant %s", meta, wantTags)
		}
	}
}

// TestWriteJSONLFirstErrorWins checks that a value that cannot be
// written is the error returned, even when the records after it would
// fill the buffer and meet a failing writer: nothing is written after the
// first error.
func TestWriteJSONLFirstErrorWins(t *testing.T) {
	tests := []struct {
		name, reason string
		doc          *TraceDocument
		want         string
	}{
		{"invalid utf8 then many tensors", "the records after a bad value are not written, so a failing writer cannot replace its error",
			func() *TraceDocument {
				d := &TraceDocument{Memory: []MemoryEvent{{TensorID: "t\xff"}}}
				for i := range 2000 { // well over the 64 KiB buffer
					d.Tensors = append(d.Tensors, Tensor{TensorID: fmt.Sprintf("tensor-%04d", i), SpanID: "s", DType: "f32", Device: "cuda:0"})
				}
				return d
			}(),
			`memory: tensor_id: .*UTF-8`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.doc.WriteJSONL(&rdFailWriter{n: 0})
			if err == nil || !regexpMatch(tc.want, err.Error()) {
				t.Errorf("%s: error %v, want match %q", tc.reason, err, tc.want)
			}
		})
	}
}
