// units.go holds the human units of the command's output: 1024-based sizes, milliseconds, aligned tables.

package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Size units, 1024-based.
const (
	kib = 1 << 10
	mib = 1 << 20
	gib = 1 << 30
	tib = 1 << 40
	pib = 1 << 50 // the report's axis only
	eib = 1 << 60
)

// formatBytes renders n bytes in 1024-based units with two decimals:
// "512 B", "1.50 KiB", "12.00 MiB", "3.25 GiB", "1.00 TiB". A value that
// would round to 1024.00 of a unit is shown in the next one (1048575 bytes
// is "1.00 MiB", not "1024.00 KiB").
func formatBytes(n uint64) string {
	if n < kib {
		return strconv.FormatUint(n, 10) + " B"
	}
	in := func(size uint64) string { return strconv.FormatFloat(float64(n)/float64(size), 'f', 2, 64) }
	for _, u := range [...]struct {
		size uint64
		name string
	}{{kib, "KiB"}, {mib, "MiB"}, {gib, "GiB"}} {
		if v := in(u.size); n < u.size*1024 && v != "1024.00" {
			return v + " " + u.name
		}
	}
	return in(tib) + " TiB"
}

// formatMs renders ns since the trace start as milliseconds with six
// decimals, so the nanoseconds are exact.
func formatMs(ns uint64) string {
	return fmt.Sprintf("%d.%06d", ns/1e6, ns%1e6)
}

// formatPercent renders part/whole as a percentage with one decimal; "-"
// when whole is 0.
func formatPercent(part, whole uint64) string {
	if whole == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(part)/float64(whole))
}

// align says how a table column is aligned.
type align uint8

const (
	left align = iota
	right
)

// table is a plain-text table with aligned columns.
type table struct {
	aligns []align
	rows   [][]string // rows[0] is the header
}

func newTable(header ...string) *table {
	t := &table{aligns: make([]align, len(header))}
	t.rows = append(t.rows, header)
	return t
}

// alignRight right-aligns the given columns (numbers).
func (t *table) alignRight(cols ...int) *table {
	for _, c := range cols {
		t.aligns[c] = right
	}
	return t
}

// add adds a row; its cells are made printable.
func (t *table) add(cells ...string) {
	for i, c := range cells {
		cells[i] = printable(c)
	}
	t.rows = append(t.rows, cells)
}

// printable returns s with what a terminal would act on or not show written
// as Go escapes (a newline as \n, ESC as \x1b, an invalid byte as \xff), so
// that a name from a trace stays on its line, in its column, and cannot
// drive the terminal. Other text, non-ASCII letters included, is kept.
func printable(s string) string {
	if utf8.ValidString(s) && !strings.ContainsFunc(s, unprintable) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unprintable(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func unprintable(r rune) bool { return r != ' ' && !strconv.IsPrint(r) }

// displayWidth returns the columns a terminal gives s: 2 for a wide East
// Asian character (CJK, Hangul, fullwidth forms, emoji), 0 for a combining
// mark or a format character, 1 otherwise, as terminals (wcwidth) count
// them, for the main ranges of the Unicode East Asian Width property.
func displayWidth(s string) int {
	w := 0
	for _, r := range s {
		switch {
		case unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf):
		case isWide(r):
			w += 2
		default:
			w++
		}
	}
	return w
}

// wideRanges are the main East Asian Wide and Fullwidth ranges: Hangul
// Jamo, CJK radicals to Yi, Hangul syllables, CJK compatibility ideographs,
// vertical and small forms, fullwidth forms, the emoji blocks, and the
// supplementary ideographic planes. Sorted, not overlapping.
var wideRanges = [][2]rune{
	{0x1100, 0x115F}, {0x2E80, 0x303E}, {0x3041, 0x33FF}, {0x3400, 0x4DBF}, {0x4E00, 0x9FFF},
	{0xA000, 0xA4CF}, {0xA960, 0xA97F}, {0xAC00, 0xD7A3}, {0xF900, 0xFAFF}, {0xFE10, 0xFE19},
	{0xFE30, 0xFE6F}, {0xFF00, 0xFF60}, {0xFFE0, 0xFFE6}, {0x1F300, 0x1F64F}, {0x1F680, 0x1F6FF},
	{0x1F900, 0x1F9FF}, {0x20000, 0x2FFFD}, {0x30000, 0x3FFFD},
}

func isWide(r rune) bool {
	_, found := slices.BinarySearchFunc(wideRanges, r, func(rg [2]rune, r rune) int {
		switch {
		case rg[1] < r:
			return -1
		case rg[0] > r:
			return 1
		}
		return 0
	})
	return found
}

// write writes the table, each line indented by indent, columns two spaces
// apart, trailing spaces trimmed.
func (t *table) write(w io.Writer, indent string) {
	widths := make([]int, len(t.aligns))
	for _, r := range t.rows {
		for i, c := range r {
			widths[i] = max(widths[i], displayWidth(c))
		}
	}
	var b strings.Builder
	for _, r := range t.rows {
		b.Reset()
		b.WriteString(indent)
		for i, c := range r {
			if i > 0 {
				b.WriteString("  ")
			}
			pad := strings.Repeat(" ", widths[i]-displayWidth(c))
			if t.aligns[i] == right {
				b.WriteString(pad + c)
			} else {
				b.WriteString(c + pad)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}
