// dtype_test.go holds the tests of dtype element sizes, element counts and dense storage bytes.

package tracemem

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestDTypeBits(t *testing.T) {
	tests := []struct {
		label  string
		bits   uint64
		ok     bool
		reason string
	}{
		{"u8", 8, true, "candle short form"}, {"i8", 8, true, "candle short form"}, {"bool", 8, true, "one byte per bool"},
		{"f8", 8, true, "8-bit float"}, {"float8_e4m3fn", 8, true, "PyTorch fp8"},
		{"u16", 16, true, "candle"}, {"i16", 16, true, "candle"}, {"f16", 16, true, "candle"}, {"bf16", 16, true, "candle"},
		{"u32", 32, true, "candle"}, {"i32", 32, true, "candle"}, {"f32", 32, true, "candle"},
		{"u64", 64, true, "candle"}, {"i64", 64, true, "candle"}, {"f64", 64, true, "candle"},
		{"float32", 32, true, "long form"}, {"float16", 16, true, "long form"}, {"bfloat16", 16, true, "long form"},
		{"int64", 64, true, "long form"}, {"half", 16, true, "alias"}, {"double", 64, true, "alias"},
		{"F32", 32, true, "case-insensitive"}, {"  BF16\t", 16, true, "trimmed"}, {"torch.float32", 32, true, "torch. prefix"},
		{"Torch.Int8", 8, true, "prefix case-insensitive"},
		{"f4", 4, true, "sub-byte counted in bits"}, {"i4", 4, true, "sub-byte"}, {"int4", 4, true, "sub-byte long form"},
		{"float4_e2m1fn", 4, true, "fp4"}, {"complex128", 128, true, "two f64"},
		{"float4_e2m1fn_x2", 8, true, "PyTorch packs two fp4 values in a 1-byte element"},
		{"f8e4m3", 8, true, "Candle fp8"}, {"f8e8m0", 8, true, "Candle's scale type (DType::F8E8M0)"},
		{"f6e2m3", 6, true, "Candle's 6-bit float, counted in bits"}, {"f6e3m2", 6, true, "Candle's other 6-bit float"},
		{"F8_E4M3", 8, true, "safetensors spelling"}, {"F6_E2M3", 6, true, "safetensors spelling"}, {"F8_E8M0", 8, true, "safetensors spelling"},
		{"torch.quint4x2", 8, true, "two 4-bit values in a 1-byte element"}, {"quint2x4", 8, true, "four 2-bit values in a 1-byte element"},
		{"torch.float8_e4m3fnuz", 8, true, "the longest labels fit with the torch. prefix (21 bytes)"},
		{" \tTORCH.FLOAT4_E2M1FN_X2\n", 8, true, "a long label with prefix, upper case and white space"},
		{"FLOAT8_E5M2FNUZ", 8, true, "Z is lowered like any other upper-case letter"},
		{"HALF", 16, true, "A is lowered like any other upper-case letter"},
		{"float8_e4m3fnuz", 8, true, "PyTorch fp8 variant"},
		{"int2", 2, true, "2-bit type, counted in bits"}, {"u2", 2, true, "2-bit type"},
		{"bit", 1, true, "1-bit type, counted in bits"}, {"u1", 1, true, "1-bit type"},
		{"complex32", 32, true, "two f16"}, {"chalf", 32, true, "PyTorch's name for complex32"}, {"complex64", 64, true, "two f32"},
		{"f8e4m3fn", 8, true, "XLA's fp8 (from a user trial: unknown though float8_e4m3fn was known)"},
		{"F8E4M3B11FNUZ", 8, true, "XLA's fp8 with bias 11"}, {"float8_e3m4", 8, true, "ml_dtypes fp8"},
		{"s8", 8, true, "XLA's signed 8-bit"}, {"s16", 16, true, "XLA"}, {"s32", 32, true, "XLA"}, {"s64", 64, true, "XLA"},
		{"s4", 4, true, "XLA's int4"}, {"pred", 8, true, "XLA's bool, a byte"},
		{"f4e2m1fn", 4, true, "XLA's fp4"}, {"float6_e2m3fn", 6, true, "ml_dtypes fp6"},
		{"torch.uint3", 3, true, "PyTorch's sub-byte shell types (from a user trial)"}, {"int5", 5, true, "PyTorch"},
		{"uint6", 6, true, "PyTorch"}, {"int7", 7, true, "PyTorch"},
		{"<f4", 0, false, "NumPy's codes are not labels here (f4 is a 4-bit float, as in Candle)"},
		{"", 0, false, "empty"}, {"weird", 0, false, "unknown"}, {"f32x", 0, false, "no prefix matching"},
		{"torch.", 0, false, "prefix only"}, {string(make([]byte, 100)), 0, false, "long garbage"},
	}
	for _, tc := range tests {
		bits, ok := DTypeBits(tc.label)
		if bits != tc.bits || ok != tc.ok {
			t.Errorf("DTypeBits(%q) = %d, %v; want %d, %v (%s)", tc.label, bits, ok, tc.bits, tc.ok, tc.reason)
		}
		size, ok := DTypeSize(tc.label)
		if want := (tc.bits + 7) / 8; size != want || ok != tc.ok {
			t.Errorf("DTypeSize(%q) = %d, %v; want %d (%s)", tc.label, size, ok, want, tc.reason)
		}
	}
}

// refCount is the exact element count, saturated (the reference).
func refCount(shape []uint64) uint64 {
	if slices.Contains(shape, 0) {
		return 0
	}
	n := big.NewInt(1)
	for _, d := range shape {
		n.Mul(n, new(big.Int).SetUint64(d))
	}
	if !n.IsUint64() {
		return math.MaxUint64
	}
	return n.Uint64()
}

// dtypeSpec is the tests' own statement of every label DTypeBits knows and
// its size in bits, by naming rule where one holds, so that the references
// (refBits) share no code with the table they check; TestDTypeLabelsComplete
// holds it to DTypeBits' labels, one for one.
var dtypeSpec = func() map[string]uint64 {
	spec := map[string]uint64{}
	add := func(bits uint64, labels ...string) {
		for _, l := range labels {
			spec[l] = bits
		}
	}
	for _, b := range []uint64{1, 2, 4, 8, 16, 32, 64} { // i8, u8, s8 (XLA), int8, uint8, ...
		for _, f := range []string{"i%d", "u%d", "s%d", "int%d", "uint%d"} {
			add(b, fmt.Sprintf(f, b))
		}
	}
	for _, b := range []uint64{3, 5, 6, 7} { // PyTorch's shell types
		add(b, fmt.Sprintf("int%d", b), fmt.Sprintf("uint%d", b))
	}
	for _, b := range []uint64{4, 8, 16, 32, 64} { // f32, fp32, float32, ...
		add(b, fmt.Sprintf("f%d", b), fmt.Sprintf("fp%d", b), fmt.Sprintf("float%d", b))
	}
	for _, b := range []uint64{32, 64, 128} { // a complex element is two floats
		add(b, fmt.Sprintf("complex%d", b), fmt.Sprintf("c%d", b))
	}
	for _, e := range []string{"e4m3", "e5m2", "e8m0", "e4m3fn", "e4m3fnuz", "e5m2fnuz", "e6m2", "e3m4", "e4m3b11fnuz", "e8m0fnu"} {
		add(8, "f8"+e) // Candle's and XLA's fp8
	}
	for _, e := range []string{"e4m3", "e4m3fn", "e4m3fnuz", "e5m2", "e5m2fnuz", "e8m0fnu", "e3m4", "e4m3b11fnuz"} {
		add(8, "float8_"+e) // PyTorch's and ml_dtypes'
	}
	add(8, "f8_e4m3", "f8_e5m2", "f8_e8m0") // safetensors'
	add(6, "fp6", "f6e2m3", "f6e3m2", "f6e2m3fn", "f6e3m2fn", "f6_e2m3", "f6_e3m2", "float6_e2m3fn", "float6_e3m2fn")
	add(4, "f4e2m1", "f4e2m1fn", "float4_e2m1fn")
	add(8, "bool", "byte", "char", "pred", "qint8", "quint8")
	add(8, "float4_e2m1fn_x2", "quint4x2", "quint2x4") // a byte holding two or four values
	add(16, "half", "bf16", "bfloat16", "short")
	add(32, "int", "float", "tf32", "qint32", "chalf")
	add(64, "long", "double", "cfloat")
	add(128, "cdouble")
	add(1, "bit")
	return spec
}()

// refBits is the reference size in bits of a dtype label, from dtypeSpec:
// trimmed, lower-cased, an optional "torch." prefix dropped.
func refBits(label string) (uint64, bool) {
	l := strings.ToLower(strings.TrimSpace(label))
	if rest, ok := strings.CutPrefix(l, "torch."); ok && rest != "" {
		l = rest
	}
	b, ok := dtypeSpec[l]
	return b, ok
}

// TestDTypeLabelsComplete holds dtypeSpec to the labels of DTypeBits' switch,
// read from its source, and DTypeBits to dtypeSpec's sizes: a label added to
// one and not the other, or filed under the wrong size, fails.
func TestDTypeLabelsComplete(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "dtype.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	inSwitch := map[string]bool{}
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == "DTypeBits" {
			ast.Inspect(fn, func(n ast.Node) bool {
				if cc, ok := n.(*ast.CaseClause); ok {
					for _, e := range cc.List {
						if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
							s, _ := strconv.Unquote(lit.Value)
							inSwitch[s] = true
						}
					}
				}
				return true
			})
		}
	}
	if len(inSwitch) < 50 {
		t.Fatalf("found %d labels in DTypeBits' switch; the parse missed them", len(inSwitch))
	}
	for l := range inSwitch {
		if _, ok := dtypeSpec[l]; !ok {
			t.Errorf("DTypeBits knows %q, dtypeSpec does not", l)
		}
	}
	for l, want := range dtypeSpec {
		if !inSwitch[l] {
			t.Errorf("dtypeSpec has %q, DTypeBits' switch does not", l)
		}
		for _, form := range []string{l, strings.ToUpper(l), " torch." + l + "\n"} {
			if got, ok := DTypeBits(form); got != want || !ok {
				t.Errorf("DTypeBits(%q) = %d, %v; want %d, true", form, got, ok, want)
			}
		}
	}
}

// refDense is the exact dense size in bytes, saturated (the reference).
func refDense(shape []uint64, dtype string) uint64 {
	b, ok := refBits(dtype)
	if !ok {
		return 0
	}
	n := big.NewInt(1)
	for _, d := range shape {
		n.Mul(n, new(big.Int).SetUint64(d))
	}
	n.Mul(n, new(big.Int).SetUint64(b))
	n.Add(n, big.NewInt(7))
	n.Div(n, big.NewInt(8))
	if !n.IsUint64() {
		return math.MaxUint64
	}
	return n.Uint64()
}

func TestElementCountAndDenseBytes(t *testing.T) {
	const max = math.MaxUint64
	tests := []struct {
		name   string
		shape  []uint64
		dtype  string
		count  uint64
		dense  uint64
		reason string
	}{
		{"scalar", nil, "f32", 1, 4, "the empty shape is a scalar: one element"},
		{"empty non-nil", []uint64{}, "f64", 1, 8, "same as nil"},
		{"zero dim", []uint64{3, 0, 5}, "f32", 0, 0, "a zero dimension has no elements"},
		{"matrix", []uint64{10, 10}, "bf16", 100, 200, "count x size"},
		{"sub-byte odd", []uint64{3}, "f4", 3, 2, "12 bits round up to 2 bytes"},
		{"sub-byte even", []uint64{4}, "i4", 4, 2, "16 bits"},
		{"6-bit", []uint64{4096, 4096}, "f6e2m3", 1 << 24, 12 << 20, "6 bits each: 12 MiB for 16M elements"},
		{"6-bit odd", []uint64{3}, "f6e3m2", 3, 3, "18 bits round up to 3 bytes"},
		{"unknown dtype", []uint64{4}, "weird", 4, 0, "unknown dtype has no size"},
		{"count saturates", []uint64{1 << 32, 1 << 32}, "u8", max, max, "2^64 does not wrap to 0"},
		{"zero after overflow", []uint64{1 << 40, 1 << 40, 0}, "u8", 0, 0, "a zero dimension makes 0 even after the product overflowed"},
		{"zero well after overflow", []uint64{1 << 40, 1 << 40, 3, 0}, "u8", 0, 0, "a zero dimension makes 0 even when more dimensions follow the overflow"},
		{"bits past 2^128", []uint64{1 << 33, 1 << 32, 1 << 63}, "bit", max, max, "2^65 bits times 2^63 is 2^128 bits: the high word of the product saturates"},
		{"bits past 2^128 by a carry", []uint64{7<<60 + 1, 2635249153387078802}, "u16", max, max, "(7*2^64+16) bits times floor(2^64/7) is just over 2^128 bits: the middle word carries"},
		{"2-bit", []uint64{5}, "int2", 5, 2, "10 bits round up to 2 bytes"},
		{"1-bit", []uint64{9}, "bit", 9, 2, "9 bits round up to 2 bytes"},
		{"bytes saturate", []uint64{1 << 62}, "f32", 1 << 62, max, "2^62 x 4 bytes overflows"},
		{"bits near limit", []uint64{1<<61 + 1}, "i4", 1<<61 + 1, 1<<60 + 1, "4 bits each: (2^61+1)/2 rounded up"},
	}
	for _, tc := range tests {
		if got := ElementCount(tc.shape); got != tc.count {
			t.Errorf("%s: ElementCount(%v) = %d, want %d (%s)", tc.name, tc.shape, got, tc.count, tc.reason)
		}
		if got := DenseBytes(tc.shape, tc.dtype); got != tc.dense {
			t.Errorf("%s: DenseBytes(%v, %q) = %d, want %d (%s)", tc.name, tc.shape, tc.dtype, got, tc.dense, tc.reason)
		}
	}
	// against the big.Int reference
	dims := []uint64{0, 1, 2, 3, 7, 255, 1 << 20, 1<<31 + 1, 1 << 33, math.MaxUint32, math.MaxUint64}
	for _, dt := range []string{"f4", "f6e2m3", "u8", "bf16", "f32", "f64", "complex128", "weird"} {
		for _, a := range dims {
			for _, b := range dims {
				shape := []uint64{a, b, 3}
				if got, want := ElementCount(shape), refCount(shape); got != want {
					t.Errorf("ElementCount(%v) = %d, reference %d", shape, got, want)
				}
				if got, want := DenseBytes(shape, dt), refDense(shape, dt); got != want {
					t.Errorf("DenseBytes(%v, %s) = %d, reference %d", shape, dt, got, want)
				}
			}
		}
	}
}

func TestResolveBytes(t *testing.T) {
	seven := uint64(7)
	zero := uint64(0)
	tests := []struct {
		name     string
		explicit *uint64
		want     uint64
		reason   string
	}{
		{"explicit", &seven, 7, "an explicit size wins over shape x dtype"},
		{"explicit zero", &zero, 0, "an explicit 0 is kept (a view)"},
		{"derived", nil, 400, "absent: 10x10 f32"},
	}
	for _, tc := range tests {
		if got := ResolveBytes(tc.explicit, []uint64{10, 10}, "f32"); got != tc.want {
			t.Errorf("%s: ResolveBytes = %d, want %d (%s)", tc.name, got, tc.want, tc.reason)
		}
	}
	op := Op{Shape: []uint64{2, 2}, DType: "f16"}
	if got := op.Bytes(); got != 8 {
		t.Errorf("Op.Bytes derived = %d, want 8", got)
	}
	op.StorageBytes = &seven
	if got := op.Bytes(); got != 7 {
		t.Errorf("Op.Bytes explicit = %d, want 7", got)
	}
}
