package workbench

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// ApprovalsEnv names a directory that replaces the user's configuration
// directory for the approvals file (tests, and users who keep settings
// elsewhere).
const ApprovalsEnv = "AUDITOR_CONFIG_DIR"

// DefaultApprovalsPath is where a user's [exec] approvals are kept:
// $AUDITOR_CONFIG_DIR/exec-approvals, else auditor/exec-approvals in the
// user's configuration directory (~/.config on Linux).
func DefaultApprovalsPath() (string, error) {
	if d := os.Getenv(ApprovalsEnv); d != "" {
		return filepath.Join(d, "exec-approvals"), nil
	}
	d, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no place to keep [exec] approvals: %w (set $%s)", err, ApprovalsEnv)
	}
	return filepath.Join(d, "auditor", "exec-approvals"), nil
}

// approvals is the user's record of the [exec] commands they approved,
// one line each: key, time, the command as shown. It lives outside every
// audit folder on purpose: auditor.db travels with a folder someone sends,
// so an approval kept there could be planted by the sender; this file is
// only ever written on the user's own say-so.
type approvals struct {
	path string
	mu   sync.Mutex
}

// has reports whether key was approved. A missing file approves nothing.
func (a *approvals) has(key string) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	f, err := os.Open(a.path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading [exec] approvals: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if k, _, _ := strings.Cut(sc.Text(), " "); k == key {
			return true, nil
		}
	}
	if err := sc.Err(); err != nil {
		return false, fmt.Errorf("reading [exec] approvals %s: %w", a.path, err)
	}
	return false, nil
}

// add records key's approval, with what was approved for a person reading
// the file.
func (a *approvals) add(key, what string, at time.Time) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(a.path), 0o700); err != nil {
		return fmt.Errorf("recording an [exec] approval: %w", err)
	}
	f, err := os.OpenFile(a.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("recording an [exec] approval: %w", err)
	}
	what = strings.Join(strings.Fields(what), " ")
	if _, err := fmt.Fprintf(f, "%s %s %s\n", key, at.UTC().Format(time.RFC3339), what); err != nil {
		f.Close()
		return fmt.Errorf("recording an [exec] approval: %w", err)
	}
	return f.Close()
}
