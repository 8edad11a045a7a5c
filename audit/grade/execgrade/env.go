package execgrade

import "strings"

// keptEnv are the variables a grader keeps from auditor's environment: what
// a program needs to be found, to find its home and temporary directory,
// and to decode text. Everything else (API keys, tokens, proxies with
// credentials) stays out of reach of a script from an audit folder.
var keptEnv = []string{"PATH", "HOME", "LANG", "TMPDIR"}

// ScrubEnv returns the entries of environ (as os.Environ gives them) that
// a grader may see: PATH, HOME, LANG, TMPDIR and LC_*, and
// PYTHONDONTWRITEBYTECODE=1.
func ScrubEnv(environ []string) []string {
	out := []string{}
	for _, kv := range environ {
		name, _, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		keep := strings.HasPrefix(name, "LC_")
		for _, k := range keptEnv {
			keep = keep || name == k
		}
		if keep {
			out = append(out, kv)
		}
	}
	// Python would write compiled modules into __pycache__ beside the
	// script, inside the folder the approval covers, and so void it; and
	// a compiled module shipped there is covered like any other file.
	return append(out, "PYTHONDONTWRITEBYTECODE=1")
}
