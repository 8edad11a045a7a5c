package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/auditor-dev/auditor/report"
)

// The HTML report in a real browser: Debian's chromium, headless, with its
// plain flags (--dump-dom, --screenshot, --print-to-pdf) rather than a
// DevTools client (chromedp would be a module and its dependencies for
// what three flags do). A probe script, added to a copy of the page with
// its hash in the page's own Content-Security-Policy, records what the
// browser saw: every request the page made (the Resource Timing entries)
// and every load the policy blocked (securitypolicyviolation events), the
// document's width against the window's, and whether the page's own
// script ran. The page itself forbids every load (default-src 'none'), so
// a request would show as a violation even before it left.

// chromiumPath returns the browser, or skips the test saying why.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "/usr/bin/chromium"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium is not installed (apt-get install -y chromium; .ci/run does): the HTML report's browser checks need it")
	return ""
}

// runChromium runs headless Chromium on a fresh profile with the flags a
// closed network needs (no background requests of its own) and returns
// what it printed on standard output.
func runChromium(t *testing.T, bin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // a hung browser, not a slow one
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
		"--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
	}
	return out.String()
}

// probeScript records, into <pre id="probe">, what the browser saw.
const probeScript = `(function () {
  var violations = [];
  document.addEventListener("securitypolicyviolation", function (e) { violations.push(e.violatedDirective + " " + e.blockedURI); });
  window.addEventListener("load", function () {
    var wide = [];
    document.querySelectorAll("body *").forEach(function (el) {
      var r = el.getBoundingClientRect();
      if (r.right > window.innerWidth + 1 && !el.closest(".scroll") && wide.length < 5) { wide.push(el.tagName + "." + el.className); }
    });
    var filter = document.getElementById("filter");
    var probe = document.createElement("pre");
    probe.id = "probe";
    probe.textContent = JSON.stringify({
      scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth,
      resources: performance.getEntriesByType("resource").map(function (r) { return r.name; }),
      violations: violations, wide: wide, scriptRan: !!filter && !filter.hidden,
      plots: document.querySelectorAll("svg.plot").length
    });
    document.body.appendChild(probe);
    if (window.parent !== window) { window.parent.postMessage(probe.textContent, "*"); }
  });
})();`

// probed is a copy of page with probeScript first in its head, allowed
// by its hash beside the page's own script's.
func probed(t *testing.T, page []byte) []byte {
	t.Helper()
	meta := regexp.MustCompile(`<meta http-equiv="Content-Security-Policy" content="[^"]*">`)
	if !meta.Match(page) {
		t.Fatal("the page has no Content-Security-Policy meta tag")
	}
	csp := strings.Replace(report.PageCSP, "script-src '", "script-src '"+report.ScriptHash(probeScript)+"' '", 1)
	tag := `<meta http-equiv="Content-Security-Policy" content="` + html.EscapeString(csp) + `"><script>` + probeScript + `</script>`
	return meta.ReplaceAll(page, []byte(strings.ReplaceAll(tag, "$", "$$")))
}

type probeResult struct {
	ScrollWidth int      `json:"scrollWidth"`
	InnerWidth  int      `json:"innerWidth"`
	Resources   []string `json:"resources"`
	Violations  []string `json:"violations"`
	Wide        []string `json:"wide"`
	ScriptRan   bool     `json:"scriptRan"`
	Plots       int      `json:"plots"`
}

// checkInBrowser opens the page from file:// at 1280 and 390 pixels wide
// and checks what the browser made of it: no request, no blocked load,
// nothing wider than the window, the page's script run, every verdict,
// plot and interval in the DOM; then screenshots both widths (not blank)
// and prints the page to PDF (the print layout).
func checkInBrowser(t *testing.T, bin, audit string, page []byte, dir, name string) {
	t.Helper()
	file := filepath.Join(dir, name+".html")
	if err := os.WriteFile(file, page, 0o644); err != nil {
		t.Fatal(err)
	}
	doc := reportJSONFull(t, audit)
	for _, width := range []int{1280, 390} {
		p, dom := probeAt(t, bin, page, name, width)
		t.Logf("%s at %d px: %+v", name, width, p)
		if len(p.Resources) > 0 || len(p.Violations) > 0 {
			t.Errorf("%s at %d px: requests %v, blocked loads %v; want none", name, width, p.Resources, p.Violations)
		}
		if p.InnerWidth != width || p.ScrollWidth > p.InnerWidth {
			t.Errorf("%s at %d px: the document is %d px wide in a %d px window (cut off: %v)", name, width, p.ScrollWidth, p.InnerWidth, p.Wide)
		}
		if !p.ScriptRan {
			t.Errorf("%s at %d px: the page's own script did not run (the filter is still hidden)", name, width)
		}
		if dom != "" {
			checkDOM(t, fmt.Sprintf("%s at %d px", name, width), dom, doc, p.Plots)
		}
		shot := filepath.Join(dir, fmt.Sprintf("%s-%d.png", name, width))
		runChromium(t, bin, fmt.Sprintf("--window-size=%d,900", width), "--screenshot="+shot, "file://"+file)
		checkScreenshot(t, shot)
	}
	pdf := filepath.Join(dir, name+".pdf")
	runChromium(t, bin, "--no-pdf-header-footer", "--print-to-pdf="+pdf, "file://"+file)
	if data, err := os.ReadFile(pdf); err != nil || !bytes.HasPrefix(data, []byte("%PDF")) || len(data) < 20_000 {
		t.Errorf("%s: printing gave %d bytes (%v)", name, len(data), err)
	}
}

// probeAt opens a probed copy of page from file:// at width pixels and
// returns what the probe saw, and the DOM when the page was the window's
// own (at 500 px and more). Headless Chromium lays a window out at least
// 500 px wide whatever --window-size says (its screenshots do take the
// size), so a narrower page is measured in an iframe of that width, whose
// probe posts what it saw to the frame around it.
func probeAt(t *testing.T, bin string, page []byte, name string, width int) (probeResult, string) {
	t.Helper()
	dir := t.TempDir()
	probeFile := filepath.Join(dir, name+"-probe.html")
	if err := os.WriteFile(probeFile, probed(t, page), 0o644); err != nil {
		t.Fatal(err)
	}
	target := probeFile
	if width < 500 {
		target = filepath.Join(dir, name+"-frame.html")
		frame := fmt.Sprintf(`<!DOCTYPE html><html><body style="margin:0"><iframe src="%s" width="%d" height="900" style="border:0"></iframe>`,
			filepath.Base(probeFile), width) +
			`<pre id="probe"></pre><script>window.addEventListener("message", function (e) { document.getElementById("probe").textContent = e.data; });</script></body></html>`
		if err := os.WriteFile(target, []byte(frame), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dom := runChromium(t, bin, fmt.Sprintf("--window-size=%d,900", max(width, 500)), "--virtual-time-budget=5000", "--dump-dom", "file://"+target)
	m := regexp.MustCompile(`(?s)<pre id="probe">(.*?)</pre>`).FindStringSubmatch(dom)
	if m == nil || m[1] == "" {
		t.Fatalf("%s at %d px: the probe wrote nothing; the DOM:\n%.2000s", name, width, dom)
	}
	var p probeResult
	if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &p); err != nil {
		t.Fatalf("%s at %d px: probe %q: %v", name, width, m[1], err)
	}
	if target != probeFile {
		dom = ""
	}
	return p, dom
}

// fullDoc is what the DOM checks compare the page with: the JSON report.
type fullDoc struct {
	Rules []struct {
		Line    int    `json:"line"`
		Variant string `json:"variant"`
		Verdict string `json:"verdict"`
		Numbers *struct {
			Diff     float64                  `json:"diff"`
			Newcombe struct{ Lo, Hi float64 } `json:"newcombe"`
		} `json:"verdict_numbers"`
		Arms  map[string]struct{ Diff struct{ Est, Lo, Hi float64 } } `json:"arms"`
		Looks []struct {
			Look struct {
				Index   int  `json:"index"`
				Settled bool `json:"settled"`
			} `json:"look"`
		} `json:"looks"`
		Cases []struct {
			Baseline struct{ Fail, N int } `json:"baseline"`
		} `json:"cases"`
	} `json:"rules"`
}

func reportJSONFull(t *testing.T, audit string) fullDoc {
	t.Helper()
	var d fullDoc
	if err := json.Unmarshal([]byte(mustRun(t, 0, "report", audit, "--format", "json").out), &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// checkDOM finds in the browser's DOM every line's row with its verdict,
// its forest plot and its intervals (provoking and control, as the JSON
// report has them), its evidence section and its grid cells.
func checkDOM(t *testing.T, where, dom string, d fullDoc, plots int) {
	t.Helper()
	if n := strings.Count(dom, `<tr data-verdict="`); n != len(d.Rules) {
		t.Errorf("%s: %d rows in the lines table, want %d", where, n, len(d.Rules))
	}
	if plots < len(d.Rules)+1 {
		t.Errorf("%s: %d plots, want at least a forest row per line and the axis (%d)", where, plots, len(d.Rules)+1)
	}
	interval := func(est, lo, hi float64) string {
		return fmt.Sprintf("%+.1f pts [%+.1f, %+.1f]", 100*est, 100*lo, 100*hi)
	}
	for i, r := range d.Rules {
		for _, want := range []string{
			fmt.Sprintf(`<tr data-verdict="%s">`, r.Verdict),
			fmt.Sprintf(`aria-label="line %d, %s: %s"`, r.Line, r.Variant, r.Verdict),
			fmt.Sprintf(`<article id="rule-%d" class="rule">`, i+1),
		} {
			if !strings.Contains(dom, want) {
				t.Errorf("%s: line %d (%s): the DOM lacks %q", where, r.Line, r.Verdict, want)
			}
		}
		if n := r.Numbers; n != nil {
			if want := "P " + interval(n.Diff, n.Newcombe.Lo, n.Newcombe.Hi); !strings.Contains(dom, want) {
				t.Errorf("%s: line %d: the DOM lacks its provoking interval %q", where, r.Line, want)
			}
		}
		if c, ok := r.Arms["control"]; ok && r.Numbers != nil {
			if want := "C " + interval(c.Diff.Est, c.Diff.Lo, c.Diff.Hi); !strings.Contains(dom, want) {
				t.Errorf("%s: line %d: the DOM lacks its control interval %q", where, r.Line, want)
			}
		}
		if len(r.Looks) > 0 && !strings.Contains(dom, fmt.Sprintf(`aria-label="line %d: the bound at each look against delta`, r.Line)) {
			t.Errorf("%s: line %d: no plot of its looks", where, r.Line)
		}
		for _, c := range r.Cases {
			if c.Baseline.N > 0 && !strings.Contains(dom, fmt.Sprintf(">%d/%d</td>", c.Baseline.Fail, c.Baseline.N)) {
				t.Errorf("%s: line %d: no grid cell %d/%d", where, r.Line, c.Baseline.Fail, c.Baseline.N)
			}
		}
	}
	if !strings.Contains(dom, "Wilson 95% [") {
		t.Errorf("%s: no Wilson interval on the grid", where)
	}
}

// checkScreenshot fails unless the PNG shows a page: more than a few
// colours and not all of it background.
func checkScreenshot(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	colours := map[uint32]bool{}
	ink, total := 0, 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			colours[(r>>8)<<16|(g>>8)<<8|bl>>8] = true
			if r < 0xe000 || g < 0xe000 || bl < 0xe000 {
				ink++
			}
			total++
		}
	}
	if len(colours) < 16 || ink*50 < total {
		t.Errorf("%s looks blank: %d colours, %d of %d sampled pixels not background", path, len(colours), ink, total)
	}
	if b.Dx() == 0 || img.ColorModel() == nil {
		t.Errorf("%s: empty image %v", path, image.Rect(0, 0, b.Dx(), b.Dy()))
	}
}

// TestHTMLReport_ProbeSeesLoadsAndWidth: the probe catches what the
// checks above look for. A page with an image from elsewhere and a
// 2000 px wide block shows a blocked load and a document wider than its
// window (the page unchanged shows neither: TestHTMLReport_InBrowser).
func TestHTMLReport_ProbeSeesLoadsAndWidth(t *testing.T) {
	t.Parallel()
	bin := chromiumPath(t)
	audit := sweepAudit(t, "")
	mustRun(t, 0, "run", audit, "--yes", "--headless")
	page := renderHTML(t, audit, t.TempDir(), "report.html")
	// The image is on loopback's discard port: were the policy to let it
	// through, the request would stay on this machine.
	bad := bytes.Replace(page, []byte("<main>"), []byte(`<main><img src="http://127.0.0.1:9/x.png" alt=""><div style="width:2000px">wide</div>`), 1)
	for _, width := range []int{1280, 390} {
		p, _ := probeAt(t, bin, bad, "bad", width)
		if len(p.Violations) == 0 || p.ScrollWidth <= p.InnerWidth {
			t.Errorf("at %d px the probe missed the image or the width: %+v", width, p)
		}
	}
}

// TestHTMLReport_InBrowser opens the demo's report (labelled as the golden
// test labels it), the nine-line sweep's and an adaptive run's in
// Chromium, offline from file://.
func TestHTMLReport_InBrowser(t *testing.T) {
	t.Parallel()
	bin := chromiumPath(t)
	dir := keepDir(t)
	for _, c := range []struct {
		name  string
		audit func(t *testing.T) string
	}{
		{"demo", func(t *testing.T) string { return labelledDemo(t, 30) }},
		{"nine-line-sweep", nineLineSweep},
		{"adaptive", func(t *testing.T) string {
			a := sweepAudit(t, "adaptive = true\n")
			mustRun(t, 0, "run", a, "--yes", "--headless")
			return a
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			audit := c.audit(t)
			page := renderHTML(t, audit, t.TempDir(), "report.html")
			t.Logf("%s: %d bytes", c.name, len(page))
			checkInBrowser(t, bin, audit, page, dir, c.name)
		})
	}
}
