package runner

import (
	"bufio"
	"bytes"
	"context"
	cryptorand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
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
	// custom_id, tagged with ref where the API keeps a tag (OpenAI's
	// metadata), and returns the batch's id. An API that takes the calls
	// as a file first (OpenAI's) calls uploaded with the file's id before
	// it creates the batch.
	SubmitBatch(ctx context.Context, calls []Call, ref string, uploaded func(file string) error) (string, error)
	// FindBatch looks for the batch that rec's submission, cut off before
	// the provider answered, may have created, and returns its id, or ""
	// when the provider has none: then it removes what the submission left
	// (an uploaded input file). known reports ids already recorded, which
	// cannot be rec's. err is for failing to tell.
	FindBatch(ctx context.Context, rec BatchRecord, known func(id string) bool) (string, error)
	// PollBatch reports whether the batch has ended and, once it has,
	// hands each result it holds to each, reading no result line longer
	// than lineLimit into memory (such a line's result is TooLarge). A
	// call the batch did not answer (expired, cancelled, failed) has no
	// result. An error from each stops the poll and is returned; any other
	// err is for failing to ask.
	PollBatch(ctx context.Context, id string, lineLimit int64, each func(BatchResult) error) (BatchPoll, error)
}

// BatchPoll is a batch's state.
type BatchPoll struct {
	Ended bool
	// Note says, for people, why an ended batch answered fewer calls than
	// it held (it failed validation, expired, was cancelled).
	Note string
}

// BatchResult is the outcome of one call of a batch.
type BatchResult struct {
	Key        string
	Completion Completion
	Err        *CallError // nil when the call was answered
	// Size is the bytes of the result's line; TooLarge marks a line longer
	// than PollBatch's lineLimit, not read (only its key is known).
	Size     int64
	TooLarge bool
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
// recorded batch holds as batches, one or more per endpoint. Each batch is
// recorded in st before anything is sent (under a Ref of its own, with its
// calls), with its input file once uploaded, and with the provider's id
// once created, so a submission cut off at any point leaves a record that
// keeps its calls out of later runs until CollectBatches has found the
// batch or found that it was never created. Every endpoint of those calls
// must be a Batcher (OpenAI's own API, Anthropic's); calls with
// extra_headers cannot be batched (a batch line has no headers). It
// returns the records of the batches it created, also when it fails part
// way; a batch cut off while being created is a *BatchInterrupted error.
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
			rec, err := submitBatch(ctx, b, e.Name, cs[start:min(start+maxBatchCalls, len(cs))], st)
			if err != nil {
				return out, err
			}
			out = append(out, rec)
		}
	}
	return out, nil
}

// submitBatch records, submits and records again one batch of calls.
func submitBatch(ctx context.Context, b Batcher, endpoint string, calls []Call, st BatchStore) (BatchRecord, error) {
	rec := BatchRecord{Ref: newBatchRef(), Endpoint: endpoint, Submitted: time.Now().UTC(), Keys: make([]string, len(calls))}
	for i, c := range calls {
		rec.Keys[i] = c.Key
	}
	if err := st.PutBatch(rec); err != nil {
		return rec, fmt.Errorf("runner: batch: record the batch before submitting it (nothing was sent): %w", err)
	}
	id, err := b.SubmitBatch(ctx, calls, rec.Ref, func(file string) error {
		rec.InputFile = file
		return st.PutBatch(rec)
	})
	if err != nil {
		var ce *CallError
		var ns *notSent
		if errors.As(err, &ns) || errors.As(err, &ce) && ce.Status >= 400 && ce.Status < 500 {
			// The provider refused: no batch exists, the record goes.
			if derr := st.DeleteBatch(rec.Ref); derr != nil {
				return rec, fmt.Errorf("runner: batch: submit %d calls to %s: %w (and forgetting its record: %v)", len(calls), endpoint, err, derr)
			}
			return rec, fmt.Errorf("runner: batch: submit %d calls to %s: %w", len(calls), endpoint, err)
		}
		// Cut off, or no answer that says: the batch may exist. The record
		// stays, and the next run looks it up before sending anything.
		return rec, &BatchInterrupted{Record: rec, Err: err}
	}
	rec.ID = id
	if err := st.PutBatch(rec); err != nil {
		return rec, &BatchInterrupted{Record: rec, Err: fmt.Errorf("record batch %s: %w", id, err)}
	}
	return rec, nil
}

// BatchInterrupted is a submission cut off before the provider said
// whether it created the batch: Record, kept in the store without an ID,
// names the batch that may exist, and the next CollectBatches looks it up.
type BatchInterrupted struct {
	Record BatchRecord
	Err    error
}

func (e *BatchInterrupted) Error() string {
	return fmt.Sprintf("runner: batch: submitting %d calls to %s was cut off before the provider answered (%v); "+
		"the batch may exist: it is recorded as %s, and the next run looks for it before sending anything",
		len(e.Record.Keys), e.Record.Endpoint, e.Err, e.Record.Ref)
}

func (e *BatchInterrupted) Unwrap() error { return e.Err }

// notSent is a SubmitBatch failure that came before any request was sent
// (a call that cannot be encoded): no batch can exist.
type notSent struct{ err error }

func (e *notSent) Error() string { return e.err.Error() }
func (e *notSent) Unwrap() error { return e.err }

// batchRefKey is the metadata key that carries a batch's Ref.
const batchRefKey = "auditor_ref"

// newBatchRef returns a name for a batch no other has.
func newBatchRef() string {
	var b [12]byte
	_, _ = cryptorand.Read(b[:])
	return "auditor-" + hex.EncodeToString(b[:])
}

// batchClockSkew is how much earlier than its record a provider's clock
// may date a batch (the record's time is taken before the batch is sent):
// FindBatch looks at the batches created since the record's time less
// this. Clocks kept by NTP differ by milliseconds; the margin is wide, and
// narrow enough that an earlier batch of the same size is rarely in it.
const batchClockSkew = 2 * time.Minute

// BatchSummary is what CollectBatches did.
type BatchSummary struct {
	Collected int      // answers saved (Failed included)
	Failed    int      // of Collected, calls the batch answered with an error
	Pending   int      // calls in batches still running
	Dropped   int      // calls of ended batches with no result (expired, cancelled) or no longer in the plan: the next run makes them
	Unknown   int      // batches sent to an endpoint not among opts.Providers (the audit changed); kept
	Found     int      // batches whose creation was cut off, found at the provider
	Unsent    int      // calls of batches whose creation was cut off and that the provider never created: this run makes them
	Spent     float64  // dollars, at the batch price
	Notes     []string // what ended batches said about calls they did not answer
}

// CollectBatches polls every recorded batch once. A record without the
// provider's id (its creation was cut off) is first looked up at the
// provider (Batcher.FindBatch): found, it is recorded with its id and
// polled; not found, it is forgotten and its calls are left to this run.
// For each batch that ended, it saves a response per result through sink
// (the calls are found by key among calls, for their model and price;
// cost is at BatchDiscount) and deletes the record. Results that say the
// endpoint was busy or failed (rate limits, 5xx) are not saved, so the
// next run makes those calls.
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
	known := map[string]bool{}
	for _, rec := range recs {
		if rec.Created() {
			known[rec.ID] = true
		}
	}
	for _, rec := range recs {
		e, ok := endpoints[rec.Endpoint]
		b, isBatcher := e.Provider.(Batcher)
		if !ok || !isBatcher {
			sum.Unknown++
			continue
		}
		if !rec.Created() {
			found, err := findBatch(ctx, b, rec, known, st)
			if err != nil {
				return sum, err
			}
			if !found.Created() {
				sum.Unsent += len(rec.Keys)
				continue
			}
			if known[found.ID] {
				continue // recorded already, and polled as such
			}
			known[found.ID] = true
			sum.Found++
			sum.Notes = append(sum.Notes, fmt.Sprintf("batch %s at %s: found at the provider (its submission had been cut off)", found.ID, rec.Endpoint))
			rec = found
		}
		if err := collectBatch(ctx, b, rec, byKey, st, sink, &sum); err != nil {
			return sum, err
		}
	}
	return sum, nil
}

// findBatch looks up at the provider the batch of a record whose creation
// was cut off. Found, the record is stored with the batch's id (replacing
// the one under its Ref) and returned so; not found, it is deleted and
// returned without an id. A failure to tell leaves the record (its calls
// stay out of every run) and is returned.
func findBatch(ctx context.Context, b Batcher, rec BatchRecord, known map[string]bool, st BatchStore) (BatchRecord, error) {
	id, err := b.FindBatch(ctx, rec, func(id string) bool { return known[id] })
	if err != nil {
		return rec, fmt.Errorf("runner: batch: the submission of %d calls to %s (%s) was cut off, and whether it created a batch cannot be told "+
			"(its calls are left out until it can): %w", len(rec.Keys), rec.Endpoint, rec.Ref, err)
	}
	if id == "" {
		return rec, st.DeleteBatch(rec.Ref)
	}
	if known[id] {
		// A batch recorded already (under its id): the record under the
		// Ref is a leftover.
		rec.ID = id
		return rec, st.DeleteBatch(rec.Ref)
	}
	rec.ID = id
	return rec, st.PutBatch(rec)
}

// collectBatch polls one created batch and, when it has ended, saves its
// results and deletes its record.
func collectBatch(ctx context.Context, b Batcher, rec BatchRecord, byKey map[string]*Call, st BatchStore, sink Sink, sum *BatchSummary) error {
	// No line of the batch may be longer than its largest answer.
	lineLimit := int64(0)
	for _, k := range rec.Keys {
		if c := byKey[k]; c != nil {
			lineLimit = max(lineLimit, AnswerLimit(c.Request))
		}
	}
	if lineLimit == 0 {
		lineLimit = AnswerLimit(model.Request{})
	}
	answered := map[string]bool{}
	poll, err := b.PollBatch(ctx, rec.ID, lineLimit, func(res BatchResult) error {
		c := byKey[res.Key]
		if c == nil || answered[res.Key] {
			return nil
		}
		resp, cost, ok := batchResponse(c, res, rec.ID)
		if !ok {
			return nil
		}
		if sink != nil {
			if err := sink.Save(resp); err != nil {
				return fmt.Errorf("runner: batch %s: save %s: %w", rec.ID, res.Key, err)
			}
		}
		answered[res.Key] = true
		sum.Collected++
		sum.Spent += cost
		if !resp.OK() {
			sum.Failed++
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("runner: batch %s at %s: %w", rec.ID, rec.Endpoint, err)
	}
	if !poll.Ended {
		sum.Pending += len(rec.Keys)
		return nil
	}
	if poll.Note != "" {
		sum.Notes = append(sum.Notes, fmt.Sprintf("batch %s at %s: %s", rec.ID, rec.Endpoint, poll.Note))
	}
	sum.Dropped += len(rec.Keys) - len(answered)
	return st.DeleteBatch(rec.ID)
}

// batchResponse turns a result of batch id into the response to save, with
// its cost at the batch price; ok is false for a result not to save. The
// response's charge is named by the batch and the call, so a batch
// collected twice (a crash before its record was deleted) is paid once. A
// result larger than the call's AnswerLimit is saved as ErrTooLarge,
// without its text, charged like a direct call's.
func batchResponse(c *Call, res BatchResult, id string) (model.Response, float64, bool) {
	resp := model.Response{Key: res.Key, Model: c.Request.Model, Attempts: 1, At: time.Now(), Batched: true}
	price := c.Price.Scaled(BatchDiscount)
	if res.TooLarge || res.Size > AnswerLimit(c.Request) {
		ce := tooLargeCallError(c.Request, http.StatusOK)
		resp.Error, resp.ErrorKind = ce.Error(), ce.Kind
		scaled := *c
		scaled.Price = price
		cost := tooLargeCost(&scaled)
		resp.Charge = price.Charge(resp, cost, c.Meta.Judge != "")
		if resp.Charge != nil {
			resp.Charge.ID = "batch:" + id + ":" + res.Key
		}
		return resp, cost, true
	}
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
	cost := price.CostOf(comp.usage())
	resp.Charge = price.Charge(resp, cost, c.Meta.Judge != "")
	if resp.Charge != nil {
		resp.Charge.ID = "batch:" + id + ":" + res.Key
	}
	return resp, cost, true
}

// batchLines calls fn with each line of r that is not blank (without its
// line end) and its size in bytes, until fn returns false. A line longer
// than limit is not read into memory: fn gets its first 4 KiB, with long
// set, and the rest is skipped. line is valid only during the call.
func batchLines(r io.Reader, limit int64, fn func(line []byte, size int64, long bool) bool) error {
	const prefix = 4 << 10
	br := bufio.NewReaderSize(r, 64<<10)
	var line []byte
	var size int64
	long := false
	for {
		frag, err := br.ReadSlice('\n')
		size += int64(len(frag))
		switch {
		case long:
		case size > limit+1: // the line end is not the line's
			long = true
			line = append(line, frag[:min(len(frag), max(prefix-len(line), 0))]...)
			line = line[:min(len(line), prefix)]
		default:
			line = append(line, frag...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if text := bytes.TrimRight(line, "\r\n"); len(bytes.TrimSpace(text)) > 0 {
			if !fn(text, size, long) {
				return nil
			}
		}
		line, size, long = line[:0], 0, false
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// customIDField finds a result line's custom_id, which both batch APIs
// write near its start.
var customIDField = regexp.MustCompile(`"custom_id"\s*:\s*"([^"\\]{1,256})"`)

// lineCustomID returns the custom_id in the start of a result line, or "".
func lineCustomID(start []byte) string {
	if m := customIDField.FindSubmatch(start); m != nil {
		return string(m[1])
	}
	return ""
}
