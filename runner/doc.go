// Package runner executes calls against models: a worker pool per server
// and key bounded by an adaptive concurrency limit, retries with back-off that honour
// the server's Retry-After, a dollar budget, and progress reported as
// events. It also holds the OpenAI-compatible provider (openai-go v3), the
// native Anthropic provider (anthropic-sdk-go) and the request log; the
// simulated provider lives in runner/sim and the builder that picks a
// provider from an audit's settings in runner/provider.
//
// # Scheduling
//
// Each call names its endpoint by index into [Options.Providers], and each
// endpoint belongs to a pool: endpoints with the same [Endpoint.Pool] (one
// server and key) share one, any other has its own. A pool has a
// concurrency limit, its calls waiting to retry, and a pause. [Run] keeps
// at most the current limit of a pool's attempts in flight, the pools
// taking turns. A call waiting to retry holds no slot: it is parked on a
// timer until its wait is over, and other calls proceed meanwhile. Calls
// whose wait is over go before calls not yet started. Failed attempts are
// retried on 429, 5xx, timeouts, broken connections and malformed bodies
// ([CallError.Retryable]), never sooner than the server's Retry-After and
// otherwise after an exponential back-off with full jitter, for as long as
// [Options.MaxWait] allows from the call's first attempt
// ([Options.MaxAttempts] is only a safety net). A call whose budget runs
// out fails for good, unless its endpoint answered nothing in all that
// time: then the run stops ([WaitTooLong]) and leaves it for the next run.
//
// A 429 is answered by the pool's adaptive limit and the call's own wait:
// the call waits out its Retry-After while the others go on. The limit
// comes down when 429s repeat (a quarter off; the 429s of attempts sent
// before a cut do not cut again), goes back by one when a raise is refused,
// and climbs by one after a round of answers, waiting longer each time a
// raise fails: it settles at a server's concurrency cap instead of
// oscillating below it, and a lone 429 at random costs its call alone.
// The whole pool pauses only when the 429s come together (most recent
// outcomes, the attempts in flight counted, were 429s) or when a provider's
// rate-limit headers say a window is spent (x-ratelimit-remaining-requests
// or -tokens, anthropic-ratelimit-*-remaining at 0): then nothing of that
// server starts before the wait or the reset they give. One server's 429s
// never slow another.
//
// A completion is classified before it is saved ([Classify]): a content
// filter stop, an answer cut off by its token limit and an empty answer are
// stored with their error kind (model.ErrContentFilter, ErrTruncated,
// ErrEmpty) and the text received, never as an answer to grade. A response
// larger than any answer within the call's token limit ([AnswerLimit]) is
// not read past it: the call ends at once as model.ErrTooLarge, settled,
// with no text. Providers redact their endpoint's key from every answer.
//
// # Delivery contract
//
// Run returns a buffered channel of [Event] values and owns the goroutines
// that feed it. The consumer must drain the channel until it is closed: a
// consumer that stops reading stalls the run (it is not dropped), and this
// holds after ctx is cancelled too. The channel is closed right after the
// last event, which is always exactly one [Stopped]; by then every goroutine
// Run started has returned or is about to, and the [Sink] is no longer called.
//
// Every call produces exactly one [Finished] unless the run stops first; a
// call cut off by a stop (never started, waiting to retry, or in flight when
// ctx was cancelled and so abandoned) produces none, is not saved, and is
// counted in [Stopped.Remaining]. An answer that arrives despite the
// cancellation is kept: it finished, and it was paid for. A
// Finished event is sent only after [Sink.Save] returned nil for its
// response, so a consumer that sees Finished may rely on the response being
// stored. For one call the events come in this order: Started (attempt 1),
// then for each retry Retrying followed by Started (attempt n+1), then
// Finished. Events of different calls interleave in no promised order;
// [ConcurrencyChanged] may come at any point before Stopped.
//
// # Stopping
//
// A run stops dispatching when ctx is cancelled, when the next attempt would
// take the projected spend over [Options.Budget], when a provider reports an
// exhausted quota or rejects the key, when a server asks for a wait longer
// than [Options.MaxWait], when the sink fails, or when an endpoint fails its
// first calls all the same way with no success ([SystematicFailure]: it
// cannot be reached, or answers the same 4xx other than 429). Attempts already in flight are
// let finish (and are saved) except on cancellation, where they are cancelled
// and not saved. The first reason to stop is the one reported.
package runner
