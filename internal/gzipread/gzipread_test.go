package gzipread

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func gzipped(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := io.WriteString(w, s); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// corrupt returns b with a bit of its CRC-32 flipped.
func corrupt(b []byte) []byte {
	c := append([]byte{}, b...)
	c[len(c)-8] ^= 1
	return c
}

func TestOpen(t *testing.T) {
	const text = `{"kind":"meta"}` + "\n"
	full := gzipped(t, text)
	tests := []struct {
		name, reason string
		in           []byte
		wantGz       bool
		want         string // the content read
		wantErr      string // "" for none; else a prefix of the error
	}{
		{"plain", "input without the magic bytes is itself", []byte(text), false, text, ""},
		{"empty", "empty input is not gzip", nil, false, "", ""},
		{"one magic byte", "gzip is told by both magic bytes", []byte{0x1f, '{'}, false, "\x1f{", ""},
		{"gzip", "gzip is decompressed", full, true, text, ""},
		{"two members", "concatenated members read as one stream, as gzip(1) does", append(append([]byte{}, full...), gzipped(t, "more\n")...), true, text + "more\n", ""},
		{"zero padding", "zero bytes after the last member are padding, as gzip(1) takes them", append(append([]byte{}, full...), make([]byte, 10000)...), true, text, ""},
		{"one zero byte", "padding of one byte", append(append([]byte{}, full...), 0), true, text, ""},
		{"two members and padding", "padding after the last of several members", append(append(append([]byte{}, full...), gzipped(t, "more\n")...), make([]byte, 512)...), true, text + "more\n", ""},
		{"padding then data", "bytes other than zero after the padding are not padding", append(append(append([]byte{}, full...), make([]byte, 8000)...), 'x'), true, text, "gzip: invalid header: bytes other than zero"},
		{"padding then a member", "a member after zero bytes is not read: the zeros end the stream only when nothing else follows", append(append(append([]byte{}, full...), 0, 0), gzipped(t, "more\n")...), true, text, "gzip: invalid header: bytes other than zero"},
		{"garbage after a member", "bytes that are not a member after a member are an error, as before", append(append([]byte{}, full...), "not a gzip member"...), true, text, "gzip: invalid header: bytes after the last member that are not a gzip member"},
		{"two bytes of garbage after a member", "too short for a header, they are still not a member: not \"unexpected EOF\", which reads as a trace cut short", append(append([]byte{}, full...), "xx"...), true, text, "gzip: invalid header: bytes after the last member that are not a gzip member"},
		{"one byte of garbage after a member", "likewise one byte", append(append([]byte{}, full...), '\n'), true, text, "gzip: invalid header: bytes after the last member that are not a gzip member"},
		{"a member's header cut short", "the magic bytes then the end: a member cut short", append(append([]byte{}, full...), 0x1f, 0x8b, 8), true, text, "gzip: unexpected EOF"},
		{"a member cut after its first byte", "gzip's first magic byte then the end: a member cut short, as gzip(1) says too, not garbage", append(append([]byte{}, full...), 0x1f), true, text, "gzip: unexpected EOF"},
		{"cut short", "a stream cut short is a gzip error", full[:len(full)-6], true, text, "gzip: "},
		{"bad header", "a header that is not gzip's fails at once, naming gzip", []byte{0x1f, 0x8b, 0, 0}, true, "", "gzip: unexpected EOF"},
		{"bad checksum", "gzip's own errors say gzip once", corrupt(full), true, text, "gzip: invalid checksum"},
		{"corrupt deflate data", "said in words, its offset counted from the header (flate's text named an offset in the compressed data beside the readers' in the decompressed data; from a spec audit)",
			append(append([]byte{}, full[:10]...), 0xff, 0xff, 0xff, 0xff), true, "", "gzip: the compressed data is corrupt within the first 1 byte after the gzip header; the file is damaged"},
		{"gzip twice", "gzip inside gzip is no trace: named at once (from a user trial: it was read as text starting with a control character)", gzipped(t, string(full)), true, "", "gzip: the data inside is gzip again"},
		{"one byte inside", "the first bytes, read to look for gzip inside, are read back", gzipped(t, "x"), true, "x", ""},
		{"first magic byte inside", "one magic byte inside is data", gzipped(t, "\x1f{"), true, "\x1f{", ""},
		{"nothing inside", "an empty member reads as nothing", gzipped(t, ""), true, "", ""},
		{"magic bytes over two members", "what counts is the decompressed stream, which runs on across members", append(gzipped(t, "\x1f"), gzipped(t, "\x8b")...), true, "", "gzip: the data inside is gzip again"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, closeFn, gz, err := Open(bufio.NewReader(bytes.NewReader(tt.in)))
			if gz != tt.wantGz {
				t.Errorf("gz = %v, want %v (%s)", gz, tt.wantGz, tt.reason)
			}
			var got []byte
			if err == nil {
				defer closeFn()
				got, err = io.ReadAll(r)
			}
			if tt.wantErr == "" {
				if err != nil || string(got) != tt.want {
					t.Errorf("read %q, %v; want %q (%s)", got, err, tt.want, tt.reason)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "gzip: gzip") {
				t.Errorf("error %v, want one starting %q (%s)", err, tt.wantErr, tt.reason)
			}
			if tt.name == "cut short" && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("error %v does not wrap io.ErrUnexpectedEOF", err)
			}
			// Read again, the error is still there: a reader that drops
			// an error coming with data (jsontext.Decoder) reads it then.
			if r != nil {
				if _, again := r.Read(make([]byte, 64)); again == nil || again.Error() != err.Error() {
					t.Errorf("read after the error %q: %v, want the same error (%s)", err, again, tt.reason)
				}
			}
		})
	}
}

// FuzzOpen: a stream of one to three members holding data, followed by
// tail, reads back as data when tail is empty or zero bytes (padding), and
// is an error when zero bytes are followed by anything else.
func FuzzOpen(f *testing.F) {
	f.Add([]byte("hello\n"), []byte{}, uint8(1))
	f.Add([]byte("hello\n"), []byte{0, 0, 0}, uint8(2))
	f.Add([]byte("hello\n"), []byte{0, 0, 'x'}, uint8(3))
	f.Add([]byte(""), []byte("junk junk junk"), uint8(1))
	f.Fuzz(func(t *testing.T, data, tail []byte, members uint8) {
		n := 1 + int(members)%3
		var in []byte
		for i := range n {
			part := data[i*len(data)/n : (i+1)*len(data)/n]
			in = append(in, gzipped(t, string(part))...)
		}
		in = append(in, tail...)
		r, closeFn, gz, err := Open(bufio.NewReader(bytes.NewReader(in)))
		if len(data) < 2 && bytes.HasPrefix(tail, magic) {
			return // the tail's members, if gzip, start the stream too (from a review)
		}
		twice := bytes.HasPrefix(data, magic) // the members' data, one stream
		if !gz || (err != nil) != twice || twice && err != ErrTwice {
			t.Fatalf("Open of data %q: gz %v, err %v", data, gz, err)
		}
		if twice {
			return
		}
		defer closeFn()
		got, err := io.ReadAll(r)
		padding := len(bytes.TrimLeft(tail, "\x00")) == 0
		switch {
		case padding && (err != nil || !bytes.Equal(got, data)):
			t.Fatalf("members and %d zero bytes read %q, %v; want %q", len(tail), got, err, data)
		case len(tail) > 0 && tail[0] == 0 && !padding && err == nil:
			t.Fatalf("zero bytes then %q read without error", bytes.TrimLeft(tail, "\x00"))
		case err == nil && !bytes.HasPrefix(got, data):
			t.Fatalf("read %q, want it to start with %q", got, data)
		case err != nil && !strings.HasPrefix(err.Error(), "gzip: "):
			t.Fatalf("error %v does not say gzip", err)
		}
	})
}

// TestReadErrorAfterMember: a read that fails after a member is that
// error, whatever bytes came before it: not "not a gzip member", which
// would hide a failing disk or connection behind a verdict on the data.
func TestReadErrorAfterMember(t *testing.T) {
	boom := errors.New("disk read error")
	full := gzipped(t, "data\n")
	for _, tc := range []struct {
		name, reason string
		tail         string // bytes the reader gives after the member, before failing
	}{
		{"nothing", "the error right after the member", ""},
		{"one other byte", "one byte that is not gzip's, then the error", "x"},
		{"gzip's first byte", "gzip's first magic byte, then the error", "\x1f"},
		{"zero padding", "zero bytes, taken as padding, then the error: not the end of the stream (found by mutation: the error was dropped)", "\x00\x00"},
	} {
		in := io.MultiReader(bytes.NewReader(append(append([]byte{}, full...), tc.tail...)), iotest.ErrReader(boom))
		r, closeFn, _, err := Open(bufio.NewReader(in))
		if err != nil {
			t.Fatalf("%s: Open: %v", tc.name, err)
		}
		_, err = io.ReadAll(r)
		closeFn()
		if !errors.Is(err, boom) {
			t.Errorf("%s: %s: error %v, want the reader's %q", tc.name, tc.reason, err, boom)
		}
	}
}

// TestFirstRead: the bytes Open reads ahead (to look for gzip inside) come
// back with what follows them in one read, so a reader that looks at the
// first bytes it is given (a byte-order mark, another compression's magic)
// sees as many as without them (from a review: it saw two); and the
// reader passes iotest.TestReader.
func TestFirstRead(t *testing.T) {
	for _, text := range []string{"", "a", "ab", "\ufeff{}", "(\xb5/\xfd and more"} {
		r, closeFn, _, err := Open(bufio.NewReader(bytes.NewReader(gzipped(t, text))))
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		p := make([]byte, 64)
		n, err := r.Read(p)
		if n != len(text) || string(p[:n]) != text || err != nil && err != io.EOF {
			t.Errorf("%q: first read %q, %v; want all of it", text, p[:n], err)
		}
		closeFn()
		r, closeFn, _, _ = Open(bufio.NewReader(bytes.NewReader(gzipped(t, text))))
		if err := iotest.TestReader(r, []byte(text)); err != nil {
			t.Errorf("%q: %v", text, err)
		}
		closeFn()
	}
}

// TestCorruptError: corrupt deflate data is a *CorruptError that names its
// member and still unwraps to flate's error.
func TestCorruptError(t *testing.T) {
	full := gzipped(t, "first\n")
	bad := append(append([]byte{}, full[:10]...), 0xff, 0xff, 0xff, 0xff)
	for _, c := range []struct {
		name   string
		in     []byte
		member int
		text   string
	}{
		{"first member", bad, 1, "gzip: the compressed data is corrupt within the first 1 byte after the gzip header; the file is damaged"},
		{"second member", append(append([]byte{}, full...), bad...), 2, "gzip: the compressed data is corrupt within the first 1 byte after the header of member 2; the file is damaged"},
	} {
		r, closeFn, _, err := Open(bufio.NewReader(bytes.NewReader(c.in)))
		if err == nil {
			defer closeFn()
			_, err = io.ReadAll(r)
		}
		var ce *CorruptError
		var fe flate.CorruptInputError
		if !errors.As(err, &ce) || !errors.As(err, &fe) || ce.Read != 1 || ce.Member != c.member || err.Error() != c.text {
			t.Errorf("%s: error %v (%T), want a *CorruptError of member %d wrapping a flate.CorruptInputError: %q", c.name, err, err, c.member, c.text)
		}
	}
}

// TestCorruptErrorText: bytes in the plural.
func TestCorruptErrorText(t *testing.T) {
	e := &CorruptError{Member: 3, Read: 69}
	if want := "gzip: the compressed data is corrupt within the first 69 bytes after the header of member 3; the file is damaged"; e.Error() != want {
		t.Errorf("%q, want %q", e.Error(), want)
	}
}

// TestReadProgress: a read gives bytes or an error, never neither, also
// where empty members sit between members (io.Reader discourages (0, nil),
// and bufio.Reader gives up after 100 of them; found by mutation: each
// empty member gave one).
func TestReadProgress(t *testing.T) {
	for _, tc := range []struct {
		name, reason string
		empties      int
	}{
		{"one empty member", "an empty member between two with data", 1},
		{"many empty members", "more than bufio.Reader's 100 reads without progress", 120},
	} {
		in := gzipped(t, "ab")
		for range tc.empties {
			in = append(in, gzipped(t, "")...)
		}
		in = append(in, gzipped(t, "c")...)
		r, closeFn, _, err := Open(bufio.NewReader(bytes.NewReader(in)))
		if err != nil {
			t.Fatalf("%s: Open: %v", tc.name, err)
		}
		var got []byte
		p := make([]byte, 64)
		for range 1000 {
			n, err := r.Read(p)
			got = append(got, p[:n]...)
			if err == io.EOF {
				break
			}
			if n == 0 || err != nil {
				t.Fatalf("%s: %s: read %d bytes, %v after %q", tc.name, tc.reason, n, err, got)
			}
		}
		closeFn()
		if string(got) != "abc" {
			t.Errorf("%s: read %q, want %q", tc.name, got, "abc")
		}
	}
}
