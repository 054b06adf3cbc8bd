// jsonscan.go holds the JSON scanning of one record: the syntax check of a JSONL line, and the split of an object into members.

package tracemem

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// member is one name/value pair of a validated JSON object, as offsets
// into the object's text (pointer-free, so collecting members costs no
// write barriers).
type member struct {
	ns, ne int  // the name's bytes, without quotes (when alt < 0)
	vs, ve int  // the raw JSON value
	alt    int  // index of the unescaped name in the alternates; -1: none
	esc    bool // the value may hold a string with escapes (false: none)
}

// name returns the member's unquoted name.
func (m *member) name(obj []byte, alts [][]byte) []byte {
	if m.alt >= 0 {
		return alts[m.alt]
	}
	return obj[m.ns:m.ne]
}

// val returns the member's raw value.
func (m *member) val(obj []byte) []byte { return obj[m.vs:m.ve] }

// skipSpace returns the index of the first non-space byte of b at or after i.
func skipSpace(b []byte, i int) int {
	if i < len(b) && b[i] > ' ' {
		return i
	}
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// skipValue returns the index just after the JSON value starting at b[i].
// b must be valid JSON (as the line scanner or jsontext checked it).
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// skipString returns the index just after the JSON string starting at b[i].
func skipString(b []byte, i int) int {
	i++
	for {
		j := bytes.IndexByte(b[i:], '"')
		i += j
		// count the backslashes before the quote
		k := i - 1
		for b[k] == '\\' {
			k--
		}
		if (i-1-k)%2 == 0 {
			return i + 1
		}
		i++
	}
}

// splitObject appends the members of the validated JSON object obj to dst;
// names with escapes are unquoted into *alts.
func splitObject(obj []byte, dst []member, alts *[][]byte) []member {
	i := skipSpace(obj, 1)
	for obj[i] != '}' {
		j := skipString(obj, i)
		m := member{ns: i + 1, ne: j - 1, alt: -1, esc: true}
		if bytes.IndexByte(obj[i+1:j-1], '\\') >= 0 {
			name, _ := jsontext.AppendUnquote(nil, obj[i:j])
			m.alt = len(*alts)
			*alts = append(*alts, name)
		}
		i = skipSpace(obj, j)
		i = skipSpace(obj, i+1) // past ':'
		j = skipValue(obj, i)
		m.vs, m.ve = i, j
		dst = append(dst, m)
		i = skipSpace(obj, j)
		if obj[i] == ',' {
			i = skipSpace(obj, i+1)
		}
	}
	return dst
}

// maxDepth bounds the nesting of arrays and objects in a record, as
// jsontext does by default.
const maxDepth = 10000

// lineScanner validates one line of JSON (RFC 8259, strings valid UTF-8,
// as jsontext accepts it) and splits its top-level object into members in
// the same pass. Duplicate top-level names are caught by the record parsers
// (valueParser.field), duplicate tags keys by valueParser.tags; duplicate
// names inside the nested values of ignored fields are not checked (they
// are ignored). FuzzLineScanner checks it against jsontext.
type lineScanner struct {
	b       []byte
	scratch []byte
	errPos  int            // byte index of the first error
	errMsg  string         // "" when none
	eol     bool           // the error is the line ending inside a value
	escapes int            // strings with escapes seen so far
	alts    [][]byte       // unescaped member names of names with escapes
	dec     *recordDecoder // when set, top-level members go to dec.emit first
}

func (s *lineScanner) fail(i int, msg string) int {
	if s.errMsg == "" {
		s.errPos, s.errMsg = i, msg
	}
	return -1
}

func (s *lineScanner) end(i int) int {
	s.eol = true
	return s.fail(i, "the line ends inside a JSON value")
}

// endsLine reports whether b[i] ends the line: at its end, its LF, the CR
// before it or a CR that is its last byte (a CR elsewhere is a character
// like any other). A literal or number cut there is a record cut short, as a
// string is, the same whether the line is given with its newline or without.
func (s *lineScanner) endsLine(i int) bool {
	b := s.b
	return i >= len(b) || b[i] == '\n' || b[i] == '\r' && (i+1 == len(b) || b[i+1] == '\n')
}

func charDesc(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return strconv.QuoteRune(rune(c))
	}
	return "byte 0x" + strconv.FormatUint(uint64(c), 16)
}

// value returns the index just after the JSON value at b[i], or -1.
func (s *lineScanner) value(i, depth int) int {
	b := s.b
	if i >= len(b) {
		return s.end(i)
	}
	switch c := b[i]; {
	case c == '"':
		return s.str(i)
	case c == '{':
		return s.object(i, depth+1, nil)
	case c == '[':
		return s.array(i, depth+1)
	case c == 't':
		return s.lit(i, "true")
	case c == 'f':
		return s.lit(i, "false")
	case c == 'n':
		return s.lit(i, "null")
	case c == '-' || '0' <= c && c <= '9':
		return s.num(i)
	default:
		return s.fail(i, "invalid character "+charDesc(c)+" at the start of a value")
	}
}

func (s *lineScanner) lit(i int, lit string) int {
	b := s.b
	for k := 0; k < len(lit); k++ {
		if s.endsLine(i + k) {
			return s.end(i + k)
		}
		if b[i+k] != lit[k] {
			return s.fail(i+k, "invalid character "+charDesc(b[i+k])+" in literal "+lit)
		}
	}
	return i + len(lit)
}

func (s *lineScanner) digits(j int) (int, bool) {
	b := s.b
	k := j
	for k < len(b) && '0' <= b[k] && b[k] <= '9' {
		k++
	}
	return k, k > j
}

func (s *lineScanner) num(i int) int {
	b := s.b
	j := i
	if b[j] == '-' {
		j++
	}
	if s.endsLine(j) {
		return s.end(j)
	}
	switch {
	case b[j] == '0':
		j++
	case '1' <= b[j] && b[j] <= '9':
		j, _ = s.digits(j)
	default:
		return s.fail(j, "invalid character "+charDesc(b[j])+" in number")
	}
	if j < len(b) && b[j] == '.' {
		var ok bool
		if j, ok = s.digits(j + 1); !ok {
			if s.endsLine(j) {
				return s.end(j)
			}
			return s.fail(j, "invalid character "+charDesc(b[j])+" in number (want a digit after '.')")
		}
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		var ok bool
		if j, ok = s.digits(j); !ok {
			if s.endsLine(j) {
				return s.end(j)
			}
			return s.fail(j, "invalid character "+charDesc(b[j])+" in number (want a digit in the exponent)")
		}
	}
	return j
}

// strPlain marks the bytes a string can hold with no further check: not
// '"', not '\\', not a control character, ASCII.
var strPlain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// str validates the string at b[i] and returns the index after it.
func (s *lineScanner) str(i int) int {
	b := s.b
	j := i + 1
	esc, high := false, false
	for {
		for j < len(b) && strPlain[b[j]] {
			j++
		}
		if j >= len(b) {
			return s.end(j)
		}
		c := b[j]
		if c == '"' {
			break
		}
		switch {
		case c == '\\':
			esc = true
			j += 2
			continue
		case s.endsLine(j):
			return s.end(j) // the line ends inside the string
		case c < 0x20:
			return s.fail(j, "invalid control character "+charDesc(c)+" in string")
		}
		high = true // c >= 0x80
		j++
	}
	end := j + 1
	if esc {
		s.escapes++
		var err error
		if s.scratch, err = jsontext.AppendUnquote(s.scratch[:0], b[i:end]); err != nil {
			return s.fail(i, "invalid string: "+strings.TrimPrefix(err.Error(), "jsontext: "))
		}
	} else if high && !utf8.Valid(b[i+1:j]) {
		return s.fail(i, "invalid UTF-8 in string")
	}
	return end
}

func (s *lineScanner) array(i, depth int) int {
	if depth > maxDepth {
		return s.fail(i, "exceeded the maximum nesting depth")
	}
	b := s.b
	j := skipSpace(b, i+1)
	if j >= len(b) {
		return s.end(j)
	}
	if b[j] == ']' {
		return j + 1
	}
	for {
		if j = s.value(j, depth); j < 0 {
			return -1
		}
		if j = skipSpace(b, j); j >= len(b) {
			return s.end(j)
		}
		switch b[j] {
		case ',':
			j = skipSpace(b, j+1)
		case ']':
			return j + 1
		default:
			return s.fail(j, "invalid character "+charDesc(b[j])+" after an array element (want ',' or ']')")
		}
	}
}

// object validates the object at b[i]; when dst is not nil, it appends the
// members to *dst.
func (s *lineScanner) object(i, depth int, dst *[]member) int {
	if depth > maxDepth {
		return s.fail(i, "exceeded the maximum nesting depth")
	}
	b := s.b
	j := skipSpace(b, i+1)
	if j >= len(b) {
		return s.end(j)
	}
	if b[j] == '}' {
		return j + 1
	}
	for {
		if b[j] != '"' {
			return s.fail(j, "invalid character "+charDesc(b[j])+" where an object name belongs")
		}
		ns, esc0 := j, s.escapes
		if j = s.str(j); j < 0 {
			return -1
		}
		ne, nameEsc := j, s.escapes != esc0
		if j = skipSpace(b, j); j >= len(b) {
			return s.end(j)
		}
		if b[j] != ':' {
			return s.fail(j, "invalid character "+charDesc(b[j])+" after an object name (want ':')")
		}
		vs, esc1 := skipSpace(b, j+1), s.escapes
		if j = s.value(vs, depth); j < 0 {
			return -1
		}
		if dst != nil {
			m := member{ns: ns + 1, ne: ne - 1, vs: vs, ve: j, alt: -1, esc: s.escapes != esc1}
			if nameEsc {
				name, _ := jsontext.AppendUnquote(nil, b[ns:ne])
				m.alt = len(s.alts)
				s.alts = append(s.alts, name)
			}
			if s.dec == nil || !s.dec.emit(&m, len(*dst)) {
				*dst = append(*dst, m)
			}
		}
		if j = skipSpace(b, j); j >= len(b) {
			return s.end(j)
		}
		switch b[j] {
		case ',':
			if j = skipSpace(b, j+1); j >= len(b) {
				return s.end(j)
			}
		case '}':
			return j + 1
		default:
			return s.fail(j, "invalid character "+charDesc(b[j])+" after an object value (want ',' or '}')")
		}
	}
}
