// category_test.go holds the tests of categories, CategoryForStep and CategoryBytes.

package tracemem

import (
	stdjson "encoding/json"
	"errors"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/google/go-cmp/cmp"
)

func TestCategoryForStep(t *testing.T) {
	tests := []struct {
		step         Step
		requiresGrad bool
		want         Category
		reason       string
	}{
		{StepBackward, false, CategoryGradient, "backward makes gradients"},
		{StepBackward, true, CategoryGradient, "whatever requires_grad says"},
		{StepOptimizer, false, CategoryOptimizer, "optimizer makes optimizer state"},
		{StepOptimizer, true, CategoryOptimizer, "whatever requires_grad says"},
		{StepForward, false, CategoryActivation, "forward makes activations"},
		{StepForward, true, CategoryActivation, "even when it requires grad"},
		{StepNone, true, CategoryParameter, "no step and requires grad: a parameter"},
		{StepNone, false, CategoryActivation, "no step and no grad: an activation"},
	}
	for _, tc := range tests {
		if got := CategoryForStep(tc.step, tc.requiresGrad); got != tc.want {
			t.Errorf("CategoryForStep(%v, %v) = %v, want %v (%s)", tc.step, tc.requiresGrad, got, tc.want, tc.reason)
		}
	}
}

func TestCategoryText(t *testing.T) {
	names := map[Category]string{CategoryOther: "other", CategoryParameter: "parameter", CategoryActivation: "activation",
		CategoryGradient: "gradient", CategoryOptimizer: "optimizer"}
	if len(names) != NumCategories {
		t.Fatalf("%d names for %d categories", len(names), NumCategories)
	}
	for c, name := range names {
		b, err := c.MarshalText()
		if err != nil || string(b) != name || c.String() != name {
			t.Errorf("%d: MarshalText %q %v, String %q; want %q", c, b, err, c.String(), name)
		}
		var back Category = 99
		if err := back.UnmarshalText([]byte(name)); err != nil || back != c {
			t.Errorf("UnmarshalText(%q) = %v, %v", name, back, err)
		}
		if err := back.UnmarshalText([]byte(strings.ToUpper(name[:1]) + name[1:])); err == nil {
			t.Errorf("UnmarshalText of %q capitalised was accepted (names are exact, in case too)", name)
		}
	}
	var zero Category
	if zero != CategoryOther {
		t.Error("the zero Category is not other")
	}
	var c Category = CategoryGradient
	if err := c.UnmarshalText(nil); err != nil || c != CategoryOther {
		t.Errorf(`UnmarshalText("") = %v, %v; want other (absent means other)`, c, err)
	}
	if err := c.UnmarshalText([]byte("x")); err == nil {
		t.Error(`UnmarshalText("x") was accepted: only "" is other without its name (from a mutation test)`)
	}
	err := c.UnmarshalText([]byte("Parameter"))
	var ee *EnumError
	if !errors.As(err, &ee) || ee.Value != "Parameter" ||
		err.Error() != `unknown category "Parameter" (want other, parameter, activation, gradient or optimizer)` {
		t.Errorf("UnmarshalText(Parameter) error %v: want an EnumError naming the value and the set (names are case-sensitive)", err)
	}
	if _, err := Category(NumCategories).MarshalText(); err == nil {
		t.Error("MarshalText of an out-of-range category did not fail")
	}
	if s := Category(200).String(); s != "Category(200)" {
		t.Errorf("String of an out-of-range category = %q", s)
	}
	seen := CategorySet(0)
	for _, c := range Categories {
		if seen.Has(c) {
			t.Errorf("Categories lists %v twice", c)
		}
		seen = seen.With(c)
	}
	if Categories[len(Categories)-1] != CategoryOther {
		t.Error("other is not displayed last")
	}
	// The display order, which outputs' by_category objects keep: the
	// declaration order with other moved last (from a mutation test: a
	// swap of two went unseen).
	want := [NumCategories]Category{CategoryParameter, CategoryActivation, CategoryGradient, CategoryOptimizer, CategoryOther}
	if Categories != want {
		t.Errorf("Categories = %v, want %v", Categories, want)
	}
}

// TestCategoriesIsACopy: a caller that changes the exported Categories
// changes nothing the library writes (from an API review: Len and
// MarshalJSON read it, and wrote {"other":4,"other":4,"other":4}).
func TestCategoriesIsACopy(t *testing.T) {
	saved := Categories
	defer func() { Categories = saved }()
	Categories[0], Categories[1] = CategoryOther, CategoryOther
	var b CategoryBytes
	b.Present = b.Present.With(CategoryOther).With(CategoryParameter)
	b.Bytes[CategoryOther], b.Bytes[CategoryParameter] = 4, 1
	if n := b.Len(); n != 2 {
		t.Errorf("Len = %d, want 2", n)
	}
	got, err := b.MarshalJSON()
	if want := `{"parameter":1,"other":4}`; err != nil || string(got) != want {
		t.Errorf("MarshalJSON = %s, %v; want %s", got, err, want)
	}
}

func TestCategoryBytes(t *testing.T) {
	var b CategoryBytes
	b.Bytes[CategoryActivation] = 100
	b.Bytes[CategoryGradient] = 0
	b.Present = b.Present.With(CategoryActivation).With(CategoryGradient).With(CategoryOther)
	b.Bytes[CategoryOther] = 5
	if b.Len() != 3 || b.Total() != 105 || b.Get(CategoryActivation) != 100 || b.Get(CategoryParameter) != 0 {
		t.Errorf("Len %d Total %d", b.Len(), b.Total())
	}
	for _, c := range []Category{NumCategories, 9, 255} { // not categories: absent, as Has says
		if got := b.Get(c); got != 0 || b.Present.Has(c) {
			t.Errorf("Get(%d) = %d, Has = %v; want 0 and false for a value out of range", c, got, b.Present.Has(c))
		}
	}
	var order []Category
	for c := range b.All() {
		order = append(order, c)
	}
	if diff := cmp.Diff([]Category{CategoryActivation, CategoryGradient, CategoryOther}, order); diff != "" {
		t.Errorf("All order (-want +got):\n%s", diff)
	}
	for c := range b.All() { // stopping early must not panic
		_ = c
		break
	}
	data, err := json.Marshal(b)
	if err != nil || string(data) != `{"activation":100,"gradient":0,"other":5}` {
		t.Errorf("MarshalJSON = %s, %v (a present 0 is listed, absent categories are not)", data, err)
	}
	for name, unmarshal := range map[string]func([]byte, any) error{"v2": func(d []byte, v any) error { return json.Unmarshal(d, v) }, "v1": stdjson.Unmarshal} {
		var back CategoryBytes
		if err := unmarshal(data, &back); err != nil || back != b {
			t.Errorf("%s: UnmarshalJSON = %+v, %v; want %+v", name, back, err, b)
		}
	}
	var back CategoryBytes
	for _, bad := range []struct {
		in, want, reason string
	}{
		{`{"weights":1}`, `unknown category "weights"`, "not a category"},
		{`{"gradient":1,"other":-1}`, `^by category: other: want an unsigned integer, got negative number -1$`, "said as the readers say it, not strconv's text (from a user trial)"},
		{`{"other":18446744073709551616}`, `^by category: other: number 18446744073709551616 overflows uint64$`, "beyond uint64"},
		{`{"other":"1"}`, `^by category: other: want an unsigned integer, got string "1"$`, "a string"},
		{`[1]`, `^by category: want an object`, "not an object"},
		{`{"other":{}}`, `^by category: other: want an unsigned integer, got an object$`, "an object as a count"},
		{`{"other":1.5}`, `^by category: other: want an unsigned integer in plain digits, got 1.5$`, "a fraction"},
		{`{"activation":1} {"gradient":3}`, `^by category: more data after the object$`, "two objects are not one (from an API review: the second was dropped)"},
		{`{"activation":1} x`, `^by category: more data after the object$`, "nor an object and text"},
		{``, `^by category: .*EOF`, "no value at all"},
		{`{"other":1`, `^by category: .*EOF`, "an object cut short after a value"},
		{`{"other"`, `^by category: .*EOF`, "an object cut short after a name"},
		{`{"other":1 "gradient":2}`, `^by category: .*invalid character`, "a missing comma"},
	} {
		back = CategoryBytes{Present: CategorySet(0).With(CategoryOther)} // left empty on an error
		err := back.UnmarshalJSON([]byte(bad.in))
		if err == nil || !regexp.MustCompile(bad.want).MatchString(err.Error()) || back != (CategoryBytes{}) {
			t.Errorf("%s: UnmarshalJSON(%s) = %v, leaving %+v; want an error matching %q and an empty value", bad.reason, bad.in, err, back, bad.want)
		}
		if err := json.Unmarshal([]byte(bad.in), &back); err == nil {
			t.Errorf("%s: json.Unmarshal(%s) did not fail", bad.reason, bad.in)
		}
	}
	if err := json.Unmarshal([]byte(`null`), &back); err != nil || back != (CategoryBytes{}) {
		t.Errorf("null: %+v, %v", back, err)
	}
	// From a mutation test: null among white space (as a caller may hand
	// it), and values that are no object, which must say so and not give
	// a bare io.EOF.
	back = CategoryBytes{Present: CategorySet(0).With(CategoryOther)}
	if err := back.UnmarshalJSON([]byte(" null\n")); err != nil || back != (CategoryBytes{}) {
		t.Errorf("null among white space: %+v, %v; want empty and no error", back, err)
	}
	for _, in := range []string{`5`, `"x"`, `true`, `[]`} {
		if err := back.UnmarshalJSON([]byte(in)); err == nil || !strings.HasPrefix(err.Error(), "by category: want an object, got ") {
			t.Errorf("UnmarshalJSON(%s) = %v; want a \"want an object\" error", in, err)
		}
	}
	// Counts past 2⁶³ are written and read as unsigned.
	huge := CategoryBytes{Bytes: [NumCategories]uint64{CategoryOther: 1 << 63, CategoryGradient: math.MaxUint64},
		Present: CategorySet(0).With(CategoryOther).With(CategoryGradient)}
	data, err = json.Marshal(huge)
	if want := `{"gradient":18446744073709551615,"other":9223372036854775808}`; err != nil || string(data) != want {
		t.Errorf("MarshalJSON = %s, %v; want %s", data, err, want)
	}
	if err := json.Unmarshal(data, &back); err != nil || back != huge {
		t.Errorf("read back: %+v, %v; want %+v", back, err, huge)
	}
	// A Present with bits beyond the categories (only a value built by
	// hand has them) does not make Get index past Bytes.
	wild := CategoryBytes{Bytes: b.Bytes, Present: ^CategorySet(0)}
	for c := Category(NumCategories); c < 8; c++ {
		if got := wild.Get(c); got != 0 {
			t.Errorf("Get(%d) with every bit of Present set = %d; want 0", c, got)
		}
	}
	full := CategoryBytes{Bytes: [NumCategories]uint64{math.MaxUint64, 1}, Present: CategorySet(0).With(0).With(1)}
	if full.Total() != math.MaxUint64 {
		t.Errorf("Total saturates: got %d", full.Total())
	}
	// Bytes in a category that is not present (only a value built by hand
	// has them) are not there for Get and Total either, as for All, Len and
	// JSON: one answer whichever is asked.
	stray := b
	stray.Bytes[CategoryParameter] = 7
	if got := stray.Get(CategoryParameter); got != 0 {
		t.Errorf("Get of an absent category holding 7 = %d; want 0", got)
	}
	if got := stray.Total(); got != 105 {
		t.Errorf("Total with 7 in an absent category = %d; want 105, the present ones", got)
	}
	var sum uint64
	for _, v := range stray.All() {
		sum += v
	}
	if sum != stray.Total() {
		t.Errorf("All sums to %d, Total says %d", sum, stray.Total())
	}
}

// TestCategoryBytesGetStrayBits: Get of a value that is not a category
// returns 0 even when Present has that value's bit set (only a set built
// by hand has bits above the categories); the bit alone must not send Get
// to Bytes, which has no room for it.
func TestCategoryBytesGetStrayBits(t *testing.T) {
	b := CategoryBytes{Bytes: [NumCategories]uint64{1, 2, 3, 4, 5}, Present: ^CategorySet(0)}
	tests := []struct {
		name, reason string
		c            Category
		want         uint64
	}{
		{"last category", "in range and present: its bytes", CategoryOptimizer, 5},
		{"NumCategories", "the first value out of range, its bit set in Present", NumCategories, 0},
		{"7", "the highest bit of the set, set", 7, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got uint64
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("%s: Get(%d) panicked: %v", tc.reason, tc.c, r)
					}
				}()
				got = b.Get(tc.c)
			}()
			if got != tc.want {
				t.Errorf("%s: Get(%d) = %d, want %d", tc.reason, tc.c, got, tc.want)
			}
		})
	}
}

func TestAddSubSat(t *testing.T) {
	tests := []struct{ a, b, add, sub uint64 }{
		{1, 2, 3, 0},
		{5, 3, 8, 2},
		{math.MaxUint64, 1, math.MaxUint64, math.MaxUint64 - 1},
		{math.MaxUint64 - 1, math.MaxUint64, math.MaxUint64, 0},
		{0, 0, 0, 0},
	}
	for _, tc := range tests {
		if got := addSat(tc.a, tc.b); got != tc.add {
			t.Errorf("addSat(%d, %d) = %d, want %d", tc.a, tc.b, got, tc.add)
		}
		if got := subSat(tc.a, tc.b); got != tc.sub {
			t.Errorf("subSat(%d, %d) = %d, want %d", tc.a, tc.b, got, tc.sub)
		}
	}
}
