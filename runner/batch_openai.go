package runner

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/auditor-dev/auditor/model"
)

// OpenAI's Batch API: the calls go up as a JSONL file (purpose "batch"),
// one line per call ({"custom_id", "method", "url", "body"}), a batch is
// created on it for /v1/chat/completions within 24 hours, and once it has
// ended its output and error files hold one line per call
// ({"custom_id", "response": {"status_code", "body"}, "error"}).

// batchLine is one line of the input file.
type batchLine struct {
	CustomID string          `json:"custom_id"`
	Method   string          `json:"method"`
	URL      string          `json:"url"`
	Body     json.RawMessage `json:"body"`
}

// batchOutputLine is one line of an output or error file.
type batchOutputLine struct {
	CustomID string `json:"custom_id"`
	Response *struct {
		StatusCode int             `json:"status_code"`
		Body       json.RawMessage `json:"body"`
	} `json:"response"`
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// SubmitBatch uploads calls as a batch input file and creates a batch on it.
func (o *OpenAI) SubmitBatch(ctx context.Context, calls []Call) (string, error) {
	var buf bytes.Buffer
	for _, c := range calls {
		params, err := chatParams(c.Request)
		if err != nil {
			return "", err
		}
		body, err := json.Marshal(params)
		if err != nil {
			return "", fmt.Errorf("encode call %s: %w", c.Key, err)
		}
		line, err := json.Marshal(batchLine{CustomID: c.Key, Method: http.MethodPost, URL: "/v1/chat/completions", Body: body})
		if err != nil {
			return "", err
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	var res *http.Response
	f, err := o.files.New(ctx, openai.FileNewParams{
		File:    openai.File(&buf, "auditor-batch.jsonl", "application/jsonl"),
		Purpose: openai.FilePurposeBatch,
	}, option.WithResponseInto(&res))
	if err != nil {
		return "", o.classify(ctx, res, err)
	}
	b, err := o.batches.New(ctx, openai.BatchNewParams{
		InputFileID:      f.ID,
		Endpoint:         openai.BatchNewParamsEndpointV1ChatCompletions,
		CompletionWindow: openai.BatchNewParamsCompletionWindow24h,
	}, option.WithResponseInto(&res))
	if err != nil {
		return "", o.classify(ctx, res, err)
	}
	return b.ID, nil
}

// PollBatch retrieves the batch and, once it has ended (completed, expired,
// cancelled or failed), reads its output and error files.
func (o *OpenAI) PollBatch(ctx context.Context, id string) (BatchPoll, error) {
	var res *http.Response
	b, err := o.batches.Get(ctx, id, option.WithResponseInto(&res))
	if err != nil {
		return BatchPoll{}, o.classify(ctx, res, err)
	}
	var poll BatchPoll
	switch b.Status {
	case openai.BatchStatusCompleted:
	case openai.BatchStatusExpired, openai.BatchStatusCancelled:
		poll.Note = fmt.Sprintf("%s before every call was answered", b.Status)
	case openai.BatchStatusFailed:
		var msgs []string
		for _, e := range b.Errors.Data {
			msgs = append(msgs, e.Message)
		}
		poll.Note = o.clean("failed: " + strings.Join(msgs, "; "))
	default: // validating, in_progress, finalizing, cancelling
		return poll, nil
	}
	poll.Ended = true
	for _, file := range []string{b.OutputFileID, b.ErrorFileID} {
		if file == "" {
			continue
		}
		results, err := o.batchFile(ctx, file)
		if err != nil {
			return BatchPoll{}, err
		}
		poll.Results = append(poll.Results, results...)
	}
	return poll, nil
}

// batchFile downloads an output or error file and reads its lines.
func (o *OpenAI) batchFile(ctx context.Context, id string) ([]BatchResult, error) {
	res, err := o.files.Content(ctx, id)
	if err != nil {
		return nil, o.classify(ctx, res, err)
	}
	defer res.Body.Close()
	var out []BatchResult
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var line batchOutputLine
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil || line.CustomID == "" {
			continue // model output is untrusted; a bad line answers nothing
		}
		out = append(out, o.batchResult(line))
	}
	if err := sc.Err(); err != nil {
		return nil, &CallError{Kind: model.ErrTransport, Retryable: true, Msg: o.clean("reading batch file: " + err.Error())}
	}
	return out, nil
}

// batchResult reads one output line as an attempt's outcome.
func (o *OpenAI) batchResult(line batchOutputLine) BatchResult {
	r := BatchResult{Key: line.CustomID}
	switch {
	case line.Response != nil && line.Response.StatusCode == http.StatusOK:
		var cc openai.ChatCompletion
		if err := json.Unmarshal(line.Response.Body, &cc); err != nil {
			r.Err = &CallError{Kind: model.ErrBadResponse, Status: 200, Retryable: true, Msg: o.clean("malformed batch answer: " + err.Error())}
			return r
		}
		comp, err := o.completion(&cc, http.StatusOK)
		if ce, ok := err.(*CallError); ok {
			r.Err = ce
		}
		r.Completion = comp
	case line.Response != nil:
		res := &http.Response{StatusCode: line.Response.StatusCode, Header: http.Header{},
			Body: io.NopCloser(bytes.NewReader(line.Response.Body))}
		r.Err = o.httpError(res, nil)
	case line.Error != nil:
		r.Err = &CallError{Kind: model.ErrRequest, Msg: o.clean(line.Error.Message + " [" + line.Error.Code + "]")}
	default:
		r.Err = &CallError{Kind: model.ErrBadResponse, Retryable: true, Msg: "batch line without response or error"}
	}
	return r
}
