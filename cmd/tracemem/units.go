// units.go holds the human units of the command's output: 1024-based sizes, milliseconds, aligned tables.

package main

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Size units, 1024-based.
const (
	kib = 1 << 10
	mib = 1 << 20
	gib = 1 << 30
	tib = 1 << 40
)

// formatBytes renders n bytes in 1024-based units with two decimals:
// "512 B", "1.50 KiB", "12.00 MiB", "3.25 GiB", "1.00 TiB".
func formatBytes(n uint64) string {
	switch {
	case n < kib:
		return fmt.Sprintf("%d B", n)
	case n < mib:
		return fmt.Sprintf("%.2f KiB", float64(n)/kib)
	case n < gib:
		return fmt.Sprintf("%.2f MiB", float64(n)/mib)
	case n < tib:
		return fmt.Sprintf("%.2f GiB", float64(n)/gib)
	}
	return fmt.Sprintf("%.2f TiB", float64(n)/tib)
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

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

// write writes the table, each line indented by indent, columns two spaces
// apart, trailing spaces trimmed.
func (t *table) write(w io.Writer, indent string) {
	widths := make([]int, len(t.aligns))
	for _, r := range t.rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
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
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			if t.aligns[i] == right {
				b.WriteString(pad + c)
			} else {
				b.WriteString(c + pad)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}
