// errors_test.go holds the tests of the sentinel errors: each condition matches its own and no other.

package tracemem

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestSentinelsDistinct: each error a caller tests for matches exactly the
// sentinels its condition names (from a mutation test: ErrMissingMeta made
// an alias of ErrUnknownFormat went unseen, as no test asked for it).
func TestSentinelsDistinct(t *testing.T) {
	sentinels := map[string]error{"ErrEmptyTrace": ErrEmptyTrace, "ErrUnknownFormat": ErrUnknownFormat,
		"ErrMissingMeta": ErrMissingMeta, "ErrUnsupportedSchema": ErrUnsupportedSchema, "ErrInvalidJSON": ErrInvalidJSON,
		"ErrOutOfOrder": ErrOutOfOrder, "ErrInvalidOptions": ErrInvalidOptions, "ErrInvalidEvent": ErrInvalidEvent}
	read := func(in string) func() error {
		return func() error { _, err := ReadTrace(strings.NewReader(in)); return err }
	}
	for _, c := range []struct {
		name, reason string
		err          func() error
		want         []string
	}{
		{"empty", "no record at all", read(" \n"), []string{"ErrEmptyTrace"}},
		{"not JSON", "no trace, and not JSON either", read("hello\n"), []string{"ErrUnknownFormat", "ErrInvalidJSON"}},
		{"no meta first", "a JSONL stream must open with meta", read(tRootEnd + "\n"), []string{"ErrMissingMeta"}},
		{"schema", "a schema before /6", read(strings.Replace(tMeta, "trace/6", "trace/5", 1) + "\n"), []string{"ErrUnsupportedSchema"}},
		{"bad JSON", "a record that is not JSON", read(tMeta + "\n{]\n"), []string{"ErrInvalidJSON"}},
		{"out of order", "a memory event stamped before the one before, fed to an Analyzer", func() error {
			a := NewAnalyzer(Options{})
			a.Add(&MemoryEvent{TimestampNs: 2, TensorID: "a", Device: "d"})
			return a.Add(&MemoryEvent{TimestampNs: 1, TensorID: "b", Device: "d"})
		}, []string{"ErrOutOfOrder"}},
		{"options", "a negative number of points", func() error { _, err := Analyze(&TraceDocument{}, Options{MaxTimelinePoints: -1}); return err },
			[]string{"ErrInvalidOptions"}},
		{"event", "an action out of range", func() error {
			_, err := Analyze(&TraceDocument{Memory: []MemoryEvent{{TensorID: "a", Device: "d", Action: 9}}}, Options{})
			return err
		}, []string{"ErrInvalidEvent"}},
	} {
		err := c.err()
		for name, s := range sentinels {
			if want := slices.Contains(c.want, name); errors.Is(err, s) != want {
				t.Errorf("%s (%s): %v: errors.Is %s = %v, want %v", c.name, c.reason, err, name, !want, want)
			}
		}
	}
}
