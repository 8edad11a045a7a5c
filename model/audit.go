package model

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
)

// AuditFile is a parsed audit file (audit.toml): one prompt, the rules to
// audit in it, the models to run and the judges that grade. Paths are as
// written, relative to the audit file; resolving them is the caller's job.
type AuditFile struct {
	Name        string
	Prompt      string  // path of the prompt file, as written
	Samples     int     // samples per case and variant; default 30, at least 1
	Concurrency int     // calls in flight; default 8, at least 1
	Delta       float64 // largest accepted rise in failure rate; default 0.05, in (0, 1)
	// AffectedShare is the share of provoking traffic one type of request is
	// taken to make up when a DELETE states the chance that such a type was
	// never among the cases; default DefaultAffectedShare, in (0, 1).
	AffectedShare float64
	// Budget is the most the audit may spend in dollars, over all its runs
	// (what is stored counts against it); 0 means none. A per-run budget
	// would let the printed resume command spend it again.
	Budget float64
	// Looks is the number of looks of the audit's design, declared before
	// any answer (issue 23): 1, the default, is a fixed design whose
	// verdict is valid on the whole grid only; K > 1 looks at 1/K, 2/K, ...
	// of each case's samples, each verdict valid at the look it rests on
	// (group-sequential, O'Brien-Fleming spending). Adaptive runs stop a
	// line's calls at the look that settles it; adaptive = true without
	// looks means DefaultAdaptiveLooks.
	Looks    int
	Adaptive bool
	Models   []ModelConfig // from [model] or [[model]]; at least one
	Rules    []RuleConfig  // from [[rule]]; at least one
	Judges   []JudgeConfig // from [[judge]]; may be empty
	// Regressions are the frozen regression suites (from [[regression]]);
	// may be empty. Each runs its cases on baseline and on every variant of
	// every rule, graded by its own predicate: did the change break
	// anything else? They never change a verdict.
	Regressions []RegressionConfig
	// Ships are the joint tests the audit has made (from [[ship]], which
	// `auditor ship` appends): each names the lines whose joint deletion it
	// tests. The last is the current one; how many there are is how many
	// joint tests the audit has made, committed with it.
	Ships []ShipConfig
}

// ShipConfig is one [[ship]] table: a joint test of the prompt without
// Lines (ascending, distinct prompt lines).
type ShipConfig struct {
	Lines   []int
	DefLine int // line of the [[ship]] header in the audit file
}

// RegressionConfig is one [[regression]] table: a named suite of ordinary
// cases (a case file, as for a rule) and the predicate that grades them.
// Paths are as written, relative to the audit file.
type RegressionConfig struct {
	Name      string
	Cases     string // path of the case file, as written
	Predicate string // path of the predicate file, as written
	DefLine   int    // line of the [[regression]] header in the audit file
	// KeyLines are the lines of the suite's keys in the audit file; a key
	// left out has its table's line.
	KeyLines struct{ Name, Cases, Predicate int }
}

// The defaults ParseAudit fills in for settings the file leaves out (and
// DefaultDelta and DefaultAffectedShare, declared with the verdict rule
// that uses them).
const (
	DefaultSamples     = 30
	DefaultConcurrency = 8
	// DefaultAdaptiveLooks is the looks of an adaptive design that names
	// none: after each sixth of the samples (5 of 30). Simulated on 8
	// provoking cases x 30, a line whose failures rise from 4% to 30% is
	// settled on 37% of the samples on average (41% with five looks, 35%
	// with ten, each round waiting on its slowest call), with the power
	// of the fixed design (90% for 4% to 12%, as fixed). MaxLooks bounds
	// looks (the boundaries of more close looks gain nothing).
	DefaultAdaptiveLooks = 6
	MaxLooks             = 20
	// MaxSamples and MaxConcurrency bound samples and concurrency, in the
	// file and on the command line: beyond them a plan or a pool of
	// connections exhausts memory before it makes a call.
	MaxSamples            = 100_000
	MaxConcurrency        = 1_000
	DefaultProvider       = "openai"
	DefaultAPIKeyEnv      = "OPENAI_API_KEY"
	DefaultTemperature    = 1.0
	DefaultMaxTokens      = 400
	DefaultTimeoutSeconds = 120.0
	// DefaultReasoningMaxTokens is the max_completion_tokens of OpenAI's
	// reasoning models (ReasoningModel) when the file sets no limit: their
	// limit counts reasoning tokens too, and 400 would leave most answers
	// truncated or empty.
	DefaultReasoningMaxTokens = 4000
	// DefaultAnthropicAPIKeyEnv is the api_key_env of provider "anthropic".
	DefaultAnthropicAPIKeyEnv = "ANTHROPIC_API_KEY"
	// AnthropicCacheWriteFactor is what Anthropic bills for a prompt token
	// written to its (5-minute) cache, as a multiple of the input price.
	AnthropicCacheWriteFactor = 1.25
	// AnthropicCacheReadFactor is what Anthropic bills for a prompt token
	// read from its cache, as a multiple of the input price (every model).
	AnthropicCacheReadFactor = 0.1
)

// Providers lists the model providers an audit file may name: "openai" is any
// OpenAI-compatible endpoint, "anthropic" Anthropic's native Messages API,
// "sim" the built-in simulated model.
var Providers = []string{"openai", "anthropic", "sim"}

// DefaultAPIKeyEnvFor returns the api_key_env a provider uses when the file
// names none.
func DefaultAPIKeyEnvFor(provider string) string {
	if provider == "anthropic" {
		return DefaultAnthropicAPIKeyEnv
	}
	return DefaultAPIKeyEnv
}

// ModelConfig is one model under test.
type ModelConfig struct {
	Name     string // model id sent to the API
	Provider string // "openai" (default), "anthropic" or "sim"
	BaseURL  string // empty: the provider's default (for openai $OPENAI_BASE_URL, else OpenAI)
	// APIKeyEnv is the environment variable holding the key; default
	// OPENAI_API_KEY (ANTHROPIC_API_KEY for provider "anthropic"). Empty:
	// no key is sent (a local server).
	APIKeyEnv string
	// AllowHTTP permits a plain http:// base URL on a host other than this
	// machine, which sends the key in clear.
	AllowHTTP bool
	// Temperature is sent unless OmitTemperature: default 1.0, 0..2 (0..1
	// for anthropic). OmitTemperature (temperature = "default", or no
	// temperature for a reasoning model) sends none.
	Temperature     float64
	OmitTemperature bool
	// MaxTokens (max_tokens, default 400) or MaxCompletionTokens
	// (max_completion_tokens, the default for reasoning models) bounds the
	// answer; exactly one is set.
	MaxTokens           int
	MaxCompletionTokens int
	// ExtraBody is merged into each request's JSON body; ExtraHeaders are
	// sent with it. Both are part of each call's content address.
	ExtraBody    map[string]any
	ExtraHeaders map[string]string
	// Prices in dollars per million tokens (see tomlTable.prices for the
	// defaults of the cache prices).
	PriceInputPerMTok           float64
	PriceCachedInputPerMTok     float64
	PriceCacheWriteInputPerMTok float64
	PriceOutputPerMTok          float64
	// Priced says the prices are known: the table sets both the input and
	// the output price (0 is a price: a local server is free), or the
	// provider is the simulator, which bills nothing. An unpriced
	// endpoint's calls are counted at $0, which a budget must not believe.
	Priced         bool
	TimeoutSeconds float64 // per-attempt timeout; default 120
	Line           int     // line of the [model] header in the audit file
}

// RuleConfig is one prompt line to audit. The line is given by number
// (Line), by exact text (Text), or by both, which means "line Line, whose
// text must be Text".
type RuleConfig struct {
	Line      int    // 1-based prompt line; 0 when the rule is given by text only
	Text      string // exact line text as written; empty when given by number only
	Cases     string // path of the case file, as written
	Predicate string // path of the predicate file, as written; may be empty when Class is ClassNone
	// JudgeRubric is the path of the rubric every [[judge]] grades this
	// rule's answers with, as written; empty: each judge's own rubric.
	JudgeRubric string
	// Tag groups rules in the sweep summary, e.g. "constrains" for a line
	// that holds back what the model would volunteer under pressure and
	// "describes" for one that describes what it does anyway. Free text.
	Tag string
	// Class is "" or ClassTargeted (the rule has an input class a targeted
	// case file provokes) or ClassNone (it applies to all traffic,
	// like "be concise"; its cases are a general sample and its verdict is
	// never DELETE).
	Class string
	// Changed, when set, is when the line's text last changed: cases added
	// before it may be what a rewording was tuned to. auditor also records
	// the changes it sees itself.
	Changed time.Time
	DefLine int // line of the [[rule]] header in the audit file
	// Variants are the rewording and addition audited beside the deletion
	// (see variant.go).
	Variants RuleVariants
	// KeyLines are the lines of the rule's keys in the audit file, so an
	// error about a key points at it; a key left out has its table's line.
	KeyLines RuleKeyLines
}

// RuleKeyLines are the audit-file lines of a rule's keys.
type RuleKeyLines struct {
	Line, Text, Cases, Predicate, JudgeRubric int
}

// Rule classes: whether a targeted case set can decide the rule.
const (
	ClassTargeted = "targeted"
	ClassNone     = "none"
)

// NoInputClass reports whether the rule has no input class (class = "none").
func (r RuleConfig) NoInputClass() bool { return r.Class == ClassNone }

// JudgeConfig is one LLM judge. Provider, BaseURL, APIKeyEnv and AllowHTTP
// are inherited from the first model when the file leaves them out and the
// judge's provider is the first model's.
type JudgeConfig struct {
	Name      string // model id of the judge
	Rubric    string // path of the rubric template, as written
	Provider  string
	BaseURL   string
	APIKeyEnv string
	AllowHTTP bool
	// Temperature defaults to 0, so a judge is as repeatable as it can be,
	// except for reasoning models, which take only their default
	// (OmitTemperature).
	Temperature     float64
	OmitTemperature bool
	// MaxTokens bounds the judge's answer (reasoning, then the VERDICT line);
	// default 600. Reasoning models get MaxCompletionTokens instead
	// (default DefaultReasoningMaxTokens).
	MaxTokens, MaxCompletionTokens int
	ExtraBody                      map[string]any
	ExtraHeaders                   map[string]string
	// Prices are the judge's own; a judge that sets none and is the first
	// model (same provider, name and endpoint) takes that model's. Priced
	// as for a model.
	PriceInputPerMTok, PriceCachedInputPerMTok, PriceCacheWriteInputPerMTok, PriceOutputPerMTok float64
	Priced                                                                                      bool
	TimeoutSeconds                                                                              float64 // per-attempt timeout; default 120
	DefLine                                                                                     int     // line of the [[judge]] header in the audit file
}

// DefaultJudgeMaxTokens leaves room for a judge's reasoning before its verdict.
const DefaultJudgeMaxTokens = 600

var (
	auditKeys = []string{"name", "prompt", "samples", "concurrency", "delta", "affected_share", "budget", "looks", "adaptive", "model", "rule", "judge", "regression", "ship"}
	modelKeys = []string{"name", "provider", "base_url", "api_key_env", "allow_http", "temperature", "max_tokens",
		"max_completion_tokens", "extra_body", "extra_headers", "price_input_per_mtok", "price_cached_input_per_mtok",
		"price_cache_write_input_per_mtok", "price_output_per_mtok", "timeout_seconds"}
	ruleKeys  = []string{"line", "text", "cases", "predicate", "tag", "class", "changed", "reword", "add", "delete", "judge_rubric"}
	judgeKeys = []string{"name", "rubric", "provider", "base_url", "api_key_env", "allow_http", "temperature", "max_tokens",
		"max_completion_tokens", "extra_body", "extra_headers", "price_input_per_mtok", "price_cached_input_per_mtok",
		"price_cache_write_input_per_mtok", "price_output_per_mtok", "timeout_seconds"}
	regressionKeys = []string{"name", "cases", "predicate"}
	shipKeys       = []string{"lines"}
)

// misplacedAuditKeys explains keys that belong at the top of the audit file
// when they turn up inside a table: TOML reads every key after a [header]
// as part of that table, which surprises people.
var misplacedAuditKeys = map[string]string{
	"prompt":         "prompt is a top-level setting: " + moveUp,
	"samples":        "samples is a top-level setting: " + moveUp,
	"concurrency":    "concurrency is a top-level setting: " + moveUp,
	"delta":          "delta is a top-level setting: " + moveUp,
	"affected_share": "affected_share is a top-level setting: " + moveUp,
	"budget":         "budget is a top-level setting: " + moveUp,
	"rule":           "a rule is a table of its own: start it with a [[rule]] line",
	"judge":          "a judge is a table of its own: start it with a [[judge]] line",
	"regression":     "a regression suite is a table of its own: start it with a [[regression]] line",
	"model":          "a model is a table of its own: start it with a [model] or [[model]] line",
}

const moveUp = "move it above the first [table] header (TOML reads every key after a header as part of that table)"

// envVarName matches the name of an environment variable.
var envVarName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ParseAudit reads an audit file (TOML). Settings left out get their
// defaults (DefaultSamples and friends). Every error is an *InputError
// naming the file, the line and the key: TOML syntax errors (with column),
// unknown keys (a typo must not pass silently), missing or empty required
// settings, values of the wrong type or out of range, two rules for the same
// line, and an API key written into the file (keys belong in the
// environment; the file names the variable with api_key_env).
func ParseAudit(file string, data []byte) (*AuditFile, error) {
	doc, err := decodeTOML(file, data)
	if err != nil {
		return nil, err
	}
	root := doc.rootTable()
	if err := root.checkKeys(auditKeys, nil); err != nil {
		return nil, err
	}
	a := &AuditFile{Samples: DefaultSamples, Concurrency: DefaultConcurrency, Delta: DefaultDelta, AffectedShare: DefaultAffectedShare, Looks: 1}
	if a.Name, err = root.requiredString("name", `a name for the audit, like name = "support prompt sweep"`); err != nil {
		return nil, err
	}
	if a.Prompt, err = root.requiredString("prompt", `the path of the prompt file, like prompt = "prompts/support.md"`); err != nil {
		return nil, err
	}
	if err := root.intIn("samples", 1, MaxSamples, &a.Samples); err != nil {
		return nil, err
	}
	if err := root.intIn("concurrency", 1, MaxConcurrency, &a.Concurrency); err != nil {
		return nil, err
	}
	if v, ok, err := root.number("budget"); err != nil {
		return nil, err
	} else if ok {
		if v < 0 {
			return nil, root.errf("budget", "must be a number of dollars, at least 0 (0: no budget), like 20; got %v", v)
		}
		a.Budget = v
	}
	if v, ok, err := root.number("delta"); err != nil {
		return nil, err
	} else if ok {
		if v <= 0 || v >= 1 {
			return nil, root.errf("delta", "must be between 0 and 1 (exclusive), the largest rise in failure rate you accept, like 0.05; got %v", v)
		}
		a.Delta = v
	}
	if v, ok, err := root.number("affected_share"); err != nil {
		return nil, err
	} else if ok {
		if v <= 0 || v >= 1 {
			return nil, root.errf("affected_share", "must be between 0 and 1 (exclusive), the share of provoking traffic one type of request makes up, like 0.1; got %v", v)
		}
		a.AffectedShare = v
	}

	if a.Adaptive, _, err = root.boolean("adaptive"); err != nil {
		return nil, err
	}
	if a.Adaptive && !root.has("looks") {
		a.Looks = DefaultAdaptiveLooks
	}
	if err := root.intIn("looks", 1, MaxLooks, &a.Looks); err != nil {
		return nil, err
	}
	if a.Adaptive && a.Looks == 1 {
		return nil, root.errf("looks", "adaptive = true needs more than one look (an adaptive run stops a line at a look that settles it); leave looks out for %d, or set looks = 2 or more", DefaultAdaptiveLooks)
	}
	if a.Models, err = parseModels(root); err != nil {
		return nil, err
	}
	if a.Rules, err = parseRules(root); err != nil {
		return nil, err
	}
	if a.Judges, err = parseJudges(root, a.Models[0]); err != nil {
		return nil, err
	}
	for i, r := range a.Rules {
		if r.JudgeRubric != "" && len(a.Judges) == 0 {
			return nil, &InputError{File: file, Line: r.KeyLines.JudgeRubric, Field: fmt.Sprintf("rule[%d].judge_rubric", i+1),
				Msg: "names the rubric judges grade this line's answers with, but the audit has no [[judge]]: add one, or remove judge_rubric"}
		}
	}
	if a.Regressions, err = parseRegressions(root); err != nil {
		return nil, err
	}
	if a.Ships, err = parseShips(root); err != nil {
		return nil, err
	}
	return a, nil
}

// parseShips reads the [[ship]] tables: each names at least one prompt
// line, none twice.
func parseShips(root tomlTable) ([]ShipConfig, error) {
	tables, _, err := root.tables("ship")
	if err != nil {
		return nil, err
	}
	var out []ShipConfig
	for _, t := range tables {
		if err := t.checkKeys(shipKeys, misplacedAuditKeys); err != nil {
			return nil, err
		}
		v, ok := t.m["lines"]
		if !ok {
			return nil, t.errf("", "missing lines: the prompt lines the joint test deletes, like lines = [11, 13]")
		}
		arr, isArr := v.([]any)
		if !isArr || len(arr) == 0 {
			return nil, t.errf("lines", "must be a non-empty array of prompt line numbers, like lines = [11, 13], not %s", tomlTypeName(v))
		}
		sc := ShipConfig{DefLine: t.line}
		for i, e := range arr {
			n, isInt := e.(int64)
			if !isInt || n < 1 || n > math.MaxInt32 {
				return nil, t.errf("lines", "element %d must be a prompt line number (a whole number, at least 1), not %v", i+1, e)
			}
			if slices.Contains(sc.Lines, int(n)) {
				return nil, t.errf("lines", "line %d is named twice", n)
			}
			sc.Lines = append(sc.Lines, int(n))
		}
		slices.Sort(sc.Lines)
		out = append(out, sc)
	}
	return out, nil
}

// parseRegressions reads the [[regression]] tables: each needs a name
// (unique: reports and stored results are by name), a case file and a
// predicate.
func parseRegressions(root tomlTable) ([]RegressionConfig, error) {
	tables, _, err := root.tables("regression")
	if err != nil {
		return nil, err
	}
	var out []RegressionConfig
	seen := map[string]int{}
	for _, t := range tables {
		if err := t.checkKeys(regressionKeys, misplacedAuditKeys); err != nil {
			return nil, err
		}
		r := RegressionConfig{DefLine: t.line}
		at := func(k string) int { return t.doc.lineOf(t.field(k)) }
		r.KeyLines.Name, r.KeyLines.Cases, r.KeyLines.Predicate = at("name"), at("cases"), at("predicate")
		if r.Name, err = t.requiredString("name", `a name for the suite, like name = "everyday questions"`); err != nil {
			return nil, err
		}
		if strings.IndexFunc(r.Name, unicode.IsControl) >= 0 {
			return nil, t.errf("name", "must be one line of text: no line breaks or control characters")
		}
		if r.Cases, err = t.requiredString("cases", `the path of the suite's case file, like cases = "everyday.jsonl"`); err != nil {
			return nil, err
		}
		if r.Predicate, err = t.requiredString("predicate", `the path of the suite's predicate file, like predicate = "everyday.predicate.toml"`); err != nil {
			return nil, err
		}
		key := strings.TrimSpace(r.Name)
		if prev, dup := seen[key]; dup {
			return nil, t.errf("name", "regression suite %q is already defined at line %d; give each suite its own name", r.Name, prev)
		}
		seen[key] = t.line
		out = append(out, r)
	}
	return out, nil
}

func parseModels(root tomlTable) ([]ModelConfig, error) {
	tables, ok, err := root.tables("model")
	if err != nil {
		return nil, err
	}
	if !ok || len(tables) == 0 {
		return nil, root.errf("model", "missing: add a [model] table naming the model under test, with name = \"...\"")
	}
	models := make([]ModelConfig, 0, len(tables))
	for _, t := range tables {
		if err := t.checkKeys(modelKeys, misplacedAuditKeys); err != nil {
			return nil, err
		}
		m := ModelConfig{
			Provider:       DefaultProvider,
			TimeoutSeconds: DefaultTimeoutSeconds,
			Line:           t.line,
		}
		if m.Name, err = t.requiredString("name", `the model id to call, like name = "gpt-4o"`); err != nil {
			return nil, err
		}
		if err := t.apiSettings(&m.Provider, &m.BaseURL, &m.APIKeyEnv, &m.AllowHTTP, nil); err != nil {
			return nil, err
		}
		sh, err := t.requestShape(m.Name, m.Provider, DefaultTemperature, DefaultMaxTokens)
		if err != nil {
			return nil, err
		}
		m.Temperature, m.OmitTemperature, m.MaxTokens, m.MaxCompletionTokens = sh.temperature, sh.omitTemperature, sh.maxTokens, sh.maxCompletionTokens
		m.ExtraBody, m.ExtraHeaders = sh.extraBody, sh.extraHeaders
		if m.Priced, err = t.prices(m.Provider, &m.PriceInputPerMTok, &m.PriceCachedInputPerMTok, &m.PriceCacheWriteInputPerMTok, &m.PriceOutputPerMTok); err != nil {
			return nil, err
		}
		if err := t.timeout(&m.TimeoutSeconds); err != nil {
			return nil, err
		}
		models = append(models, m)
	}
	return models, nil
}

func parseRules(root tomlTable) ([]RuleConfig, error) {
	tables, ok, err := root.tables("rule")
	if err != nil {
		return nil, err
	}
	if !ok || len(tables) == 0 {
		return nil, root.errf("rule", "missing: add a [[rule]] table with line (or text), cases and predicate")
	}
	rules := make([]RuleConfig, 0, len(tables))
	byLine := map[int]RuleConfig{}
	byText := map[string]RuleConfig{}
	for _, t := range tables {
		if err := t.checkKeys(ruleKeys, misplacedAuditKeys); err != nil {
			return nil, err
		}
		r := RuleConfig{DefLine: t.line}
		at := func(k string) int { return t.doc.lineOf(t.field(k)) }
		r.KeyLines = RuleKeyLines{Line: at("line"), Text: at("text"), Cases: at("cases"), Predicate: at("predicate"), JudgeRubric: at("judge_rubric")}
		if err := t.intIn("line", 1, math.MaxInt32, &r.Line); err != nil {
			return nil, err
		}
		if s, ok, err := t.str("text"); err != nil {
			return nil, err
		} else if ok {
			if strings.TrimSpace(s) == "" {
				return nil, t.errf("text", "is empty: give the exact text of the prompt line, or use line = N")
			}
			r.Text = s
		}
		if r.Line == 0 && r.Text == "" {
			return nil, t.errf("", "names no prompt line: add line = N (the line number) or text = \"...\" (the exact line text)")
		}
		if r.Cases, err = t.requiredString("cases", `the path of the case file, like cases = "roadmap.jsonl"`); err != nil {
			return nil, err
		}
		if err := t.ruleClass(&r); err != nil {
			return nil, err
		}
		if err := t.ruleVariants(&r); err != nil {
			return nil, err
		}
		if r.NoInputClass() {
			if r.Predicate, _, err = t.str("predicate"); err != nil {
				return nil, err
			}
		} else if r.Predicate, err = t.requiredString("predicate", `the path of the predicate file, like predicate = "roadmap.predicate.toml"`); err != nil {
			return nil, err
		}
		if err := t.judgeRubric(&r); err != nil {
			return nil, err
		}
		if r.Line > 0 {
			if prev, dup := byLine[r.Line]; dup {
				return nil, t.errf("line", "line %d is already audited by the rule at line %d; audit each line once", r.Line, prev.DefLine)
			}
			byLine[r.Line] = r
		}
		if r.Text != "" {
			key := strings.TrimRight(r.Text, " \t")
			if prev, dup := byText[key]; dup {
				return nil, t.errf("text", "this text is already audited by the rule at line %d; audit each line once", prev.DefLine)
			}
			byText[key] = r
		}
		rules = append(rules, r)
	}
	return rules, nil
}

// judgeRubric reads a rule's judge_rubric: the judges of a rule with no
// input class grade nothing (its verdict rests on answer length), so it
// may not have one.
func (t tomlTable) judgeRubric(r *RuleConfig) error {
	s, ok, err := t.str("judge_rubric")
	switch {
	case err != nil || !ok:
		return err
	case strings.TrimSpace(s) == "":
		return t.errf("judge_rubric", `is empty: give the path of a rubric template, like judge_rubric = "refunds_judge.md", or leave it out for each judge's own rubric`)
	case r.NoInputClass():
		return t.errf("judge_rubric", `judges do not grade a rule with class = "none" (its verdict rests on answer length): remove judge_rubric`)
	}
	r.JudgeRubric = s
	return nil
}

// ruleClass reads a rule's tag, class and changed date.
func (t tomlTable) ruleClass(r *RuleConfig) error {
	tag, _, err := t.str("tag")
	if err != nil {
		return err
	}
	r.Tag = strings.TrimSpace(tag)
	if strings.IndexFunc(r.Tag, unicode.IsControl) >= 0 || utf8.RuneCountInString(r.Tag) > 40 {
		return t.errf("tag", "must be a short label on one line (at most 40 characters, no control characters), like tag = \"constrains\"")
	}
	if c, ok, err := t.str("class"); err != nil {
		return err
	} else if ok {
		switch c {
		case ClassTargeted, ClassNone:
			r.Class = c
		default:
			return t.errf("class", "unknown class %q: use \"none\" for a rule with no input class (like \"be concise\"), or \"targeted\" (the default, when the line constrains an input class you can provoke)", c)
		}
	}
	v, ok := t.m["changed"]
	if !ok {
		return nil
	}
	switch v := v.(type) {
	case time.Time:
		if v.Year() == 0 {
			return t.errf("changed", "is a time of day; give a date like changed = 2026-11-20")
		}
		// A TOML local date or time carries the machine's offset; a date
		// written without a zone means that calendar day, read as UTC like
		// the case files' dates.
		if name, _ := v.Zone(); strings.HasSuffix(name, "-local") {
			v = time.Date(v.Year(), v.Month(), v.Day(), v.Hour(), v.Minute(), v.Second(), 0, time.UTC)
		}
		r.Changed = v
	case string:
		d, err := ParseDate(v)
		if err != nil {
			return t.errf("changed", "%v", err)
		}
		r.Changed = d
	default:
		return t.errf("changed", "must be a date like 2026-11-20, not %s", tomlTypeName(v))
	}
	return nil
}

func parseJudges(root tomlTable, first ModelConfig) ([]JudgeConfig, error) {
	tables, _, err := root.tables("judge")
	if err != nil {
		return nil, err
	}
	var judges []JudgeConfig
	seen := map[string]int{}
	for _, t := range tables {
		if err := t.checkKeys(judgeKeys, misplacedAuditKeys); err != nil {
			return nil, err
		}
		j := JudgeConfig{DefLine: t.line}
		if j.Name, err = t.requiredString("name", `the judge's model id, like name = "gpt-4o"`); err != nil {
			return nil, err
		}
		if j.Rubric, err = t.requiredString("rubric", `the path of the rubric template, like rubric = "roadmap_judge.md"`); err != nil {
			return nil, err
		}
		// The first model's endpoint is inherited only by a judge of the same
		// provider: another provider's URL and key would be wrong for it.
		j.Provider = first.Provider
		if p, ok, _ := t.str("provider"); ok {
			j.Provider = p
		}
		if j.Provider == first.Provider {
			j.BaseURL, j.APIKeyEnv, j.AllowHTTP = first.BaseURL, first.APIKeyEnv, first.AllowHTTP
		}
		if err := t.apiSettings(&j.Provider, &j.BaseURL, &j.APIKeyEnv, &j.AllowHTTP, &first); err != nil {
			return nil, err
		}
		sh, err := t.requestShape(j.Name, j.Provider, 0, DefaultJudgeMaxTokens)
		if err != nil {
			return nil, err
		}
		j.Temperature, j.OmitTemperature, j.MaxTokens, j.MaxCompletionTokens = sh.temperature, sh.omitTemperature, sh.maxTokens, sh.maxCompletionTokens
		j.ExtraBody, j.ExtraHeaders = sh.extraBody, sh.extraHeaders
		if j.Priced, err = t.prices(j.Provider, &j.PriceInputPerMTok, &j.PriceCachedInputPerMTok, &j.PriceCacheWriteInputPerMTok, &j.PriceOutputPerMTok); err != nil {
			return nil, err
		}
		if !t.hasAny(priceKeys) && j.Provider == first.Provider && j.Name == first.Name && j.BaseURL == first.BaseURL {
			// The model under test asked as a judge: the same endpoint's
			// prices. Any other model's prices would be a guess.
			j.PriceInputPerMTok, j.PriceCachedInputPerMTok, j.PriceCacheWriteInputPerMTok, j.PriceOutputPerMTok, j.Priced =
				first.PriceInputPerMTok, first.PriceCachedInputPerMTok, first.PriceCacheWriteInputPerMTok, first.PriceOutputPerMTok, first.Priced
		}
		j.TimeoutSeconds = DefaultTimeoutSeconds
		if err := t.timeout(&j.TimeoutSeconds); err != nil {
			return nil, err
		}
		if prev, dup := seen[j.Name]; dup {
			return nil, t.errf("name", "judge %q is already defined at line %d; its grades would be indistinguishable", j.Name, prev)
		}
		seen[j.Name] = t.line
		judges = append(judges, j)
	}
	return judges, nil
}

// tomlDoc is a decoded TOML file together with the line of each table header
// and key, so that errors can point at what the user wrote. BurntSushi/toml
// records key positions while parsing but does not export them (only
// ParseError carries a position), so the lines come from tomlKeyLines, a scan
// of the source that knows enough TOML to skip strings, arrays and comments.
type tomlDoc struct {
	file  string
	root  map[string]any
	lines map[string]int // user-facing key path ("rule[2].line") -> 1-based line
	src   []string       // the source's lines, for locating text within a line
}

// decodeTOML parses data as TOML into generic values. Typed decoding is left
// to the callers so that every type error can name the key and its line.
func decodeTOML(file string, data []byte) (doc *tomlDoc, err error) {
	defer func() {
		// The library recovers its own parse panics; this guards against
		// anything else, because bad input must never crash the tool.
		if r := recover(); r != nil {
			doc, err = nil, &InputError{File: file, Msg: fmt.Sprintf("cannot be read as TOML: %v", r)}
		}
	}()
	src := string(data)
	if err := checkTOMLShape(file, src); err != nil {
		return nil, err
	}
	var root map[string]any
	if _, err := toml.Decode(src, &root); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			line, col := tomlErrPos(src, pe.Position)
			return nil, &InputError{File: file, Line: line, Col: col, Msg: "TOML syntax error: " + pe.Message}
		}
		return nil, &InputError{File: file, Msg: "cannot be read as TOML: " + strings.TrimPrefix(err.Error(), "toml: ")}
	}
	if root == nil {
		root = map[string]any{}
	}
	lines := strings.Split(strings.TrimPrefix(src, "\ufeff"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return &tomlDoc{file: file, root: root, lines: tomlKeyLines(src), src: lines}, nil
}

// tomlErrPos returns the line and character column of a parse error. The
// library's byte offset (Start) is exact, but its line and column are off by
// one at line ends (an error at a newline is put on the next line), so both
// are derived from the offset; when the offset disagrees with the library's
// line by more than that, the library's line and column are kept.
func tomlErrPos(src string, pos toml.Position) (line, col int) {
	src = strings.TrimPrefix(src, "\ufeff") // offsets count from after the BOM
	if pos.Start < 0 || pos.Start > len(src) || (pos.Start == 0 && pos.Line > 1) {
		return pos.Line, pos.Col
	}
	before := src[:pos.Start]
	line = strings.Count(before, "\n") + 1
	if d := line - pos.Line; d < -1 || d > 1 {
		return pos.Line, pos.Col
	}
	lineStart := strings.LastIndexByte(before, '\n') + 1
	return line, utf8.RuneCountInString(before[lineStart:]) + 1
}

func (d *tomlDoc) rootTable() tomlTable { return tomlTable{doc: d, m: d.root} }

// lineOf returns the line of a key path, falling back to the line of the
// nearest enclosing table or key (an inline table, or a table written with
// dotted keys, has no header of its own), and 0 when nothing is known.
func (d *tomlDoc) lineOf(path string) int {
	for path != "" {
		if l, ok := d.lines[path]; ok {
			return l
		}
		if l, ok := d.lines[path+"[1]"]; ok { // [[x]] where [x] was expected
			return l
		}
		if strings.HasSuffix(path, "]") {
			if i := strings.LastIndexByte(path, '['); i >= 0 {
				path = path[:i]
				continue
			}
		}
		i := strings.LastIndexByte(path, '.')
		if i < 0 {
			return 0
		}
		path = path[:i]
	}
	return 0
}

// tomlTable is one table of a tomlDoc with typed, position-aware accessors.
type tomlTable struct {
	doc  *tomlDoc
	path string // "" for the root, "model", "rule[2]"
	line int    // line of the header; 0 for the root
	m    map[string]any
}

// field returns the user-facing path of key k in t.
func (t tomlTable) field(k string) string {
	switch {
	case k == "":
		return t.path
	case t.path == "":
		return k
	}
	return t.path + "." + k
}

// errf builds an InputError about key k of t (or about t itself when k is
// empty), located at the key's line.
func (t tomlTable) errf(k, format string, args ...any) *InputError {
	f := t.field(k)
	line := t.doc.lineOf(f)
	if line == 0 {
		line = t.line
	}
	return &InputError{File: t.doc.file, Line: line, Field: f, Msg: fmt.Sprintf(format, args...)}
}

func (t tomlTable) has(k string) bool { _, ok := t.m[k]; return ok }

// checkKeys refuses keys of t that are not in allowed. Of several unknown
// keys the one written first is reported. misplaced holds messages for keys
// that belong elsewhere and may turn up in t by mistake.
func (t tomlTable) checkKeys(allowed []string, misplaced map[string]string) error {
	var unknown []string
	for k := range t.m {
		if k == "api_key" {
			return t.errf(k, "never write an API key into the audit file: remove api_key and set api_key_env to the name of the environment variable that holds the key (default %s)", DefaultAPIKeyEnv)
		}
		known := false
		for _, a := range allowed {
			known = known || k == a
		}
		if !known {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Slice(unknown, func(i, j int) bool {
		li, lj := t.doc.lineOf(t.field(unknown[i])), t.doc.lineOf(t.field(unknown[j]))
		if li != lj {
			return li < lj
		}
		return unknown[i] < unknown[j]
	})
	k := unknown[0]
	where := "at the top level"
	if t.path != "" {
		where = "in [" + strings.TrimRight(strings.SplitN(t.path, "[", 2)[0], "]") + "]"
	}
	if m, ok := misplaced[k]; ok {
		return t.errf(k, "%s", m)
	}
	return t.errf(k, "unknown key%s; allowed %s: %s", didYouMean(k, allowed), where, strings.Join(allowed, ", "))
}

// tomlTypeName names the TOML type of a decoded value for error messages.
func tomlTypeName(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a number"
	case bool:
		return "true/false"
	case time.Time:
		return "a date"
	case []any:
		return "an array"
	case map[string]any:
		return "a table"
	case []map[string]any:
		return "an array of tables"
	}
	return fmt.Sprintf("a %T", v)
}

// str returns the string at k; ok is false when k is absent.
func (t tomlTable) str(k string) (s string, ok bool, err error) {
	v, ok := t.m[k]
	if !ok {
		return "", false, nil
	}
	s, isStr := v.(string)
	if !isStr {
		return "", true, t.errf(k, "must be a string (in quotes), not %s", tomlTypeName(v))
	}
	return s, true, nil
}

// requiredString returns the string at k, which must be present and not
// blank; what describes the expected value for the error message.
func (t tomlTable) requiredString(k, what string) (string, error) {
	s, ok, err := t.str(k)
	switch {
	case err != nil:
		return "", err
	case !ok:
		return "", t.errf(k, "missing: add %s", what)
	case strings.TrimSpace(s) == "":
		return "", t.errf(k, "is empty: give %s", what)
	}
	return s, nil
}

// intIn stores the integer at k in dst when k is present, refusing values
// outside [lo, hi].
func (t tomlTable) intIn(k string, lo, hi int64, dst *int) error {
	v, ok := t.m[k]
	if !ok {
		return nil
	}
	var n int64
	switch x := v.(type) {
	case int64:
		n = x
	case float64:
		f := strconv.FormatFloat(x, 'g', -1, 64)
		if !strings.ContainsAny(f, ".eEnN") {
			f += ".0" // 22.0 would print as 22, which reads like a whole number
		}
		return t.errf(k, "must be a whole number, not %s", f)
	default:
		return t.errf(k, "must be a whole number, not %s", tomlTypeName(v))
	}
	if n < lo || n > hi {
		if hi >= math.MaxInt32 {
			return t.errf(k, "must be at least %d; got %d", lo, n)
		}
		return t.errf(k, "must be between %d and %d; got %d", lo, hi, n)
	}
	*dst = int(n)
	return nil
}

// number returns the number (integer or float) at k. NaN and infinities are
// refused: they have no meaning in any setting here.
func (t tomlTable) number(k string) (float64, bool, error) {
	v, ok := t.m[k]
	if !ok {
		return 0, false, nil
	}
	var f float64
	switch x := v.(type) {
	case int64:
		f = float64(x)
	case float64:
		f = x
	default:
		return 0, true, t.errf(k, "must be a number, not %s", tomlTypeName(v))
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, true, t.errf(k, "must be a finite number, not %v", f)
	}
	return f, true, nil
}

// boolean returns the true/false value at k.
func (t tomlTable) boolean(k string) (bool, bool, error) {
	v, ok := t.m[k]
	if !ok {
		return false, false, nil
	}
	b, isBool := v.(bool)
	if !isBool {
		return false, true, t.errf(k, "must be true or false (without quotes), not %s", tomlTypeName(v))
	}
	return b, true, nil
}

// strings returns the array of strings at k.
func (t tomlTable) strings(k string) ([]string, bool, error) {
	v, ok := t.m[k]
	if !ok {
		return nil, false, nil
	}
	arr, isArr := v.([]any)
	if !isArr {
		return nil, true, t.errf(k, `must be an array of strings, like ["a", "b"], not %s`, tomlTypeName(v))
	}
	out := make([]string, 0, len(arr))
	for i, e := range arr {
		s, isStr := e.(string)
		if !isStr {
			return nil, true, t.errf(k, "element %d must be a string, not %s", i+1, tomlTypeName(e))
		}
		out = append(out, s)
	}
	return out, true, nil
}

// tables returns the tables at k, written either as one [k] table or as an
// array of [[k]] tables (or inline). Paths are "k" for a single table and
// "k[1]", "k[2]"... for an array.
func (t tomlTable) tables(k string) ([]tomlTable, bool, error) {
	v, ok := t.m[k]
	if !ok {
		return nil, false, nil
	}
	base := t.field(k)
	switch x := v.(type) {
	case map[string]any:
		return []tomlTable{{doc: t.doc, path: base, line: t.doc.lineOf(base), m: x}}, true, nil
	case []map[string]any:
		out := make([]tomlTable, len(x))
		for i, m := range x {
			p := fmt.Sprintf("%s[%d]", base, i+1)
			out[i] = tomlTable{doc: t.doc, path: p, line: t.doc.lineOf(p), m: m}
		}
		return out, true, nil
	case []any:
		out := make([]tomlTable, len(x))
		for i, e := range x {
			m, isMap := e.(map[string]any)
			p := fmt.Sprintf("%s[%d]", base, i+1)
			if !isMap {
				return nil, true, t.errf(k, "element %d must be a table, not %s; write [[%s]] sections", i+1, tomlTypeName(e), k)
			}
			out[i] = tomlTable{doc: t.doc, path: p, line: t.doc.lineOf(p), m: m}
		}
		return out, true, nil
	}
	return nil, true, t.errf(k, "must be a table, written [[%s]] on its own line followed by its keys, not %s", k, tomlTypeName(v))
}

// table returns the single table at k ([k]).
func (t tomlTable) table(k string) (tomlTable, bool, error) {
	v, ok := t.m[k]
	if !ok {
		return tomlTable{}, false, nil
	}
	m, isMap := v.(map[string]any)
	if !isMap {
		return tomlTable{}, true, t.errf(k, "must be a single table, written [%s] on its own line followed by its keys, not %s", k, tomlTypeName(v))
	}
	p := t.field(k)
	return tomlTable{doc: t.doc, path: p, line: t.doc.lineOf(p), m: m}, true, nil
}

// tomlKeyLines scans TOML source for the line of every table header and key
// and returns them by user-facing path: "name", "model", "model.name",
// "rule[2]" (the second [[rule]] header), "rule[2].cases". It understands
// comments, all four string forms (multi-line ones may contain lines that
// look like keys), and arrays and inline tables spanning lines (keys inside
// inline tables are not recorded; lineOf falls back to the enclosing key).
// For a key written twice the first line wins; the TOML parser has already
// refused duplicates. It never fails: on text it does not understand it
// skips to the next line.
func tomlKeyLines(src string) map[string]int {
	s := strings.TrimPrefix(src, "\ufeff")
	lines := map[string]int{}
	record := func(path string, line int) {
		if _, ok := lines[path]; !ok {
			lines[path] = line
		}
	}
	arrays := map[string]int{} // [[path]] headers seen so far, by resolved path
	table := ""
	line := 1
	for i := 0; i < len(s); {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r') {
			i++
		}
		if i >= len(s) {
			break
		}
		switch s[i] {
		case '\n':
			line++
			i++
		case '#':
			i = tomlSkipToEOL(s, i)
		case '[':
			isArray := i+1 < len(s) && s[i+1] == '['
			j := i + 1
			if isArray {
				j++
			}
			parts, end, ok := tomlScanKey(s, j)
			if ok {
				table = tomlResolveHeader(parts, isArray, arrays)
				record(table, line)
			}
			i = tomlSkipToEOL(s, max(end, i+1))
		default:
			parts, end, ok := tomlScanKey(s, i)
			if ok {
				p := table
				for _, part := range parts {
					p = tomlJoin(p, part)
					record(p, line)
				}
			}
			i, line = tomlSkipValue(s, max(end, i+1), line)
		}
	}
	return lines
}

func tomlJoin(path, part string) string {
	if path == "" {
		return part
	}
	return path + "." + part
}

// tomlResolveHeader turns the key parts of a table header into a path,
// indexing every part that names an array of tables by its latest element,
// and counting a new element when the header is itself [[...]].
func tomlResolveHeader(parts []string, isArray bool, arrays map[string]int) string {
	p := ""
	for i, part := range parts {
		p = tomlJoin(p, part)
		if i == len(parts)-1 && isArray {
			arrays[p]++
			p = p + "[" + strconv.Itoa(arrays[p]) + "]"
		} else if n := arrays[p]; n > 0 {
			p = p + "[" + strconv.Itoa(n) + "]"
		}
	}
	return p
}

// tomlSkipToEOL returns the index of the next newline at or after i, or
// len(s).
func tomlSkipToEOL(s string, i int) int {
	if i >= len(s) {
		return len(s)
	}
	if j := strings.IndexByte(s[i:], '\n'); j >= 0 {
		return i + j
	}
	return len(s)
}

// tomlScanKey reads a possibly dotted, possibly quoted key starting at i and
// returns its parts and the index just after it (at "=" or "]").
func tomlScanKey(s string, i int) (parts []string, end int, ok bool) {
	skipBlank := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
	}
	for {
		skipBlank()
		if i >= len(s) {
			return parts, i, false
		}
		switch c := s[i]; {
		case c == '"':
			j := i + 1
			for j < len(s) && s[j] != '"' && s[j] != '\n' {
				if s[j] == '\\' && j+1 < len(s) && s[j+1] != '\n' {
					j++
				}
				j++
			}
			if j >= len(s) || s[j] != '"' {
				return parts, j, false
			}
			part, err := strconv.Unquote(s[i : j+1])
			if err != nil {
				part = s[i+1 : j]
			}
			parts = append(parts, part)
			i = j + 1
		case c == '\'':
			j := i + 1
			for j < len(s) && s[j] != '\'' && s[j] != '\n' {
				j++
			}
			if j >= len(s) || s[j] != '\'' {
				return parts, j, false
			}
			parts = append(parts, s[i+1:j])
			i = j + 1
		case c == '_' || c == '-' || c >= 0x80 || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'):
			j := i
			for j < len(s) {
				c := s[j]
				if c == '_' || c == '-' || c >= 0x80 || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') {
					j++
					continue
				}
				break
			}
			parts = append(parts, s[i:j])
			i = j
		default:
			return parts, i, false
		}
		skipBlank()
		if i < len(s) && s[i] == '.' {
			i++
			continue
		}
		return parts, i, len(parts) > 0
	}
}

// tomlSkipValue skips from i (after a key) over "=" and the value, which
// may span lines, and returns the index of the newline that ends it (or
// len(s)) and the line number there.
func tomlSkipValue(s string, i, line int) (int, int) {
	depth := 0
	for i < len(s) {
		switch c := s[i]; c {
		case '\n':
			if depth == 0 {
				return i, line
			}
			line++
			i++
		case '#':
			i = tomlSkipToEOL(s, i)
		case '"', '\'':
			i, line = tomlSkipString(s, i, line)
		case '[', '{':
			depth++
			i++
		case ']', '}':
			if depth > 0 {
				depth--
			}
			i++
		default:
			i++
		}
	}
	return len(s), line
}

// tomlSkipString skips the string starting at s[i] (any of the four forms)
// and returns the index after it and the line number there. An unterminated
// single-line string ends at the newline.
func tomlSkipString(s string, i, line int) (int, int) {
	q := s[i]
	if strings.HasPrefix(s[i:], strings.Repeat(string(q), 3)) {
		i += 3
		for i < len(s) {
			switch {
			case q == '"' && s[i] == '\\':
				if i+1 < len(s) && s[i+1] == '\n' {
					line++
				}
				i += 2
			case strings.HasPrefix(s[i:], strings.Repeat(string(q), 3)):
				i += 3
				// Up to two more quotes belong to the content: """a""""
				for k := 0; k < 2 && i < len(s) && s[i] == q; k++ {
					i++
				}
				return i, line
			case s[i] == '\n':
				line++
				i++
			default:
				i++
			}
		}
		return len(s), line
	}
	i++
	for i < len(s) && s[i] != '\n' {
		switch {
		case q == '"' && s[i] == '\\' && i+1 < len(s) && s[i+1] != '\n':
			i += 2
		case s[i] == q:
			return i + 1, line
		default:
			i++
		}
	}
	return i, line
}
