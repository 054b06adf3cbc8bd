// timeline.go holds the per-device timeline points of a replay and their peak-preserving downsampling.

package tracemem

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
