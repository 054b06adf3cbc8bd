// jsonscan_test.go tests the skips over JSON already validated.

package tracemem

import "testing"

// TestSkipValue: a skip ends just past its value; inside strings, a quote
// ends the string only after an even number of backslashes (found by
// mutation: counting them forward took `"a\\"` for an unended string, and
// no test had a string ending in an escaped backslash).
func TestSkipValue(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     int // index just past the value at 0
		reason   string
	}{
		{"plain string", `"ab",`, 4, "no backslash"},
		{"escaped quote", `"a\"b",`, 6, "one backslash: the quote is the string's"},
		{"escaped backslash", `"a\\",`, 5, "two backslashes: the quote ends the string"},
		{"three backslashes", `"a\\\"",`, 7, "an escaped backslash, then an escaped quote"},
		{"only backslashes", `"\\\\",`, 6, "backslashes from the opening quote on"},
		{"object", `{"k":"}\\"},1`, 11, "a brace inside a string does not end the object"},
		{"array", `[1,[2],"]"] `, 11, "nested arrays and a bracket in a string"},
		{"number", `12.5e3,`, 6, "a scalar ends at a delimiter"},
		{"literal at the end", `true`, 4, "or at the end of the input"},
	} {
		if got := skipValue([]byte(c.in), 0); got != c.want {
			t.Errorf("%s: skipValue(%q) = %d, want %d: %s", c.name, c.in, got, c.want, c.reason)
		}
	}
}

// TestCharDesc: errors quote printable ASCII, space included, and give other
// bytes in hex (found by mutation: a space shown as byte 0x20 went unseen).
func TestCharDesc(t *testing.T) {
	for _, c := range []struct {
		b    byte
		want string
	}{
		{' ', `' '`},
		{'~', `'~'`},
		{'\'', `'\''`},
		{0x1f, "byte 0x1f"},
		{0x7f, "byte 0x7f"},
		{0xff, "byte 0xff"},
	} {
		if got := charDesc(c.b); got != c.want {
			t.Errorf("charDesc(%#x) = %s, want %s", c.b, got, c.want)
		}
	}
}
