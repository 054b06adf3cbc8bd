package prefault

import "testing"

// TestAheadKeepsContents: the buffer is written while its pages are mapped
// in, and read back whole; under the race detector this also shows that
// the helper makes no access Go can see.
func TestAheadKeepsContents(t *testing.T) {
	for _, c := range []struct {
		name  string
		n     int // elements
		reuse bool
	}{
		{"fresh", 8 << 20 / 8, false},
		{"written before", 8 << 20 / 8, true},
		{"under MinBytes", MinBytes / 8 / 2, false},
		{"odd size", MinBytes/8*3 + 13, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := make([]uint64, 0, c.n)
			if c.reuse {
				s = s[:c.n]
				for i := range s {
					s[i] = ^uint64(i)
				}
				s = s[:0]
			}
			stop := Ahead(Bytes(s), make([]byte, MinBytes))
			for i := range c.n {
				s = append(s, uint64(i)*3)
			}
			stop()
			stop() // a second call does nothing
			for i, v := range s {
				if v != uint64(i)*3 {
					t.Fatalf("s[%d] = %d, want %d", i, v, uint64(i)*3)
				}
			}
		})
	}
}
