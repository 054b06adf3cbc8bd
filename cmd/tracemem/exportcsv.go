// exportcsv.go holds the CSV export: the timeline, one row per point.

package main

import (
	"io"
	"strconv"
	"strings"

	"github.com/tracemem/tracemem"
)

// writeCSV writes the timeline of t as CSV: a header, then one row per
// timeline point in replay order with timestamp_ns, device, live_bytes,
// free_bytes and one column per category (parameter, activation, gradient,
// optimizer, other; 0 where the point has none). free_bytes is 0 when the
// device's capacity is unknown or exceeded.
func writeCSV(w io.Writer, t *trace) error {
	buf := make([]byte, 0, 1<<16)
	buf = append(buf, "timestamp_ns,device,live_bytes,free_bytes"...)
	for _, c := range tracemem.Categories {
		buf = append(buf, ',')
		buf = append(buf, c.String()...)
	}
	buf = append(buf, '\n')
	var dev string
	var devField []byte
	for i := range t.profile.Timeline {
		p := &t.profile.Timeline[i]
		if p.Device != dev || devField == nil {
			dev, devField = p.Device, csvField(p.Device)
		}
		buf = strconv.AppendUint(buf, p.TimestampNs, 10)
		buf = append(buf, ',')
		buf = append(buf, devField...)
		buf = append(buf, ',')
		buf = strconv.AppendUint(buf, p.LiveBytes, 10)
		buf = append(buf, ',')
		buf = strconv.AppendUint(buf, p.FreeBytes, 10)
		for _, c := range tracemem.Categories {
			buf = append(buf, ',')
			buf = strconv.AppendUint(buf, p.ByCategory.Get(c), 10)
		}
		buf = append(buf, '\n')
		if len(buf) >= 1<<16-256 {
			if _, err := w.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	_, err := w.Write(buf)
	return err
}

// csvField quotes s, with quotes doubled, when it holds a comma, a quote or
// a line break or starts with a space or tab: the cases encoding/csv
// quotes, less a few rarer ones (a leading \v or Unicode space, `\.`)
// that read back the same unquoted.
func csvField(s string) []byte {
	if s == "" || (!strings.ContainsAny(s, ",\"\r\n") && s[0] != ' ' && s[0] != '\t') {
		return []byte(s)
	}
	return []byte(`"` + strings.ReplaceAll(s, `"`, `""`) + `"`)
}
