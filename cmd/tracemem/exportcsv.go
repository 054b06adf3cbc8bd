// exportcsv.go holds the CSV export: the timeline, one row per point.

package main

import (
	"encoding/csv"
	"io"
	"strconv"

	"github.com/tracemem/tracemem"
)

// writeCSV writes the timeline of t as CSV: a header, then one row per
// timeline point in replay order with timestamp_ns, device, live_bytes,
// free_bytes and one column per category (parameter, activation, gradient,
// optimizer, other; 0 where the point has none). free_bytes is 0 when the
// device's capacity is unknown.
func writeCSV(w io.Writer, t *trace) error {
	cw := csv.NewWriter(w)
	header := []string{"timestamp_ns", "device", "live_bytes", "free_bytes"}
	for _, c := range tracemem.Categories {
		header = append(header, c.String())
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	row := make([]string, len(header))
	for i := range t.profile.Timeline {
		p := &t.profile.Timeline[i]
		row[0] = strconv.FormatUint(p.TimestampNs, 10)
		row[1] = p.Device
		row[2] = strconv.FormatUint(p.LiveBytes, 10)
		row[3] = strconv.FormatUint(p.FreeBytes, 10)
		for j, c := range tracemem.Categories {
			row[4+j] = strconv.FormatUint(p.ByCategory.Get(c), 10)
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
