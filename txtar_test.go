// txtar_test.go holds a minimal reader and writer of txtar archives for the golden tests.

package tracemem

import (
	"bytes"
	"strings"
)

// txtarFile is one file of a txtar archive.
type txtarFile struct {
	Name string
	Data []byte
}

// parseTxtar splits a txtar archive into its comment and files. A file
// starts at a line "-- NAME --" and runs to the next such line.
func parseTxtar(data []byte) (comment []byte, files []txtarFile) {
	var cur *txtarFile
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i+1], data[i+1:]
		} else {
			data = nil
		}
		s := strings.TrimRight(string(line), "\r\n")
		if strings.HasPrefix(s, "-- ") && strings.HasSuffix(s, " --") && len(s) > 6 {
			files = append(files, txtarFile{Name: strings.TrimSpace(s[3 : len(s)-3])})
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

// formatTxtar renders an archive; each file's data ends with a newline.
func formatTxtar(comment []byte, files []txtarFile) []byte {
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

// txtarGet returns the data of the named file, and false when absent.
func txtarGet(files []txtarFile, name string) ([]byte, bool) {
	for _, f := range files {
		if f.Name == name {
			return f.Data, true
		}
	}
	return nil, false
}
