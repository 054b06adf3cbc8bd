package lenient

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// reference is the rule read byte by byte over the whole input: outside
// strings, a word (a maximal run of letters, digits, '_' and '.') that is
// nan, inf or infinity in any case becomes `""` and spaces, with the sign
// right before it, and so does the word N with /A after it and no word
// byte after that, with its sign; inside strings, a backslash that does not start one of
// the escapes JSON has becomes '/', and a byte below 0x20 a space.
func reference(in []byte) []byte {
	const wordBytes = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_."
	isWord := func(c byte) bool { return strings.IndexByte(wordBytes, c) >= 0 }
	out := bytes.Clone(in)
	inStr := false
	sign := -2 // position of the last sign outside strings
	for i := 0; i < len(out); i++ {
		c := out[i]
		if inStr {
			switch {
			case c == '"':
				inStr = false
			case c < 0x20:
				out[i] = ' '
			case c == '\\':
				rest := string(out[i+1 : min(i+6, len(out))]) // what an escape can span
				switch {
				case rest != "" && strings.IndexByte(`"\\/bfnrt`, rest[0]) >= 0:
					i++
				case len(rest) >= 5 && rest[0] == 'u' && strings.Trim(rest[1:5], "0123456789abcdefABCDEF") == "":
					i += 5
				default:
					out[i] = '/'
				}
			}
			continue
		}
		switch {
		case c == '"':
			inStr = true
			continue
		case c == '-' || c == '+':
			sign = i
			continue
		case !isWord(c):
			continue
		}
		j := i
		for j < len(out) && isWord(out[j]) {
			j++
		}
		if w := strings.ToLower(string(out[i:j])); w == "nan" || w == "inf" || w == "infinity" {
			s := i
			if sign == i-1 {
				s--
			}
			copy(out[s:j], `""`+strings.Repeat(" ", j-s-2))
		} else if string(out[i:j]) == "N" && strings.HasPrefix(string(out[j:]), "/A") && (j+2 == len(out) || !isWord(out[j+2])) {
			s := i
			if sign == i-1 {
				s--
			}
			j += 2
			copy(out[s:j], `""`+strings.Repeat(" ", j-s-2))
		}
		i = j - 1
	}
	return out
}

// readChunks reads in through a Reader whose source returns the given chunk
// sizes in turn (then the rest), and reads it back with reads of size rd.
func readChunks(t testing.TB, in []byte, chunks []int, rd int) []byte {
	t.Helper()
	f := NewReader(&chunkReader{b: in, sizes: chunks})
	var out []byte
	buf := make([]byte, rd)
	for {
		n, err := f.Read(buf)
		out = append(out, buf[:n]...)
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

type chunkReader struct {
	b     []byte
	sizes []int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := len(p)
	if len(r.sizes) > 0 {
		n = min(n, r.sizes[0])
		r.sizes = r.sizes[1:]
	}
	n = copy(p, r.b[:min(n, len(r.b))])
	r.b = r.b[n:]
	return n, nil
}

func TestReader(t *testing.T) {
	for _, tc := range []struct {
		name, in, want, why string
	}{
		{"nan", `[NaN,nan,NAN]`, `["" ,"" ,"" ]`, "any case"},
		{"inf", `{"a":inf,"b":-inf,"c":+Inf}`, `{"a":"" ,"b":""  ,"c":""  }`, "the sign is part of the token"},
		{"infinity", `[Infinity, -Infinity]`, `[""      , ""       ]`, "Python's json spelling"},
		{"in strings", `["nan","x\"inf",NaN]`, `["nan","x\"inf","" ]`, "strings are never changed, escaped quotes included"},
		{"escaped backslash", `["a\\",nan]`, `["a\\","" ]`, `\\ does not escape the closing quote`},
		{"longer words", `[nanx, inf1, xnan, infinityy, nan.5, null, true]`, `[nanx, inf1, xnan, infinityy, nan.5, null, true]`, "nan and inf inside a longer word are left for the decoder to reject"},
		{"numbers", `[1e-5,-1.5,+2]`, `[1e-5,-1.5,+2]`, "numbers pass through"},
		{"sign in a string", `["-"inf]`, `["-""" ]`, "a sign inside a string is not the token's"},
		{"at the end", `inf`, `"" `, "a token that ends the input"},
		{"invalid", `[nan nan}`, `[""  "" }`, "invalid JSON stays invalid"},
		{"N/A", `{"a":N/A,"b":[N/A],"c":"N/A"}`, `{"a":"" ,"b":["" ],"c":"N/A"}`, "N/A as a value, not in a string"},
		{"not N/A", `[N/Ax,xN/A,N/a,n/A,N /A]`, `[N/Ax,xN/A,N/a,n/A,N /A]`, "only N/A as a whole word, in that case"},
		{"signed N/A", `[-N/A,+N/A]`, `[""  ,""  ]`, "the sign is part of the token, as a non-finite number's"},
		{"N/A at the end", `N/A`, `"" `, "a token that ends the input"},
		{"Windows path", `["C:\Users\me\x.py"]`, `["C:/Users/me/x.py"]`, "a backslash that starts no escape becomes a slash"},
		{"valid escapes", `["\"\\\/\b\f\n\r\t\u00e9\uABCD"]`, `["\"\\\/\b\f\n\r\t\u00e9\uABCD"]`, `escapes JSON has stay, also in a path (\t reads as a tab)`},
		{"bad \\u", `["\u12x","\uzzzz","C:\users","\u00g0"]`, `["/u12x","/uzzzz","C:/users","/u00g0"]`, `\u without four hex digits is no escape`},
		{"backslash outside strings", `[1,\x]`, `[1,\x]`, "outside strings it is left for the decoder"},
		{"control characters", "[\"a\tb\x00c\x1f\",\t1]", `["a b c ",` + "\t1]", "in strings they become spaces; outside they are white space or invalid"},
		{"cut escape", `["ab\`, `["ab/`, "a backslash that the input's end cuts off starts no escape"},
		{"cut \\u", `["\u00e`, `["/u00e`, `nor does \u and fewer than four hex digits`},
		// Found by mutation testing:
		{"escape at the end", `["a\n`, `["a\n`, "a valid escape that the input's end follows stays"},
		{"hex f", `["\u00ff\u00FF"]`, `["\u00ff\u00FF"]`, "f and F are hex digits"},
		{"z", `[nanz,infZ]`, `[nanz,infZ]`, "z and Z are letters: nan and inf before them are part of a longer word"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := readChunks(t, []byte(tc.in), nil, 1<<10); string(got) != tc.want {
				t.Errorf("%s:\n got %s\nwant %s", tc.why, got, tc.want)
			}
			if got := reference([]byte(tc.in)); string(got) != tc.want {
				t.Errorf("reference: %s:\n got %s\nwant %s", tc.why, got, tc.want)
			}
		})
	}
}

// TestReaderChunks splits inputs at every position: the result is the
// reference's, however the source hands the bytes over and however they
// are read back.
func TestReaderChunks(t *testing.T) {
	inputs := []string{
		`{"a":[NaN,-Infinity,"x\\\"nan",inf],"b":-inf,"c":nanx,"d":1e-5,"e":"\\"}`,
		`[-Infinity,+inf,"\\\\",NaN,123456789012nan,nan]`,
		`{"n":"C:\Users\u00e9\u12\t","o":N/A,"p":N/Ax,"q":"` + "\t\x01" + `","r":"\\"}`,
		`[1234567890123]`, // a word cut by a chunk, with one byte after it at the end
	}
	// A Read that never returns fails the test here, not at go test's
	// timeout.
	defer time.AfterFunc(time.Minute, func() { panic("TestReaderChunks: a Read did not return in a minute") }).Stop()
	for _, in := range inputs {
		want := reference([]byte(in))
		for cut := range len(in) + 1 {
			for _, rd := range []int{1, 3, 1 << 10} {
				if got := readChunks(t, []byte(in), []int{cut, 1, 2}, rd); !bytes.Equal(got, want) {
					t.Fatalf("cut at %d, reads of %d:\n got %s\nwant %s", cut, rd, got, want)
				}
			}
		}
		if got, err := io.ReadAll(NewReader(iotest.OneByteReader(strings.NewReader(in)))); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("one byte at a time: %s, %v", got, err)
		}
	}
}

// TestReaderLong reads inputs bigger than the buffer, with long strings,
// long words and many escapes across its end.
func TestReaderLong(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	pieces := []string{`"`, `\`, `\\`, `\"`, `nan`, `-inf`, `Infinity`, ` `, `,`, `1`, `x`, `-`, `null`,
		`N/A`, `N`, `/A`, `\U`, `\u00e9`, `\u12`, `u`, `0`, "\t", "\x00"}
	for range 20 {
		var b strings.Builder
		for b.Len() < 3*bufSize {
			p := pieces[r.IntN(len(pieces))]
			for range r.IntN(3) + 1 {
				b.WriteString(p)
			}
		}
		in := []byte(b.String())
		want := reference(in)
		if got := readChunks(t, in, []int{r.IntN(bufSize), r.IntN(100), r.IntN(bufSize)}, 4096); !bytes.Equal(got, want) {
			t.Fatal("differs from the reference")
		}
	}
}

// TestReaderValid: valid JSON with tokens in value positions reads as
// valid JSON, and JSON without them passes unchanged.
func TestReaderValid(t *testing.T) {
	in := `{"a":[NaN,1,-Infinity,{"b":inf}],"c":"nan"}`
	got, err := io.ReadAll(NewReader(strings.NewReader(in)))
	if err != nil {
		t.Fatal(err)
	}
	if !jsontext.Value(got).IsValid() {
		t.Fatalf("not valid JSON: %s", got)
	}
	clean := `{"a":[1,2,{"b":null}],"c":"nan inf"}`
	if got, _ := io.ReadAll(NewReader(strings.NewReader(clean))); string(got) != clean {
		t.Fatalf("changed valid JSON: %s", got)
	}
}

// TestReaderErr: an error of the source comes after the bytes read before
// it, decided as at the end of input.
func TestReaderErr(t *testing.T) {
	errBoom := io.ErrClosedPipe
	f := NewReader(io.MultiReader(strings.NewReader(`[1,nan`), iotest.ErrReader(errBoom)))
	got, err := io.ReadAll(f)
	if err != errBoom || string(got) != `[1,"" ` {
		t.Fatalf("got %q, %v", got, err)
	}
}

func TestAt(t *testing.T) {
	for _, tc := range []struct {
		b          string
		i          int
		start, end int
		ok         bool
		why        string
	}{
		{`: inf,`, 2, 2, 5, true, "at the first letter"},
		{`: nan}`, 3, 2, 5, true, "at the letter after n, where null no longer fits"},
		{`:-inf]`, 2, 1, 5, true, "after the sign, where a number no longer fits"},
		{`:-Infinity`, 1, 1, 10, true, "at the sign"},
		{`: NaN `, 2, 2, 5, true, "any case"},
		{`: infx`, 2, 2, 6, false, "a longer word"},
		{`: null`, 3, 2, 6, false, "null"},
		{`: In`, 2, 2, 4, true, "cut by the end of the buffer, starting like Infinity"},
		{`: Ix`, 2, 2, 4, false, "cut by the end, not starting like one"},
		{`: inf`, 9, 0, 0, false, "out of range"},
		// Found by mutation testing:
		{`inf,`, 0, 0, 3, true, "at the buffer's first byte"},
		{`: in`, 4, 2, 4, true, "at the end of the buffer, right after a word it cuts"},
		{`[1,`, 3, 0, 0, false, "at the end of the buffer, after no word"},
	} {
		start, end, ok := At([]byte(tc.b), tc.i)
		if ok != tc.ok || ok && (start != tc.start || end != tc.end) {
			t.Errorf("At(%q, %d) = %d, %d, %v; want %d, %d, %v: %s", tc.b, tc.i, start, end, ok, tc.start, tc.end, tc.ok, tc.why)
		}
	}
}

func FuzzReader(f *testing.F) {
	for _, s := range []string{`[NaN,-inf,"nan\"inf",Infinity]`, `"\\"nan`, `-`, `nanx`, `{"a":+INF}`,
		`{"a":N/A}`, `["C:\Users\u12\u00e9"]`, "[\"\t\"]", `"\u00`, "\x01{}", `[1,\q]`, `["nan\q"]`} {
		f.Add([]byte(s), uint16(3))
	}
	f.Fuzz(func(t *testing.T, in []byte, cut uint16) {
		want := reference(in)
		if len(want) != len(in) {
			t.Fatal("length changed")
		}
		got := readChunks(t, in, []int{int(cut) % (len(in) + 1), 1}, 7)
		if !bytes.Equal(got, want) {
			t.Fatalf("got %q\nwant %q", got, want)
		}
		if jsontext.Value(in).IsValid() && !bytes.Equal(got, in) {
			t.Fatalf("changed valid JSON %q to %q", in, got)
		}
		// A defect that DefectAt names where a decoder stops is one the
		// Reader repairs (unless it reaches the end, where DefectAt
		// allows for a buffer cut short).
		dec := jsontext.NewDecoder(bytes.NewReader(in), jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))
		for {
			_, err := dec.ReadValue()
			var se *jsontext.SyntacticError
			if err == nil {
				continue
			}
			if errors.As(err, &se) {
				if s, e, d := DefectAt(in, int(se.ByteOffset), true); d != None && e < len(in) && bytes.Equal(got[s:e], in[s:e]) {
					t.Fatalf("DefectAt(%q, %d) = %d, %d, %v, which the Reader leaves: %q", in, se.ByteOffset, s, e, d, got)
				}
			}
			break
		}
	})
}

func TestDefectAt(t *testing.T) {
	for _, tc := range []struct {
		b          string
		i          int
		start, end int
		want       Defect
		why        string
	}{
		{`: inf,`, 2, 2, 5, NonFinite, "as At finds it"},
		{`"C:\Users"`, 3, 3, 5, BadEscape, "the backslash and the byte after it"},
		{`"\u12"}`, 1, 1, 5, BadEscape, `\u and the hex digits after it`},
		{`"\u1`, 1, 1, 4, BadEscape, `cut by the end of the buffer`},
		{`"ab\`, 3, 3, 4, BadEscape, "a backslash that ends the buffer"},
		{`"nan\q"`, 4, 4, 6, BadEscape, "in a string, after a word that would be a non-finite number outside one"},
		{`"\n"`, 1, 0, 0, None, "a valid escape is no defect"},
		{`"\u00e9"`, 1, 0, 0, None, "nor is a valid \\u escape"},
		{`[1,\q]`, 3, 0, 0, None, "a backslash outside strings is invalid JSON, not a bad escape"},
		{`"\\",\q`, 5, 0, 0, None, "outside, after a string that ends in an escaped backslash"},
		{"\"a\tb\"", 2, 2, 3, ControlChar, "a raw tab in a string"},
		{`"a b"`, 2, 0, 0, None, "a space in a string is no control character (from a mutation test: c <= 0x20 passed)"},
		{"\"inf\x01\"", 4, 4, 5, ControlChar, "in a string, after a word that would be a non-finite number outside one"},
		{"\x01{}", 0, 0, 0, None, "a control character outside strings is invalid JSON (a binary file)"},
		{`"a",x` + "\x00", 5, 0, 0, None, "also after a string"},
		{":N/A}", 1, 1, 4, NotAvailable, "N/A"},
		{":-N/A}", 1, 1, 5, NotAvailable, "N/A with a sign, the decoder stopped at the sign"},
		{":-N/A}", 2, 1, 5, NotAvailable, "or at the N"},
		{":N/A", 1, 1, 4, NotAvailable, "N/A that ends the buffer"},
		{":N/", 1, 1, 3, NotAvailable, "cut by the end of the buffer"},
		{"[N", 1, 1, 2, NonFinite, "an N that ends the buffer: it starts like NaN (the doc says so)"},
		{":N/Ax", 1, 0, 0, None, "a longer word"},
		{":xN/A", 2, 0, 0, None, "the end of a longer word"},
		{`"N/A`, 1, 0, 0, None, "N/A in a string is text"},
		{":x", 1, 0, 0, None, "no defect a Reader repairs"},
		{":x", 5, 0, 0, None, "out of range"},
		{"N/A}", 0, 0, 3, NotAvailable, "at the start of a buffer where a value may begin"},
		{`{"a":1 N/A}`, 7, 0, 0, None, "a value with no separator before it is invalid however it is repaired"},
		{`["a"nan]`, 4, 0, 0, None, "likewise after a string"},
		{`[0-NaN]`, 2, 0, 0, None, "and after a number"},
		{`[1,  N/A]`, 5, 5, 8, NotAvailable, "after a comma and white space"},
		{`{"a": inf}`, 6, 6, 9, NonFinite, "after a colon"},
		{"[\rnan]", 2, 2, 5, NonFinite, "after '[' and a carriage return"},
		{"-inf]", 1, 0, 4, NonFinite, "the sign at the buffer's start is the token's"},
		{`{"a":+Infinity}`, 5, 5, 14, NonFinite, "a plus sign is the token's too (found by mutation)"},
		{`{"a":+Infinity}`, 6, 5, 14, NonFinite, "also when the decoder stopped after it"},
		{`[nan-`, 4, 0, 0, None, "a sign that ends the buffer starts what follows, not the word before it"},
		{`"\u00g0"`, 1, 1, 5, BadEscape, `\u with a letter past f`},
		{"[\"a\\\"\x01\"]", 5, 5, 6, ControlChar, "in a string, after an escaped quote"},
		// Found by mutation testing:
		{`"a\n`, 2, 0, 0, None, "a valid escape that ends the buffer"},
		{":in", 3, 1, 3, NonFinite, "at the end of the buffer, after a word it cuts"},
		{`[1,`, 3, 0, 0, None, "at the end of the buffer, after no word"},
		{"[N,", 1, 0, 0, None, "a word N with no /A after it"},
		{":xN", 2, 0, 0, None, "the end of a longer word that the buffer cuts"},
		{":+N/A}", 2, 1, 5, NotAvailable, "a plus sign, the decoder stopped at the N"},
	} {
		start, end, d := DefectAt([]byte(tc.b), tc.i, true)
		if d != tc.want || d != None && (start != tc.start || end != tc.end) {
			t.Errorf("DefectAt(%q, %d) = %d, %d, %v; want %d, %d, %v: %s", tc.b, tc.i, start, end, d, tc.start, tc.end, tc.want, tc.why)
		}
	}
	// Where no value may begin at the buffer's start (the decoder read a
	// number right before it: 1N/A, 0inf), none is named there.
	for _, tc := range []struct {
		b   string
		i   int
		why string
	}{
		{"N/A}", 0, "N/A"},
		{"inf}", 0, "a non-finite number"},
		{"  -N/A}", 2, "after white space"},
	} {
		if _, _, d := DefectAt([]byte(tc.b), tc.i, false); d != None {
			t.Errorf("DefectAt(%q, %d, false) = %v, want none: %s", tc.b, tc.i, d, tc.why)
		}
	}
	if _, _, d := DefectAt([]byte(`"\q"`), 1, false); d != BadEscape {
		t.Errorf("a bad escape in a string is one wherever the string is")
	}
}
