package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

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

// SubmitBatch uploads calls as a batch input file named for ref and
// creates a batch on it whose metadata carries ref, so FindBatch can tell
// it from any other.
func (o *OpenAI) SubmitBatch(ctx context.Context, calls []Call, ref string, uploaded func(file string) error) (string, error) {
	var buf bytes.Buffer
	for _, c := range calls {
		params, err := chatParams(c.Request)
		if err != nil {
			return "", &notSent{err}
		}
		body, err := json.Marshal(params)
		if err != nil {
			return "", &notSent{fmt.Errorf("encode call %s: %w", c.Key, err)}
		}
		line, err := json.Marshal(batchLine{CustomID: c.Key, Method: http.MethodPost, URL: "/v1/chat/completions", Body: body})
		if err != nil {
			return "", &notSent{err}
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	var res *http.Response
	f, err := o.files.New(ctx, openai.FileNewParams{
		File:    openai.File(&buf, ref+".jsonl", "application/jsonl"),
		Purpose: openai.FilePurposeBatch,
	}, option.WithResponseInto(&res), option.WithMiddleware(limitBody(metaLimit)))
	if err != nil {
		return "", o.classify(ctx, res, err)
	}
	if err := uploaded(f.ID); err != nil {
		return "", &notSent{fmt.Errorf("record the uploaded file %s: %w", f.ID, err)}
	}
	b, err := o.batches.New(ctx, openai.BatchNewParams{
		InputFileID:      f.ID,
		Endpoint:         openai.BatchNewParamsEndpointV1ChatCompletions,
		CompletionWindow: openai.BatchNewParamsCompletionWindow24h,
		Metadata:         shared.Metadata{batchRefKey: ref},
	}, option.WithResponseInto(&res), option.WithMiddleware(limitBody(metaLimit)))
	if err != nil {
		return "", o.classify(ctx, res, err)
	}
	return b.ID, nil
}

// maxListPages bounds how many pages of 100 batches FindBatch reads before
// it gives up telling (a list that never reaches the record's time).
const maxListPages = 50

// FindBatch looks for rec's batch among the batches created since rec's
// time (the list comes newest first): the one whose metadata carries
// rec's Ref, or that was created on rec's input file. Finding none, it
// deletes the input file uploaded for it, so a creation still under way
// at the provider fails instead of being paid for beside the one this
// run makes.
func (o *OpenAI) FindBatch(ctx context.Context, rec BatchRecord, _ func(string) bool) (string, error) {
	since := rec.Submitted.Add(-batchClockSkew).Unix()
	params := openai.BatchListParams{Limit: openai.Int(100)}
	for range maxListPages {
		var res *http.Response
		page, err := o.batches.List(ctx, params, option.WithResponseInto(&res), option.WithMiddleware(limitBody(metaLimit)))
		if err != nil {
			return "", o.classify(ctx, res, err)
		}
		older := false
		for _, b := range page.Data {
			if b.Metadata[batchRefKey] == rec.Ref || rec.InputFile != "" && b.InputFileID == rec.InputFile {
				return b.ID, nil
			}
			older = older || b.CreatedAt < since
		}
		if older || !page.HasMore || len(page.Data) == 0 {
			if rec.InputFile != "" {
				// At best effort: the file is gone already (404), or left
				// for the provider to expire.
				_, err := o.files.Delete(ctx, rec.InputFile, option.WithMiddleware(limitBody(metaLimit)))
				if err != nil && ctx.Err() != nil {
					return "", o.classify(ctx, nil, err)
				}
			}
			return "", nil
		}
		params.After = openai.String(page.Data[len(page.Data)-1].ID)
	}
	return "", fmt.Errorf("more than %d batches were created since %s; none of them is this one so far", maxListPages*100, rec.Submitted.Format(time.RFC3339))
}

// PollBatch retrieves the batch and, once it has ended (completed, expired,
// cancelled or failed), reads its output and error files.
func (o *OpenAI) PollBatch(ctx context.Context, id string, lineLimit int64, each func(BatchResult) error) (BatchPoll, error) {
	var res *http.Response
	b, err := o.batches.Get(ctx, id, option.WithResponseInto(&res), option.WithMiddleware(limitBody(metaLimit)))
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
		if err := o.batchFile(ctx, file, lineLimit, each); err != nil {
			return BatchPoll{}, err
		}
	}
	return poll, nil
}

// batchFile downloads an output or error file and hands each line's result
// to each.
func (o *OpenAI) batchFile(ctx context.Context, id string, lineLimit int64, each func(BatchResult) error) error {
	res, err := o.files.Content(ctx, id)
	if err != nil {
		return o.classify(ctx, res, err)
	}
	defer res.Body.Close()
	var cbErr error
	err = batchLines(res.Body, lineLimit, func(line []byte, size int64, long bool) bool {
		var r BatchResult
		if long {
			key := lineCustomID(line)
			if key == "" {
				return true // model output is untrusted; a line without a key answers nothing
			}
			r = BatchResult{Key: key, TooLarge: true}
		} else {
			var l batchOutputLine
			if err := json.Unmarshal(line, &l); err != nil || l.CustomID == "" {
				return true
			}
			r = o.batchResult(l)
		}
		r.Size = size
		cbErr = each(r)
		return cbErr == nil
	})
	if cbErr != nil {
		return cbErr
	}
	if err != nil {
		return &CallError{Kind: model.ErrTransport, Retryable: true, Msg: o.clean("reading batch file: " + err.Error())}
	}
	return nil
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
