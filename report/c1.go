package report

import (
	"bytes"
	"fmt"
	"io"
)

// c1Escaper rewrites the C1 control characters U+0080 to U+009F as \u
// escapes in JSON written through it. encoding/json escapes C0 controls
// (ESC becomes \u001b) but leaves C1 ones raw, and U+009B is a complete CSI
// to many terminals: `auditor export` prints untrusted model output to the
// screen by default. JSON's structure is ASCII, so these characters only
// occur inside strings, where the escape denotes the same character and the
// data is unchanged.
//
// It expects each Write to hold whole UTF-8 sequences, as json.Encoder's
// one Write per value does.
type c1Escaper struct{ w io.Writer }

func (e c1Escaper) Write(p []byte) (int, error) {
	if bytes.IndexByte(p, 0xc2) < 0 {
		return e.w.Write(p)
	}
	var b bytes.Buffer
	b.Grow(len(p) + 16)
	for i := 0; i < len(p); i++ {
		// U+0080..U+009F are encoded as 0xC2 0x80..0x9F.
		if p[i] == 0xc2 && i+1 < len(p) && p[i+1] >= 0x80 && p[i+1] <= 0x9f {
			fmt.Fprintf(&b, `\u%04x`, p[i+1])
			i++
			continue
		}
		b.WriteByte(p[i])
	}
	if _, err := e.w.Write(b.Bytes()); err != nil {
		return 0, err
	}
	return len(p), nil
}
