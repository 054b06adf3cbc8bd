// timeline.go holds the per-device timeline points of a replay, their peak-preserving downsampling, and the peak of a window of a profile's timeline.

package tracemem

import "sort"

// point is the state of one device right after one memory event. Byte values
// are relative to the device's pre-existing pool: the bytes that were live
// from the start of the trace are added when a profile is built, because
// they are known only once the frees that reveal them have been replayed.
type point struct {
	seq  uint64 // index of the event in replay order
	ts   uint64 // ns since trace start
	live int64  // live bytes minus the device's whole pre-existing pool
	cats [NumCategories]int64
	seen CategorySet // categories seen on the device so far (pool aside)
	dev  int32       // the device
}

// timeline keeps a device's points. With a limit of max points it keeps the
// latest point, when max > 1, and, for consecutive windows of w points over
// the points before it (w the smallest power of two such that they fit in
// max-1 windows; over all points in max windows when max is 1), the highest
// point of each window, the first one on ties. It does so online: when a
// window past the limit would open, adjacent windows are merged pairwise and
// w doubles. The result depends only on the points, not on when it is read;
// every device peak survives exactly, because the highest point of the
// window holding the peak is the peak itself; and the latest point keeps the
// state the device is in, which the highest point of the last window would
// not.
type timeline struct {
	max     int     // the most points kept, > 0 (without a limit the Analyzer keeps its points in one list)
	w       uint64  // window size, a power of two
	kept    []point // highest point of each full window
	open    point   // highest point of the current, partial window
	count   uint64  // points in the open window
	last    point   // the latest point, when max > 1: a window of its own
	hasLast bool
}

func (t *timeline) add(p *point) {
	if t.max == 1 {
		t.window(p)
		return
	}
	if t.hasLast {
		t.window(&t.last)
	}
	t.last, t.hasLast = *p, true
}

// window adds p to the windows.
func (t *timeline) window(p *point) {
	if t.w == 0 {
		t.w = 1
	}
	if t.count == 0 && len(t.kept) == max(t.max-1, 1) {
		t.halve()
	}
	if t.count == 0 || p.live > t.open.live {
		t.open = *p
	}
	t.count++
	if t.count == t.w {
		t.kept = append(t.kept, t.open)
		t.count = 0
	}
}

// halve merges adjacent full windows pairwise, doubling the window size. An
// odd last window becomes the open window, half full.
func (t *timeline) halve() {
	n := len(t.kept)
	for i := 0; i+1 < n; i += 2 {
		a, b := t.kept[i], t.kept[i+1]
		if b.live > a.live {
			a = b
		}
		t.kept[i/2] = a
	}
	if n%2 == 1 {
		t.open = t.kept[n-1]
		t.count = t.w
	}
	t.kept = t.kept[:n/2]
	t.w *= 2
}

// len returns the number of points a snapshot holds.
func (t *timeline) len() int {
	n := len(t.kept)
	if t.count > 0 {
		n++
	}
	if t.hasLast {
		n++
	}
	return n
}

// at returns the i-th point of a snapshot, i < t.len().
func (t *timeline) at(i int) *point {
	switch {
	case i < len(t.kept):
		return &t.kept[i]
	case i == len(t.kept) && t.count > 0:
		return &t.open
	}
	return &t.last
}

// PeakBetween returns the highest point of device from startNs to endNs, both
// included, by p's timeline: a point holds the device's state until its next
// one, so the candidates are the device's last point stamped before startNs
// (its state when the window opens), returned with TimestampNs set to
// startNs, and every point of the device stamped in the window. On ties the
// first reached wins. It answers "did this step stay under its budget": a
// span's window is StartNs to its EndNs, or to math.MaxUint64 for a span that
// never closed (the analyses end it with the trace). ok is false, with the
// zero point, when the timeline has no point of the device at or before
// endNs, or startNs > endNs.
//
// The timeline must be in time order, as every profile of this package has
// it. With the full timeline (Options.MaxTimelinePoints 0) the answer is the
// device's true peak in the window but in two cases, both from Analyze's
// rules for points: a device has no state before its first point, so
// pre-existing memory that its first event frees, live from the trace's
// start, is in no answer (as it is in no point); and a duplicate alloc of a
// tensor live on another device lowers that device without a point of its
// own, so its state when a window opens after that may be given higher than
// it was. With MaxTimelinePoints set, each point kept is the highest of a
// window of points: the answer is then exact for a window that holds the
// device's peak, and may otherwise be higher (the highest point of a window
// that opened before startNs) or lower (one after endNs) than the device's
// true peak between startNs and endNs, and ok may be false for a window
// before the device's first point kept. The cost is a binary search, then a
// scan of the points in the window and of those back to the device's last one
// before it (to the timeline's start when it has none).
func (p *MemoryProfile) PeakBetween(device string, startNs, endNs uint64) (pt TimelinePoint, ok bool) {
	if startNs > endNs {
		return TimelinePoint{}, false
	}
	tl := p.Timeline
	first := sort.Search(len(tl), func(i int) bool { return tl[i].TimestampNs >= startNs })
	for i := first - 1; i >= 0; i-- {
		if tl[i].Device == device {
			pt, ok = tl[i], true
			pt.TimestampNs = startNs
			break
		}
	}
	for i := first; i < len(tl) && tl[i].TimestampNs <= endNs; i++ {
		if tl[i].Device == device && (!ok || tl[i].LiveBytes > pt.LiveBytes) {
			pt, ok = tl[i], true
		}
	}
	return pt, ok
}
