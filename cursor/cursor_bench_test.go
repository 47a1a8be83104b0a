package cursor

import "testing"

func BenchmarkDecodeCursor(b *testing.B) {
	c := Encode("1234567890")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(c); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeCursor(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = Encode("1234567890")
	}
}
