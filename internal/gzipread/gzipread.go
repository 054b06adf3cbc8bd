// Package gzipread opens gzip input for the readers and the command: one
// place that tells gzip by its magic bytes and names gzip in the errors of
// the decompressed stream.
package gzipread

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"strings"
)

var magic = []byte{0x1f, 0x8b}

// Open returns what br holds: its decompression when its next bytes are
// gzip's magic bytes (gz is then true), else br itself. Errors of the
// decompressed stream, other than io.EOF, start with "gzip: " once and wrap the
// cause, so a stream cut short reads as a gzip error, not as a trace that
// ends early. The caller calls close when done.
func Open(br *bufio.Reader) (r io.Reader, close func(), gz bool, err error) {
	if b, _ := br.Peek(len(magic)); !bytes.Equal(b, magic) {
		return br, func() {}, false, nil
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		return nil, nil, true, named(err)
	}
	return &reader{zr}, func() { zr.Close() }, true, nil
}

type reader struct{ zr *gzip.Reader }

func (g *reader) Read(p []byte) (int, error) {
	n, err := g.zr.Read(p)
	return n, named(err)
}

// named returns err with "gzip: " in front, unless it is io.EOF or says
// so already (gzip.ErrChecksum and gzip.ErrHeader do).
func named(err error) error {
	if err == nil || err == io.EOF || strings.HasPrefix(err.Error(), "gzip: ") {
		return err
	}
	return fmt.Errorf("gzip: %w", err)
}
