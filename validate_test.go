// validate_test.go holds the tests of TraceDocument.Validate's checks of memory events.

package tracemem

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestValidateMemoryEvents: Validate reports each memory event whose action
// or category is out of range, naming the event's index and the value, in
// document order, and nothing for values in range.
func TestValidateMemoryEvents(t *testing.T) {
	ok := MemoryEvent{TensorID: "t", Action: ActionFree, Category: CategoryOptimizer}
	tests := []struct {
		name, reason string
		memory       []MemoryEvent
		want         []string
	}{
		{"in range", "the last action and the last category are valid", []MemoryEvent{ok, ok}, nil},
		{"action just past free", "2 is the first action out of range; the event is memory[1]",
			[]MemoryEvent{ok, {Action: 2}}, []string{`memory[1]: tensor "" at 0 ns: invalid action 2`}},
		{"category just past the last", "NumCategories is the first category out of range; the event is memory[2]",
			[]MemoryEvent{ok, ok, {Category: NumCategories}}, []string{`memory[2]: tensor "" at 0 ns: invalid category 5`}},
		{"both in one event, then another", "every problem is reported, each with its own index",
			[]MemoryEvent{ok, {TimestampNs: 4, TensorID: "t1", Action: 200, Category: 9}, ok, {Action: 3}},
			[]string{`memory[1]: tensor "t1" at 4 ns: invalid action 200`, `memory[1]: tensor "t1" at 4 ns: invalid category 9`, `memory[3]: tensor "" at 0 ns: invalid action 3`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, err := range unjoin((&TraceDocument{Memory: tc.memory}).Validate()) {
				got = append(got, err.Error())
				if !errors.Is(err, ErrInvalidEvent) {
					t.Errorf("%v does not match ErrInvalidEvent", err)
				}
				// The error's fields say what its text says.
				var ee *EventError
				if !errors.As(err, &ee) {
					t.Errorf("%v is not an *EventError", err)
				} else if ee.Index < 0 || ee.Index >= len(tc.memory) {
					t.Errorf("%v: index %d is not one of the %d events", err, ee.Index, len(tc.memory))
				} else if ev := tc.memory[ee.Index]; ee.TensorID != ev.TensorID || ee.TimestampNs != ev.TimestampNs {
					t.Errorf("%v: %+v does not name memory[%d] (%+v)", err, *ee, ee.Index, ev)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s: Validate (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}
