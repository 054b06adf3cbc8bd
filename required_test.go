// required_test.go checks the readers' required fields against the rule the ReadTrace doc states.

package tracemem

import (
	"reflect"
	"strings"
	"testing"
)

// TestRequiredFieldsFollowTags: a field is required exactly when its JSON
// tag in the document types has neither omitempty nor omitzero, except
// category (CategoryOther when absent) and, in JSONL, a span's closed and
// duration_ns (its span_end gives them), as ReadTrace's doc says. The
// masks the readers check are written by hand; this keeps them and the doc
// in step with the types.
func TestRequiredFieldsFollowTags(t *testing.T) {
	for _, tc := range []struct {
		kind   string
		typ    reflect.Type
		names  []string
		mask   uint32
		except []string // optional although the tag does not say so
	}{
		{"meta", reflect.TypeFor[Run](), metaFieldNames, docRunRequired, nil},
		{"document span", reflect.TypeFor[Span](), spanFieldNames, docSpanRequired, nil},
		{"span_start", reflect.TypeFor[Span](), spanFieldNames, requiredFields[recSpanStart], []string{"closed", "duration_ns"}},
		{"op", reflect.TypeFor[Op](), recFieldNames, requiredFields[recOp], nil},
		{"tensor", reflect.TypeFor[Tensor](), recFieldNames, requiredFields[recTensor], []string{"category"}},
		{"memory", reflect.TypeFor[MemoryEvent](), recFieldNames, requiredFields[recMemory], []string{"category"}},
		{"device_memory", reflect.TypeFor[DeviceMemorySample](), recFieldNames, requiredFields[recDeviceMemory], nil},
		{"gradient", reflect.TypeFor[Gradient](), recFieldNames, requiredFields[recGradient], nil},
		{"edge", reflect.TypeFor[Edge](), recFieldNames, requiredFields[recEdge], nil},
	} {
		for f := range tc.typ.Fields() {
			tag := f.Tag.Get("json")
			name, opts, _ := strings.Cut(tag, ",")
			if name == "kind" && tc.typ == reflect.TypeFor[Span]() {
				name = "span_kind" // the document's "kind" is span_kind in the field table
			}
			bit := -1
			for i, n := range tc.names {
				if n == name {
					bit = i
				}
			}
			if bit < 0 {
				t.Errorf("%s: field %s (json %q) is not in the reader's field table", tc.kind, f.Name, name)
				continue
			}
			optional := strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero")
			for _, e := range tc.except {
				optional = optional || e == name
			}
			if required := tc.mask&(1<<bit) != 0; required == optional {
				t.Errorf("%s: %q required = %v, but its tag %q says optional = %v", tc.kind, name, required, tag, optional)
			}
		}
	}
	if requiredFields[recMeta]&(1<<fSchema) == 0 {
		t.Errorf("meta: schema is not required in JSONL")
	}
	if want := uint32(1<<fSpanID | 1<<fSpanDuration); requiredFields[recSpanEnd] != want {
		t.Errorf("span_end: required mask %b, want id and duration_ns (%b)", requiredFields[recSpanEnd], want)
	}
}
