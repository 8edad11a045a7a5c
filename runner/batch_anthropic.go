package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

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

// SubmitBatch creates a message batch of calls.
func (a *Anthropic) SubmitBatch(ctx context.Context, calls []Call) (string, error) {
	reqs := make([]batchRequest, 0, len(calls))
	for _, c := range calls {
		p, _, err := anthropicParams(c.Request)
		if err != nil {
			return "", err
		}
		raw, err := json.Marshal(p)
		if err != nil {
			return "", fmt.Errorf("encode call %s: %w", c.Key, err)
		}
		var params map[string]any
		if err := json.Unmarshal(raw, &params); err != nil {
			return "", err
		}
		for k, v := range c.Request.ExtraBody {
			params[k] = v
		}
		reqs = append(reqs, batchRequest{CustomID: c.Key, Params: params})
	}
	body, err := json.Marshal(map[string]any{"requests": reqs})
	if err != nil {
		return "", err
	}
	var res *http.Response
	b, err := a.msgs.Batches.New(ctx, anthropic.MessageBatchNewParams{},
		option.WithRequestBody("application/json", body), option.WithResponseInto(&res))
	if err != nil {
		return "", a.classify(ctx, res, err)
	}
	return b.ID, nil
}

// PollBatch retrieves the batch and, once it has ended, its results.
func (a *Anthropic) PollBatch(ctx context.Context, id string) (BatchPoll, error) {
	var res *http.Response
	b, err := a.msgs.Batches.Get(ctx, id, anthropic.MessageBatchGetParams{}, option.WithResponseInto(&res))
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
	stream := a.msgs.Batches.ResultsStreaming(ctx, id, anthropic.MessageBatchResultsParams{})
	defer stream.Close()
	for stream.Next() {
		line := stream.Current()
		if line.CustomID == "" {
			continue
		}
		r := BatchResult{Key: line.CustomID}
		switch line.Result.Type {
		case "succeeded":
			msg := line.Result.Message
			r.Completion = a.completion(&msg)
		case "errored":
			e := line.Result.Error.Error
			r.Err = a.batchError(string(e.Type), e.Message)
		default: // canceled, expired: no answer; the next run makes the call
			continue
		}
		poll.Results = append(poll.Results, r)
	}
	if err := stream.Err(); err != nil {
		return BatchPoll{}, a.classify(ctx, nil, err)
	}
	return poll, nil
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
