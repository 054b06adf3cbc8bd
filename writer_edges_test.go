// writer_edges_test.go holds edge cases of WriteJSONL found by mutation testing: each pins a rule no other test checked.

package tracemem

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

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
