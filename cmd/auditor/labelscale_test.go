package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkLabels_ImportThenReport imports 432,000 label rows (issue 28:
// "inside the limits"; a hundred labellers on each of the demo's answers,
// the history per answer that made import and the tally super-linear) into
// the demo audit, then reports. Run it with -benchtime=1x and -cpuprofile /
// -memprofile to see where the time goes; for peak memory run the binary
// under /usr/bin/time -v (the README's numbers).
func BenchmarkLabels_ImportThenReport(b *testing.B) {
	rows := 432000
	if s := os.Getenv("AUDITOR_BENCH_LABEL_ROWS"); s != "" {
		fmt.Sscan(s, &rows)
	}
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dir := b.TempDir()
		if r := benchMain("demo", "--headless", "--dir", dir, "--samples", "30"); r.code != 0 {
			b.Fatalf("demo: %s", r)
		}
		auditPath := filepath.Join(dir, "audit.toml")
		out := benchMain("export", auditPath, "--what", "responses", "--format", "jsonl").out
		var keys []string
		seen := map[string]bool{}
		for _, line := range strings.Split(out, "\n") {
			var rec struct {
				Key   string `json:"key"`
				Error string `json:"error"`
			}
			if json.Unmarshal([]byte(line), &rec) != nil || rec.Error != "" || seen[rec.Key] {
				continue
			}
			seen[rec.Key] = true
			keys = append(keys, rec.Key)
		}
		var buf bytes.Buffer
		for n := 0; n < rows; n++ {
			k := keys[n%len(keys)]
			fmt.Fprintf(&buf, `{"key":%q,"violation":%t,"labeller":"lab%03d","note":"","at":"2026-12-04T20:00:00Z","schema_version":1,"source":"blind"}`+"\n",
				k, n%7 == 0, n/len(keys))
		}
		file := filepath.Join(dir, "labels.jsonl")
		if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if r := benchMain("import-labels", auditPath, file); r.code != 0 && r.code != exitPartial {
			b.Fatalf("import-labels: %s", r)
		}
		if r := benchMain("report", auditPath); r.code != 0 && r.code != exitGate {
			b.Fatalf("report: %s", r)
		}
	}
}

func benchMain(args ...string) result {
	var out, errOut bytes.Buffer
	code := Main(args, Stdio{In: strings.NewReader(""), Out: &out, Err: &errOut})
	return result{code: code, out: out.String(), errOut: errOut.String()}
}
