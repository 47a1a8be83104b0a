package ticketfilter

import "testing"

// The validator runs on every GET /tickets that carries _filters, so a
// typical value must cost a few microseconds and few allocations.

func BenchmarkFilterValidate(b *testing.B) {
	benchmarkFilter(b, `[["status","IN","C,L"],["date_created","D>=","2024-01-01 00:00:00"],["subject","E","printer"]]`)
}

func BenchmarkFilterValidateObject(b *testing.B) {
	benchmarkFilter(b, `{"status":"C","subject":"printer","agentid":"12,34"}`)
}

func BenchmarkFilterValidateEscapes(b *testing.B) {
	benchmarkFilter(b, `[["search","L","caf\u00e9 \"printer\""],["field_colour","E","bl\u00fc"]]`)
}

func BenchmarkFilterReject(b *testing.B) {
	v := NewFilterValidator(FilterConfig{})
	raw := `[["status","IN","C,L"],["status","L","C"]]`
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Parse(raw); err == nil {
			b.Fatal("accepted")
		}
	}
}

func benchmarkFilter(b *testing.B, raw string) {
	v := NewFilterValidator(FilterConfig{})
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Parse(raw); err != nil {
			b.Fatal(err)
		}
	}
}
