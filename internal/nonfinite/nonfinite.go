// Package nonfinite lets a strict JSON decoder read JSON that holds the
// non-finite numbers some writers emit, which JSON has no syntax for: NaN,
// Infinity, inf and nan, in any case, with an optional sign (Python's json
// module writes NaN and Infinity; C++ streams, and so older PyTorch profiler
// traces, write inf and nan).
package nonfinite

import (
	"bytes"
	"io"
)

// bufSize is the Reader's buffer. The reader below it (a bufio.Reader or a
// gzip stream) buffers too; this one only has to be big enough that a
// token held back at its end is rare.
const bufSize = 64 << 10

// maxWord is the longest word replaced ("infinity").
const maxWord = len("infinity")

// Reader passes its input through, except that each non-finite number
// outside strings becomes an empty string, `""`, padded with spaces to the
// token's length, so that every byte keeps its offset. A decoder then
// reads the value as a string: ignored where the string is skipped, an
// error ("not a number") where a number is wanted. Everything else,
// including invalid JSON, passes through unchanged for the decoder to
// judge.
type Reader struct {
	r   io.Reader
	buf []byte
	// buf[start:done] is ready to be read; buf[done:end] has been read
	// from r but not decided: the start of a word that may be a token.
	start, done, end int
	inStr, esc       bool // at done: inside a string; the next byte escaped
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
			if f.done < f.end {
				f.process(true)
				continue
			}
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

// process decides buf[done:end], replacing tokens, and moves done past what
// is decided. Outside strings the input is read as words, maximal runs of
// letters, digits, '_' and '.': a word that is nan, inf or infinity in any
// case is a token, with the sign right before it if any. At the end of the
// input everything is decided; before it, a word (or a sign) that could be
// a token and runs to the end of the buffer waits for the rest.
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
			i = f.skipString(b, i)
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
			f.inStr, f.esc = true, false
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
			b[i], b[i+1] = '"', '"'
			for j := i + 2; j < k; j++ {
				b[j] = ' '
			}
		}
		i = k
	}
	f.done = len(b)
}

// skipString moves i, inside a string, past its closing quote, or to the
// end of b with f.esc telling whether the next byte is escaped. Strings in
// traces hold few backslashes: the quote is found with IndexByte's fast
// scan, and only the stretch before it is searched for a backslash; the
// quote found is kept until an escape moves past it, so that a string of
// many escapes is scanned once.
func (f *Reader) skipString(b []byte, i int) int {
	q := -1
	for {
		if f.esc {
			if i == len(b) {
				return i
			}
			f.esc = false
			i++
		}
		if q < i {
			if q = bytes.IndexByte(b[i:], '"'); q >= 0 {
				q += i
			} else {
				q = len(b)
			}
		}
		if e := bytes.IndexByte(b[i:q], '\\'); e >= 0 {
			f.esc = true
			i += e + 1
			continue
		}
		if q == len(b) {
			return q
		}
		f.inStr = false
		return q + 1
	}
}

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
