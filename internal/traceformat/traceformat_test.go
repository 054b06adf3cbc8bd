package traceformat

import "testing"

func TestOfKey(t *testing.T) {
	cases := []struct {
		key    string
		want   Format
		reason string
	}{
		{"kind", JSONL, "every JSONL record has a kind"},
		{"traceEvents", Chrome, "a PyTorch (Chrome) trace object"},
		{"run", Document, "only a document has sections"},
		{"spans", Document, "a section"},
		{"ops", Document, "a section"},
		{"tensors", Document, "a section"},
		{"memory", Document, "a section"},
		{"device_memory", Document, "a section"},
		{"gradients", Document, "a section"},
		{"edges", Document, "a section"},
		{"schema", None, "both candle forms have it: a JSONL meta record too"},
		{"Kind", None, "keys are case-sensitive"},
		{"displayTimeUnit", None, "other Chrome keys decide nothing"},
		{"", None, "an empty key"},
	}
	for _, c := range cases {
		if got := OfKey(c.key); got != c.want {
			t.Errorf("OfKey(%q) = %d, want %d: %s", c.key, got, c.want, c.reason)
		}
	}
}
