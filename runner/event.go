package runner

import (
	"time"

	"github.com/auditor-dev/auditor/model"
)

// Event is one step of a run's progress: [Started], [Retrying], [Finished],
// [ConcurrencyChanged] or [Stopped]. See the package documentation for the
// delivery contract.
type Event interface{ isEvent() }

// Started reports that an attempt of a call was sent.
type Started struct {
	Index   int    // the call's index in the slice given to Run
	Key     string // the call's key
	Attempt int    // 1-based
}

// Retrying reports that an attempt failed and the call will be tried again
// after Wait (at Until). The call holds no concurrency slot while it waits.
type Retrying struct {
	Index   int
	Key     string
	Attempt int             // the attempt that failed; the next is Attempt+1
	Kind    model.ErrorKind // why it failed
	Cause   RetryCause      // why it failed, as retries are counted
	Wait    time.Duration
	Until   time.Time // when the call becomes eligible again (for a countdown)
	Reason  string    // the failure, for people
}

// Finished reports a call that ended, answered or failed for good (then
// Response.Error is set), after its response was saved.
type Finished struct {
	Index    int
	Response model.Response
	Cost     float64 // dollars this call's attempts cost, by their reported usage
}

// ConcurrencyChanged reports a new limit on one pool's calls in flight:
// cut after rate limits, raised after a run of answers.
type ConcurrencyChanged struct {
	// Provider is the index in Options.Providers of the pool's first
	// endpoint: endpoints with the same Endpoint.Pool share the limit.
	Provider int
	Limit    int
}

// Stopped is the last event of every run.
type Stopped struct {
	Reason    StopReason
	Detail    string  // why, for people; empty when Completed
	Done      int     // calls finished (answered or failed for good) and saved
	Failed    int     // of Done, calls that failed for good
	Settled   int     // of Done, calls whose answer was cut off by the token limit, empty or too large (model.ErrorKind.Settled): not failures, not asked again
	TooLarge  int     // of Settled, responses larger than any answer within their token limit (AnswerLimit), not read past it
	Remaining int     // calls not finished: len(calls) - Done, less those Options.Skip left out
	Spent     float64 // dollars spent by all attempts, by their reported usage
}

func (Started) isEvent()            {}
func (Retrying) isEvent()           {}
func (Finished) isEvent()           {}
func (ConcurrencyChanged) isEvent() {}
func (Stopped) isEvent()            {}

// StopReason says why a run ended.
type StopReason int

// The reasons a run ends. Only Completed means every call finished; after
// any other reason, running the same calls again resumes the work.
const (
	Completed      StopReason = iota // every call finished
	Cancelled                        // ctx was cancelled; in-flight attempts were abandoned
	BudgetReached                    // the next attempt would have taken spend over Options.Budget
	QuotaExhausted                   // a provider reported an exhausted quota or credit
	WaitTooLong                      // a server asked for a wait longer than Options.MaxWait
	SaveFailed                       // the sink could not save a response
	AuthFailed                       // the API rejected the key (401/403): every other call would fail too
	// SystematicFailure: an endpoint failed its first calls all the same way
	// and answered none (unreachable, or the same 4xx other than 429): every
	// other call would fail too. Stopped.Detail names the endpoint and error.
	SystematicFailure
)

// String returns the reason in lower case words, e.g. "budget reached".
func (s StopReason) String() string {
	switch s {
	case Completed:
		return "completed"
	case Cancelled:
		return "cancelled"
	case BudgetReached:
		return "budget reached"
	case QuotaExhausted:
		return "quota exhausted"
	case WaitTooLong:
		return "wait too long"
	case SaveFailed:
		return "save failed"
	case AuthFailed:
		return "authentication failed"
	case SystematicFailure:
		return "systematic failure"
	}
	return "unknown"
}
