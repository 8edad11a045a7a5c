package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/auditor-dev/auditor/model"
)

// Batch APIs (OpenAI Batch, Anthropic Message Batches) answer a set of calls
// within a day at half the price: for runs nobody watches. SubmitBatches
// sends the calls still to make and records each batch in a BatchStore;
// CollectBatches, on a later run, saves the answers of the batches that
// ended through the run's Sink, under their content addresses like any
// answer, and forgets those batches.

// BatchDiscount is what a call costs through a batch API as a share of its
// direct price: OpenAI and Anthropic both bill batches at half price.
const BatchDiscount = 0.5

// maxBatchCalls bounds the calls of one batch, well under both APIs'
// limits (50,000 and 100,000 requests, 200 and 256 MB).
const maxBatchCalls = 10_000

// BatchRecord is a submitted batch (model.BatchRecord, so that the store
// can keep it without importing the runner).
type BatchRecord = model.BatchRecord

// BatchStore keeps the records of submitted batches between runs. The
// store package's *Store satisfies it.
type BatchStore interface {
	PutBatch(b BatchRecord) error
	Batches() ([]BatchRecord, error)
	DeleteBatch(id string) error
}

// Batcher is a provider that can answer calls as a batch.
type Batcher interface {
	// SubmitBatch sends calls as one batch, each under its key as
	// custom_id, and returns the batch's id.
	SubmitBatch(ctx context.Context, calls []Call) (string, error)
	// PollBatch reports whether the batch has ended and, once it has, the
	// results it holds. A call the batch did not answer (expired,
	// cancelled, failed) has no result. err is for failing to ask.
	PollBatch(ctx context.Context, id string) (BatchPoll, error)
}

// BatchPoll is a batch's state.
type BatchPoll struct {
	Ended   bool
	Results []BatchResult
	// Note says, for people, why an ended batch answered fewer calls than
	// it held (it failed validation, expired, was cancelled).
	Note string
}

// BatchResult is the outcome of one call of a batch.
type BatchResult struct {
	Key        string
	Completion Completion
	Err        *CallError // nil when the call was answered
}

// BatchedKeys returns the keys of the calls in batches not yet collected,
// for a run to leave out (Options.Skip): they are paid for already.
func BatchedKeys(st BatchStore) (map[string]bool, error) {
	recs, err := st.Batches()
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, r := range recs {
		for _, k := range r.Keys {
			out[k] = true
		}
	}
	return out, nil
}

// SubmitBatches sends every call that opts.Skip does not leave out and no
// recorded batch holds as batches, one or more per endpoint, and records
// each in st as soon as it is accepted. Every endpoint of those calls must
// be a Batcher (OpenAI's own API, Anthropic's); calls with extra_headers
// cannot be batched (a batch line has no headers). It returns the records
// of the batches it submitted, also when it fails part way.
func SubmitBatches(ctx context.Context, calls []Call, opts Options, st BatchStore) ([]BatchRecord, error) {
	batched, err := BatchedKeys(st)
	if err != nil {
		return nil, err
	}
	byEndpoint := map[int][]Call{}
	var order []int
	for i := range calls {
		c := calls[i]
		if c.Key == "" {
			c.Key = c.Request.Key()
		}
		if (opts.Skip != nil && opts.Skip(i)) || batched[c.Key] {
			continue
		}
		if c.Provider < 0 || c.Provider >= len(opts.Providers) {
			return nil, fmt.Errorf("runner: batch: call %d names endpoint %d, but there are %d", i, c.Provider, len(opts.Providers))
		}
		if len(c.Request.ExtraHeaders) > 0 {
			return nil, fmt.Errorf("runner: batch: %s: calls with extra_headers cannot be batched (a batch request carries no headers); run them directly",
				opts.Providers[c.Provider].Name)
		}
		if _, seen := byEndpoint[c.Provider]; !seen {
			order = append(order, c.Provider)
		}
		byEndpoint[c.Provider] = append(byEndpoint[c.Provider], c)
	}
	var out []BatchRecord
	for _, ep := range order {
		e := opts.Providers[ep]
		b, ok := e.Provider.(Batcher)
		if !ok {
			return out, fmt.Errorf("runner: batch: %s has no batch API (OpenAI's and Anthropic's have)", e.Name)
		}
		cs := byEndpoint[ep]
		for start := 0; start < len(cs); start += maxBatchCalls {
			chunk := cs[start:min(start+maxBatchCalls, len(cs))]
			id, err := b.SubmitBatch(ctx, chunk)
			if err != nil {
				return out, fmt.Errorf("runner: batch: submit %d calls to %s: %w", len(chunk), e.Name, err)
			}
			rec := BatchRecord{ID: id, Endpoint: e.Name, Submitted: time.Now().UTC(), Keys: make([]string, len(chunk))}
			for i, c := range chunk {
				rec.Keys[i] = c.Key
			}
			if err := st.PutBatch(rec); err != nil {
				return out, fmt.Errorf("runner: batch: record batch %s (submitted to %s; it will not be collected): %w", id, e.Name, err)
			}
			out = append(out, rec)
		}
	}
	return out, nil
}

// BatchSummary is what CollectBatches did.
type BatchSummary struct {
	Collected int      // answers saved (Failed included)
	Failed    int      // of Collected, calls the batch answered with an error
	Pending   int      // calls in batches still running
	Dropped   int      // calls of ended batches with no result (expired, cancelled) or no longer in the plan: the next run makes them
	Unknown   int      // batches sent to an endpoint not among opts.Providers (the audit changed); kept
	Spent     float64  // dollars, at the batch price
	Notes     []string // what ended batches said about calls they did not answer
}

// CollectBatches polls every recorded batch once. For each that ended, it
// saves a response per result through sink (the calls are found by key
// among calls, for their model and price; cost is at BatchDiscount) and
// deletes the record. Results that say the endpoint was busy or failed
// (rate limits, 5xx) are not saved, so the next run makes those calls.
func CollectBatches(ctx context.Context, calls []Call, opts Options, st BatchStore, sink Sink) (BatchSummary, error) {
	var sum BatchSummary
	recs, err := st.Batches()
	if err != nil {
		return sum, err
	}
	byKey := make(map[string]*Call, len(calls))
	for i := range calls {
		k := calls[i].Key
		if k == "" {
			k = calls[i].Request.Key()
		}
		byKey[k] = &calls[i]
	}
	endpoints := map[string]Endpoint{}
	for _, e := range opts.Providers {
		endpoints[e.Name] = e
	}
	for _, rec := range recs {
		e, ok := endpoints[rec.Endpoint]
		b, isBatcher := e.Provider.(Batcher)
		if !ok || !isBatcher {
			sum.Unknown++
			continue
		}
		poll, err := b.PollBatch(ctx, rec.ID)
		if err != nil {
			return sum, fmt.Errorf("runner: batch %s at %s: %w", rec.ID, rec.Endpoint, err)
		}
		if !poll.Ended {
			sum.Pending += len(rec.Keys)
			continue
		}
		if poll.Note != "" {
			sum.Notes = append(sum.Notes, fmt.Sprintf("batch %s at %s: %s", rec.ID, rec.Endpoint, poll.Note))
		}
		answered := map[string]bool{}
		for _, res := range poll.Results {
			c := byKey[res.Key]
			if c == nil || answered[res.Key] {
				continue
			}
			resp, cost, ok := batchResponse(c, res, rec.ID)
			if !ok {
				continue
			}
			if sink != nil {
				if err := sink.Save(resp); err != nil {
					return sum, fmt.Errorf("runner: batch %s: save %s: %w", rec.ID, res.Key, err)
				}
			}
			answered[res.Key] = true
			sum.Collected++
			sum.Spent += cost
			if !resp.OK() {
				sum.Failed++
			}
		}
		sum.Dropped += len(rec.Keys) - len(answered)
		if err := st.DeleteBatch(rec.ID); err != nil {
			return sum, err
		}
	}
	return sum, nil
}

// batchResponse turns a result of batch id into the response to save, with
// its cost at the batch price; ok is false for a result not to save. The
// response's charge is named by the batch and the call, so a batch
// collected twice (a crash before its record was deleted) is paid once.
func batchResponse(c *Call, res BatchResult, id string) (model.Response, float64, bool) {
	resp := model.Response{Key: res.Key, Model: c.Request.Model, Attempts: 1, At: time.Now(), Batched: true}
	if res.Err != nil {
		if res.Err.Retryable || res.Err.Kind == model.ErrAuth || res.Err.Kind == model.ErrQuota {
			return resp, 0, false
		}
		resp.Error, resp.ErrorKind = res.Err.Error(), res.Err.Kind
		return resp, 0, true
	}
	comp := res.Completion
	resp.Text, resp.FinishReason = comp.Text, comp.FinishReason
	resp.PromptTokens, resp.CachedTokens, resp.CacheWriteTokens, resp.CompletionTokens =
		comp.PromptTokens, comp.CachedTokens, comp.CacheWriteTokens, comp.CompletionTokens
	if kind, msg := Classify(comp); kind != model.ErrNone {
		resp.Error, resp.ErrorKind = (&CallError{Kind: kind, Msg: msg}).Error(), kind
	}
	price := c.Price.Scaled(BatchDiscount)
	cost := price.CostOf(comp.usage())
	resp.Charge = price.Charge(resp, cost, c.Meta.Judge != "")
	if resp.Charge != nil {
		resp.Charge.ID = "batch:" + id + ":" + res.Key
	}
	return resp, cost, true
}
