// dtype_test.go holds the tests of dtype element sizes, element counts and dense storage bytes.

package tracemem

import (
	"math"
	"math/big"
	"slices"
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

// refDense is the exact dense size in bytes, saturated (the reference).
func refDense(shape []uint64, dtype string) uint64 {
	b, ok := DTypeBits(dtype)
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
