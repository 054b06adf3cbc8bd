// record_test.go tests the helpers of the shared record decoder.

package tracemem

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestDescribe: values named in error messages are shown as written up to
// 40 bytes, cut between characters beyond, and always as valid UTF-8.
func TestDescribe(t *testing.T) {
	for _, tc := range []struct {
		name, in, want, reason string
	}{
		{"empty", "", "nothing", "no value at all"},
		{"number", "-12.5", "-12.5", "a number as written"},
		{"string of 40 bytes", `"` + strings.Repeat("x", 38) + `"`, `string "` + strings.Repeat("x", 38) + `"`, "40 bytes are shown whole, without an ellipsis"},
		{"string of 41 bytes", `"` + strings.Repeat("x", 39) + `"`, `string "` + strings.Repeat("x", 39) + "...", "beyond 40 bytes the value is cut at 40 and says so"},
		{"cut inside a character", `"` + strings.Repeat("é", 30) + `"`, `string "` + strings.Repeat("é", 19) + "...", "byte 40 is the second byte of an é: the cut moves back to the character's start"},
		{"cut inside a 4-byte character", `"` + strings.Repeat("x", 37) + "😀😀", `string "` + strings.Repeat("x", 37) + "...", "an emoji across byte 40 is left out whole"},
		{"no character start near the cut", `"` + strings.Repeat("\xbf", 50), "string \"\ufffd...", "bytes that are not UTF-8 show as U+FFFD, and the cut moves back at most 3 bytes: the quote stays"},
		{"character start 4 bytes back", `"` + strings.Repeat("x", 35) + "y" + strings.Repeat("\xbf", 10), `string "` + strings.Repeat("x", 35) + "y...", "the cut moves back 3 bytes at most, to byte 37, and so keeps the y just before it"},
		{"not UTF-8", "\"\x95\"", "string \"\ufffd\"", "a byte that is not UTF-8 shows as U+FFFD"},
		{"boolean-like", "t\xff\xff", "boolean t\ufffd", "a value starting like a boolean that is not one is still valid UTF-8"},
		{"object", `{"a":1}`, "an object", "objects by name"},
		{"array", `[1]`, "an array", "arrays by name"},
		{"null", `null`, "null", "null by name"},
	} {
		got := describe([]byte(tc.in))
		if got != tc.want {
			t.Errorf("%s: %s: describe(%q) = %q, want %q", tc.name, tc.reason, tc.in, got, tc.want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("%s: describe(%q) = %q is not valid UTF-8", tc.name, tc.in, got)
		}
	}
}

// TestNewU64Slab: the optional integers of a record are carved from slabs of
// 512, one allocation per slab, and a new slab leaves the values handed out
// before it in place (found by mutation: a slab made anew at every call, an
// allocation per value, gave the same answers).
func TestNewU64Slab(t *testing.T) {
	const n = 4 * 512
	ptrs := make([]*uint64, n)
	allocs := testing.AllocsPerRun(2, func() {
		var p valueParser
		for i := range n {
			ptrs[i] = p.newU64(uint64(i))
		}
	})
	if allocs > n/512 {
		t.Errorf("%v allocations for %d values, want %d (one per slab of 512)", allocs, n, n/512)
	}
	for i, p := range ptrs {
		if *p != uint64(i) {
			t.Fatalf("value %d reads %d after later values were carved", i, *p)
		}
	}
}

// TestRecordKindString: a kind out of range is named by its number, not an
// index out of range (found by mutation).
func TestRecordKindString(t *testing.T) {
	for _, c := range []struct {
		k    recordKind
		want string
	}{
		{recNone, ""},
		{recMeta, "meta"},
		{recEdge, "edge"},
		{numRecordKinds, "record(10)"},
	} {
		if got := c.k.String(); got != c.want {
			t.Errorf("recordKind(%d).String() = %q, want %q", c.k, got, c.want)
		}
	}
}
