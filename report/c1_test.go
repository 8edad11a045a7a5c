package report

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestC1Escaper(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"plain", `"plain"`},
		{"\u009b31m red", `"\u009b31m red"`},
		{"\x1b[2J \u0085 \u009f", `"\u001b[2J \u0085 \u009f"`},
		{"é ¢ \u00a0 ok", "\"é ¢ \u00a0 ok\""}, // 0xC2 0xA2 and 0xC2 0xA0 are printable
	}
	for _, tt := range tests {
		var b bytes.Buffer
		if err := json.NewEncoder(c1Escaper{&b}).Encode(tt.in); err != nil {
			t.Fatal(err)
		}
		got := b.String()
		if got != tt.want+"\n" {
			t.Errorf("%q: got %s, want %s", tt.in, got, tt.want)
		}
		var back string
		if err := json.Unmarshal(b.Bytes(), &back); err != nil || back != tt.in {
			t.Errorf("%q: decodes to %q (%v)", tt.in, back, err)
		}
	}
}
