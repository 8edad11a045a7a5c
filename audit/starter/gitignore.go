package starter

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// GitignoreFile is the name of git's ignore file.
const GitignoreFile = ".gitignore"

// gitignoreComment explains the line it adds, in the file, for whoever reads it.
const gitignoreComment = "# auditor's store: large, binary, and every answer in it can be asked again\n"

// Gitignore makes the .gitignore in dir ignore name (the store's file
// name): it writes the file when there is none, appends name to one that
// does not ignore it yet (keeping every line it has), and leaves one that
// already does alone (name itself, /name, **/name or *.db). It returns
// whether it wrote or changed the file.
func Gitignore(dir, name string) (bool, error) {
	path := filepath.Join(dir, GitignoreFile)
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return true, os.WriteFile(path, []byte(gitignoreComment+name+"\n"), 0o644)
	case err != nil:
		return false, err
	}
	for _, l := range strings.Split(string(data), "\n") {
		switch strings.TrimSpace(l) {
		case name, "/" + name, "**/" + name, "*.db":
			return false, nil
		}
	}
	var b bytes.Buffer
	if len(data) > 0 && !bytes.HasSuffix(data, []byte("\n")) {
		b.WriteString("\n")
	}
	b.WriteString(gitignoreComment + name + "\n")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return false, err
	}
	if _, err := f.Write(b.Bytes()); err != nil {
		f.Close()
		return false, err
	}
	return true, f.Close()
}
