package grade

// SetStagedHook sets the hook run between a grader's check (its private
// copy made) and its start, and returns a function that removes it.
func SetStagedHook(f func()) func() {
	stagedHook = f
	return func() { stagedHook = nil }
}
