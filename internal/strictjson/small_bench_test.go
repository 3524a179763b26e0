package strictjson

import "testing"

func BenchmarkCheckSmall(b *testing.B) {
	data := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"tool-0001","arguments":{"text":"hello"},"_meta":{"progressToken":3}}}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := Check(data); err != nil {
			b.Fatal(err)
		}
	}
}
