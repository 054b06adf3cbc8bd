// units_test.go holds the tests of the human units and the aligned tables.

package main

import (
	"bytes"
	"math"
	"strings"
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
		{mib - 1, "1.00 MiB", "what would print as 1024.00 KiB is shown in the next unit"},
		{mib - 6, "1023.99 KiB", "what rounds below 1024.00 stays in its unit"},
		{gib - 1, "1.00 GiB", "the same at each unit's end"},
		{tib - 1, "1.00 TiB", "the same at the last unit's start"},
		{5 * gib, "5.00 GiB", "a value far above a unit is not shown in it"},
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

// TestTableWideCharacters: columns are aligned by the width a terminal gives
// the text: two columns for a CJK character, none for a combining accent.
func TestTableWideCharacters(t *testing.T) {
	tb := newTable("NAME", "BYTES").alignRight(1)
	tb.add("编码器", "1 B")         // 3 wide characters: 6 columns
	tb.add("e\u0301tape", "2 B") // "étape" with a combining accent: 5 columns
	tb.add("decoder", "3 B")
	var b bytes.Buffer
	tb.write(&b, "")
	want := "" +
		"NAME     BYTES\n" +
		"编码器     1 B\n" +
		"e\u0301tape      2 B\n" +
		"decoder    3 B\n"
	if b.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", b.String(), want)
	}
	for _, c := range []struct {
		s    string
		want int
	}{{"abc", 3}, {"编码", 4}, {"한국어", 6}, {"ｆｕｌｌ", 8}, {"e\u0301", 1}, {"a\u200db", 2}, {"🚀", 2}, {"😀", 2}, {"🔥", 2}, {"…", 1}} {
		if got := displayWidth(c.s); got != c.want {
			t.Errorf("displayWidth(%q) = %d, want %d", c.s, got, c.want)
		}
	}
}

func TestPrintable(t *testing.T) {
	for _, c := range []struct {
		in, want, reason string
	}{
		{"aten::mm", "aten::mm", "plain text is kept"},
		{"matmul 数据 résumé", "matmul 数据 résumé", "non-ASCII letters and spaces are kept"},
		{"a\nb", `a\nb`, "a newline would end the table row"},
		{"a\tb", `a\tb`, "a tab would break the column"},
		{"\x1b[31mRED", `\x1b[31mRED`, "an escape sequence would drive the terminal"},
		{"x\x7f", `x\x7f`, "DEL is a control character"},
		{"a\u2028b", `a\u2028b`, "a Unicode line separator"},
		{"bad\xffbyte", `bad\xffbyte`, "a byte that is not UTF-8 is shown as its value"},
		{`back\slash "q"`, `back\slash "q"`, "printable punctuation is kept, not quoted"},
		{"", "", "empty"},
	} {
		if got := printable(c.in); got != c.want {
			t.Errorf("%s: printable(%q) = %q, want %q", c.reason, c.in, got, c.want)
		}
	}
}

// TestNamesStayOnTheirLine: names from a trace with control characters are
// escaped in summary and nodes, so each table row is one line and no escape
// sequence reaches the terminal.
func TestNamesStayOnTheirLine(t *testing.T) {
	const name = "a<b>&\\\"x\\nnext\\u001b[31mRED" // JSON text of the span name
	trace := `{"kind":"meta","schema":"candle-graph/trace/6","run_id":"r\\n1","correlation_id":"c","entrypoint":"e","phase":"train","timestamp":"2026-12-01T00:00:00Z","capture_step":1,"warmup_steps":0,"device":"cuda:0","timing_mode":"host","tags":{}}
{"kind":"span_start","id":"s","name":"` + name + `","start_ns":0,"span_kind":"function","measured":true}
{"kind":"op","span_id":"s","op_name":"` + name + `","inputs":[],"output":"t","shape":[256],"dtype":"u8","device":"cuda:0","duration_ns":1,"timestamp_ns":1,"input_storage_bytes":0}
{"kind":"memory","timestamp_ns":1,"tensor_id":"t\\tid","span_id":"s","op_name":"` + name + `","device":"cuda:0","bytes":1024,"action":"alloc","shape":[1024],"dtype":"u8","category":"other"}
{"kind":"span_end","id":"s","duration_ns":2}
`
	path := writeFile(t, t.TempDir(), "esc.jsonl", []byte(trace))
	for _, args := range [][]string{{"summary", path}, {"nodes", path}} {
		got := runCmd(t, nil, args...)
		if got.code != 0 {
			t.Fatalf("%v: exit %d: %s", args, got.code, got.stderr)
		}
		if strings.ContainsAny(got.stdout, "\x1b\t") || strings.Contains(got.stdout, "\nnext") {
			t.Errorf("%v: a control character of a name reached the output:\n%s", args, got.stdout)
		}
		if !strings.Contains(got.stdout, `a<b>&"x\nnext\x1b[31mRED`) {
			t.Errorf("%v: the escaped name is not in the output:\n%s", args, got.stdout)
		}
	}
	if got := runCmd(t, nil, "summary", path); !strings.Contains(got.stdout, `run r\n1 (train)`) || !strings.Contains(got.stdout, `t\tid`) {
		t.Errorf("summary: the run id and tensor id are not escaped:\n%s", got.stdout)
	}
}

// TestTableWideRangeEnds checks that the last code point of a wide range,
// the characters of the U+30000 plane, and wide characters outside the main
// blocks take two columns, text-style emoji one, and that the columns after
// them stay aligned.
func TestTableWideRangeEnds(t *testing.T) {
	cases := []struct {
		name   string
		s      string
		want   int
		reason string
	}{
		{"last Hangul syllable", "\uD7A3", 2, "U+D7A3 ends the Hangul syllables range and is wide"},
		{"first Hangul syllable", "\uAC00", 2, "U+AC00 starts it"},
		{"last CJK ideograph", "\u9FFF", 2, "U+9FFF ends the CJK unified ideographs"},
		{"plane 3 start", "\U00030000", 2, "U+30000 starts the tertiary ideographic plane"},
		{"plane 3 end", "\U0003FFFD", 2, "U+3FFFD ends it"},
		{"plane 2 end", "\U0002FFFD", 2, "U+2FFFD ends the supplementary ideographic plane"},
		// From a check of the columns: the table had the main blocks only.
		{"hot beverage", "\u2615", 2, "an emoji outside the emoji blocks, wide by default (EAW W)"},
		{"star", "\u2B50", 2, "likewise in Miscellaneous Symbols and Arrows"},
		{"check mark", "\u2705", 2, "likewise in Dingbats"},
		{"melting face", "\U0001FAE0", 2, "an emoji of Unicode 14, in Symbols and Pictographs Extended-A"},
		{"ringed planet", "\U0001FA90", 2, "likewise"},
		{"squared CJK", "\U0001F21A", 2, "Enclosed Ideographic Supplement"},
		{"mahjong tile", "\U0001F004", 2, "the one wide mahjong tile"},
		{"Tangut", "\U00017000", 2, "Tangut ideographs"},
		{"kana supplement", "\U0001B001", 2, "Kana Supplement"},
		{"hammer and wrench", "\U0001F6E0", 1, "an emoji drawn as text by default (EAW N), inside the range the table took whole"},
		{"desktop computer", "\U0001F5A5", 1, "likewise"},
		{"candle", "\U0001F56F", 1, "likewise"},
		{"wide unassigned", "\U0003FFFF", 2, "the ideographic planes are wide to their end, assigned or not, as Unicode's data says"},
	}
	for i := 1; i < len(wideRanges); i++ {
		if wideRanges[i][0] <= wideRanges[i-1][1]+1 || wideRanges[i][0] > wideRanges[i][1] {
			t.Errorf("wideRanges[%d] = %U..%U after %U..%U: want sorted ranges, not overlapping or adjacent", i, wideRanges[i][0], wideRanges[i][1], wideRanges[i-1][0], wideRanges[i-1][1])
		}
	}
	for _, c := range cases {
		if got := displayWidth(c.s); got != c.want {
			t.Errorf("%s: %s: displayWidth(%U) = %d, want %d", c.name, c.reason, []rune(c.s)[0], got, c.want)
		}
	}
	tb := newTable("NODE", "PATH")
	tb.add("\uD7A3\uD7A3", "x") // 4 columns
	tb.add("\U00030000\U00030001", "y")
	tb.add("abcd", "z")
	tb.add("\u2615\u2705", "v")           // 4 columns: two emoji outside the emoji blocks
	tb.add("\U0001F6E0\U0001F5A5ab", "w") // 4 columns: two text-style emoji and two letters
	var b bytes.Buffer
	tb.write(&b, "")
	want := "" +
		"NODE  PATH\n" +
		"\uD7A3\uD7A3  x\n" +
		"\U00030000\U00030001  y\n" +
		"abcd  z\n" +
		"\u2615\u2705  v\n" +
		"\U0001F6E0\U0001F5A5ab  w\n"
	if b.String() != want {
		t.Errorf("table:\n%s\nwant (every PATH at column 7):\n%s", b.String(), want)
	}
}
