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
// them, by the Unicode East Asian Width property (wideRanges).
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

// wideRanges are the code points whose East Asian Width is W (wide) or F
// (fullwidth) in Unicode 15.0, the version of Go's unicode package: CJK,
// Hangul, kana, fullwidth forms, and the emoji drawn as emoji by default
// (☕, ✅; not 🛠, drawn as text unless a variation selector asks), as
// terminals' wcwidth counts them. Generated from golang.org/x/text/width
// v0.31.0 (each rune's Kind, runs merged), copied rather than imported for
// one table. Sorted, not overlapping, not adjacent.
var wideRanges = [][2]rune{
	{0x1100, 0x115F}, {0x231A, 0x231B}, {0x2329, 0x232A}, {0x23E9, 0x23EC}, {0x23F0, 0x23F0},
	{0x23F3, 0x23F3}, {0x25FD, 0x25FE}, {0x2614, 0x2615}, {0x2648, 0x2653}, {0x267F, 0x267F},
	{0x2693, 0x2693}, {0x26A1, 0x26A1}, {0x26AA, 0x26AB}, {0x26BD, 0x26BE}, {0x26C4, 0x26C5},
	{0x26CE, 0x26CE}, {0x26D4, 0x26D4}, {0x26EA, 0x26EA}, {0x26F2, 0x26F3}, {0x26F5, 0x26F5},
	{0x26FA, 0x26FA}, {0x26FD, 0x26FD}, {0x2705, 0x2705}, {0x270A, 0x270B}, {0x2728, 0x2728},
	{0x274C, 0x274C}, {0x274E, 0x274E}, {0x2753, 0x2755}, {0x2757, 0x2757}, {0x2795, 0x2797},
	{0x27B0, 0x27B0}, {0x27BF, 0x27BF}, {0x2B1B, 0x2B1C}, {0x2B50, 0x2B50}, {0x2B55, 0x2B55},
	{0x2E80, 0x2E99}, {0x2E9B, 0x2EF3}, {0x2F00, 0x2FD5}, {0x2FF0, 0x2FFB}, {0x3000, 0x303E},
	{0x3041, 0x3096}, {0x3099, 0x30FF}, {0x3105, 0x312F}, {0x3131, 0x318E}, {0x3190, 0x31E3},
	{0x31F0, 0x321E}, {0x3220, 0x3247}, {0x3250, 0x4DBF}, {0x4E00, 0xA48C}, {0xA490, 0xA4C6},
	{0xA960, 0xA97C}, {0xAC00, 0xD7A3}, {0xF900, 0xFAFF}, {0xFE10, 0xFE19}, {0xFE30, 0xFE52},
	{0xFE54, 0xFE66}, {0xFE68, 0xFE6B}, {0xFF01, 0xFF60}, {0xFFE0, 0xFFE6}, {0x16FE0, 0x16FE4},
	{0x16FF0, 0x16FF1}, {0x17000, 0x187F7}, {0x18800, 0x18CD5}, {0x18D00, 0x18D08}, {0x1AFF0, 0x1AFF3},
	{0x1AFF5, 0x1AFFB}, {0x1AFFD, 0x1AFFE}, {0x1B000, 0x1B122}, {0x1B132, 0x1B132}, {0x1B150, 0x1B152},
	{0x1B155, 0x1B155}, {0x1B164, 0x1B167}, {0x1B170, 0x1B2FB}, {0x1F004, 0x1F004}, {0x1F0CF, 0x1F0CF},
	{0x1F18E, 0x1F18E}, {0x1F191, 0x1F19A}, {0x1F200, 0x1F202}, {0x1F210, 0x1F23B}, {0x1F240, 0x1F248},
	{0x1F250, 0x1F251}, {0x1F260, 0x1F265}, {0x1F300, 0x1F320}, {0x1F32D, 0x1F335}, {0x1F337, 0x1F37C},
	{0x1F37E, 0x1F393}, {0x1F3A0, 0x1F3CA}, {0x1F3CF, 0x1F3D3}, {0x1F3E0, 0x1F3F0}, {0x1F3F4, 0x1F3F4},
	{0x1F3F8, 0x1F43E}, {0x1F440, 0x1F440}, {0x1F442, 0x1F4FC}, {0x1F4FF, 0x1F53D}, {0x1F54B, 0x1F54E},
	{0x1F550, 0x1F567}, {0x1F57A, 0x1F57A}, {0x1F595, 0x1F596}, {0x1F5A4, 0x1F5A4}, {0x1F5FB, 0x1F64F},
	{0x1F680, 0x1F6C5}, {0x1F6CC, 0x1F6CC}, {0x1F6D0, 0x1F6D2}, {0x1F6D5, 0x1F6D7}, {0x1F6DC, 0x1F6DF},
	{0x1F6EB, 0x1F6EC}, {0x1F6F4, 0x1F6FC}, {0x1F7E0, 0x1F7EB}, {0x1F7F0, 0x1F7F0}, {0x1F90C, 0x1F93A},
	{0x1F93C, 0x1F945}, {0x1F947, 0x1F9FF}, {0x1FA70, 0x1FA7C}, {0x1FA80, 0x1FA88}, {0x1FA90, 0x1FABD},
	{0x1FABF, 0x1FAC5}, {0x1FACE, 0x1FADB}, {0x1FAE0, 0x1FAE8}, {0x1FAF0, 0x1FAF8}, {0x20000, 0x3FFFF},
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
