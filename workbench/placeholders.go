package workbench

import (
	"fmt"
	"strings"

	"github.com/auditor-dev/auditor/audit/starter"
	"github.com/auditor-dev/auditor/model"
)

// PlaceholderError is an audit opened with Options.RefusePlaceholders whose
// cases or predicates still hold examples `auditor init` wrote: each in
// Found, naming its file and line. Open returns it before the store is
// opened or created.
type PlaceholderError struct {
	Found []*model.InputError
}

func (e *PlaceholderError) Error() string {
	var b strings.Builder
	n := len(e.Found)
	if n == 1 {
		b.WriteString("1 EDIT ME example that init or add wrote is still to be replaced:")
	} else {
		fmt.Fprintf(&b, "%d EDIT ME examples that init or add wrote are still to be replaced:", n)
	}
	for _, f := range e.Found {
		b.WriteString("\n  " + f.Error())
	}
	return b.String()
}

// Placeholders lists the cases and predicate checks that still hold an
// example the starting files were written with (starter.Placeholders); nil
// when there is none.
func (s *Session) Placeholders() *PlaceholderError {
	found := starter.Placeholders(s.Audit)
	if len(found) == 0 {
		return nil
	}
	return &PlaceholderError{Found: found}
}
