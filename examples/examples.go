// Package examples holds the bundled demo audit: a support prompt, three of
// its lines under audit, their case files and predicates. `auditor demo`
// writes these files to a directory and runs them against the simulated
// model.
package examples

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

//go:embed support
var files embed.FS

// DemoAudit is the audit file's name inside the directory Write fills.
const DemoAudit = "audit.toml"

// Write copies the demo audit into dir, creating it if needed. Existing files
// are left as they are, so a user's edits to a demo directory survive a
// second `auditor demo --dir` run.
func Write(dir string) error {
	_, err := WriteKeeping(dir)
	return err
}

// WriteKeeping is Write, and returns the names of the files it kept
// because dir already held them (a demo folder the user edited).
func WriteKeeping(dir string) (kept []string, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("examples: %w", err)
	}
	err = fs.WalkDir(files, "support", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		dst := filepath.Join(dir, filepath.Base(path))
		if _, err := os.Stat(dst); err == nil {
			kept = append(kept, filepath.Base(path))
			return nil
		}
		data, err := files.ReadFile(path)
		if err != nil {
			return err
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			return fmt.Errorf("examples: %w", err)
		}
		return nil
	})
	return kept, err
}
