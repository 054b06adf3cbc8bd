// units_test.go holds the tests of the human units and the aligned tables.

package main

import (
	"bytes"
	"math"
	"testing"
)

func TestFormatBytes(t *testing.T) {
	cases := []struct {
		n      uint64
		want   string
		reason string
	}{
		{0, "0 B", "zero in bytes"},
		{1023, "1023 B", "below 1 KiB stays in bytes"},
		{1024, "1.00 KiB", "1024-based: 1024 B is 1 KiB, not 1.02 kB"},
		{1536, "1.50 KiB", "two decimals"},
		{mib - 1, "1024.00 KiB", "just below 1 MiB rounds in KiB"},
		{mib, "1.00 MiB", "1 MiB = 1024 KiB"},
		{1_000_000_000, "953.67 MiB", "a decimal gigabyte is below 1 GiB"},
		{gib, "1.00 GiB", "1 GiB = 1024 MiB"},
		{80 * gib, "80.00 GiB", "a GPU's capacity"},
		{3 * tib, "3.00 TiB", "TiB from 1024 GiB on"},
		{math.MaxUint64, "16777216.00 TiB", "the largest count does not overflow"},
	}
	for _, c := range cases {
		if got := formatBytes(c.n); got != c.want {
			t.Errorf("%s: formatBytes(%d) = %q, want %q", c.reason, c.n, got, c.want)
		}
	}
}

func TestFormatMs(t *testing.T) {
	cases := []struct {
		ns     uint64
		want   string
		reason string
	}{
		{0, "0.000000", "the trace start"},
		{4, "0.000004", "nanoseconds are kept"},
		{2_048_197, "2.048197", "ms with six decimals"},
		{12_345_000_000, "12345.000000", "seconds in ms"},
	}
	for _, c := range cases {
		if got := formatMs(c.ns); got != c.want {
			t.Errorf("%s: formatMs(%d) = %q, want %q", c.reason, c.ns, got, c.want)
		}
	}
	if got := formatPercent(1, 0); got != "-" {
		t.Errorf("formatPercent of an unknown whole = %q, want -", got)
	}
	if got := formatPercent(1, 3); got != "33.3%" {
		t.Errorf("formatPercent(1, 3) = %q", got)
	}
}

// TestTable checks column alignment: left by default, right where asked,
// widths from the widest cell (runes, not bytes), no trailing spaces.
func TestTable(t *testing.T) {
	tb := newTable("NAME", "BYTES", "PATH").alignRight(1)
	tb.add("a", "1.00 KiB", "x > y")
	tb.add("longer…", "12 B", "")
	var b bytes.Buffer
	tb.write(&b, "  ")
	want := "" +
		"  NAME        BYTES  PATH\n" +
		"  a        1.00 KiB  x > y\n" +
		"  longer…      12 B\n"
	if b.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", b.String(), want)
	}
}
