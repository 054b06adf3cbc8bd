// category.go holds the memory category of an allocation and per-category byte counters.

package tracemem

import (
	"bytes"
	"fmt"
	"io"
	"iter"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// Category is what an allocation holds, as in PyTorch's memory timeline.
// The zero value is CategoryOther, which is also what an absent category
// means in a trace.
type Category uint8

const (
	CategoryOther      Category = iota // "other": anything not below
	CategoryParameter                  // "parameter": model weights
	CategoryActivation                 // "activation": forward outputs and temporaries
	CategoryGradient                   // "gradient": gradients made by backward
	CategoryOptimizer                  // "optimizer": optimizer state

	// NumCategories is the number of categories; Category values are below it.
	NumCategories = 5
)

var categoryNames = []string{"other", "parameter", "activation", "gradient", "optimizer"}

// Categories lists every category in display order (other last). It is the
// callers' copy: the library keeps its own, so that changing it changes no
// output.
var Categories = [NumCategories]Category{
	CategoryParameter, CategoryActivation, CategoryGradient, CategoryOptimizer, CategoryOther,
}

// displayOrder is the order the library lists categories in: a copy of
// Categories made at start-up.
var displayOrder = Categories

// valid reports whether c is below NumCategories, one of the categories.
func (c Category) valid() bool { return c < NumCategories }

// String returns the category's JSON name ("activation"), or
// "Category(n)" for a value out of range.
func (c Category) String() string { return enumString(categoryNames, int(c), "Category") }

// MarshalText implements encoding.TextMarshaler.
func (c Category) MarshalText() ([]byte, error) {
	return enumText(categoryNames, int(c), "Category")
}

// UnmarshalText implements encoding.TextUnmarshaler. The empty string is
// CategoryOther (absent means other).
func (c *Category) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*c = CategoryOther
		return nil
	}
	i, err := parseEnum("category", categoryNames, b)
	*c = Category(i)
	return err
}

// CategoryForStep is the category of a tensor made during the given step:
// backward makes gradients, optimizer makes optimizer state, forward makes
// activations; with no step, a tensor that requires grad is a parameter and
// anything else an activation.
func CategoryForStep(step Step, requiresGrad bool) Category {
	switch step {
	case StepBackward:
		return CategoryGradient
	case StepOptimizer:
		return CategoryOptimizer
	case StepForward:
		return CategoryActivation
	}
	if requiresGrad {
		return CategoryParameter
	}
	return CategoryActivation
}

// CategorySet is a set of categories, one bit per Category.
type CategorySet uint8

// Has reports whether c is in the set.
func (s CategorySet) Has(c Category) bool { return s&(1<<c) != 0 }

// With returns the set with c added.
func (s CategorySet) With(c Category) CategorySet { return s | 1<<c }

// CategoryBytes holds a byte count per category and which categories are
// present. It is a plain value (no map) so that timelines of millions of
// points cost no allocation per point. In JSON it is an object keyed by the
// lowercase category name, listing the present categories only.
type CategoryBytes struct {
	Bytes   [NumCategories]uint64 // bytes per category, indexed by Category
	Present CategorySet           // the categories listed; a present category may hold 0 bytes
}

// Get returns the bytes of category c: 0 when c is absent (not in
// Present, whatever Bytes holds for it) or not a category.
func (b CategoryBytes) Get(c Category) uint64 {
	if !c.valid() || !b.Present.Has(c) {
		return 0
	}
	return b.Bytes[c]
}

// Total returns the sum over the present categories, saturating at the
// maximum uint64.
func (b CategoryBytes) Total() uint64 {
	var t uint64
	for c, v := range b.Bytes {
		if b.Present.Has(Category(c)) {
			t = addSat(t, v)
		}
	}
	return t
}

// All yields the present categories and their bytes, in display order.
func (b CategoryBytes) All() iter.Seq2[Category, uint64] {
	return func(yield func(Category, uint64) bool) {
		for _, c := range displayOrder {
			if b.Present.Has(c) && !yield(c, b.Bytes[c]) {
				return
			}
		}
	}
}

// Len returns the number of present categories.
func (b CategoryBytes) Len() int {
	n := 0
	for _, c := range displayOrder {
		if b.Present.Has(c) {
			n++
		}
	}
	return n
}

// MarshalJSON writes the present categories as a JSON object.
func (b CategoryBytes) MarshalJSON() ([]byte, error) {
	out := make([]byte, 0, 16+24*NumCategories)
	out = append(out, '{')
	first := true
	for c, v := range b.All() {
		if !first {
			out = append(out, ',')
		}
		first = false
		out = append(out, '"')
		out = append(out, categoryNames[c]...)
		out = append(out, '"', ':')
		out = strconv.AppendUint(out, v, 10)
	}
	return append(out, '}'), nil
}

// UnmarshalJSON reads an object of category name to bytes; null is empty.
// On an error b is left empty, not with the categories read before it.
func (b *CategoryBytes) UnmarshalJSON(data []byte) error {
	*b = CategoryBytes{}
	var out CategoryBytes
	if string(bytes.TrimSpace(data)) == "null" {
		return nil
	}
	dec := jsontext.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.ReadToken(); err != nil {
		return fmt.Errorf("by category: %w", err)
	} else if tok.Kind() != '{' {
		return fmt.Errorf("by category: want an object, got %v", tok.Kind())
	}
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil {
			return fmt.Errorf("by category: %w", err)
		}
		var c Category
		if err := c.UnmarshalText([]byte(name.String())); err != nil {
			return err
		}
		val, err := dec.ReadValue()
		if err != nil {
			return fmt.Errorf("by category: %w", err)
		}
		v, ok := parseUint(val)
		if !ok { // said as the readers say it
			return fmt.Errorf("by category: %s: %s", c, uintError("", val).Msg)
		}
		out.Bytes[c] = v
		out.Present = out.Present.With(c)
	}
	if _, err := dec.ReadToken(); err != nil {
		return fmt.Errorf("by category: %w", err)
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		// Called directly, with more than one value (json.Unmarshal
		// never passes that).
		return fmt.Errorf("by category: more data after the object")
	}
	*b = out
	return nil
}

// addSat returns a+b, or the maximum uint64 when the sum would wrap.
func addSat(a, b uint64) uint64 {
	if s := a + b; s >= a {
		return s
	}
	return ^uint64(0)
}

// subSat returns a-b, or 0 when b > a.
func subSat(a, b uint64) uint64 {
	if a >= b {
		return a - b
	}
	return 0
}
