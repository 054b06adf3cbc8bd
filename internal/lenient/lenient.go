// Package lenient lets a strict JSON decoder read the near-JSON that some
// trace writers emit, by repairing it in place, each byte kept at its offset:
//   - non-finite numbers, which JSON has no syntax for: NaN, Infinity, inf
//     and nan, in any case, with an optional sign (Python's json module
//     writes NaN and Infinity; C++ streams, and so older PyTorch profiler
//     traces, write inf and nan);
//   - N/A as a value (older PyTorch profilers wrote it for a kernel's
//     estimated occupancy);
//   - in strings, backslashes that start no valid escape (PyTorch's profiler
//     on Windows wrote file paths unescaped, "C:\Users\me\train.py") and raw
//     control characters.
package lenient

import "io"

// bufSize is the Reader's buffer. The reader below it (a bufio.Reader or a
// gzip stream) buffers too; this one only has to be big enough that a
// token held back at its end is rare.
const bufSize = 64 << 10

// maxWord is the longest word replaced ("infinity").
const maxWord = len("infinity")

// Reader passes its input through, with these repairs, each of the same
// length:
//   - outside strings, each non-finite number, and each N/A, with the sign
//     before it if any, becomes an empty string, `""`, padded with spaces.
//     A decoder then reads the value as a string: ignored where the string
//     is skipped, an error ("not a number") where a number is wanted;
//   - in strings, a backslash that does not start a valid escape (\" \\ \/
//     \b \f \n \r \t, or \u and four hex digits) becomes '/', so that a
//     Windows path reads as one with slashes, and a control character
//     (below U+0020) becomes a space.
//
// Everything else, including invalid JSON, passes through unchanged for the
// decoder to judge. JSON that is valid passes through unchanged.
type Reader struct {
	r   io.Reader
	buf []byte
	// buf[start:done] is ready to be read; buf[done:end] has been read
	// from r but not decided: the start of a word that may be a token, or
	// of an escape.
	start, done, end int
	inStr            bool // at done: inside a string
	inWord           bool // at done: inside a word too long to be a token
	err              error
}

// NewReader returns a Reader of r.
func NewReader(r io.Reader) *Reader {
	return &Reader{r: r, buf: make([]byte, bufSize)}
}

// Read implements io.Reader.
func (f *Reader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for f.start == f.done {
		if f.err != nil {
			// process(true) ran when the error came: everything read is
			// decided and handed out.
			return 0, f.err
		}
		// Keep the undecided tail, at the front.
		f.end = copy(f.buf, f.buf[f.done:f.end])
		f.start, f.done = 0, 0
		n, err := f.r.Read(f.buf[f.end:])
		f.end += n
		f.err = err
		f.process(err != nil)
	}
	n := copy(p, f.buf[f.start:f.done])
	f.start += n
	return n, nil
}

// special marks the bytes that, outside strings, start a string, a sign or
// a word: letters, digits, '_' and '.'.
var special = func() (t [256]bool) {
	for c := range t {
		t[c] = isWordByte(byte(c))
	}
	t['"'], t['-'], t['+'] = true, true, true
	return t
}()

// process decides buf[done:end], repairing it, and moves done past what is
// decided. Outside strings the input is read as words, maximal runs of
// letters, digits, '_' and '.': a word that is nan, inf or infinity in any
// case is a token, and so is the word N with /A after it (and no word byte
// after that), each with the sign right before it if any. Inside strings,
// inString repairs escapes and control characters. At the end of the input
// everything is decided; before it, a word (or a sign) that could be a
// token, or an escape, that runs to the end of the buffer waits for the
// rest.
func (f *Reader) process(atEOF bool) {
	b := f.buf[:f.end]
	i := f.done
	if f.inWord {
		for i < len(b) && isWordByte(b[i]) {
			i++
		}
		if i == len(b) {
			f.done = i
			return
		}
		f.inWord = false
	}
	for i < len(b) {
		if f.inStr {
			var wait bool
			if i, wait = f.inString(b, i, atEOF); wait {
				f.done = i
				return
			}
			continue
		}
		for i < len(b) && !special[b[i]] {
			i++
		}
		if i == len(b) {
			break
		}
		c := b[i]
		if c == '"' {
			f.inStr = true
			i++
			continue
		}
		w := i
		if c == '-' || c == '+' {
			w++
			if w == len(b) && !atEOF {
				f.done = i
				return
			}
			if w == len(b) || !isWordByte(b[w]) {
				i = w
				continue
			}
		}
		k := w
		for k < len(b) && isWordByte(b[k]) && k-w <= maxWord {
			k++
		}
		if k-w > maxWord {
			// Too long to be a token.
			for k < len(b) && isWordByte(b[k]) {
				k++
			}
			if k == len(b) && !atEOF {
				f.inWord = true
			}
			i = k
			continue
		}
		if k == len(b) && !atEOF {
			f.done = i
			return
		}
		if isToken(b[w:k]) {
			blank(b[i:k])
		} else if k-w == 1 && b[w] == 'N' {
			// N/A: a word "N", then "/A" and no more word, with the sign
			// before it if any, as a non-finite number has.
			isNA, short := afterN(b[k:])
			if short && !atEOF {
				f.done = i
				return
			}
			if isNA {
				k += 2
				blank(b[i:k])
			}
		}
		i = k
	}
	f.done = len(b)
}

// blank makes a token `""` padded with spaces.
func blank(tok []byte) {
	tok[0], tok[1] = '"', '"'
	for j := 2; j < len(tok); j++ {
		tok[j] = ' '
	}
}

// afterN tells, from the bytes after a word N, whether it is N/A ("/A" and
// no word byte after it), and whether they are too short to tell for sure
// (a prefix of "/A", or "/A" at their end).
func afterN(rest []byte) (isNA, short bool) {
	short = len(rest) < 3 && hasPrefix("/A", rest)
	isNA = len(rest) >= 2 && rest[0] == '/' && rest[1] == 'A' && (len(rest) == 2 || !isWordByte(rest[2]))
	return isNA, short
}

// hasPrefix reports whether b is a prefix of s.
func hasPrefix(s string, b []byte) bool { return len(b) <= len(s) && s[:len(b)] == string(b) }

// inString moves i, inside a string, past its closing quote, or to the end
// of b, repairing escapes and control characters on the way. It returns
// wait when an escape runs to the end of b before the input's end: it is
// decided with the bytes after it.
func (f *Reader) inString(b []byte, i int, atEOF bool) (_ int, wait bool) {
	for i < len(b) {
		switch c := b[i]; {
		case c == '"':
			f.inStr = false
			return i + 1, false
		case c < 0x20:
			b[i] = ' '
			i++
		case c == '\\':
			n := escapeLen(b[i:])
			if n < 0 {
				if !atEOF {
					return i, true
				}
				n = 0
			}
			if n == 0 {
				b[i] = '/'
				n = 1
			}
			i += n
		default:
			i++
		}
	}
	return i, false
}

// escapeLen returns the length of the valid escape that e starts with (e[0]
// is a backslash), 0 when it starts none, and -1 when e ends too soon to
// tell.
func escapeLen(e []byte) int {
	if len(e) < 2 {
		return -1
	}
	switch e[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		for j := 2; j < 6; j++ {
			if j == len(e) {
				return -1
			}
			if !isHex(e[j]) {
				return 0
			}
		}
		return 6
	}
	return 0
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c|0x20 && c|0x20 <= 'f' }

func isLetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }

// isWordByte reports whether c is part of a word: nan and inf inside a
// longer word (nanx, 1inf) are not tokens, and are left for the decoder to
// reject.
func isWordByte(c byte) bool {
	return isLetter(c) || '0' <= c && c <= '9' || c == '_' || c == '.'
}

// At reports whether b holds a non-finite number around b[i], as a decoder
// that stops at one points into it (at its sign, its first letter, or the
// letter that no longer fits null or a number): the word of letters, digits,
// '_' and '.' that holds b[i] (or ends right before it), with the sign right
// before it, is one, and [start, end) is where. A word that runs to the end
// of b counts when it starts like one, since b may be cut there. Strings
// are not told apart: the caller knows b[i] is outside them.
func At(b []byte, i int) (start, end int, ok bool) {
	if i < 0 || i > len(b) {
		return 0, 0, false
	}
	if i < len(b) && (b[i] == '-' || b[i] == '+') {
		i++
	}
	w := i
	for w > 0 && isWordByte(b[w-1]) {
		w--
	}
	e := i
	for e < len(b) && isWordByte(b[e]) {
		e++
	}
	start = w
	if w > 0 && (b[w-1] == '-' || b[w-1] == '+') {
		start--
	}
	word := b[w:e]
	if e == len(b) && len(word) > 0 && len(word) <= maxWord {
		return start, e, hasPrefixFold("infinity", word) || hasPrefixFold("nan", word)
	}
	return start, e, isToken(word)
}

func hasPrefixFold(lower string, w []byte) bool {
	return len(w) <= len(lower) && equalFold(w, lower[:len(w)])
}

// isToken reports whether w is nan, inf or infinity, in any case.
func isToken(w []byte) bool {
	switch len(w) {
	case 3:
		return equalFold(w, "nan") || equalFold(w, "inf")
	case 8:
		return equalFold(w, "infinity")
	}
	return false
}

func equalFold(w []byte, lower string) bool {
	for i := range w {
		if w[i]|0x20 != lower[i] {
			return false
		}
	}
	return true
}

// Defect is a kind of near-JSON that a Reader repairs.
type Defect uint8

const (
	None         Defect = iota
	NonFinite           // a non-finite number
	NotAvailable        // N/A as a value
	BadEscape           // a backslash in a string that starts no valid escape
	ControlChar         // a control character in a string
)

// Lookahead is how many bytes past a syntax error's offset DefectAt needs
// to see any defect's text whole, and the byte after it: a sign, infinity
// and one more byte; a \u escape.
const Lookahead = 16

// DefectAt reports which defect that a Reader repairs a strict decoder
// stopped at, where its syntax error points (b[i]), and [start, end) is its
// text. b must start outside any string (at the start of the input, or
// where the decoder stood between two tokens), and may be cut short after
// b[i]; valueFirst tells whether a value may begin at its start (after
// white space), as at the input's start or right after a '['. Outside
// strings, the defect is a non-finite number (as At finds it) or N/A, with
// the sign before it if any, where a value may begin: after '[', ',' or ':'
// (a token that follows another with no separator is invalid JSON however
// it is repaired); inside a string, a backslash that starts no escape (its
// text: the backslash and the letter after it, and after \u the hex digits
// that follow) or a control character. Text cut off by the end of b is
// taken as it stands: an escape cut short is a BadEscape, and an N at the
// very end a NonFinite (it starts like NaN); where the input goes on, b
// should hold it past the defect's text (Lookahead bytes past b[i]).
func DefectAt(b []byte, i int, valueFirst bool) (start, end int, d Defect) {
	if i < 0 || i > len(b) {
		return 0, 0, None
	}
	if endsInString(b[:i]) {
		if i == len(b) {
			return 0, 0, None
		}
		switch c := b[i]; {
		case c < 0x20:
			return i, i + 1, ControlChar
		case c == '\\' && escapeLen(b[i:]) <= 0:
			end := min(i+2, len(b))
			if end == i+2 && b[i+1] == 'u' {
				for end < min(i+6, len(b)) && isHex(b[end]) {
					end++
				}
			}
			return i, end, BadEscape
		}
		return 0, 0, None
	}
	if start, end, ok := At(b, i); ok {
		if !valueAt(b, start, valueFirst) {
			return 0, 0, None
		}
		return start, end, NonFinite
	}
	w := i // the N of N/A, after a sign the decoder stopped at
	if w < len(b) && (b[w] == '-' || b[w] == '+') {
		w++
	}
	if w >= len(b) || b[w] != 'N' || w > 0 && isWordByte(b[w-1]) {
		return 0, 0, None
	}
	if isNA, short := afterN(b[w+1:]); isNA || short {
		start = w
		if w > 0 && (b[w-1] == '-' || b[w-1] == '+') {
			start--
		}
		if !valueAt(b, start, valueFirst) {
			return 0, 0, None
		}
		return start, min(w+3, len(b)), NotAvailable
	}
	return 0, 0, None
}

// valueAt reports whether a value may begin at b[i], outside strings: the
// last byte before it that is not white space is '[', ',' or ':', or there
// is none and valueFirst is set.
func valueAt(b []byte, i int, valueFirst bool) bool {
	for i > 0 {
		i--
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			continue
		case '[', ',', ':':
			return true
		}
		return false
	}
	return valueFirst
}

// endsInString reports whether the end of b, which starts outside strings,
// is inside one.
func endsInString(b []byte) bool {
	in := false
	for i := 0; i < len(b); i++ {
		switch {
		case !in:
			in = b[i] == '"'
		case b[i] == '\\':
			i++
		case b[i] == '"':
			in = false
		}
	}
	return in
}
