// txtar_test.go holds a minimal txtar reader and writer for the command's golden files.

package main

import (
	"bytes"
	"strings"
)

// txtarFile is one file of a txtar archive.
type txtarFile struct {
	name string
	data []byte
}

// parseTxtar splits a txtar archive into its comment and files; a file
// starts at a line "-- NAME --" and runs to the next such line.
func parseTxtar(data []byte) (comment string, files []txtarFile) {
	var c bytes.Buffer
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
			files = append(files, txtarFile{name: strings.TrimSpace(s[3 : len(s)-3])})
			cur = &files[len(files)-1]
			continue
		}
		if cur == nil {
			c.Write(line)
		} else {
			cur.data = append(cur.data, line...)
		}
	}
	return c.String(), files
}

// formatTxtar renders an archive.
func formatTxtar(comment string, files []txtarFile) []byte {
	var b bytes.Buffer
	b.WriteString(comment)
	if comment != "" && !strings.HasSuffix(comment, "\n") {
		b.WriteByte('\n')
	}
	for _, f := range files {
		b.WriteString("-- " + f.name + " --\n")
		b.Write(f.data)
		if len(f.data) > 0 && f.data[len(f.data)-1] != '\n' {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

// txtarGet returns the data of the named file, and false when absent.
func txtarGet(files []txtarFile, name string) ([]byte, bool) {
	for _, f := range files {
		if f.name == name {
			return f.data, true
		}
	}
	return nil, false
}
