// Package gzipread opens gzip input for the readers and the command: one
// place that tells gzip by its magic bytes and names gzip in the errors of
// the decompressed stream.
package gzipread

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

var magic = []byte{0x1f, 0x8b}

// Open returns what br holds: its decompression when its next bytes are
// gzip's magic bytes (gz is then true), else br itself. Errors of the
// decompressed stream, other than io.EOF, start with "gzip: " once and wrap the
// cause, so a stream cut short reads as a gzip error, not as a trace that
// ends early. A decompression that starts with the magic bytes again is
// ErrTwice. The caller calls close when done; it is nil when err is not.
func Open(br *bufio.Reader) (r io.Reader, close func(), gz bool, err error) {
	if b, _ := br.Peek(len(magic)); !bytes.Equal(b, magic) {
		return br, func() {}, false, nil
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		return nil, nil, true, named(err)
	}
	zr.Multistream(false)
	g := &reader{zr: zr, br: br, member: 1}
	// An error here comes again on the next read: the errors are sticky.
	n, _ := io.ReadFull(g, g.head[:])
	if n == len(magic) && bytes.Equal(g.head[:], magic) {
		zr.Close()
		return nil, nil, true, ErrTwice
	}
	g.headN = n
	return g, func() { zr.Close() }, true, nil
}

// ErrTwice is the error for gzip inside gzip, which is no trace: a file
// compressed twice, or a .gz file sent with Content-Encoding gzip and saved
// as it came.
var ErrTwice = errors.New("gzip: the data inside is gzip again (the trace was compressed twice); decompress it once, and read what that gives")

// reader reads the members of a gzip stream one after another, as gzip(1)
// does, and, as gzip(1) does too, takes zero bytes from the end of a member
// to the end of the input as padding (tapes and some transfers add it).
type reader struct {
	zr     *gzip.Reader
	br     *bufio.Reader
	done   bool  // the last member has been read
	err    error // an error of moving past a member, returned from then on
	member int   // the member being read, from 1

	head        [2]byte // the first bytes, read by Open to look for ErrTwice
	headN, used int     // of head: bytes read, bytes returned
}

// Read returns an error once it has one on every later call too, as
// gzip.Reader does: a reader that drops an error coming with data (as
// jsontext.Decoder does) reads it again next time, not io.EOF.
func (g *reader) Read(p []byte) (int, error) {
	if g.used < g.headN {
		// Then on into p: a reader that looks at the first bytes of what
		// it is given (a byte-order mark, another compression's magic)
		// must get them in one read, as without the head.
		n := copy(p, g.head[g.used:g.headN])
		g.used += n
		if n == len(p) {
			return n, nil
		}
		m, err := g.Read(p[n:])
		return n + m, err
	}
	if g.err != nil {
		return 0, g.err
	}
	for !g.done {
		n, err := g.zr.Read(p)
		if err != io.EOF {
			return n, g.named(err)
		}
		if err := g.next(); err != nil {
			g.err = g.named(err)
			return n, g.err
		}
		if n > 0 {
			return n, nil
		}
	}
	return 0, io.EOF
}

// next moves past the member that ended: to the next member, or to the end
// of the input when nothing or only zero bytes follow.
func (g *reader) next() error {
	b, err := g.br.Peek(1)
	switch {
	case len(b) == 0 && err == io.EOF:
		g.done = true
		return nil
	case len(b) == 0:
		return err
	case b[0] == 0:
		g.done = true
		return zerosToEnd(g.br)
	}
	if b, err := g.br.Peek(len(magic)); !bytes.Equal(b, magic) {
		switch {
		case err != nil && err != io.EOF:
			return err
		case len(b) == 1 && b[0] == magic[0]: // and the input ends
			return io.ErrUnexpectedEOF // a member cut after its first byte
		}
		// Said here, not by Reset: of a byte or two, it says "unexpected
		// EOF", as if the trace were cut short.
		return errNotMember
	}
	g.member++
	if err := g.zr.Reset(g.br); err != nil {
		return err // gzip.ErrHeader for a member's bad header
	}
	g.zr.Multistream(false)
	return nil
}

// errNotMember is the error for bytes after a member that do not start
// another one (gzip(1) ignores most such tails with a warning, "trailing
// garbage"; here, as after padding, they are an error).
var errNotMember = fmt.Errorf("%w: bytes after the last member that are not a gzip member", gzip.ErrHeader)

// errAfterPadding is the error for bytes other than zero after the zero
// bytes that follow the last member.
var errAfterPadding = fmt.Errorf("%w: bytes other than zero after the padding that ends the last member", gzip.ErrHeader)

// zerosToEnd reads br to its end, and fails unless every byte is zero.
func zerosToEnd(br *bufio.Reader) error {
	for {
		b, err := br.Peek(br.Size())
		if len(b) == 0 && err == io.EOF {
			return nil
		}
		if len(b) == 0 {
			return err
		}
		if len(bytes.TrimLeft(b, "\x00")) > 0 {
			return errAfterPadding
		}
		if _, err := br.Discard(len(b)); err != nil {
			return err
		}
	}
}

// named returns err with "gzip: " in front, unless it is io.EOF or says
// so already (gzip.ErrChecksum and gzip.ErrHeader do).
func named(err error) error {
	if err == nil || err == io.EOF || strings.HasPrefix(err.Error(), "gzip: ") {
		return err
	}
	return fmt.Errorf("gzip: %w", err)
}

// named names err, an error of the member being read, as the function
// named does, except corrupt deflate data, which is said in words with the
// member: flate's own text names an offset in the member's compressed data
// alone, beside the readers' offset in the decompressed data.
func (g *reader) named(err error) error {
	var ce flate.CorruptInputError
	if errors.As(err, &ce) {
		return &CorruptError{Member: g.member, Read: int64(ce), Err: err}
	}
	return named(err)
}

// CorruptError is the error of compressed data that does not decompress:
// a damaged file.
type CorruptError struct {
	Member int   // the member, from 1 (a file gzip wrote has one)
	Read   int64 // bytes of the member's compressed data, after its header, read when the damage was found: it lies within them
	Err    error // the decompressor's error, a flate.CorruptInputError
}

func (e *CorruptError) Error() string {
	where := "the gzip header"
	if e.Member > 1 {
		where = "the header of member " + strconv.Itoa(e.Member)
	}
	n := strconv.FormatInt(e.Read, 10) + " bytes"
	if e.Read == 1 {
		n = "1 byte"
	}
	return "gzip: the compressed data is corrupt within the first " + n + " after " + where + "; the file is damaged"
}

func (e *CorruptError) Unwrap() error { return e.Err }
