// intern.go holds the per-read interner of strings and shapes that repeat across records.

package tracemem

// interner hands out one shared copy of each distinct string and shape seen
// during one read, so that a million records naming "cuda:0" hold one
// "cuda:0". Lookups of a string already seen do not allocate. It is not safe
// for concurrent use; the values it returns are immutable and may be kept
// after the interner is dropped.
//
// With a limit, each table is emptied when it grows past limit entries, so a
// stream of unique ids (tensor ids) does not grow it without bound; values
// handed out stay valid.
type interner struct {
	strs   map[string]string
	shapes map[string][]uint64 // keyed by the shape's raw JSON text
	limit  int                 // 0: no limit
}

func newInterner() *interner {
	return &interner{
		strs:   make(map[string]string, 1024),
		shapes: make(map[string][]uint64, 256),
	}
}

// bytes returns the interned string equal to b.
func (in *interner) bytes(b []byte) string {
	if s, ok := in.strs[string(b)]; ok { // no allocation for the lookup
		return s
	}
	if len(b) == 0 {
		return ""
	}
	s := string(b)
	if in.limit > 0 && len(in.strs) >= in.limit {
		clear(in.strs)
	}
	in.strs[s] = s
	return s
}

// shape returns the interned shape for the raw JSON array text raw, calling
// parse on the first sight of that text. A parse error is returned as is and
// nothing is stored.
func (in *interner) shape(raw []byte, parse func([]byte) ([]uint64, error)) ([]uint64, error) {
	if s, ok := in.shapes[string(raw)]; ok {
		return s, nil
	}
	s, err := parse(raw)
	if err != nil {
		return nil, err
	}
	if in.limit > 0 && len(in.shapes) >= in.limit {
		clear(in.shapes)
	}
	in.shapes[string(raw)] = s
	return s, nil
}
