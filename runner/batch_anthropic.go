package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
)

// Anthropic's Message Batches API: POST /v1/messages/batches with
// {"requests": [{"custom_id", "params"}]}, GET /v1/messages/batches/{id}
// until processing_status is "ended", then its results as JSONL, one
// {"custom_id", "result": {"type": "succeeded"|"errored"|"canceled"|
// "expired", "message"|"error"}} per call.

// batchRequest is one request of a batch; params is a Messages API body.
type batchRequest struct {
	CustomID string         `json:"custom_id"`
	Params   map[string]any `json:"params"`
}

// SubmitBatch creates a message batch of calls. The API keeps no tag for
// ref: FindBatch tells the batch by its size and time instead.
func (a *Anthropic) SubmitBatch(ctx context.Context, calls []Call, _ string, _ func(string) error) (string, error) {
	reqs := make([]batchRequest, 0, len(calls))
	for _, c := range calls {
		p, _, err := anthropicParams(c.Request)
		if err != nil {
			return "", &notSent{err}
		}
		raw, err := json.Marshal(p)
		if err != nil {
			return "", &notSent{fmt.Errorf("encode call %s: %w", c.Key, err)}
		}
		var params map[string]any
		if err := json.Unmarshal(raw, &params); err != nil {
			return "", &notSent{err}
		}
		for k, v := range c.Request.ExtraBody {
			params[k] = v
		}
		reqs = append(reqs, batchRequest{CustomID: c.Key, Params: params})
	}
	body, err := json.Marshal(map[string]any{"requests": reqs})
	if err != nil {
		return "", &notSent{err}
	}
	var res *http.Response
	b, err := a.msgs.Batches.New(ctx, anthropic.MessageBatchNewParams{},
		option.WithRequestBody("application/json", body), option.WithResponseInto(&res), option.WithMiddleware(limitBody(metaLimit)))
	if err != nil {
		return "", a.classify(ctx, res, err)
	}
	return b.ID, nil
}

// FindBatch looks for rec's batch among the batches created since rec's
// time less batchClockSkew (the list comes newest first), none of them
// known: Message Batches keep no metadata, so the batch is the one that
// holds exactly rec's number of calls, the earliest if several do. A wrong
// pick (another program's batch of the same size, created in the same
// minutes with the same key) costs nothing twice: its results carry none
// of rec's keys, so when it ends they are dropped and this audit's calls
// are made again.
func (a *Anthropic) FindBatch(ctx context.Context, rec BatchRecord, known func(string) bool) (string, error) {
	since := rec.Submitted.Add(-batchClockSkew)
	params := anthropic.MessageBatchListParams{Limit: anthropic.Int(100)}
	found := ""
	for range maxListPages {
		var res *http.Response
		page, err := a.msgs.Batches.List(ctx, params, option.WithResponseInto(&res), option.WithMiddleware(limitBody(metaLimit)))
		if err != nil {
			return "", a.classify(ctx, res, err)
		}
		older := false
		for _, b := range page.Data {
			n := b.RequestCounts
			switch {
			case b.CreatedAt.Before(since):
				older = true
			case n.Processing+n.Succeeded+n.Errored+n.Canceled+n.Expired == int64(len(rec.Keys)) && !known(b.ID):
				found = b.ID // newest first: the last match is the earliest
			}
		}
		if older || !page.HasMore || len(page.Data) == 0 || page.LastID == "" {
			return found, nil
		}
		params.AfterID = anthropic.String(page.LastID)
	}
	return "", fmt.Errorf("more than %d message batches were created since %s; none of them is this one so far", maxListPages*100, rec.Submitted.Format(time.RFC3339))
}

// PollBatch retrieves the batch and, once it has ended, reads its results.
func (a *Anthropic) PollBatch(ctx context.Context, id string, lineLimit int64, each func(BatchResult) error) (BatchPoll, error) {
	var res *http.Response
	b, err := a.msgs.Batches.Get(ctx, id, anthropic.MessageBatchGetParams{}, option.WithResponseInto(&res), option.WithMiddleware(limitBody(metaLimit)))
	if err != nil {
		return BatchPoll{}, a.classify(ctx, res, err)
	}
	if b.ProcessingStatus != anthropic.MessageBatchProcessingStatusEnded {
		return BatchPoll{}, nil
	}
	poll := BatchPoll{Ended: true}
	if n := b.RequestCounts.Canceled + b.RequestCounts.Expired; n > 0 {
		poll.Note = fmt.Sprintf("%d calls were cancelled or expired before an answer", n)
	}
	// The results are read here, line by line, rather than by the SDK's
	// stream, which holds a line of up to 32 MB and ends at the first bad
	// one.
	var body *http.Response
	stream := a.msgs.Batches.ResultsStreaming(ctx, id, anthropic.MessageBatchResultsParams{}, option.WithResponseInto(&body))
	defer stream.Close()
	if err := stream.Err(); err != nil || body == nil || body.Body == nil {
		if err == nil {
			err = fmt.Errorf("no results body")
		}
		return BatchPoll{}, a.classify(ctx, body, err)
	}
	var cbErr error
	err = batchLines(body.Body, lineLimit, func(line []byte, size int64, long bool) bool {
		r, ok := a.batchResult(line, long)
		if !ok {
			return true
		}
		r.Size = size
		cbErr = each(r)
		return cbErr == nil
	})
	if cbErr != nil {
		return BatchPoll{}, cbErr
	}
	if err != nil {
		return BatchPoll{}, a.classify(ctx, nil, err)
	}
	return poll, nil
}

// batchResult reads one result line; ok is false for a line that answers
// nothing (no key, cancelled, expired, not JSON).
func (a *Anthropic) batchResult(line []byte, long bool) (BatchResult, bool) {
	if long {
		key := lineCustomID(line)
		return BatchResult{Key: key, TooLarge: true}, key != ""
	}
	var l anthropic.MessageBatchIndividualResponse
	if err := json.Unmarshal(line, &l); err != nil || l.CustomID == "" {
		return BatchResult{}, false // model output is untrusted; a bad line answers nothing
	}
	r := BatchResult{Key: l.CustomID}
	switch l.Result.Type {
	case "succeeded":
		msg := l.Result.Message
		r.Completion = a.completion(&msg)
	case "errored":
		e := l.Result.Error.Error
		r.Err = a.batchError(string(e.Type), e.Message)
	default: // canceled, expired: no answer; the next run makes the call
		return BatchResult{}, false
	}
	return r, true
}

// batchError classifies an errored batch result by its error type, as the
// status it stands for would be.
func (a *Anthropic) batchError(typ, msg string) *CallError {
	status := map[string]int{
		"invalid_request_error": 400, "authentication_error": 401, "billing_error": 402, "permission_error": 403,
		"not_found_error": 404, "request_too_large": 413, "rate_limit_error": 429, "api_error": 500,
		"overloaded_error": 529,
	}[typ]
	if status == 0 {
		status = 500
	}
	return a.httpError(&http.Response{StatusCode: status, Header: http.Header{}}, typ, msg)
}
