// txtar.go holds a minimal reader and writer of txtar archives, the format of the golden test files.

// Package txtar reads and writes txtar archives: a comment, then files, each
// starting at a line "-- NAME --" and running to the next such line. It is
// what the golden tests of tracemem and its command keep their inputs and
// expected outputs in.
package txtar

import (
	"bytes"
	"strings"
)

// File is one file of an archive.
type File struct {
	Name string
	Data []byte
}

// Parse splits data into the archive's comment and files.
func Parse(data []byte) (comment []byte, files []File) {
	var cur *File
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i+1], data[i+1:]
		} else {
			data = nil
		}
		s := strings.TrimRight(string(line), "\r\n")
		if name := markerName(s); name != "" {
			files = append(files, File{Name: name})
			cur = &files[len(files)-1]
			continue
		}
		if cur == nil {
			comment = append(comment, line...)
		} else {
			cur.Data = append(cur.Data, line...)
		}
	}
	return comment, files
}

// markerName returns the name of a marker line "-- NAME --" (without its
// newline), "" when line is none: a marker needs a name.
func markerName(line string) string {
	if len(line) < 6 || !strings.HasPrefix(line, "-- ") || !strings.HasSuffix(line, " --") {
		return ""
	}
	return strings.TrimSpace(line[3 : len(line)-3])
}

// Format renders an archive; the comment and each file's data that is not
// empty end with a newline. Names and data are written as they are (txtar
// has no escape): Parse reads a line of data that looks like a marker as
// one, a name with blanks around it without them, and a blank name as no
// marker.
func Format(comment []byte, files []File) []byte {
	var b bytes.Buffer
	b.Write(comment)
	if len(comment) > 0 && comment[len(comment)-1] != '\n' {
		b.WriteByte('\n')
	}
	for _, f := range files {
		b.WriteString("-- " + f.Name + " --\n")
		b.Write(f.Data)
		if len(f.Data) > 0 && f.Data[len(f.Data)-1] != '\n' {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

// Get returns the data of the named file, and false when there is none.
func Get(files []File, name string) ([]byte, bool) {
	for _, f := range files {
		if f.Name == name {
			return f.Data, true
		}
	}
	return nil, false
}
