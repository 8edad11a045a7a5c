package tui

import (
	"errors"
	"fmt"

	tea "charm.land/bubbletea/v2"

	"github.com/auditor-dev/auditor/model"
)

// responseLoader reads the stored responses a screen shows, in commands,
// never in Update or View. Each start is a new generation: a response
// that arrives for an earlier one is dropped. The sample, label and review
// screens each own one; responseMsg.from routes the answers back.
type responseLoader struct {
	src  ResponseSource
	from screen

	gen   int
	want  []string // the keys of the latest start; the first is the one shown
	resps map[string]model.Response
	err   error
}

func newResponseLoader(src ResponseSource, from screen) responseLoader {
	return responseLoader{src: src, from: from, resps: map[string]model.Response{}}
}

// clear forgets what was loaded and drops any read in flight.
func (l *responseLoader) clear() {
	l.gen++
	l.want, l.err = nil, nil
	l.resps = map[string]model.Response{}
}

// start clears and reads keys; without a store it says so instead.
func (l *responseLoader) start(keys ...string) tea.Cmd {
	l.clear()
	if l.src == nil {
		l.err = errors.New("no store to read responses from")
		return nil
	}
	l.want = keys
	cmds := make([]tea.Cmd, len(keys))
	for i, k := range keys {
		cmds[i] = l.read(k)
	}
	return tea.Batch(cmds...)
}

// read reads key again in the current generation.
func (l *responseLoader) read(key string) tea.Cmd {
	return loadResponse(l.src, l.from, key, l.gen)
}

// loadResponse reads one stored response; it runs as a command, off the
// update loop.
func loadResponse(src ResponseSource, from screen, key string, gen int) tea.Cmd {
	return func() tea.Msg {
		r, err := src.Response(key)
		return responseMsg{from: from, gen: gen, key: key, resp: r, err: err}
	}
}

// got takes a finished read; it reports false for a stale one.
func (l *responseLoader) got(msg responseMsg) bool {
	if msg.gen != l.gen {
		return false
	}
	if msg.err != nil {
		l.err = fmt.Errorf("reading the response: %w", msg.err)
	} else {
		l.resps[msg.key] = msg.resp
	}
	return true
}

// loading reports whether the response shown is still being read.
func (l *responseLoader) loading() bool {
	if len(l.want) == 0 || l.err != nil {
		return false
	}
	_, ok := l.resps[l.want[0]]
	return !ok
}

// resp returns the loaded response of key, nil when there is none.
func (l *responseLoader) resp(key string) *model.Response {
	if r, ok := l.resps[key]; ok {
		return &r
	}
	return nil
}

// shown is the response of the first key started, nil until it is read.
func (l *responseLoader) shown() *model.Response {
	if len(l.want) == 0 {
		return nil
	}
	return l.resp(l.want[0])
}

// idle reports whether nothing was started, or is pending, or failed:
// a screen coming to the front then starts a load.
func (l *responseLoader) idle() bool { return len(l.want) == 0 && l.err == nil }
