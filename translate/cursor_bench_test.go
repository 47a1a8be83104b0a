package translate

import "testing"

func BenchmarkDecodeCursor(b *testing.B) {
	c := EncodeCursor("1234567890")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeCursor(c); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeCursor(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = EncodeCursor("1234567890")
	}
}
